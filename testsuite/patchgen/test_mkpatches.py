#!/usr/bin/env python3
"""The patch generator's own test (tools/mkpatches.py): on a tiny tree with two fake patches,
alpha and beta, the base and each patched tree come out exactly as written below, the patch
files apply alone to the base with `git am` and give those trees back, the series applies in
order, and a patch that does not apply alone, a stray mention of a patch in the base and an
unclosed marker are each reported. Prints "mkpatches self-test: N checks passed" or fails."""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools"))
import mkpatches  # noqa: E402

CONFIGURE_AC = """\
AC_INIT([fixture], [1])
AC_CONFIG_HEADERS([rtslab_config.h])
m4_define([RTSLAB_PATCH], [AC_DEFINE([$2], [1], [$3])])
# {{patch:alpha
RTSLAB_PATCH([alpha], [RTS_PATCH_ALPHA], [the first idea])
# }}patch:alpha
dnl -- slot 2 --
# {{patch:beta
RTSLAB_PATCH([beta], [RTS_PATCH_BETA], [the second idea])
# }}patch:beta
AC_OUTPUT
"""

MAIN_C = """\
#include "rtslab_config.h"
int f(void)
{
    int x = 1;
#if RTS_PATCH_ALPHA
    x += 10;
#else
    x += 2;
#endif
    x -= 1;
#if RTS_PATCH_BETA
    x *= 3;
#endif
    return x;
}
"""

BETA_C = """\
#include "rtslab_config.h"
#if RTS_PATCH_BETA
/* beta's own file */
int beta(void) { return 3; }
#endif
"""

NOTES_MD = """\
# Notes
Plain text.
<!-- {{patch:alpha -->
Alpha's paragraph.
<!-- }}patch:alpha -->
Middle.
<!-- {{nopatch:beta -->
Without the second idea.
<!-- }}nopatch:beta -->
End.
"""

TREE = {
    "configure.ac": CONFIGURE_AC,
    "main.c": MAIN_C,
    "beta.c": BETA_C,
    "notes.md": NOTES_MD,
    "testsuite/patches/alpha/TESTS": "a_test -- true\n",
    "testsuite/patches/beta/TESTS": "# a comment\nb_one -- true\nb_two -- true\n",
    "experiments/beta/README.md": "beta measured\n",
    "docs/patches/alpha.md": "# alpha: the first idea\n\nWhy alpha.\n",
    "docs/patches/beta.md": "beta: the second idea\n\nWhy beta.\n",
    # raw results stay in the tree only; the queue's report (naming both) too, but its programs
    "experiments/beta/results/runs.json": "{}\n",
    "experiments/patch-matrix/README.md": "alpha and beta, each against the other\n",
    "experiments/patch-matrix/plot.py": "print('bars')\n",
}

# What the three trees must hold (configure and rtslab_config.h.in are generated; not listed).
BASE = {
    "configure.ac": "".join(l for l in CONFIGURE_AC.splitlines(keepends=True)
                            if "patch:" not in l and "RTS_PATCH_" not in l),
    "main.c": ('#include "rtslab_config.h"\nint f(void)\n{\n    int x = 1;\n    x += 2;\n'
               '    x -= 1;\n    return x;\n}\n'),
    "notes.md": "# Notes\nPlain text.\nMiddle.\nWithout the second idea.\nEnd.\n",
    "experiments/patch-matrix/plot.py": TREE["experiments/patch-matrix/plot.py"],
}
ALPHA = {
    "configure.ac": CONFIGURE_AC.replace(
        "# {{patch:beta\nRTSLAB_PATCH([beta], [RTS_PATCH_BETA], [the second idea])\n# }}patch:beta\n", ""),
    "main.c": MAIN_C.replace("#if RTS_PATCH_BETA\n    x *= 3;\n#endif\n", ""),
    "notes.md": NOTES_MD.replace("<!-- {{nopatch:beta -->\n", "").replace("<!-- }}nopatch:beta -->\n", ""),
    "testsuite/patches/alpha/TESTS": TREE["testsuite/patches/alpha/TESTS"],
    "docs/patches/alpha.md": TREE["docs/patches/alpha.md"],
    "experiments/patch-matrix/plot.py": TREE["experiments/patch-matrix/plot.py"],
}
BETA = {
    "configure.ac": CONFIGURE_AC.replace(
        "# {{patch:alpha\nRTSLAB_PATCH([alpha], [RTS_PATCH_ALPHA], [the first idea])\n# }}patch:alpha\n", ""),
    "main.c": ('#include "rtslab_config.h"\nint f(void)\n{\n    int x = 1;\n    x += 2;\n'
               '    x -= 1;\n#if RTS_PATCH_BETA\n    x *= 3;\n#endif\n    return x;\n}\n'),
    "beta.c": BETA_C,
    "notes.md": NOTES_MD.replace("<!-- {{patch:alpha -->\nAlpha's paragraph.\n<!-- }}patch:alpha -->\n", ""),
    "testsuite/patches/beta/TESTS": TREE["testsuite/patches/beta/TESTS"],
    "experiments/beta/README.md": TREE["experiments/beta/README.md"],
    "docs/patches/beta.md": TREE["docs/patches/beta.md"],
    "experiments/patch-matrix/plot.py": TREE["experiments/patch-matrix/plot.py"],
}

checks = 0


def ok(cond, what):
    global checks
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    checks += 1


def write_tree(root, files):
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)


def read_tree(root):
    out = {}
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x != ".git"]
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), root)
            if rel in mkpatches.GENERATED:
                continue
            with open(os.path.join(d, n), encoding="utf-8") as f:
                out[rel] = f.read()
    return out


