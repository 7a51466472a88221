#!/usr/bin/env python3
"""Tests of tools/variant.py's resolve(): how the experiments' runners and bench.py name a
build (Note [Naming a build]).

    python3 testsuite/bench/test_variant.py --build BUILDDIR

On a throw-away git repository holding a fake source tree -- a configure.ac with two
patches in its table, and a `configure` script that writes a Makefile whose `rtslab` is a
shell script answering `+RTS --info` with the configure arguments it was given, the patches
they enable and the tree's version -- so that nothing of rtslab is compiled:

1. VARIANT: built in _build/VARIANT from the working tree, its record naming HEAD's full
   commit, "+modified" once a tracked file changes, the configure arguments and patches.
2. VARIANT@REV: the revision (a tag) checked out in _build/rev-<commit>/ by `git worktree`,
   the variant built there from that revision's files (its version, not HEAD's), the record
   naming the full commit; asked again, the same worktree is used.
3. A build directory or a binary is used as it is, its revision being that of the tree it
   was configured from; the extra targets a runner needs must be there.
4. Errors: an unknown variant (the known ones listed), a revision that is none, '@' without
   a revision, a path that does not exist, a directory without rtslab, a file that is no
   program; resolve_or_exit(), the runners' call, ends the program naming the runner.
5. BUILDDIR's own rtslab: its --info answers the record's configure arguments and patches.
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tools"))
import variant  # noqa: E402
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402


CONFIGURE_AC = """\
AC_INIT([fake], [0])
RTSLAB_PATCH([alpha], [RTS_PATCH_ALPHA], [the first])
RTSLAB_PATCH([beta], [RTS_PATCH_BETA], [the second])
"""

# The fake configure: a Makefile whose rtslab answers --info as the real one does (GHC's
# format), with the arguments given, the patches they enable and the tree's VERSION file.
CONFIGURE = r"""#!/bin/sh
srcdir=$(dirname "$0")
patches=none
for a in "$@"; do
  case "$a" in
    --enable-all-patches) patches="alpha beta" ;;
    --enable-*) p=${a#--enable-}; if [ "$patches" = none ]; then patches=$p; else patches="$patches $p"; fi ;;
  esac
done
version=$(cat "$srcdir/VERSION")
cat > rtslab.in <<EOF
#!/bin/sh
cat <<'INFO'
 [("RTS name","rtslab")
 ,("Version","$version")
 ,("Configure args","$*")
 ,("Patches","$patches")
 ]
INFO
EOF
printf 'srcdir = %s\nrtslab: rtslab.in\n\tcp rtslab.in rtslab && chmod +x rtslab\nextra/tool:\n\tmkdir -p extra && touch extra/tool\n' "$srcdir" > Makefile
: > config.status
"""


def git(repo, *args):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    r = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"git {' '.join(args)}: {r.stderr}")
    return r.stdout.strip()


def write(path, text, mode=0o644):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def make_repo(tmp):
    """A repository with two commits: v1 (VERSION one) and HEAD (VERSION two)."""
    repo = os.path.join(tmp, "src")
    os.makedirs(repo)
    git(repo, "init", "-q")
    write(os.path.join(repo, "configure.ac"), CONFIGURE_AC)
    write(os.path.join(repo, "configure"), CONFIGURE, 0o755)
    write(os.path.join(repo, ".gitignore"), "/_build/\n")
    write(os.path.join(repo, "VERSION"), "one\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1")
    write(os.path.join(repo, "VERSION"), "two\n")
    git(repo, "commit", "-q", "-a", "-m", "two")
    return repo


def error_of(spec, src, **kw):
    try:
        variant.resolve(spec, src, **kw)
    except variant.VariantError as e:
        return str(e)
    return None


def test_fake_repo(tmp):
    repo = make_repo(tmp)
    head = git(repo, "rev-parse", "HEAD")
    v1 = git(repo, "rev-parse", "v1^{commit}")
    check(sorted(variant.variant_flags(repo)) == ["all-patches", "alpha", "baseline", "beta"],
          f"the variants: baseline, all-patches and configure.ac's patches: "
          f"{sorted(variant.variant_flags(repo))}")

    # 1. VARIANT from the working tree
    d, rec = variant.resolve("baseline", repo)
    check(d == os.path.join(repo, "_build", "baseline"), f"baseline is built in _build: {d}")
    check(os.access(os.path.join(d, "rtslab"), os.X_OK), "baseline's rtslab was made")
    check(rec["revision"] == head, f"baseline's revision is HEAD's full commit: {rec}")
    check(rec["configure_args"] == "" and rec["patches"] == "none",
          f"baseline: no configure arguments, no patches: {rec}")
    check(rec["spec"] == "baseline" and rec["binary"] == os.path.join(d, "rtslab"),
          f"the record names the spec and the binary: {rec}")
    line = variant.describe("A", rec)
    check(head in line and "patches none" in line and d in line,
          f"describe() names the revision, the patches and the directory: {line}")

    write(os.path.join(repo, "VERSION"), "two, edited\n")
    d, rec = variant.resolve("alpha", repo, targets=("rtslab", "extra/tool"))
    check(rec["revision"] == head + "+modified",
          f"a modified working tree is HEAD+modified: {rec['revision']}")
    check(rec["configure_args"] == "--enable-alpha" and rec["patches"] == "alpha",
          f"alpha: --enable-alpha, patch alpha: {rec}")
    check(os.path.exists(os.path.join(d, "extra", "tool")), "the extra targets were made")
    git(repo, "checkout", "-q", "VERSION")

    # 2. VARIANT@REV
    d, rec = variant.resolve("all-patches@v1", repo)
    wt = os.path.join(repo, "_build", "rev-" + v1[:12])
    check(d == os.path.join(wt, "_build", "all-patches"),
          f"all-patches@v1 is built in the revision's worktree: {d}")
    check(rec["revision"] == v1, f"its revision is v1's full commit: {rec['revision']} != {v1}")
    check(rec["configure_args"] == "--enable-all-patches" and rec["patches"] == "alpha beta",
          f"all-patches: its flags and patches: {rec}")
    info = variant.parse_info(variant.rtslab_info(rec["binary"]))
    check(info.get("Version") == "one", f"built from v1's files, not HEAD's: {info}")
    check(wt in git(repo, "worktree", "list"), "the worktree is registered with git")
    d2, rec2 = variant.resolve("baseline@v1", repo)
    check(d2 == os.path.join(wt, "_build", "baseline") and rec2["revision"] == v1,
          f"a second variant of the same revision shares its worktree: {d2}")
    d3, rec3 = variant.resolve("beta@HEAD", repo)
    check(rec3["revision"] == head and "rev-" + head[:12] in d3
          and variant.parse_info(variant.rtslab_info(rec3["binary"])).get("Version") == "two",
          f"beta@HEAD: HEAD's commit, in its own worktree: {rec3}")

    # 3. an existing build directory or binary, as it is
    bdir = os.path.join(repo, "_build", "baseline")
    d, rec = variant.resolve(bdir, repo)
    check(d == bdir and rec["revision"] == head and rec["patches"] == "none",
          f"a build directory: used as is, revision of the tree it was configured from: {rec}")
    d, rec = variant.resolve(os.path.join(bdir, "rtslab"), repo)
    check(d == bdir and rec["binary"] == os.path.join(bdir, "rtslab"),
          f"a binary: its directory, itself as the binary: {rec}")
    d, rec = variant.resolve(os.path.join(wt, "_build", "all-patches"), repo)
    check(rec["revision"] == v1, f"a build directory of the revision's worktree: v1: {rec}")
    e = error_of(bdir, repo, targets=("rtslab", "extra/tool"))
    check(e is not None and "extra/tool" in e and "run make" in e,
          f"a build directory without a runner's target is an error: {e}")

    # 4. errors
    e = error_of("gamma", repo)
    check(e is not None and "gamma" in e and "alpha" in e and "baseline" in e,
          f"an unknown variant: an error listing the known ones: {e}")
    e = error_of("baseline@no-such-branch", repo)
    check(e is not None and "no-such-branch" in e and "not a git revision" in e,
          f"a missing revision: an error: {e}")
    e = error_of("baseline@", repo)
    check(e is not None and "no revision" in e, f"'@' alone: an error: {e}")
    e = error_of(os.path.join(tmp, "no", "such", "dir"), repo)
    check(e is not None and "no such build directory" in e, f"a missing path: an error: {e}")
    e = error_of(os.path.join(tmp), repo)
    check(e is not None and "no rtslab" in e, f"a directory without rtslab: an error: {e}")
    e = error_of(os.path.join(repo, "VERSION"), repo)
    check(e is not None and "neither" in e, f"a file that is no program: an error: {e}")
    e = error_of("", repo)
    check(e is not None, "an empty spec: an error")
    try:
        variant.resolve_or_exit("gamma@v1", repo, "some-runner")
        code = None
    except SystemExit as x:
        code = x.code
    check(isinstance(code, str) and code.startswith("some-runner: ") and "gamma" in code,
          f"resolve_or_exit: the runner's name and the error, status 1: {code!r}")


def test_real_build(build):
    """BUILDDIR's rtslab: the record is read from the real --info output."""
    d, rec = variant.resolve(build, SRC)
    info = variant.parse_info(variant.rtslab_info(os.path.join(build, "rtslab")))
    check("Configure args" in info and "Patches" in info,
          f"the real --info has Configure args and Patches: {sorted(info)}")
    check(rec["configure_args"] == info.get("Configure args")
          and rec["patches"] == info.get("Patches") and rec["patches"],
          f"the record holds the real binary's configure args and patches: {rec}")
    check(d == os.path.abspath(build), f"a build directory is used as is: {d}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rtslab-test-variant-")
    try:
        test_fake_repo(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    test_real_build(os.path.abspath(args.build))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
