#!/usr/bin/env python3
"""Self-test of base_mentions.py: throwaway trees with planted mentions of a patch, each of
which it must find, and mentions in the patch's islands, marker blocks and files, which it
must leave alone.

    python3 testsuite/lint/test_base_mentions.py

Prints "base_mentions self-test ok: N checks" or the checks that failed (exit 1).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
LINT = os.path.join(HERE, "base_mentions.py")

CONFIGURE_AC = """AC_INIT([t], [1])
# {{patch:slow-lane
RTSLAB_PATCH([slow-lane], [RTS_PATCH_SLOW_LANE], [a slow lane])
# }}patch:slow-lane
slot
# {{patch:big-pages
RTSLAB_PATCH([big-pages], [RTS_PATCH_BIG_PAGES], [bigger pages])
# }}patch:big-pages
"""
PATCH_C = """#include "rtslab_config.h"
#if RTS_PATCH_SLOW_LANE
static unsigned slow_lane;
/* a row in a comment is no option: { .name = "-zz", ... } */
static const RtsOption options[] = {
    { .name = "-xq", .syntax = "-xq<n>", .kind = RTS_OPT_NUMBER, .var = &slow_lane,
      .help = "  -xq<n>\\n" },
    { .name = "-qz0", .kind = RTS_OPT_CLAIM },
    { .name = NULL },
};
static const RtsStatsKey keys[] = {
    { "rtslab_slow_lanes", &sum.taken, NULL },
    { "lane_hits", sum.hits, NULL },
    { NULL, NULL, NULL },
};
#endif
"""
CLEAN = {
    "configure.ac": CONFIGURE_AC,
    "runtime/rts/patch_slow_lane.c": PATCH_C,
    # islands and blocks are the patch's: not mentions
    "runtime/a.c": ("int a;\n#if RTS_PATCH_SLOW_LANE\n/* slow lane, -xq1 */\n"
                    "int slow_lane;\n#endif\nint b;\n"),
    # a claim (a value of a base option) and a row in a comment are not the patch's options
    "docs/a.md": ("Base text about slow capabilities, -qa and -N, -qz0, -zz2, quiet, a\n"
                  "big, paged lane of chunk-sized buffers, rtslab_slow_gc_wakeups.\n"
                  "<!-- {{patch:slow-lane -->\nThe slow lane patch: -xq1, "
                  "rtslab_slow_lanes.\n<!-- }}patch:slow-lane -->\n"),
    "testsuite/patches/slow-lane/TESTS": "t -- rtslab +RTS -xq1 -RTS  # slow lane\n",
}
# planted: (file, text, the patch and the mention the lint must report)
PLANTED = [
    ("docs/b.md", "with the slow lane patch\n", "slow-lane", "words 'slow lane'"),
    ("docs/c.md", "Futex-free; SLOW_LA_NE here\n", "slow-lane", "words 'SLOW_LA_NE'"),
    ("docs/d.md", "the big page size\n", "big-pages", "words 'big page'"),
    ("docs/e.md", "bigpages\n", "big-pages", "words 'bigpages'"),
    ("runtime/f.c", "int rts_opts_slow_lane;\n", "slow-lane", "words 'slow_lane'"),
    ("testsuite/g/TESTS", "x -- rtslab +RTS -xq2 -RTS\n", "slow-lane", "option '-xq'"),
    ("docs/h.md", "run with `-xq<n>`\n", "slow-lane", "option '-xq'"),
    ("testsuite/i.py", "KEY = 'rtslab_slow_lanes'\n", "slow-lane",
     "counter key 'rtslab_slow_lanes'"),
    ("testsuite/j.py", "k = 'rtslab_slow_enter_lane_hits'\n", "slow-lane",
     "counter key 'rtslab_slow_enter_lane_hits'"),
    ("docs/k.md", "slow-lane\n", "slow-lane", "name or macro"),
    ("runtime/l.h", "/* a slower lane, big pagers, pages big; lanes slow */\n", None, None),
]


def run_tree(files):
    with tempfile.TemporaryDirectory(prefix="test_base_mentions.") as tmp:
        for path, text in files.items():
            full = os.path.join(tmp, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        subprocess.run(["git", "init", "-q", tmp], check=True)
        subprocess.run(["git", "-C", tmp, "add", "-A"], check=True)
        r = subprocess.run([sys.executable, LINT, "--src", tmp], capture_output=True,
                           text=True)
        return r.returncode, r.stdout + r.stderr


def main():
    fails, checks = [], 0

    def check(ok, what):
        nonlocal checks
        checks += 1
        if not ok:
            fails.append(what)

    rc, out = run_tree(CLEAN)
    check(rc == 0, "a clean tree fails:\n" + out)
    check("names none of them" in out, "a clean tree's report: " + out)
    for path, text, patch, what in PLANTED:
        files = dict(CLEAN)
        files[path] = text
        rc, out = run_tree(files)
        if patch is None:
            check(rc == 0, "%s: %r reported:\n%s" % (path, text, out))
            continue
        check(rc == 1, "%s: %r not caught (exit %d):\n%s" % (path, text, rc, out))
        want = "%s:1: mentions %s (its %s)" % (path, patch, what)
        check(want in out, "%s: wanted %r in:\n%s" % (path, want, out))
    # a tree without patches (the base itself) passes
    rc, out = run_tree({"configure.ac": "AC_INIT([t], [1])\n", "docs/a.md": "opt-out\n"})
    check(rc == 0 and "no patch" in out, "the base itself: " + out)
    if fails:
        print("\n".join("FAIL " + f for f in fails))
        return 1
    print("base_mentions self-test ok: %d checks" % checks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
