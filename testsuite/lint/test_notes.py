#!/usr/bin/env python3
"""Self-test of notes.py, so that the "Note [X] in FILE" check cannot pass by checking nothing.

    python3 testsuite/lint/test_notes.py

Writes throwaway trees in a temporary directory and runs notes.py on each: a tree whose
references are all right (relative to the tree, to runtime/, to the referring file's
directory, a bare file name found once in the tree, broken across comment lines, in
backquotes, a definition followed by ":" text, "in GHC" which is no file) passes; a
reference to a file that defines another Note, to a file that does not exist, to a bare name
that two files have, one whose name is broken across lines, one in a Markdown document, and
one in Makefile.am are each reported, and nothing else. Prints "test_notes: N checks passed"
and exits 0, or names the first failed check and exits 1.
"""
import os
import subprocess
import sys
import tempfile

NOTES_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.py")
checks = 0
# "N@[X]" is written for "Note [X]", so that notes.py, reading this file, finds no reference.

FILES = {
    "runtime/sm/gc.h": "/* N@[Deferred GC requests]\n * A request is deferred.\n */\n",
    "runtime/sm/storage.h": "/*\n * N@[Aging]\n * Objects age.\n */\n",
    "runtime/sched/stack.c": "/* N@[Stacks reserved lazily]: reserved, not committed. */\n",
    "tools/layout.py": "# N@[Code layout as a factor]\n# Layout moves programs.\n",
    "Makefile.am": "# N@[Every source is listed]\n# automake needs every source.\n",
    # Clean references.
    "runtime/sm/gc.c": ("/* See N@[Aging] in storage.h and N@[Deferred GC requests] in\n"
                        " * sm/gc.h, and N@[Deferred GC\n * requests] in runtime/sm/gc.h. */\n"
                        "/* N@[Work Balance] in GHC's rts/sm/GC.c is the model. */\n"),
    "runtime/sched/sched.c": "// N@[Stacks reserved lazily] in stack.c\n",
    "docs/guide.md": "Layout (N@[Code layout as a factor] in `tools/layout.py`).\n",
    "testsuite/bench.py": "# (N@[Every source is listed] in Makefile.am)\n",
}


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def run(tmp, name, extra=None):
    root = os.path.join(tmp, name)
    for rel, text in {**FILES, **(extra or {})}.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace("N@", "Note "))
    p = subprocess.run([sys.executable, NOTES_PY, "--src", root], capture_output=True,
                       text=True)
    found = [l for l in p.stderr.splitlines() if l.startswith("notes: ")
             and " wrong reference(s) in " not in l]
    return p.returncode, found, p.stdout + p.stderr


def expect_reported(tmp, name, extra, wanted):
    """wanted: [(path:line, a substring of the complaint)], exactly what must be reported."""
    code, found, out = run(tmp, name, extra)
    expect(f"{name}: fails", code == 1, out)
    expect(f"{name}: {len(wanted)} report(s)", len(found) == len(wanted), out)
    for (where, what), line in zip(sorted(wanted), sorted(found)):
        expect(f"{name}: reports {where}", line.startswith(f"notes: {where}: "), out)
        expect(f"{name}: says '{what}'", what in line, line)


def main():
    with tempfile.TemporaryDirectory(prefix="test_notes-") as tmp:
        code, found, out = run(tmp, "clean")
        expect("clean tree passes", code == 0 and not found and "notes ok" in out, out)

        expect_reported(tmp, "wrong-file", {
            "runtime/sm/evac.c": "/* as N@[Aging] in gc.h says */\n"},
            [("runtime/sm/evac.c:1", "runtime/sm/gc.h does not define it (defined in "
                                     "runtime/sm/storage.h)")])
        expect_reported(tmp, "no-file", {
            "runtime/sm/evac.c": "x;\n/* N@[Aging] in sm/ageing.h */\n"},
            [("runtime/sm/evac.c:2", "no such file (defined in runtime/sm/storage.h)")])
        expect_reported(tmp, "ambiguous-name", {
            "runtime/os/gc.h": "/* N@[Other] */\n",
            "docs/gc.md": "See N@[Deferred GC requests] in gc.h.\n"},
            [("docs/gc.md:1", "no such file")])
        expect_reported(tmp, "broken-name", {
            "runtime/sm/evac.c": ("/* a\n * b (N@[Deferred\n * GC requests] in\n"
                                  " * storage.h) */\n")},
            [("runtime/sm/evac.c:2", "runtime/sm/storage.h does not define it")])
        expect_reported(tmp, "undefined-note", {
            "docs/guide.md": "Layout (N@[Code layouts] in `tools/layout.py`).\n"},
            [("docs/guide.md:1", "does not define it (defined nowhere)")])
        expect_reported(tmp, "makefile", {
            "Makefile.am": ("# N@[Every source is listed]\n# x\n"
                            "# (N@[Code layout as a factor] in tools/variant.py)\n")},
            [("Makefile.am:3", "no such file (defined in tools/layout.py)")])
        # A comment's end and the next comment's start are not part of a Note's name, and a
        # reference inside a patch's diff is not read.
        code, found, out = run(tmp, "two-comments", {
            "runtime/sm/evac.c": "/* N@[Nothing */ int x; /* here] in gc.h */\n",
            "patches/0001-a.patch": "-/* N@[Aging] in sm/gc.h */\n"})
        expect("a name across two comments is not read as one", code == 0, out)
    print(f"test_notes: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_notes: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
