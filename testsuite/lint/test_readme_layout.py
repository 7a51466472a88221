#!/usr/bin/env python3
"""Self-test of readme_layout.py, so that the check of README.md's Layout cannot pass by
checking nothing.

    python3 testsuite/lint/test_readme_layout.py

Writes throwaway trees in a temporary directory and runs readme_layout.py on each: a tree
whose README names everything passes (with build outputs, .gitignore'd or `_`-named, beside
it, and without the optional docs/patches/); a new top-level directory, a runtime module, a
document, a directory of documents, a tool, a directory of tests, each not named, and an
entry naming what is not there, are each reported, and nothing else; a README without a
Layout section fails. Prints "test_readme_layout: N checks passed" and exits 0, or names the
first failed check and exits 1.
"""
import os
import subprocess
import sys
import tempfile

LAYOUT_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "readme_layout.py")
checks = 0

README = """# t

## Layout

```
configure.ac, m4/   the configure script's source
runtime/sm/         storage manager
runtime/sched/      scheduler, threads and
                    stacks
testsuite/          driver.py and the tests: unit/, gc/, lint/ (static
                    checks)
docs/stats.md       statistics
docs/patches/       one page per patch
tools/              mkpatches.py (the patch queue), variant.py (variant
                    builds)
.ci/run             the CI script
```

Text after.
"""
FILES = ["configure.ac", "m4/x.m4", "runtime/sm/gc.c", "runtime/sched/s.c",
         "testsuite/driver.py", "testsuite/unit/TESTS", "testsuite/gc/TESTS",
         "testsuite/lint/TESTS", "docs/stats.md", "tools/mkpatches.py", "tools/variant.py",
         # build outputs: not the tree's
         "build/gen.inc", "_build/all/Makefile", "rtslab-1.0/README.md",
         "testsuite/__pycache__/x.pyc"]
GITIGNORE = "/build/\n/rtslab-*/\n*.o\n"


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def run(tmp, name, extra=(), readme=README, remove=()):
    root = os.path.join(tmp, name)
    for rel in list(FILES) + list(extra):
        if rel in remove:
            continue
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").close()
    for rel, text in (("README.md", readme), (".gitignore", GITIGNORE)):
        with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
            f.write(text)
    p = subprocess.run([sys.executable, LAYOUT_PY, "--src", root], capture_output=True,
                       text=True)
    found = [l for l in p.stderr.splitlines() if l.startswith("readme_layout: ")
             and " problem(s): " not in l]
    return p.returncode, found, p.stdout + p.stderr


def expect_reported(tmp, name, wanted, **kw):
    code, found, out = run(tmp, name, **kw)
    expect(f"{name}: fails", code == 1, out)
    expect(f"{name}: reports exactly {wanted}",
           [l.removeprefix("readme_layout: ") for l in found] == [wanted], out)


def main():
    with tempfile.TemporaryDirectory(prefix="test_readme_layout-") as tmp:
        code, found, out = run(tmp, "clean")
        expect("clean tree passes", code == 0 and not found and "readme_layout ok" in out, out)

        expect_reported(tmp, "top-dir", "top-level directory experiments/ is not named",
                        extra=["experiments/README.md"])
        expect_reported(tmp, "module", "runtime/io/ has no entry",
                        extra=["runtime/io/iomgr.c"])
        expect_reported(tmp, "doc", "docs/new-patch.md has no entry",
                        extra=["docs/new-patch.md"])
        expect_reported(tmp, "doc-dir", "docs/howto/ has no entry",
                        extra=["docs/howto/a.md"])
        expect_reported(tmp, "tool", "tools/newpatch.py is not named in the tools/ entry",
                        extra=["tools/newpatch.py"])
        # variant.py is named; a tool whose name ends the same is still reported
        expect_reported(tmp, "tool-suffix", "tools/ant.py is not named in the tools/ entry",
                        extra=["tools/ant.py"])
        expect_reported(tmp, "tests", "testsuite/io/ is not named in the testsuite/ entry",
                        extra=["testsuite/io/TESTS"])
        expect_reported(tmp, "gone", "the entry runtime/sched/ names nothing in the tree",
                        remove=["runtime/sched/s.c"])
        code, found, out = run(tmp, "no-section", readme="# t\n\nNo layout here.\n")
        expect("no Layout section fails", code == 1 and "no ## Layout section" in out, out)
    print(f"test_readme_layout: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_readme_layout: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
