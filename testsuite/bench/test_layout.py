#!/usr/bin/env python3
"""Tests of code layouts (tools/layout.py, Note [Code layout as a factor]) in a build:

    python3 testsuite/bench/test_layout.py --build BUILDDIR

- `make rtslab-layout` without LAYOUT_SEED is a clear error;
- two seeds link two different layouts: the objects in another order, the GC's entry points
  at other addresses and other offsets within their cache lines over a few seeds;
- of the same code: every function has the same size in rtslab and in each layout;
- that behave the same: deterministic programs at -N1 print the same output and the same
  work counters of `-s` (allocated and copied bytes, GCs, syncs, live data) with rtslab and
  with each layout;
- a seed names one layout: linking a seed again gives the same map;
- a microbenchmark (LAYOUT_PROGRAM=bench/micro/NAME) has layouts too.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
import benchlib  # noqa: E402
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402

# Seeds of this test's own: the runner's tests and experiments link seeds 1..K in the same
# build directory, and this test unlinks and relinks its first seed while other tests run
# beside it (bench/runner failed so once, its layout 1 gone under it).
SEEDS = (11, 12, 13, 14)
# ... and more, linked only to read where the GC's entry points lie. An object's text starts
# at one of 4 offsets within a 64-byte line (16-byte aligned, after random pads), so that
# rtslab and L layouts all put a function at one offset has a chance of 4^-L by luck alone:
# 1 in 256 with the 4 seeds above, which a change of an object's size met (a patch's
# build); 1 in 4^10 with these 6 more.
OFFSET_SEEDS = (15, 16, 17, 18, 19, 20)
# Counters of work done that must not depend on where the code lies (at -N1, where no
# scheduling decides who allocates what).
WORK = ("allocated_bytes", "copied_bytes", "num_GCs", "major_gcs", "max_live_bytes",
        "cumulative_live_bytes", "rtslab_stw_syncs")
PROGRAMS = ("gc/gcbench", "gc/deep-stack", "imaginary/queens")


def make_layout(build, seed, program=None):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    # rtslab too: the layouts are compared with it, so it must be linked from the same objects
    args = ["make", "--no-print-directory", "rtslab", "rtslab-layout"]
    if seed is not None:
        args.append(f"LAYOUT_SEED={seed}")
    if program:
        args.append(f"LAYOUT_PROGRAM={program}")
    return subprocess.run(args, cwd=build, env=env, capture_output=True, text=True, timeout=300)


def text_symbols(binary):
    """[(name, address, size)] of the text symbols of BINARY (a static function's name may
    be in several objects)."""
    out = subprocess.run(["nm", "-S", "--defined-only", binary], capture_output=True,
                         text=True, check=True).stdout
    return [(f[3], int(f[0], 16), int(f[1], 16)) for f in map(str.split, out.splitlines())
            if len(f) == 4 and f[2] in ("T", "t")]


def symbols(binary):
    """{name: (address, size)} of the global text symbols of BINARY."""
    out = subprocess.run(["nm", "-S", "--defined-only", "--extern-only", binary],
                         capture_output=True, text=True, check=True).stdout
    return {f[3]: (int(f[0], 16), int(f[1], 16)) for f in map(str.split, out.splitlines())
            if len(f) == 4 and f[2] == "T"}


def sizes_of(binary):
    return sorted((n, z) for n, _, z in text_symbols(binary))


def run_stats(binary, prog):
    stats_path = os.path.join(os.path.dirname(binary), f".test-layout-{os.getpid()}.stats")
    cmd = benchlib.command(binary, prog, "quick", ["-N1"], stats_path)
    env = {k: v for k, v in os.environ.items() if k != "RTSLAB_RTS"}
    p = subprocess.run(cmd, cwd=os.path.dirname(prog.path), env=env, capture_output=True,
                       text=True, timeout=120)
    try:
        with open(stats_path, encoding="utf-8") as f:
            stats = benchlib.parse_machine_readable(f.read())
    finally:
        if os.path.exists(stats_path):
            os.unlink(stats_path)
    return p.returncode, p.stdout, stats


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    build = os.path.abspath(ap.parse_args().build)

    r = make_layout(build, None)
    check(r.returncode != 0 and "LAYOUT_SEED" in r.stderr,
          f"make rtslab-layout without a seed is an error naming LAYOUT_SEED: {r.stderr}")

    binaries = {}
    for seed in SEEDS:
        r = make_layout(build, seed)
        path = os.path.join(build, "layouts", f"rtslab-{seed}")
        ok = r.returncode == 0 and os.access(path, os.X_OK)
        check(ok, f"make rtslab-layout LAYOUT_SEED={seed} links {path}: {r.stdout}{r.stderr}")
        if ok:
            binaries[seed] = path
    if len(binaries) != len(SEEDS):
        return summary()

    maps = {}
    for seed, path in binaries.items():
        with open(path + ".map", encoding="utf-8") as f:
            maps[seed] = [l.split()[-1] for l in f if not l.startswith("#")]
    a, b = SEEDS[:2]
    check(sorted(maps[a]) == sorted(maps[b]) and maps[a] != maps[b],
          f"seeds {a} and {b} link the same objects in different orders")
    check(os.path.join("runtime", "sm", "evac.o") in maps[a], "the map names evac.o")
    with open(binaries[a] + ".map", encoding="utf-8") as f:
        before = f.read()
    os.unlink(binaries[a])
    make_layout(build, a)
    with open(binaries[a] + ".map", encoding="utf-8") as f:
        check(f.read() == before, f"linking seed {a} again gives the same layout")

    base = symbols(os.path.join(build, "rtslab"))
    syms = {seed: symbols(path) for seed, path in binaries.items()}
    sizes = sizes_of(os.path.join(build, "rtslab"))
    for seed, path in binaries.items():
        check(sizes_of(path) == sizes, f"layout {seed}: the same functions with the same "
              "sizes as rtslab")
    more = {}
    for seed in OFFSET_SEEDS:
        r = make_layout(build, seed)
        path = os.path.join(build, "layouts", f"rtslab-{seed}")
        ok = r.returncode == 0 and os.access(path, os.X_OK)
        check(ok, f"make rtslab-layout LAYOUT_SEED={seed} links {path}: {r.stdout}{r.stderr}")
        if ok:
            more[seed] = symbols(path)
    for fn in ("gc_evacuate", "gc_scavenge_object"):
        if fn not in base:
            continue
        addrs = [syms[seed][fn][0] for seed in SEEDS]
        check(len(set(addrs)) == len(SEEDS), f"{fn} lies elsewhere in every layout: "
              + ", ".join(hex(a) for a in addrs))
        every = addrs + [m[fn][0] for m in more.values()] + [base[fn][0]]
        check(len({a % 64 for a in every}) > 1,
              f"{fn} starts at more than one offset within its 64-byte line over the layouts: "
              + ", ".join(str(a % 64) for a in every))

    # a microbenchmark's layouts (the experiments run them), and a program the table lacks
    r = make_layout(build, 7, "bench/micro/busy_one")
    micro = os.path.join(build, "layouts", "bench", "micro", "busy_one-7")
    check(r.returncode == 0 and os.access(micro, os.X_OK)
          and sizes_of(micro) == sizes_of(os.path.join(build, "bench", "micro", "busy_one")),
          f"LAYOUT_PROGRAM=bench/micro/busy_one links its layout of the same code: {r.stderr}")
    r = make_layout(build, 7, "tests/unit/test_block")
    check(r.returncode != 0 and "LAYOUT_OBJECTS" in r.stderr,
          f"a program missing from LAYOUT_OBJECTS is an error naming it: {r.stderr}")

    progs = {p.id: p for p in benchlib.discover(SRC)}
    for pid in PROGRAMS:
        prog = progs[pid]
        with open(prog.expected_path("quick"), encoding="utf-8") as f:
            expected = f.read()
        status, out, ref = run_stats(os.path.join(build, "rtslab"), prog)
        check(status == 0 and out == expected, f"{pid}: rtslab runs it")
        for seed in SEEDS[:2]:
            status, out, stats = run_stats(binaries[seed], prog)
            check(status == 0 and out == expected, f"{pid}: layout {seed} prints the same")
            diff = {k: (ref.get(k), stats.get(k)) for k in WORK if ref.get(k) != stats.get(k)}
            check(not diff and all(k in stats for k in WORK),
                  f"{pid}: layout {seed} does the same work as rtslab (differs: {diff})")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
