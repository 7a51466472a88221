#!/usr/bin/env python3
"""Every C source is listed in Makefile.am (Note [Every source is listed] there).

    python3 testsuite/lint/sources.py --src SRCDIR

automake builds only the sources Makefile.am names, so a C file added to the tree and not to
Makefile.am would be silently left out of the library (or a test program would never be
built). This check fails when one of these is not named in SRCDIR/Makefile.am:
  runtime/*/*.c, testsuite/unit/*.c, testsuite/gc/*.c, testsuite/patches/*/*.c,
  testsuite/bench/micro/*.c, testsuite/fuzz/*.c
and when Makefile.am names a .c file that does not exist. A patch's own files must be named
inside the patch's `{{patch:NAME` ... `}}patch:NAME` block, so that `make patches` drops
them from the base with the files (tools/mkpatches.py): testsuite/patches/NAME/*.c, and a
runtime C file that is nothing but the patch's islands (found with unifdef, as mkpatches
finds it; without unifdef that part is skipped, with a note). A file of no patch must be
named outside every block, or the base would lose it. Exit status 1 on a violation, each
printed as "sources: PATH: what is wrong".
"""
import argparse
import glob
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import mkpatches  # noqa: E402  (the marker syntax, and what makes a file a patch's own)
PATTERNS = ("runtime/*/*.c", "testsuite/unit/*.c", "testsuite/gc/*.c",
            "testsuite/patches/*/*.c", "testsuite/bench/micro/*.c", "testsuite/fuzz/*.c")
WORD = re.compile(r"[A-Za-z0-9_./+-]+\.c\b")


def listed(makefile_am):
    """{path: set of the patch blocks (names) it is listed in, "" for outside any}."""
    found = {}
    stack = []
    with open(makefile_am, encoding="utf-8") as f:
        for line in f:
            b, e = mkpatches.BEGIN.search(line), mkpatches.END.search(line)
            if b:
                stack.append((b.group(1) or "", b.group(2)))
            code = line.split("#", 1)[0]
            for w in WORD.findall(code):
                w = w.removeprefix("$(srcdir)/").removeprefix("./")
                where = next((n for k, n in reversed(stack) if k == ""), "")
                found.setdefault(w, set()).add(where)
            if e and stack:
                stack.pop()
    return found


def own_patch_of(src, path, patches):
    """The patch whose own file PATH is (a C file that is nothing but its islands), or None;
    raises LookupError when unifdef is not there to tell."""
    if not shutil.which(mkpatches.UNIFDEF):
        raise LookupError
    with open(os.path.join(src, path), "rb") as f:
        data = f.read()
    for p in patches:
        if mkpatches.only_islands_left(data, mkpatches.strip_c(data, [p.macro], path)):
            return p.name
    return None


def check(src):
    problems, notes = [], []
    am = os.path.join(src, "Makefile.am")
    names = listed(am)
    try:
        patches = mkpatches.read_patches(src)
    except mkpatches.PatchError:
        patches = []
    files = sorted({os.path.relpath(p, src).replace(os.sep, "/")
                    for pat in PATTERNS for p in glob.glob(os.path.join(src, pat))})
    no_unifdef = False
    for path in files:
        where = names.get(path)
        if not where:
            problems.append(f"{path}: not listed in Makefile.am (automake would not build it)")
            continue
        owner = None
        m = re.match(r"testsuite/patches/([^/]+)/", path)
        if m:
            owner = m.group(1)
        elif path.startswith("runtime/") and patches:
            try:
                owner = own_patch_of(src, path, patches)
            except LookupError:
                no_unifdef = True
        want = owner or ""
        if where != {want}:
            shown = ", ".join(sorted(f"the {n} block" if n else "outside the blocks"
                                     for n in where))
            if owner:
                problems.append(f"{path}: the {owner} patch's own file is listed {shown}; list "
                                f"it only inside Makefile.am's {{{{patch:{owner} block")
            else:
                problems.append(f"{path}: listed {shown}; a file of no patch is listed outside "
                                f"every {{{{patch: block")
    for path in sorted(names):
        if path.endswith(".c") and not os.path.isfile(os.path.join(src, path)):
            problems.append(f"{path}: listed in Makefile.am but not in the tree")
    if no_unifdef:
        notes.append("unifdef not found: whether a runtime file is a patch's own was not checked")
    return len(files), problems, notes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    n, problems, notes = check(os.path.abspath(a.src))
    for note in notes:
        print(f"sources: note: {note}")
    for p in problems:
        print(f"sources: {p}", file=sys.stderr)
    if problems:
        print(f"sources: {len(problems)} problem(s) in {n} C files", file=sys.stderr)
        return 1
    print(f"sources: all {n} C files are listed in Makefile.am")
    return 0


if __name__ == "__main__":
    sys.exit(main())
