#!/usr/bin/env python3
"""The options as given are private to option parsing: the modules read the configuration
resolved once (Note [Options, resolved once] in runtime/base/util.h).

    python3 testsuite/lint/options_private.py --src SRCDIR

RtsOptions (runtime/include/rtslab_options.h) holds the options as they were given; what
they come to on this machine is decided once, by opts_resolve, into the read-only
*base_cfg, which every module reads. A module that read the options as given would work out
again what they come to, or see a value the resolution changed (-qn above -N, -qb's default
under a patch). This check fails on a C file (.c, .h) of runtime/ that names the struct of
the options as given (`rts_opts`, the variable private to runtime/rts/options.c) outside
that file, or that calls the public accessor rts_options() or an option-parsing function
(rts_options_*) outside runtime/rts/ (the start-up layer: options.c, rts.c, a patch's
registration) and runtime/include/ (the public headers, which declare them). Comments are
not code: a name in one is not reported. Exit status 1 on a use, each printed as
"options_private: PATH:LINE: what"; else "options_private ok".
"""
import argparse
import os
import re
import sys

PRIVATE_FILE = "runtime/rts/options.c"     # defines rts_opts, static
PARSING_DIRS = ("runtime/rts/", "runtime/include/")
VARIABLE = re.compile(r"\brts_opts\b")
ACCESSOR = re.compile(r"\brts_options(?:_[a-z_]+)?\s*\(")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def code_only(text):
    """The text with comments and string literals blanked (newlines kept, for line numbers)."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    return COMMENT.sub(blank, STRING.sub(blank, text))


def check(src):
    problems = []
    root = os.path.join(src, "runtime")
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x != "__pycache__")
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(d, f), src).replace(os.sep, "/")
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                code = code_only(fh.read())
            for no, line in enumerate(code.split("\n"), 1):
                if rel != PRIVATE_FILE and VARIABLE.search(line):
                    problems.append(f"{rel}:{no}: names rts_opts, the options as given, "
                                    f"private to {PRIVATE_FILE}: read base_cfg")
                if not rel.startswith(PARSING_DIRS):
                    m = ACCESSOR.search(line)
                    if m:
                        problems.append(f"{rel}:{no}: calls {m.group(0).rstrip('( ')}(), "
                                        "option parsing, below rts/: read base_cfg")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".")
    a = ap.parse_args()
    problems = check(a.src)
    for p in problems:
        print(f"options_private: {p}")
    if problems:
        return 1
    print("options_private ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
