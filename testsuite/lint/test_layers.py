#!/usr/bin/env python3
"""Self-test of layers.py, so that the layering check cannot pass by checking nothing.

    python3 testsuite/lint/test_layers.py

Builds throwaway runtime trees in a temporary directory, runs layers.py on each and checks
that it reports exactly the violations planted there (an upward include next to a downward
one; the same-rank, scheme-only, unresolvable-include and uncovered-file rules; an upward
call that rule B finds with nm in objects compiled here) and passes a clean tree. Prints
"test_layers: N checks passed" and exits 0, or names the first check that failed and exits 1.
"""

import os
import shutil
import subprocess
import sys
import tempfile

LAYERS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.py")
checks = 0


class Failed(Exception):
    pass


def write_tree(root, files):
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def run_layers(src, build=None, env=None):
    cmd = [sys.executable, LAYERS_PY, "--src", src]
    if build:
        cmd += ["--build", build]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


def violations(stderr):
    return [l for l in stderr.splitlines() if l and not l.startswith("layers:")]


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def expect_exactly(what, got, want):
    expect(what, sorted(got) == sorted(want),
           "\n  reported:\n    " + "\n    ".join(got) + "\n  expected:\n    " + "\n    ".join(want))


def test_up_and_down(tmp):
    """One include goes up (sm -> sched), one goes down (sched -> sm): only the first is
    reported."""
    src = os.path.join(tmp, "updown")
    write_tree(src, {
        "runtime/include/pub.h": "/* public */\n",
        "runtime/sm/gc.h": '#include "pub.h"\n',
        "runtime/sm/gc.c": '#include "sm/gc.h"\n#include "sched/cap.h"\n',
        "runtime/sched/cap.h": '#include "rtslab_config.h"\n',
        "runtime/sched/cap.c": '#include "sched/cap.h"\n#include "sm/gc.h"\n',
    })
    code, out, err = run_layers(src)
    expect("an upward include fails the check", code == 1, f"exit {code}\n{out}{err}")
    expect_exactly("exactly the upward include is reported", violations(err), [
        "runtime/sm/gc.c:2: includes sched/cap.h (sched, rank 5) from sm (rank 4): goes up"])
    expect("the count is printed", "layers: 1 violation" in err, err)

    # Without it the same tree passes.
    write_tree(src, {"runtime/sm/gc.c": '#include "sm/gc.h"\n'})
    code, out, err = run_layers(src)
    expect("a tree whose includes all go down passes", code == 0, f"exit {code}\n{out}{err}")
    expect("the summary line", "layers: 5 files, 5 includes: all go down" in out, out)
    expect("the note that rule B did not run", "rule B (symbol references) skipped" in out, out)


def test_other_rules(tmp):
    src = os.path.join(tmp, "rules")
    write_tree(src, {
        "runtime/include/rtslab.h": "",
        "runtime/os/timer.c": '#include "trace/eventlog.h"\n',               # same rank
        "runtime/trace/eventlog.h": "",
        "runtime/trace/eventlog.c": '#include "trace/eventlog.h"\n#include "os/nope.h"\n',
        "runtime/stats/stats.c": '#include "trace/eventlog.h"\n',             # down: fine
        "runtime/sm/gc.h": "",
        "runtime/rts/vm_api.h": '#include "rtslab.h"\n',
        "runtime/rts/rts.h": "",
        "runtime/main/main.c": '#include "scheme/vm.h"\n#include "rts/rts.h"\n',  # fine
        "runtime/scheme/vm.h": '#include "rtslab.h"\n',
        "runtime/scheme/vm.c": ('#include "vm.h"\n'
                                '#include "rts/vm_api.h"\n'
                                '/* #include "sm/gc.h" in a comment */\n'
                                '#include "scheme_prelude.inc"\n'
                                '// #include "rts/rts.h"\n'
                                '#include "sm/gc.h"\n'                       # down, not allowed
                                '#include "rts/rts.h"\n'),                   # likewise
        "runtime/newdir/x.c": "",                                             # no layer
    })
    code, out, err = run_layers(src)
    expect("the other rules fail the check", code == 1, f"exit {code}\n{out}{err}")
    only = "scheme may include only runtime/include/, rts/vm_api.h and scheme/ headers"
    expect_exactly("same rank, scheme's own rule, unresolvable, uncovered", violations(err), [
        "runtime/os/timer.c:1: includes trace/eventlog.h (trace, rank 2) from os "
        "(rank 2): another module of the same rank",
        "runtime/trace/eventlog.c:2: includes os/nope.h: not found under runtime/ (nor a "
        "generated file)",
        f"runtime/scheme/vm.c:6: includes sm/gc.h (sm, rank 4) from scheme (rank 8): {only}",
        f"runtime/scheme/vm.c:7: includes rts/rts.h (rts, rank 7) from scheme (rank 8): {only}",
        "runtime/newdir/x.c: no layer covers it (add it to LAYERS in testsuite/lint/layers.py "
        "and to runtime/README.md)",
    ])


