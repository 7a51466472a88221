#!/usr/bin/env python3
"""Every "Note [X] in FILE" names a FILE that defines Note [X].

    python3 testsuite/lint/notes.py --src SRCDIR

The runtime explains itself in Notes, GHC's way: a comment whose first line is `Note [X]`
alone (after the comment's leader: `/*`, `*`, `#`, `//`, `;`) defines Note [X], and other
places refer to it as "Note [X]", or as "Note [X] in FILE" when it is in another file. A
reference to the wrong file sends the reader to a file that does not say what was promised;
this check fails on one.

It reads the tree's sources and documents (runtime/, testsuite/, tools/, docs/,
experiments/, and the top-level README.md, CHANGES.md, Makefile.am, configure.ac; not
patches/, whose diffs quote old text, nor generated files). For every "Note [X] in FILE"
(either may be broken across comment lines; FILE may be in backquotes) whose FILE looks like
a path (it has a `.` or a `/`: "in GHC" and "in the scheduler" are not checked), FILE is
looked for, in this order, relative to SRCDIR, to SRCDIR/runtime and to the referring file's
directory, and a bare file name (no `/`) as the one file of that name in the tree, if there is
exactly one; the reference is wrong when no such file exists or the first found does not
define Note [X]. Exit status 1 on a wrong reference, each printed as
"notes: PATH:LINE: Note [X] in FILE: what is wrong" (with the file that does define it, when
one does).
"""
import argparse
import os
import re
import sys

DIRS = ("runtime", "testsuite", "tools", "docs", "experiments")
TOP = ("README.md", "CHANGES.md", "Makefile.am", "configure.ac")
EXTS = (".c", ".h", ".py", ".md", ".am", ".ac", ".scm", ".sh", ".hs", ".txt", ".m4")
SKIP_DIRS = {".git", "__pycache__", ".deps", "results", "_build", "_bench"}
# What may start a continued comment line: whitespace, then /*, *, #..., //, ;...
LEADER = re.compile(r"^[ \t]*(?:/\*+|\*+(?!/)|#+|//+|;+)?[ \t]?")
DEFINITION = re.compile(r"^[ \t]*(?:/\*+|\*+|#+|//+|;+|\"\"\")?[ \t]*Note \[([^\]\n]+)\]"
                        r"(?:[ \t]*(?:\*/)?[ \t]*$|:)", re.M)
# Over the text with each line's comment leader taken away and lines joined by a space.
# A name does not run out of one comment into the next ("*/" or "/*" inside it).
REFERENCE = re.compile(r"Note\s*\[((?:(?!\*/|/\*)[^\]])+)\]\s+in\s+`?([A-Za-z0-9_.+/-]+)")


def sources(src):
    for name in TOP:
        if os.path.isfile(os.path.join(src, name)):
            yield name
    for d in DIRS:
        for root, dirs, files in os.walk(os.path.join(src, d)):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.relpath(os.path.join(root, f), src)


def read(src, rel):
    try:
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            return f.read()
    except (UnicodeDecodeError, OSError):
        return None


def definitions(text):
    return {" ".join(m.group(1).split()) for m in DEFINITION.finditer(text)}


def flatten(text):
    """The text with comment leaders removed, lines joined by one space; and the offset in
    it where each line starts (for line numbers)."""
    starts, parts, pos = [], [], 0
    for line in text.split("\n"):
        body = LEADER.sub("", line, count=1)
        starts.append(pos)
        parts.append(body)
        pos += len(body) + 1
    return " ".join(parts), starts


def looks_like_path(word):
    return "." in word or "/" in word


def check(src):
    problems = []
    defs_cache = {}

    def defs_of(rel):
        if rel not in defs_cache:
            text = read(src, rel)
            defs_cache[rel] = definitions(text) if text is not None else set()
        return defs_cache[rel]

    files = list(sources(src))
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    for rel in files:
        text = read(src, rel)
        if text is None or "Note" not in text:
            continue
        flat, starts = flatten(text)
        for m in REFERENCE.finditer(flat):
            note = " ".join(m.group(1).split())
            target = m.group(2).rstrip(".,;:")
            if not looks_like_path(target):
                continue
            line = 1 + sum(1 for s in starts if s <= m.start()) - 1
            where = f"{rel}:{line}: Note [{note}] in {target}"
            candidates = [os.path.normpath(c) for c in
                          (target, os.path.join("runtime", target),
                           os.path.join(os.path.dirname(rel), target))]
            found = next((c for c in candidates if os.path.isfile(os.path.join(src, c))), None)
            if found is None and "/" not in target and len(by_name.get(target, ())) == 1:
                found = by_name[target][0]
            if found is None:
                problems.append(f"{where}: no such file{defined_in(note, files, defs_of)}")
            elif note not in defs_of(found):
                problems.append(f"{where}: {found} does not define it"
                                f"{defined_in(note, files, defs_of)}")
    return problems


def defined_in(note, files, defs_of):
    where = [f for f in files if note in defs_of(f)]
    return f" (defined in {', '.join(where)})" if where else " (defined nowhere)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".", help="the source tree (default: .)")
    args = ap.parse_args()
    problems = check(args.src)
    for p in problems:
        print(f"notes: {p}", file=sys.stderr)
    if problems:
        print(f"notes: {len(problems)} wrong reference(s) in {args.src}", file=sys.stderr)
        return 1
    print("notes ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
