#!/usr/bin/env python3
"""README.md's Layout section names what the tree holds.

    python3 testsuite/lint/readme_layout.py --src SRCDIR

The Layout section of SRCDIR/README.md is a code block of entries: a path (or several,
separated by ", ") in the left column, what it is to the right, continued on indented lines.
This check fails when the tree has, and the block does not name:
  - a top-level directory (named anywhere in the block as `DIR/`); build outputs are not
    the tree's: directories whose names start with `.` or `_`, and those the top-level
    .gitignore ignores by an anchored `/NAME/` line;
  - a module of the runtime, runtime/X/ (an entry of its own);
  - a document, docs/X.md, or a directory of documents, docs/X/ (an entry of its own);
  - a tool, tools/X.py (named in the tools/ entry);
  - a directory of tests, testsuite/X/ (named as `X/` in the testsuite/ entry);
and when an entry's path does not exist, except the ones a tree may lack and still be whole:
`.ci/run` (not in a release), `patches/` and `docs/patches/` (the base, every patch
stripped, has no patch queue and no patch pages). Exit status 1 on a problem, each printed
as "readme_layout: what is wrong".
"""
import argparse
import fnmatch
import os
import re
import sys

OPTIONAL = {".ci/run", "docs/patches/", "patches/"}


def layout_block(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## Layout\n(.*?)^```\n(.*?)^```", text, re.M | re.S)
    if not m:
        raise ValueError("README.md has no ## Layout section with a ``` block")
    return m.group(2)


def entries(block):
    """{left-column path: its description}, in order."""
    lines = [l for l in block.split("\n") if l.strip()]
    col = None
    for l in lines:
        if not l.startswith(" "):
            m = re.match(r"(.*?\S)\s{2,}\S", l)
            if m:
                col = m.end() - 1
                break
    out = {}
    key = None
    for l in lines:
        if not l.startswith(" ") and col is not None:
            key = l[:col].strip()
            out[key] = l[col:].strip()
        elif key is not None:
            out[key] += " " + l.strip()
    return out


def ignored_dirs(src):
    """fnmatch patterns of the top-level directories .gitignore ignores (`/NAME/` lines)."""
    pats = []
    try:
        with open(os.path.join(src, ".gitignore"), encoding="utf-8") as f:
            for line in f:
                m = re.match(r"^/([^/\s]+)/\s*$", line)
                if m:
                    pats.append(m.group(1))
    except OSError:
        pass
    return pats


def subdirs(path):
    try:
        return sorted(d for d in os.listdir(path)
                      if os.path.isdir(os.path.join(path, d)) and d != "__pycache__")
    except OSError:
        return []


def files(path, ext):
    try:
        return sorted(f for f in os.listdir(path)
                      if f.endswith(ext) and os.path.isfile(os.path.join(path, f)))
    except OSError:
        return []


def named(word, text):
    """WORD appears in TEXT as a whole path component (not as the tail of a longer name)."""
    tail = "" if word.endswith("/") else r"(?![\w-])"
    return re.search(r"(?<![\w./-])" + re.escape(word) + tail, text) is not None


def check(src):
    try:
        block = layout_block(os.path.join(src, "README.md"))
    except (OSError, ValueError) as e:
        return [str(e)]
    ent = entries(block)
    keys = {p for k in ent for p in k.split(", ")}
    problems = []

    ignore = ignored_dirs(src)
    for d in subdirs(src):
        if d.startswith((".", "_")) or any(fnmatch.fnmatch(d, p) for p in ignore):
            continue
        if not named(d + "/", block):
            problems.append(f"top-level directory {d}/ is not named")
    for d in subdirs(os.path.join(src, "runtime")):
        if f"runtime/{d}/" not in keys:
            problems.append(f"runtime/{d}/ has no entry")
    for f in files(os.path.join(src, "docs"), ".md"):
        if f"docs/{f}" not in keys:
            problems.append(f"docs/{f} has no entry")
    for d in subdirs(os.path.join(src, "docs")):
        if f"docs/{d}/" not in keys:
            problems.append(f"docs/{d}/ has no entry")
    tools = ent.get("tools/", "")
    for f in files(os.path.join(src, "tools"), ".py"):
        if not named(f, tools):
            problems.append(f"tools/{f} is not named in the tools/ entry")
    tests = ent.get("testsuite/", "")
    for d in subdirs(os.path.join(src, "testsuite")):
        if not named(d + "/", tests):
            problems.append(f"testsuite/{d}/ is not named in the testsuite/ entry")
    for k in sorted(keys):
        if k not in OPTIONAL and not os.path.exists(os.path.join(src, k)):
            problems.append(f"the entry {k} names nothing in the tree")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".", help="the source tree (default: .)")
    args = ap.parse_args()
    problems = check(args.src)
    for p in problems:
        print(f"readme_layout: {p}", file=sys.stderr)
    if problems:
        print(f"readme_layout: {len(problems)} problem(s): README.md's Layout section is "
              f"not the tree's", file=sys.stderr)
        return 1
    print("readme_layout ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