def find_cc():
    for cc in [os.environ.get("CC"), "cc", "gcc", "clang"]:
        if cc and shutil.which(cc.split()[0]):
            return cc
    return None


def test_symbols(tmp):
    """sm/a.c calls sched_g (up) through a declaration of its own, no include; sched/b.c
    calls sm_f (down): rule B reports exactly the first. A public header's inline function
    calls sm_f (up: rule C), sm/a.h's calls it too (its own module: fine); a declaration
    without a body calls nothing."""
    src = os.path.join(tmp, "syms")
    build = os.path.join(tmp, "syms-build")
    write_tree(src, {
        "runtime/sm/a.c": "int sched_g(void);\nint sm_f(void) { return sched_g() + 1; }\n",
        "runtime/sched/b.c": "int sm_f(void);\nint sched_g(void) { return 2; }\n"
                             "int sched_h(void) { return sm_f(); }\n",
        "runtime/include/pub.h": "int sm_f(void);\nstatic inline int pub_twice(int x)\n"
                                 "{\n    return x * (sm_f() + 1);\n}\n"
                                 "static inline int pub_decl(int sm_f);\n",
        "runtime/sm/a.h": "int sm_f(void);\nstatic inline int sm_twice(void) "
                          "{ return 2 * sm_f(); }\n",
    })
    cc = find_cc()
    if cc is None or shutil.which(os.environ.get("NM", "nm")) is None:
        print("test_layers: note: no C compiler or no nm here: the rule B checks are skipped")
        return
    for rel in ("sm/a", "sched/b"):
        obj = os.path.join(build, "runtime", rel + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run(cc.split() + ["-c", "-o", obj, os.path.join(src, "runtime", rel + ".c")],
                       check=True)
    code, out, err = run_layers(src, build)
    expect("an upward call fails the check", code == 1, f"exit {code}\n{out}{err}")
    expect_exactly("exactly the upward call is reported", violations(err), [
        "runtime/sm/a.o: calls sched_g (defined in sched/b.c, rank 5) from sm (rank 4): goes up",
        "runtime/include/pub.h:4: inline pub_twice calls sm_f (defined in sm/a.c, rank 4) "
        "from include (rank 0): goes up"])

    # Without nm: a note, rule A alone, and the tree (no includes) passes.
    code, out, err = run_layers(src, build, env={"NM": "no-such-nm-here"})
    expect("without nm the check says it skipped rule B",
           code == 0 and "no-such-nm-here not found" in out, f"exit {code}\n{out}{err}")


def main():
    tmp = tempfile.mkdtemp(prefix="test_layers.")
    try:
        for test in (test_up_and_down, test_other_rules, test_symbols):
            try:
                test(tmp)
            except Failed as e:
                print(f"test_layers: {test.__name__}: FAILED: {e}", file=sys.stderr)
                return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"test_layers: {checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
