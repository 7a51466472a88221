#!/usr/bin/env python3
"""Self-test of prefixes.py, so that the prefix check cannot pass by checking nothing.

    python3 testsuite/lint/test_prefixes.py

Compiles a throwaway runtime tree (sm/a.c exports a name of its module, one of no prefix
of its module, an internal rts_ name and a public one that runtime/include/ declares; base/b.c
a base_ name and one of sm's prefixes; os/extra.c names of its own file's name, one only
like it; names a sanitizer makes, which it must leave alone) and checks that prefixes.py reports exactly the planted names, then that the tree
passes once they are renamed. Prints "test_prefixes: N checks
passed" and exits 0, or names the first check that failed and exits 1 (2 without a C compiler
or nm: nothing checked).
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
checks = 0


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        print(f"test_prefixes: FAILED: {what}{': ' + detail if detail else ''}", file=sys.stderr)
        sys.exit(1)


def build(src, bld, files, cc):
    for rel, text in files.items():
        path = os.path.join(src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        if rel.endswith(".c"):
            obj = os.path.join(bld, rel[:-2] + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            subprocess.run(cc.split() + ["-c", "-o", obj, path], check=True)


def run(src, bld):
    p = subprocess.run([sys.executable, os.path.join(HERE, "prefixes.py"), "--src", src,
                        "--build", bld], capture_output=True, text=True)
    return p.returncode, p.stdout, [l for l in p.stderr.splitlines()
                                    if l and not l.startswith("prefixes:")]


def main():
    cc = next((c for c in [os.environ.get("CC"), "cc", "gcc", "clang"]
               if c and shutil.which(c.split()[0])), None)
    if cc is None or shutil.which(os.environ.get("NM", "nm")) is None:
        print("test_prefixes: no C compiler or no nm here: nothing checked", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="test_prefixes.")
    try:
        src, bld = os.path.join(tmp, "src"), os.path.join(tmp, "build")
        build(src, bld, {
            "runtime/include/rtslab.h": "/* the public API */\nint rts_public(void);\n",
            "runtime/sm/a.c": "int sm_ok(void) { return 1; }\n"
                              "int collect_all(void) { return 2; }\n"
                              "int rts_hidden(void) { return 3; }\n"
                              "int rts_public(void) { return 4; }\n"
                              "static int local_helper(void) { return 5; }\n"
                              "int sm_uses(void) { return local_helper(); }\n"
                              "int odr_x __asm__(\"__odr_asan.odr_x\") = 6;\n"
                              "int __made_by_the_compiler = 7;\n",
            "runtime/base/b.c": "int base_ok = 1;\nint gc_misplaced = 2;\n",
            "runtime/os/extra.c": "int extra_own = 1;\nint extra = 2;\nint extras = 3;\n",
        }, cc)
        code, out, got = run(src, bld)
        want = ["runtime/base/b.o: gc_misplaced: not a prefix of base (base_)",
                "runtime/os/extra.o: extras: not a prefix of os (affinity_, numa_, sysfs_, "
                "timer_, topo_)",
                "runtime/sm/a.o: collect_all: not a prefix of sm (blk_, gc_, sanity_, sm_, "
                "wsdeque_)",
                "runtime/sm/a.o: rts_hidden: rts_ is the public API's prefix, and "
                "runtime/include/ does not declare it"]
        expect("the planted names fail the check", code == 1, f"exit {code}\n{out}")
        expect("exactly the planted names are reported", sorted(got) == sorted(want),
               "\n  reported:\n    " + "\n    ".join(got) + "\n  expected:\n    " +
               "\n    ".join(want))
        # Renamed, the same tree passes (and a static name was never a problem).
        shutil.rmtree(bld)
        build(src, bld, {
            "runtime/sm/a.c": "int sm_ok(void) { return 1; }\nint gc_collect_all(void) "
                              "{ return 2; }\nint sm_hidden(void) { return 3; }\n"
                              "int rts_public(void) { return 4; }\n",
            "runtime/base/b.c": "int base_ok = 1;\nint base_moved = 2;\n",
            "runtime/os/extra.c": "int extra_own = 1;\nint extra = 2;\n",
        }, cc)
        code, out, got = run(src, bld)
        expect("the renamed tree passes", code == 0 and not got, f"exit {code}\n{out}{got}")
        expect("it counts what it read", "prefixes: 8 names of 3 objects" in out, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"test_prefixes: {checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
