#!/usr/bin/env python3
"""Compares the work counters of two rtslab builds over benchmark programs at -N1: whether a
change is a refactoring (the same work: the same GCs, bytes copied, syncs, ...).

    python3 tools/workcounters.py OLD NEW [--size quick|norm|slow] [--rts='OPTS']
                                  [--old-rts='OPTS'] [--new-rts='OPTS'] [-p REGEX]...

OLD and NEW name builds as testsuite/bench.py does (tools/variant.py resolve(): a build
directory, an rtslab binary, VARIANT or VARIANT@REV, e.g. `baseline@HEAD~1 baseline`: a
variant is built in _build/ from the working tree or from git revision REV). Each program
runs once with each build at -N1 with `-s --machine-readable`; the work counters are every
statistic but times, rates, percentages, the spin-waits' spins, yields and sleeps, and the
OS's counters (the keys TIMING matches), which vary from run to run of one binary.

The default programs are those whose counters at -N1 are the same at every run of one build:
single-threaded ones, or ones whose threads hand over through MVars (at -N1 the tick decides
the interleaving of threads that run freely, and so their copying: spectral/binary-trees,
smp/thread-churn and parallel/partree vary). -p chooses others (GROUP/NAME regexes). Write
the options' values with `=` (--new-rts=-A64k): they start with a dash.

Prints one line per program, "same" or the counters that differ (old -> new), then
"all identical" or "N programs differ". Exit 0 when every counter is identical for every
program, 1 when one differs, 2 on an error (a build that cannot be made, a failed run).
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import variant  # noqa: E402
sys.path.insert(0, os.path.join(SRC, "testsuite"))
import benchlib  # noqa: E402

DEFAULT_PROGRAMS = (
    "gc/deep-stack", "gc/gcbench", "gc/mutable-store", "gc/old-churn", "gc/simple-alloc",
    "imaginary/queens", "imaginary/primes", "spectral/deriv", "spectral/nbody", "real/synth",
)
# Statistics that are not work: times, rates, percentages, spin-waits, the OS's counters.
TIMING = re.compile(r"seconds|percent|rate|_ns$|spins|sleeps|yields|rtslab_os_")
SHOWN = ("num_GCs", "major_gcs", "copied_bytes", "rtslab_stw_syncs")


class RunError(Exception):
    pass


def counters(binary, prog, size, rts):
    """The work counters of one run of PROG (a benchlib.Program) at SIZE with BINARY, -N1
    and the RTS options RTS (a list): {key: value as text}."""
    with tempfile.TemporaryDirectory(prefix="workcounters.") as tmp:
        path = os.path.join(tmp, "stats")
        cmd = benchlib.command(binary, prog, size, ["-N1", *rts], path)
        env = {k: v for k, v in os.environ.items() if k != "RTSLAB_RTS"}
        try:
            r = subprocess.run(cmd, cwd=os.path.dirname(prog.path), env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=600)
        except subprocess.TimeoutExpired:
            raise RunError(f"{shlex.join(cmd)}: no end after 600 s")
        if r.returncode != 0:
            raise RunError(f"{shlex.join(cmd)}: exit {r.returncode}: "
                           f"{r.stderr.decode(errors='replace')[-500:]}")
        with open(path, encoding="utf-8") as f:
            text = f.read()
    return {k: v for k, v in re.findall(r'\("([^"]+)", "([^"]*)"\)', text)
            if not TIMING.search(k)}


def differences(old, new):
    """The keys whose values differ (or that one side lacks), sorted."""
    return sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))


def line(prog_id, old, new):
    diff = differences(old, new)
    shown = " ".join(f"{k} {old.get(k, '-')}" for k in SHOWN)
    what = "same" if not diff else "DIFFER: " + ", ".join(
        f"{k} {old.get(k, '-')} -> {new.get(k, '-')}" for k in diff)
    return f"{prog_id:22s} {shown} ({len(old)} counters) {what}", bool(diff)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", help="the build before: " + variant.SPEC_HELP)
    ap.add_argument("new", help="the build after (as OLD)")
    ap.add_argument("--src", default=SRC, help="the source tree (default: this one)")
    ap.add_argument("--size", default="quick", choices=benchlib.SIZES)
    ap.add_argument("--rts", default="", help="RTS options for both builds (one string)")
    ap.add_argument("--old-rts", default="", help="RTS options for OLD only")
    ap.add_argument("--new-rts", default="", help="RTS options for NEW only")
    ap.add_argument("-p", "--program", dest="programs", action="append", metavar="REGEX",
                    help="a program (a GROUP/NAME regex; repeat for more; default: "
                         + " ".join(DEFAULT_PROGRAMS) + ")")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="make's jobs when a variant is built")
    a = ap.parse_args(argv)
    try:
        builds = []
        for spec in (a.old, a.new):
            _, record = variant.resolve(spec, a.src, jobs=a.jobs,
                                        log=lambda m: print(m, file=sys.stderr, flush=True))
            print(variant.describe("old" if not builds else "new", record), flush=True)
            builds.append(record["binary"])
        progs = benchlib.discover(a.src)
        if a.programs:
            progs = benchlib.select(progs, a.programs)
        else:
            by_id = {p.id: p for p in progs}
            progs = [by_id[i] for i in DEFAULT_PROGRAMS if i in by_id]
        if not progs:
            raise RunError("no program matches " + " ".join(a.programs or DEFAULT_PROGRAMS))
        rts = shlex.split(a.rts)
        bad = 0
        for prog in progs:
            old = counters(builds[0], prog, a.size, rts + shlex.split(a.old_rts))
            new = counters(builds[1], prog, a.size, rts + shlex.split(a.new_rts))
            text, differ = line(prog.id, old, new)
            print(text, flush=True)
            bad += differ
    except (variant.VariantError, RunError, benchlib.HeaderError, OSError) as e:
        print(f"workcounters: error: {e}", file=sys.stderr)
        return 2
    print("all identical" if not bad else f"{bad} programs differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
