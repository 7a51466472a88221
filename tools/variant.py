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
"""
import argparse
import os
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
