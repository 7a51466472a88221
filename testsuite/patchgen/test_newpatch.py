#!/usr/bin/env python3
"""The scaffold's own test (tools/newpatch.py): in a scratch copy of the tree (a git
repository of its tracked files, the experiments' raw results left out as the patch queue
leaves them out, and this file, which names the demo patch), `newpatch.py demo-idea "..."` must write the patch's files and islands and
nothing else, refuse a second run and a bad name without changing anything, give a queue in
which the new patch is last, is written, stacks on the others and carries its registration,
its tests and its description (and not its experiment), leave the base without a mention of
it, and put it in the variant matrix's pairwise covering set.

    test_newpatch.py [--src DIR] [--build]

With --build (minutes: `make check-newpatch`) it also runs autoreconf, builds the scratch
tree with the new patch on, and runs the patch's test (it passes; in the scratch's baseline
build, which is not made, it is skipped) and `--info` (it names the patch).
Prints "newpatch self-test: N checks passed" or fails with the first failed check."""
import argparse
import errno
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tools"))
import mkpatches  # noqa: E402
import newpatch  # noqa: E402

checks = 0


def check(cond, what):
    global checks
    if not cond:
        sys.exit("newpatch self-test: FAILED: " + what)
    checks += 1


def git(cwd, *args):
    return subprocess.run(["git", "-C", cwd] + list(args), check=True, capture_output=True,
                          text=True, env={**os.environ, **mkpatches.GIT_ENV}).stdout


