#!/usr/bin/env python3
"""Prepares an out-of-tree variant build of rtslab, SRC/_build/NAME/, configured with the
given configure arguments, and prints its directory (Note [Variants out of tree] in
Makefile.am). `make check-sanitize`, `check-tsan`, `check-tsan-patches` and `fuzz` run it;
testsuite/variants.py and testsuite/bench.py use prepare() for theirs.

    python3 tools/variant.py [--src SRC] NAME [CONFIGURE-ARGUMENT...]

The variant is configured from SRC when SRC is not configured in place, and otherwise from
SRC/_build/src, a copy of SRC's distributed files that `make distdir` (run in SRC) writes
afresh each time: automake's configure refuses to configure out of tree from a source
directory holding an in-tree configuration, because make would find that build's objects and
programs through VPATH and take them for the variant's. The copy keeps the files' times, so a
variant rebuilds only what changed since its last build. A variant is configured again (from
an empty directory) when its configure arguments or its source directory differ from last
time's; its configure output goes to NAME/variant-configure.log.

The experiments' runners (experiments/*/run.py) and testsuite/bench.py name their builds
through resolve() (Note [Naming a build]): a build directory or binary as it is, or a
variant -- `baseline`, `all-patches` or a patch of configure.ac's table -- built here from the
working tree, or from a git revision with VARIANT@REV (`baseline@v0.1`, `all-patches@HEAD~2`,
`baseline@my-branch`), checked out in a worktree SRC/_build/rev-<commit>/. Each comes with a
record of what it is: its exact revision, configure arguments and patches.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
STAMP = "variant-configure-args"     # in the build directory: "<source dir>\n<args>\n"


class VariantError(Exception):
    pass


def configured_in_place(src):
    return os.path.exists(os.path.join(src, "config.status"))


def source_dir(src, log=None):
    """The source directory to configure variants of SRC from (see the module's docstring)."""
    if not configured_in_place(src):
        return src
    copy = os.path.join(src, "_build", "src")
    os.makedirs(os.path.dirname(copy), exist_ok=True)
    if log:
        log(f"  {src} is configured in place: its sources are copied to {copy} (make distdir)")
    # Not under the caller's make: its jobserver's descriptors are not inherited.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    r = subprocess.run(["make", "--no-print-directory", "distdir", f"distdir={copy}"], cwd=src,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        raise VariantError(f"`make distdir distdir={copy}` failed in {src}:\n{r.stdout[-3000:]}")
    return copy


def prepare(src, name, args, log=None):
    """SRC/_build/NAME, configured with ARGS (a list of configure arguments); returns it."""
    src = os.path.abspath(src)
    if name in ("src", "check-patches") or name.startswith("rev-") or "/" in name:
        raise VariantError(f"'{name}' cannot name a variant: _build/{name} is used otherwise")
    build = os.path.join(src, "_build", name)
    from_dir = source_dir(src, log)
    configure = os.path.relpath(os.path.join(from_dir, "configure"), build)
    want = os.path.relpath(from_dir, build) + "\n" + shlex.join(args) + "\n"
    stamp = os.path.join(build, STAMP)
    have = None
    if os.path.exists(os.path.join(build, "config.status")) and os.path.exists(stamp):
        with open(stamp, encoding="utf-8") as f:
            have = f.read()
    if have == want:
        return build
    if os.path.isdir(build):
        # Configured from elsewhere or otherwise: start afresh (its objects are not ours).
        for entry in os.listdir(build):
            path = os.path.join(build, entry)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
    os.makedirs(build, exist_ok=True)
    cmd = [configure, *args]
    if log:
        log(f"  {name}: {shlex.join(cmd)}   (in {build})")
    logpath = os.path.join(build, "variant-configure.log")
    with open(logpath, "w", encoding="utf-8") as f:
        r = subprocess.run(cmd, cwd=build, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode:
        with open(logpath, encoding="utf-8", errors="replace") as f:
            tail = "".join(f.readlines()[-20:])
        raise VariantError(f"configuring {name} failed ({shlex.join(cmd)} in {build}):\n{tail}")
    with open(stamp, "w", encoding="utf-8") as f:
        f.write(want)
    return build


def build(src, name, args, jobs=2, targets=("rtslab",), log=None):
    """SRC/_build/NAME prepared (prepare()) and TARGETS made in it (incrementally: a changed
    source is always rebuilt); returns the build directory. The log of make is
    NAME/bench-build.log."""
    bdir = prepare(src, name, args, log=log)
    logpath = os.path.join(bdir, "bench-build.log")
    step = ["make", f"-j{jobs}", *targets]
    if log:
        log(f"  {name}: {shlex.join(step)}   (in {bdir})")
    with open(logpath, "w", encoding="utf-8") as logf:
        r = subprocess.run(step, cwd=bdir, stdout=logf, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        with open(logpath, encoding="utf-8", errors="replace") as f:
            tail = f.read().splitlines()[-30:]
        raise VariantError("\n".join(tail) + f"\nbuilding variant '{name}' failed; "
                           f"the log is {logpath}")
    return bdir


# --- naming a build: a directory, a binary, VARIANT or VARIANT@REV -------------------------

# Note [Naming a build]
# An experiment compares builds, and its report must say exactly what each one was: a column
# headed "baseline" is worthless when nobody knows which commit, which flags. resolve() takes
# what a runner's user wrote for a build and gives back the directory and a record:
#   - an existing path: a build directory holding `rtslab`, or the `rtslab` binary itself,
#     used as it is (nothing is built; the revision is that of the source tree the directory
#     was configured from, as it is now -- the build may predate later edits);
#   - VARIANT: configured and built in SRC/_build/VARIANT/ from the working tree (prepare(),
#     build()); its revision is HEAD, "+modified" when tracked files differ from it;
#   - VARIANT@REV: REV (a tag, branch, commit or any git revision) checked out, detached, in
#     a git worktree SRC/_build/rev-<first 12 hex digits of the commit>/, and the variant
#     built in its own _build/VARIANT/; its revision is the full commit.
# Whatever names an existing path is a path, so a directory is never mistaken for a variant;
# anything else must be a known variant (its flags: variant_flags()), else the error says
# which variants there are. The record's configure arguments and patches are the binary's
# own answer to `rtslab +RTS --info -RTS`, not what was asked for: a build directory given by
# hand is described by what it holds, and a patch that REV does not have yet (its configure
# only warns of the unknown --enable-NAME) shows as missing from the record's patches.

def variant_flags(src):
    """{variant: configure arguments} for the variants known by name: baseline, all-patches
    and every patch of configure.ac's table (testsuite/benchlib.py's patch_names)."""
    testsuite = os.path.join(os.path.dirname(HERE), "testsuite")
    if testsuite not in sys.path:
        sys.path.insert(0, testsuite)
    import benchlib                                    # noqa: E402 (testsuite/benchlib.py)
    flags = {"baseline": [], "all-patches": ["--enable-all-patches"]}
    flags.update({p: [f"--enable-{p}"] for p in benchlib.patch_names(src)})
    return flags


def git(src, *args):
    """(exit status, stdout stripped) of git ARGS run in SRC."""
    try:
        r = subprocess.run(["git", *args], cwd=src, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return 1, str(e)
    return r.returncode, r.stdout.strip()


def tree_revision(src):
    """(HEAD's full commit of the git tree holding SRC, whether tracked files are modified),
    or (None, False) outside git."""
    rc, head = git(src, "rev-parse", "--verify", "--quiet", "HEAD")
    if rc or not head:
        return None, False
    rc, status = git(src, "status", "--porcelain", "--untracked-files=no")
    return head, bool(status)


def revision_tree(src, rev, log=None):
    """A git worktree of revision REV of SRC's repository, in SRC/_build/rev-<commit>/:
    (its directory, the full commit)."""
    rc, commit = git(src, "rev-parse", "--verify", "--quiet", rev + "^{commit}")
    if rc or not commit:
        raise VariantError(f"'{rev}' is not a git revision of {src}")
    wt = os.path.join(src, "_build", "rev-" + commit[:12])
    if not os.path.exists(os.path.join(wt, "configure")):
        if log:
            log(f"  @{rev}: git worktree add --detach {wt} {commit[:12]}")
        r = subprocess.run(["git", "worktree", "add", "--force", "--detach", wt, commit],
                           cwd=src, capture_output=True, text=True)
        if r.returncode:
            raise VariantError(f"cannot check out {rev} in {wt}:\n{r.stderr}")
    return wt, commit


def rtslab_info(binary):
    """The text of `BINARY +RTS --info -RTS` (or why there is none)."""
    try:
        r = subprocess.run([binary, "+RTS", "--info", "-RTS"], capture_output=True, text=True,
                           timeout=30)
        return r.stdout + r.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"(--info failed: {e})"


def parse_info(text):
    """{key: value} of GHC-style `--info` output: [("Key","value") ,("Key","value")]."""
    return dict(re.findall(r'\("([^"]*)",\s*"([^"]*)"\)', text))


def configured_from(bdir):
    """The source directory build directory BDIR was configured from (its Makefile's
    srcdir), or BDIR itself when that cannot be read."""
    try:
        with open(os.path.join(bdir, "Makefile"), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"srcdir\s*=\s*(.*?)\s*$", line)
                if m:
                    return os.path.normpath(os.path.join(bdir, m.group(1)))
    except OSError:
        pass
    return bdir


def resolve(spec, src, jobs=2, targets=("rtslab",), log=None):
    """(build directory, record) for SPEC, a runner's name of a build (Note [Naming a
    build]): an existing build directory or `rtslab` binary, VARIANT or VARIANT@REV. A
    variant is built with `make TARGETS` (paths relative to its build directory); an
    existing directory must hold them already. Raises VariantError."""
    src = os.path.abspath(src)
    targets = ["rtslab", *[t for t in targets if t != "rtslab"]]    # --info asks rtslab
    if not spec:
        raise VariantError("an empty build name (want a build directory, an rtslab binary, "
                           "VARIANT or VARIANT@REV)")
    if os.path.exists(spec):
        path = os.path.abspath(spec)
        if os.path.isdir(path):
            bdir = path
        elif os.path.isfile(path) and os.access(path, os.X_OK):
            bdir = os.path.dirname(path)            # the binary stands for rtslab
            targets = [os.path.basename(path), *targets[1:]]
        else:
            raise VariantError(f"'{spec}' is neither a build directory nor an rtslab binary")
        missing = [t for t in targets if not os.path.exists(os.path.join(bdir, t))]
        if missing:
            raise VariantError(f"'{spec}': no {', '.join(missing)} in {bdir} (run make there)")
        binary = os.path.join(bdir, targets[0])
        commit, modified = tree_revision(configured_from(bdir))
        built_from = "the build directory as it is"
    else:
        base, at, rev = spec.partition("@")
        if at and not rev:
            raise VariantError(f"'{spec}': no revision after '@'")
        flags = variant_flags(src)
        if base not in flags:
            if "/" in base or base.startswith("."):
                raise VariantError(f"'{spec}': no such build directory or binary")
            raise VariantError(f"'{spec}' is no build directory or binary, and '{base}' is no "
                               f"variant (known: {', '.join(sorted(flags))})")
        tree = src
        if at:
            tree, _ = revision_tree(src, rev, log)
        bdir = build(tree, base, flags[base], jobs=jobs, targets=targets, log=log)
        binary = os.path.join(bdir, "rtslab")
        commit, modified = tree_revision(tree)
        built_from = f"built from {'revision ' + rev if at else 'the working tree'}"
    info = parse_info(rtslab_info(binary))
    record = {
        "spec": spec, "dir": bdir, "binary": binary, "built_from": built_from,
        "revision": (commit + ("+modified" if modified else "")) if commit else None,
        "configure_args": info.get("Configure args"), "patches": info.get("Patches"),
    }
    return bdir, record


def describe(name, record):
    """One line of a report's header for the build NAME."""
    return (f"{name}: {record['spec']} = {record['dir']}, revision {record['revision'] or '?'}"
            f", configure args '{record['configure_args'] or ''}'"
            f", patches {record['patches'] or '?'}")


def resolve_or_exit(spec, src, who, targets=("rtslab",), jobs=None):
    """resolve() for a runner named WHO: its progress on stdout, an error ends the program
    with WHO's name and status 1."""
    try:
        return resolve(spec, src, jobs=jobs or os.cpu_count() or 2, targets=targets,
                       log=lambda m: print(m, flush=True))
    except VariantError as e:
        sys.exit(f"{who}: {e}")


SPEC_HELP = ("a build directory, an rtslab binary, or VARIANT[@REV] (baseline, all-patches or "
             "a patch of configure.ac's table, built in _build/ from the working tree or from "
             "git revision REV: tools/variant.py)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src", default=os.path.dirname(HERE))
    ap.add_argument("name")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    try:
        build = prepare(a.src, a.name, a.args, log=lambda m: print(m, file=sys.stderr))
    except VariantError as e:
        print(f"variant: error: {e}", file=sys.stderr)
        return 1
    print(build)
    return 0


if __name__ == "__main__":
    sys.exit(main())
