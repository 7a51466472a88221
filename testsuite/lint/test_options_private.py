#!/usr/bin/env python3
"""Self-test of options_private.py, so that the check cannot pass by checking nothing.

    python3 testsuite/lint/test_options_private.py

Writes throwaway trees in a temporary directory and runs options_private.py on each: a clean
tree (rts_opts in rts/options.c, rts_options() called in rts/rts.c and a patch's
registration, declared in include/, named in comments and strings elsewhere) passes; rts_opts
named in sm/gc.c, in a header below rts/ and in rts/rts.c, rts_options() called in
sched/stack.c and in scheme/prim.c, and rts_options_parse() called in trace/stats.c are each
reported, and nothing else. Prints "test_options_private: N checks passed" and exits 0, or
names the first failed check and exits 1.
"""
import os
import subprocess
import sys
import tempfile

LINT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "options_private.py")
checks = 0
CLEAN = {
    "runtime/rts/options.c": "static RtsOptions rts_opts;\n"
                             "const RtsOptions *rts_options(void) { return &rts_opts; }\n",
    "runtime/rts/rts.c": "void f(void) { if (rts_options()->show_help) g(); }\n",
    "runtime/rts/patch_x.c": "static void info(void) { h(rts_options()->pin_caps); }\n",
    "runtime/include/rtslab.h": "const RtsOptions *rts_options(void);\n",
    "runtime/sm/gc.c": "/* once rts_opts.sanity, now base_cfg->sanity; not rts_options() */\n"
                       "// nor rts_opts\nstatic const char *s = \"rts_opts\";\n"
                       "int x(void) { return base_cfg->sanity; }\n",
}
PLANTED = [   # (file, text, what the report must say)
    ("runtime/sm/gc.c", "int x(void) {\n  return rts_opts.sanity;\n}\n",
     "runtime/sm/gc.c:2: names rts_opts"),
    ("runtime/sm/storage.h", "#define S (rts_opts.gc_stress)\n",
     "runtime/sm/storage.h:1: names rts_opts"),
    ("runtime/rts/rts.c", "void f(void) { g(rts_opts.max_heap); }\n",
     "runtime/rts/rts.c:1: names rts_opts"),
    ("runtime/sched/stack.c", "size_t k(void) { return rts_options ()->max_stack; }\n",
     "runtime/sched/stack.c:1: calls rts_options()"),
    ("runtime/scheme/prim.c", "/* x */ size_t k(void) { return rts_options()->max_stack; }\n",
     "runtime/scheme/prim.c:1: calls rts_options()"),
    ("runtime/trace/stats.c", "void s(void) { rts_options_parse(0, 0, 0, 0, 0, 0); }\n",
     "runtime/trace/stats.c:1: calls rts_options_parse()"),
]


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        print(f"test_options_private: FAILED: {what}{': ' + detail if detail else ''}")
        sys.exit(1)


def run(files):
    with tempfile.TemporaryDirectory() as d:
        for rel, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(d, rel)), exist_ok=True)
            with open(os.path.join(d, rel), "w") as f:
                f.write(text)
        r = subprocess.run([sys.executable, LINT, "--src", d], capture_output=True, text=True)
        return r.returncode, r.stdout


def main():
    rc, out = run(CLEAN)
    expect("a clean tree passes", rc == 0 and out == "options_private ok\n", out)
    for rel, text, want in PLANTED:
        files = dict(CLEAN)
        files[rel] = text
        rc, out = run(files)
        lines = out.splitlines()
        expect(f"{want} reported", rc == 1 and len(lines) == 1
               and lines[0].startswith(f"options_private: {want}"), out)
    print(f"test_options_private: {checks} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