def snapshot(tree):
    out = {}
    for d, _, files in os.walk(tree):
        if "/.git" in d + "/":
            continue
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, tree)] = fh.read()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=SRC)
    ap.add_argument("--build", action="store_true")
    a = ap.parse_args()
    src = os.path.abspath(a.src)
    if not os.path.isdir(os.path.join(src, ".git")):
        # a release tarball (make distcheck) has no git history to make a queue from
        print("newpatch self-test: skipped (the source tree is not a git work tree)")
        return
    with tempfile.TemporaryDirectory(prefix="newpatch-test.") as work:
        tree = os.path.join(work, "tree")
        # this file is left out: it names the demo patch, which the scratch's base must not
        files = [p for p in mkpatches.tracked_files(src) if not mkpatches.RAW_RESULTS.match(p)
                 and p != "testsuite/patchgen/test_newpatch.py"]
        for p in files:
            os.makedirs(os.path.join(tree, os.path.dirname(p)), exist_ok=True)
            shutil.copy2(os.path.join(src, p), os.path.join(tree, p))
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "-A")
        git(tree, "commit", "-q", "-m", "the tree")
        before = snapshot(tree)
        known = newpatch.known_patches(before["configure.ac"].decode())
        n = len(known)
        # the slot lists' last slot (the base keeps every patch's slot lines)
        sa = newpatch.last_slot(before["configure.ac"].decode(), "dnl")
        sm = newpatch.last_slot(before["Makefile.am"].decode(), "#")

        # Bad input changes nothing (issue 45 item 17: each of these wrote files, or wrote a
        # patch that configure, the compiler or `make patches` then refused).
        bad = [(["Demo_Idea", "x"], "NAME must be"),
               (["demo-idea", "a [bracketed] one"], "m4's quotes"),
               (["a" * 300, "x"], "at most 32"),
               (["debug", "x"], "configure has --enable-debug"),
               (["silent-rules", "x"], "AM_SILENT_RULES"),
               (["all-patches", "x"], "is taken"),
               (["none", "x"], "is taken"),
               (["perf", "x"], "needs="),
               (["rev-abc", "x"], "rev-"),
               (["gc", "x"], "already a word of the tree"),
               (["demo-idea", "ends the comment */ early"], "C comment"),
               (["demo-idea", "opens /* a comment"], "C comment"),
               (["demo-idea", "calls AC_MSG_ERROR"], "m4_pattern_forbid"),
               (["demo-idea", "quadrigraph @<:@"], "quadrigraphs"),
               (["demo-idea", "an <b>html</b> tag"], "raw HTML"),
               (["demo-idea", "ends --> the marker"], "raw HTML"),
               (["demo-idea", "odd `backquote"], "backquotes are not paired"),
               (["demo-idea", "- a list item"], "must start with"),
               (["demo-idea", "w" * 101], "at most 100"),
               (["demo-idea", " . "], "is empty"),
               (["demo-idea", "two\nlines"], "one line")]
        if known:        # the base has no patch to name twice
            bad.append(([known[0], "again"], "exists already"))
            bad.append(([known[0] + "-two", "x"], "holds the patch"))
            bad.append((["demo-idea", "like " + known[0]], "names another patch"))
        for args, msg in bad:
            r = subprocess.run([sys.executable, os.path.join(SRC, "tools", "newpatch.py"),
                                "--src", tree, "--no-autoreconf"] + args,
                               capture_output=True, text=True)
            check(r.returncode != 0 and msg in r.stderr, f"newpatch {args} refused ({msg}): "
                  f"{r.returncode} {r.stderr.strip()}")
            check(snapshot(tree) == before, f"newpatch {args} changed nothing")

        # A failure part way (a full disk, git's index locked, autoreconf failing) puts
        # everything back: the files, git's index, the generated files.
        def index():
            return git(tree, "diff", "--cached", "--name-only")

        def failing_at(module, attr, k):
            """MODULE.ATTR raising ENOSPC on its K-th call (only that one)."""
            real, calls = getattr(module, attr), [0]

            def fake(*args, **kw):
                calls[0] += 1
                if calls[0] == k:
                    raise OSError(errno.ENOSPC, "No space left on device (simulated)")
                return real(*args, **kw)
            return real, fake

        nfiles = 9          # 4 edited, 5 created
        for module, attr in ((tempfile, "mkstemp"), (os, "replace")):
            for k in range(1, nfiles + 1):
                real, fake = failing_at(module, attr, k)
                setattr(module, attr, fake)
                try:
                    newpatch.scaffold(tree, "demo-idea", "a demonstration idea that does nothing",
                                      autoreconf=False, log=lambda m: None)
                    err = None
                except newpatch.ScaffoldError as e:
                    err = str(e)
                finally:
                    setattr(module, attr, real)
                check(err is not None and "No space left" in err and "nothing was changed" in err,
                      f"{attr} failing at its call {k}: refused with the reason: {err}")
                check(snapshot(tree) == before and index() == "",
                      f"{attr} failing at its call {k}: the tree and the index as they were")
        lock = os.path.join(tree, ".git", "index.lock")
        open(lock, "w").close()
        try:
            newpatch.scaffold(tree, "demo-idea", "a demonstration idea that does nothing",
                              autoreconf=False, log=lambda m: None)
            err = None
        except newpatch.ScaffoldError as e:
            err = str(e)
        finally:
            os.unlink(lock)
        check(err is not None and err.startswith("git add failed") and "nothing was changed" in err,
              "git's index locked: refused: %s" % err)
        check(snapshot(tree) == before and index() == "", "git add failing changes nothing")
        # an autoreconf that breaks configure, adds a file to build-aux/ and fails
        fakebin = os.path.join(work, "fakebin")
        os.makedirs(fakebin)
        with open(os.path.join(fakebin, "autoreconf"), "w") as f:
            f.write("#!/bin/sh\necho broken > configure\necho new > build-aux/new-script\n"
                    "echo 'autoreconf: simulated failure' >&2\nexit 1\n")
        os.chmod(os.path.join(fakebin, "autoreconf"), 0o755)
        path = os.environ["PATH"]
        os.environ["PATH"] = fakebin + os.pathsep + path
        try:
            newpatch.scaffold(tree, "demo-idea", "a demonstration idea that does nothing",
                              autoreconf=True, log=lambda m: None)
            err = None
        except newpatch.ScaffoldError as e:
            err = str(e)
        finally:
            os.environ["PATH"] = path
        check(err is not None and "autoreconf -fi failed" in err and "simulated failure" in err
              and "nothing was changed" in err, "autoreconf failing: refused: %s" % err)
        check(snapshot(tree) == before and index() == "",
              "autoreconf failing: the files, the generated files and the index as they were")

        # The scaffold.
        logged = []
        macro = newpatch.scaffold(tree, "demo-idea", "a demonstration idea that does nothing",
                                  autoreconf=False, log=logged.append)
        check(macro == "RTS_PATCH_DEMO_IDEA", "the macro's name")
        after = snapshot(tree)
        own = {"runtime/rts/patch_demo_idea.c", "testsuite/patches/demo-idea/TESTS",
               "docs/patches/demo-idea.md", "experiments/demo-idea/run.py",
               "experiments/demo-idea/README.md"}
        edited = {"configure.ac", "Makefile.am", "README.md", "CHANGES.md"}
        check(set(after) - set(before) == own, "the new files: %s" % sorted(set(after) - set(before)))
        changed = {p for p in before if before[p] != after.get(p)}
        check(changed == edited, "the edited files: %s" % sorted(changed))
        staged = set(git(tree, "diff", "--cached", "--name-only").split())
        check(own <= staged, "the new files are in git's index")
        ac = after["configure.ac"].decode()
        check(re.search(r"^dnl -- slot %d --\n# \{\{patch:demo-idea\nRTSLAB_PATCH\(\[demo-idea\], "
                        r"\[RTS_PATCH_DEMO_IDEA\],\n  \[a demonstration idea that does nothing\]\)\n"
                        r"# \}\}patch:demo-idea\ndnl -- slot %d --\nRTSLAB_PATCHES_END$" % (sa, sa + 1),
                        ac, re.M), "configure.ac: the patch's block between two slot lines, last")
        check(newpatch.known_patches(ac) == known + ["demo-idea"], "configure.ac: the series order")
        mk = after["Makefile.am"].decode()
        check(re.search(r"^# -- slot %d --\n# \{\{patch:demo-idea\nlibrtslab_a_SOURCES \+= "
                        r"runtime/rts/patch_demo_idea.c\n# \}\}patch:demo-idea\n# -- slot %d --$"
                        % (sm, sm + 1), mk, re.M), "Makefile.am: the registration in its block")
        check(mk.count("# -- slot %d --" % (sm + 1)) == mk.count("# -- slot %d --" % sm),
              "Makefile.am: every slot list has a new slot")
        reg = after["runtime/rts/patch_demo_idea.c"].decode()
        check(reg.startswith('#include "rtslab_config.h"\n#if RTS_PATCH_DEMO_IDEA\n')
              and reg.rstrip().endswith("#endif")
              and "const RtsPatch patch_demo_idea = {" in reg, "the registration's file")
        check("'(\"Patch demo-idea\",\"YES\")'" in after["testsuite/patches/demo-idea/TESTS"].decode(),
              "the patch's test")
        readme = after["README.md"].decode()
        check("<!-- {{patch:demo-idea -->\n- `--enable-demo-idea`: a demonstration idea that does "
              "nothing\n<!-- }}patch:demo-idea -->\n\n- `--enable-all-patches`" in readme,
              "README.md: the patch's line, last in the list")
        check(after["docs/patches/demo-idea.md"].decode().startswith(
            "rts: a demonstration idea that does nothing (demo-idea)\n"), "the description's subject")

        # The queue: the patch is last, written, stacks, and carries its files.
        patches = mkpatches.read_patches(tree)
        check([p.name for p in patches] == known + ["demo-idea"] and patches[-1].macro == macro,
              "mkpatches reads the patch from configure.ac")
        check(mkpatches.is_written(tree, patches[-1]), "the patch is written (its tests exist)")
        out = os.path.join(work, "patches")
        written = mkpatches.generate(tree, out, ("Demo Tester", "demo@example.org"))  # raises if the queue does not stack
        check([p.name for p in written][-1] == "demo-idea", "generate writes the new patch last")
        fname = "%04d-demo-idea.patch" % (n + 1)
        with open(os.path.join(out, fname)) as f:
            pf = f.read()
        touched = set(re.findall(r"^diff --git a/(\S+) ", pf, re.M))
        check(touched == (own | edited) - {"experiments/demo-idea/run.py", "experiments/demo-idea/README.md",
                                           "docs/patches/demo-idea.md"},
              f"{fname} carries the registration, the tests and the islands, not the experiment "
              f"nor the description (its commit message): {sorted(touched)}")
        check("Subject: [PATCH] rts: a demonstration idea that does nothing (demo-idea)" in pf,
              "the patch's subject")
        base = os.path.join(work, "base")
        mkpatches.write_base(tree, base)            # raises if the base mentions a patch
        grep = subprocess.run(["grep", "-rIl", "-e", "demo-idea", "-e", "DEMO_IDEA",
                               "--exclude-dir=.git", base], capture_output=True, text=True)
        check(grep.stdout == "", "the base does not mention the patch: " + grep.stdout)
        r = subprocess.run(["git", "-C", base, "apply", "--check", os.path.join(out, fname)],
                           capture_output=True, text=True)
        check(r.returncode == 0, "the patch applies alone to the base: " + r.stderr)

        # The matrix picks it up.
        # (in a tree of no other patch, such as the base, the patch on is "all-patches",
        # which the matrix runs besides the covering set)
        r = subprocess.run([sys.executable, os.path.join(tree, "testsuite", "variants.py"),
                            "list", "pairwise" if known else "all", "--src", tree],
                           capture_output=True, text=True)
        check(r.returncode == 0 and ("demo-idea" in r.stdout if known else
                                     r.stdout.split() == ["all-patches"]),
              "the variant matrix has the patch: " + r.stdout + r.stderr)

        if a.build:
            jobs = str(os.cpu_count() or 2)
            subprocess.run(["autoreconf", "-fi"], cwd=tree, check=True, capture_output=True)
            b = os.path.join(tree, "_b")
            os.makedirs(b)
            for cmd in (["../configure", "--enable-demo-idea"], ["make", "-j" + jobs]):
                r = subprocess.run(cmd, cwd=b, capture_output=True, text=True)
                check(r.returncode == 0, " ".join(cmd) + ":\n" + (r.stdout + r.stderr)[-3000:])
            r = subprocess.run(["./rtslab", "+RTS", "--info", "-RTS"], cwd=b, capture_output=True,
                               text=True)
            check('("Patch demo-idea","YES")' in r.stdout and 'demo-idea' in
                  re.search(r'\("Patches","([^"]*)"\)', r.stdout).group(1), "--info names the patch")
            r = subprocess.run([sys.executable, os.path.join(tree, "testsuite", "driver.py"),
                                "--build", ".", "--src", "..", "--filter", "patches/demo-idea/"],
                               cwd=b, capture_output=True, text=True)
            check(r.returncode == 0 and "PASS patches/demo-idea/info" in r.stdout
                  and r.stdout.strip().endswith("1 passed, 0 failed, 0 skipped"),
                  "the patch's test passes with the patch:\n" + r.stdout[-2000:])
    print("newpatch self-test: %d checks passed" % checks)


if __name__ == "__main__":
    main()
