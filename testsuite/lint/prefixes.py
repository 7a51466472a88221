#!/usr/bin/env python3
"""Checks that every name the runtime exports says which module it belongs to.

    python3 testsuite/lint/prefixes.py --src SRCDIR --build BUILDDIR

A name that one object file of the runtime gives to the others (a global symbol of
BUILDDIR/runtime/**/*.o, listed by nm) must be either

  - the public API's: declared in a header of runtime/include/ (rtslab.h and its siblings),
    which an embedder includes; the public API's prefix is rts_, or
  - its module's: it begins with one of the prefixes PREFIXES gives the object's module
    (the module of a file is layers.py's: its directory under runtime/), or with its own
    file's name (a patch's own file, which the base's table cannot name: os/foo.c's foo_).

and rts_ is the public API's alone: an internal name beginning with rts_ is an error, as is
a name of no prefix of its module. So a reader can tell from a name whether an embedder may
call it and where it is defined. Each prefix belongs to one module. Run it on a build of the
baseline and on one of every patch (`make check` in each tree runs it on that tree's
objects), so that the patches' names are held to it too.

Every violation is a line such as
    runtime/base/util.o: rts_fatal: rts_ is the public API's prefix, and runtime/include/ does not declare it
    runtime/sm/gc.o: collect_all: not a prefix of sm (blk_, gc_, sanity_, sm_, wsdeque_)
on stderr after a first line that counts them; the exit status is then 1. With none it
prints "prefixes: N names of M objects: each its module's or the public API's". Without nm
or objects it says so and exits 2: a check that cannot look does not pass.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import LAYERS, module_of, strip_comments   # noqa: E402  (the one table of modules)

# Each module's prefixes (the public API's rts_ aside). A module's own names begin with one
# of these; no two modules share one.
PREFIXES = {
    "base":   ["base_"],
    "os":     ["affinity_", "numa_", "sysfs_", "timer_", "topo_"],
    "io":     ["io_"],
    "trace":  ["trace_"],
    "sync":   ["stw_", "sync_"],
    "sm":     ["blk_", "gc_", "sanity_", "sm_", "wsdeque_"],
    "sched":  ["cap_", "mvar_", "obj_", "prof_", "sched_", "stack_", "stk_", "thread_"],
    "stats":  ["stats_"],
    "rts":    ["opts_", "patch_"],
    "scheme": ["datum_", "sch_", "vm_"],
    "main":   ["main"],
}
PUBLIC_PREFIX = "rts_"

NM_DEFINED = set("BCDGRSTVW")       # nm's defined global kinds (upper case: global)
IDENT_RE = re.compile(r"\b[A-Za-z_]\w*\b")


def public_names(src):
    """Every identifier that a header of runtime/include/ writes (comments left out): what
    it declares is the public API."""
    names = set()
    inc = os.path.join(src, "runtime", "include")
    for f in sorted(os.listdir(inc)):
        if f.endswith(".h"):
            with open(os.path.join(inc, f), encoding="utf-8", errors="replace") as fh:
                names.update(IDENT_RE.findall(strip_comments(fh.read())))
    return names


def exported(nm, obj):
    """The global names OBJ defines, less those the compiler makes (a sanitizer's
    `__odr_asan.base_cfg`, `__asan_*`: a name with a dot, or of the implementation's
    reserved `__`), which no source file writes."""
    out = subprocess.run([nm, "-P", "--defined-only", obj], check=True, capture_output=True,
                         text=True).stdout
    names = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and not line.endswith(":") and parts[1] in NM_DEFINED:
            if "." in parts[0] or parts[0].startswith("__"):
                continue
            names.append(parts[0])
    return names


def judge(mod, name, public, stem=None):
    """Why NAME, exported by module MOD from the file STEM.c, breaks the rule, or None."""
    if name in public:
        return None
    if stem and (name == stem or name.startswith(stem + "_")) and \
            not name.startswith(PUBLIC_PREFIX):
        return None
    if name.startswith(PUBLIC_PREFIX):
        return (f"{PUBLIC_PREFIX} is the public API's prefix, and runtime/include/ does not "
                "declare it")
    prefixes = PREFIXES.get(mod)
    if prefixes is None:
        return f"module {mod} has no prefixes in PREFIXES (testsuite/lint/prefixes.py)"
    if any(name.startswith(p) for p in prefixes):
        return None
    return f"not a prefix of {mod} ({', '.join(prefixes)})"


def table_problems():
    """A prefix given to two modules, or a module of LAYERS with none (but the header-only
    public API)."""
    out, owner = [], {}
    for mod, prefixes in PREFIXES.items():
        for p in prefixes:
            for q, other in owner.items():
                if other != mod and (p.startswith(q) or q.startswith(p)):
                    out.append(f"PREFIXES: {p} ({mod}) and {q} ({other}) overlap")
            owner[p] = mod
    for _, mod, _ in LAYERS:
        if mod != "include" and mod not in PREFIXES:
            out.append(f"PREFIXES: the module {mod} has no prefixes")
    return out


def main(argv=None):
    summary, _usage, rest = __doc__.split("\n\n", 2)
    ap = argparse.ArgumentParser(
        description=summary + "\n\n" + rest, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s --src SRCDIR --build BUILDDIR")
    ap.add_argument("--src", required=True, help="the source tree (the one holding runtime/)")
    ap.add_argument("--build", required=True, help="a build directory holding runtime/**/*.o")
    args = ap.parse_args(argv)
    nm = os.environ.get("NM", "nm")
    objs = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(args.build, "runtime")):
        dirnames.sort()
        objs += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".o")]
    if shutil.which(nm) is None or not objs:
        print(f"prefixes: {'no ' + nm if shutil.which(nm) is None else 'no objects under ' + args.build}"
              ": nothing checked", file=sys.stderr)
        return 2
    public = public_names(args.src)
    violations, n_names, n_objs = table_problems(), 0, 0
    for obj in objs:
        rel = os.path.relpath(obj, args.build).replace(os.sep, "/")     # runtime/sm/gc.o
        if not os.path.isfile(os.path.join(args.src, rel[:-2] + ".c")):
            continue            # a stale object of a file no longer in the tree
        mod = module_of(rel[len("runtime/"):-2] + ".c")
        if mod is None:
            continue            # layers.py reports a file no layer covers
        n_objs += 1
        for name in exported(nm, obj):
            n_names += 1
            why = judge(mod, name, public, os.path.basename(rel)[:-2])
            if why:
                violations.append(f"{rel}: {name}: {why}")
    if violations:
        print(f"prefixes: {len(violations)} name{'s' * (len(violations) != 1)} without their "
              "module's prefix (PREFIXES in testsuite/lint/prefixes.py):", file=sys.stderr)
        for v in violations:
            print(v, file=sys.stderr)
        return 1
    print(f"prefixes: {n_names} names of {n_objs} objects: each its module's or the public "
          "API's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