def same_tree(got, want, what):
    ok(sorted(got) == sorted(want), f"{what}: files {sorted(got)} != {sorted(want)}")
    for path in want:
        ok(got[path] == want[path], f"{what}: {path} is\n{got[path]!r}\nnot\n{want[path]!r}")


def make_src(work, tree):
    src = os.path.join(work, "src")
    write_tree(src, tree)
    mkpatches.git(src, "init", "-q")
    mkpatches.git(src, "add", "-A")
    mkpatches.git(src, "commit", "-q", "-m", "fixture")
    return src


def expect_error(fn, needle, what):
    try:
        fn()
    except mkpatches.PatchError as e:
        ok(needle in str(e), f"{what}: the error says {str(e)!r}, without {needle!r}")
        return
    ok(False, f"{what}: no error")


def main():
    with tempfile.TemporaryDirectory(prefix="test-mkpatches.") as work:
        src = make_src(work, TREE)
        patches = mkpatches.read_patches(src)
        ok([(p.name, p.macro, p.file_name) for p in patches]
           == [("alpha", "RTS_PATCH_ALPHA", "0001-alpha.patch"),
               ("beta", "RTS_PATCH_BETA", "0002-beta.patch")], "the patches from configure.ac")

        # The trees, exactly.
        q = os.path.join(work, "queue")
        repo, _, written = mkpatches.build_queue(src, q)
        ok([p.name for p in written] == ["alpha", "beta"], "both patches are written")
        same_tree(read_tree(os.path.join(q, "base")), BASE, "the base")
        same_tree(read_tree(os.path.join(q, "tree-alpha")), ALPHA, "the base with alpha")
        same_tree(read_tree(os.path.join(q, "tree-beta")), BETA, "the base with beta")
        ok(not os.path.exists(os.path.join(q, "base", "configure")),
           "the base carries no generated configure (Note [Generated files])")

        # The patch files apply alone and give the trees back; their headers describe them.
        out = os.path.join(work, "patches")
        mkpatches.generate(src, out)
        with open(os.path.join(out, "series")) as f:
            ok(f.read() == "0001-alpha.patch\n0002-beta.patch\n", "the series file")
        with open(os.path.join(out, "0002-beta.patch")) as f:
            text = f.read()
        ok("Subject: [PATCH] beta: the second idea" in text, "the subject is the description's first line")
        ok("Why beta." in text and "testsuite/patches/beta/b_one" in text
           and "testsuite/patches/beta/b_two" in text, "the body and the tests it adds")
        base = os.path.join(work, "base-repo")
        mkpatches.write_base(src, base)
        same_tree(read_tree(base), BASE, "make patch-base")
        for name, want in (("alpha", ALPHA), ("beta", BETA)):
            dest = os.path.join(work, "applied-" + name)
            mkpatches.apply_alone(base, os.path.join(out, f"000{1 if name == 'alpha' else 2}-{name}.patch"), dest)
            same_tree(read_tree(dest), want, f"the base + {name}.patch")
        again = os.path.join(work, "patches-again")
        mkpatches.generate(src, again)
        ok(subprocess.run(["diff", "-r", out, again]).returncode == 0, "generate is repeatable")

        # The series, in order, with git am -3 (both patches touch main.c; their islands are one line
        # apart, so git's three-way merge places beta's beside alpha's).
        series = os.path.join(work, "series")
        mkpatches.git(work, "clone", "-q", base, series)
        for f in ("0001-alpha.patch", "0002-beta.patch"):
            r = mkpatches.git(series, "am", "-q", "-3", os.path.join(out, f), check=False)
            ok(r.returncode == 0, f"the series applies: {f}: {r.stderr.decode()}")
        with open(os.path.join(series, "main.c")) as f:
            ok(f.read() == MAIN_C, "the series gives back main.c with both islands")

        # A patch that does not apply alone (the base moved under it) is reported.
        moved = os.path.join(work, "moved-base")
        mkpatches.write_base(src, moved)
        with open(os.path.join(moved, "main.c"), "w") as f:
            f.write(BASE["main.c"].replace("x += 2;", "x += 5;"))
        mkpatches.git(moved, "commit", "-qam", "move the base")
        expect_error(lambda: mkpatches.apply_alone(moved, os.path.join(out, "0001-alpha.patch"),
                                                   os.path.join(work, "stale")),
                     "0001-alpha.patch does not apply to the base alone", "a stale patch")

        # A patch mentioned outside its islands and markers is reported, with its place.
        stray = dict(TREE)
        stray["README"] = "Build with --enable-beta for the second idea.\n"
        src2 = make_src(os.path.join(work, "stray"), stray)
        expect_error(lambda: mkpatches.build_queue(src2, os.path.join(work, "q2")),
                     "README:1: mentions beta", "a stray mention in the base")

        # An unclosed marker is reported.
        bad = dict(TREE)
        bad["notes.md"] = NOTES_MD.replace("<!-- }}patch:alpha -->\n", "")
        src3 = make_src(os.path.join(work, "bad"), bad)
        expect_error(lambda: mkpatches.build_queue(src3, os.path.join(work, "q3")),
                     "is never closed", "an unclosed marker")

        # A written patch without its description is reported.
        nodesc = {k: v for k, v in TREE.items() if k != "docs/patches/alpha.md"}
        src4 = make_src(os.path.join(work, "nodesc"), nodesc)
        expect_error(lambda: mkpatches.build_queue(src4, os.path.join(work, "q4")),
                     "docs/patches/alpha.md", "a missing description")
    print(f"mkpatches self-test: {checks} checks passed")


if __name__ == "__main__":
    main()
