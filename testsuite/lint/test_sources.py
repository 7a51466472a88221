#!/usr/bin/env python3
"""Self-test of sources.py, so that the every-source-is-listed check cannot pass by checking
nothing.

    python3 testsuite/lint/test_sources.py

Writes throwaway trees (a configure.ac with two patches, a Makefile.am with their marker
blocks, a few C files) in a temporary directory and runs sources.py on each: a clean tree
passes; a runtime file, a unit test and a microbenchmark missing from Makefile.am, a patch's
test listed outside its block, a file of no patch listed inside one, a runtime file that is
nothing but a patch's islands listed outside its block (with unifdef), and a listed file
that does not exist are each reported, and nothing else. Prints "test_sources: N checks
passed" and exits 0, or names the first failed check and exits 1.
"""
import os
import shutil
import subprocess
import sys
import tempfile

SOURCES_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sources.py")
checks = 0

CONFIGURE_AC = """AC_INIT([t], [1])
RTSLAB_PATCH([alpha], [RTS_PATCH_ALPHA], [a])
RTSLAB_PATCH([beta], [RTS_PATCH_BETA], [b])
"""
ISLANDS = '#include "rtslab_config.h"\n#if RTS_PATCH_BETA\nint beta_only(void) { return 1; }\n#endif\n'
FILES = {
    "configure.ac": CONFIGURE_AC,
    "runtime/sm/gc.c": "int gc(void) { return 0; }\n",
    "runtime/sm/beta.c": ISLANDS,
    "testsuite/unit/test_a.c": "int main(void) { return 0; }\n",
    "testsuite/bench/micro/m.c": "int main(void) { return 0; }\n",
    "testsuite/patches/alpha/test_alpha.c": "int main(void) { return 0; }\n",
}
CLEAN_AM = """lib_a_SOURCES = runtime/sm/gc.c
t_SOURCES = testsuite/unit/test_a.c
m_SOURCES = testsuite/bench/micro/m.c
# -- slot 0 --
# {{patch:alpha
a_SOURCES = testsuite/patches/alpha/test_alpha.c
# }}patch:alpha
# -- slot 1 --
# {{patch:beta
lib_a_SOURCES += runtime/sm/beta.c
# }}patch:beta
# -- slot 2 --
"""


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def run(tmp, name, am, extra=None):
    root = os.path.join(tmp, name)
    for rel, text in {**FILES, "Makefile.am": am, **(extra or {})}.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    p = subprocess.run([sys.executable, SOURCES_PY, "--src", root], capture_output=True,
                       text=True)
    found = [l for l in p.stderr.splitlines() if l.startswith("sources: ")
             and " problem(s) in " not in l]
    return p.returncode, found, p.stdout + p.stderr


def expect_reported(tmp, name, am, paths, extra=None):
    code, found, out = run(tmp, name, am, extra)
    expect(f"{name}: fails", code == 1, out)
    got = sorted(l.split(":")[1].strip() for l in found)
    expect(f"{name}: reports exactly {paths}", got == sorted(paths), out)


def main():
    unifdef = shutil.which("unifdef") is not None
    with tempfile.TemporaryDirectory(prefix="test_sources.") as tmp:
        code, found, out = run(tmp, "clean", CLEAN_AM)
        expect("a tree with every file listed passes", code == 0 and not found, out)
        expect_reported(tmp, "missing", CLEAN_AM.replace("lib_a_SOURCES = runtime/sm/gc.c\n", "")
                        .replace("t_SOURCES = testsuite/unit/test_a.c\n", "")
                        .replace("m_SOURCES = testsuite/bench/micro/m.c\n", ""),
                        ["runtime/sm/gc.c", "testsuite/unit/test_a.c",
                         "testsuite/bench/micro/m.c"])
        expect_reported(tmp, "patch-test-outside",
                        CLEAN_AM + "x_SOURCES = testsuite/patches/alpha/test_alpha.c\n",
                        ["testsuite/patches/alpha/test_alpha.c"])
        expect_reported(tmp, "base-file-inside",
                        CLEAN_AM.replace("lib_a_SOURCES = runtime/sm/gc.c\n", "")
                        .replace("# {{patch:alpha\n", "# {{patch:alpha\nl_SOURCES = runtime/sm/gc.c\n"),
                        ["runtime/sm/gc.c"])
        expect_reported(tmp, "gone", CLEAN_AM + "g_SOURCES = runtime/sm/gone.c\n",
                        ["runtime/sm/gone.c"])
        if unifdef:
            expect_reported(tmp, "own-file-outside",
                            CLEAN_AM.replace("lib_a_SOURCES += runtime/sm/beta.c\n", "")
                            + "lib_a_SOURCES += runtime/sm/beta.c\n",
                            ["runtime/sm/beta.c"])
        else:
            print("test_sources: note: no unifdef here: the own-file check is not exercised")
    print(f"test_sources: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_sources: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
