#!/usr/bin/env python3
"""Stack chunks (issue 17, seed 002): baseline against the stack-chunks patch.

    python3 experiments/stack-chunks/run.py --baseline BUILD --patch BUILD [--reps R]
                                            [--layouts K] [--out DIR]
                                            [--only gc_depth,programs,rss]

BUILD: a build directory (configure; make) of the baseline and of --enable-stack-chunks, or a
variant built for the purpose, VARIANT or VARIANT@REV (`--baseline baseline@main --patch
stack-chunks`: built in _build/ from the working tree or that git revision,
tools/variant.py). The exact revision, configure arguments and patches of both head
tables.md and go to results.json ("build_records").
Every measurement alternates the two builds run by run (interleaved), so drift of the shared
machine spreads over both; the tables give medians and patch/baseline ratios.
With --layouts K (K >= 1; default 5) each build's rtslab and deep_stack_gc are K seeded
layouts of its code (tools/layout.py, Note [Code layout as a factor]) and rep i runs layout
i % K (default 10 reps: 5 layouts x 2 runs; 5 x 1 at 1M frames and for rss); every run
records its layout's seed, and each ratio gains benchstats' mean ratio with its 95 % interval
over layouts and runs (testsuite/benchstats.py; both builds run seeds 1..K, so the interval
is paired by seed; fewer than 3 layouts is a screen). 0 runs the build's own binaries, one
per build, with no interval.

  gc_depth  bench/micro/deep_stack_gc D 100 +RTS -K1g: the total pause of 100 minor GCs
            taken with the running thread D frames deep (D = 1k, 10k, 100k, 1M).
  programs  the suite's deep-stack (norm: 400000 6 600000, -K1g) and binary-trees (norm: 17,
            a thread per depth: the seed's benchmark), and the 1M-frame recursion of
            testsuite/patches/stack-chunks/deep.scm: elapsed and GC elapsed (-s
            --machine-readable), at -N1 (binary-trees also -N2).
  rss       threads_rss.scm N D: 100 000 threads alive at once, each D frames deep (D = 8:
            within the first 1k chunk; D = 40: past it), the peak RSS (ru_maxrss of the
            child, from wait4) and the runtime's max_mem_in_use_bytes.

Writes OUT/results.json (every run) and OUT/tables.md (default OUT: results/ here).
"""
import argparse
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: an experiment's binaries over K layouts)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats as bs  # noqa: E402


def run(argv, cwd=None):
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env={k: v for k, v in os.environ.items() if k != "RTSLAB_RTS"})
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    return p.returncode, out.decode(), err.decode(), wall, None


def run_rusage(argv, cwd=None):
    """Runs argv; returns (status, stdout, stderr, wall, maxrss_kib)."""
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.environ.pop("RTSLAB_RTS", None)
        if cwd:
            os.chdir(cwd)
        out = os.open("/tmp/stack_chunks_rss.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        err = os.open("/tmp/stack_chunks_rss.err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(out, 1)
        os.dup2(err, 2)
        os.execv(argv[0], argv)
    _, status, ru = os.wait4(pid, 0)
    wall = time.perf_counter() - t0
    return (os.waitstatus_to_exitcode(status), open("/tmp/stack_chunks_rss.out").read(),
            open("/tmp/stack_chunks_rss.err").read(), wall, ru.ru_maxrss)


def mr(err):
    return {k: v for k, v in re.findall(r'\("([^"]+)", "([^"]*)"\)', err)}


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def by_layout(values, bins):
    """benchstats' sample {seed: [value, ...]} of VALUES, run i having run bins[i % K]."""
    out = {}
    for i, v in enumerate(values):
        out.setdefault(bins[i % len(bins)][0], []).append(v)
    return out


def interval(base, other, bins, number=None):
    """benchstats' mean ratio other/base over layouts and runs and its 95 % interval
    (benchstats.fmt_ci, ratios printed by NUMBER if given: a screen below 3 layouts, none
    with one); "-" unless each side has 2 runs or more (and base is not all zero)."""
    if min(len(base), len(other)) < 2 or not any(base):
        return "-"
    return bs.fmt_ci(bs.ratio_ci(by_layout(base, bins), by_layout(other, bins)), number)


def rests_on(reps, bins):
    """What a table's ratios rest on, for its title (benchstats.design: a screen, too few
    runs to see modes)."""
    k = len(bins)
    if k <= 1:
        return (f"{reps} runs of one binary per build, so there is no interval and a "
                f"difference may be a layout artefact; {bs.design(1, reps)}")
    note = bs.design(min(k, reps), max(1, reps // k))
    return (f"{reps} runs over {min(k, reps)} layouts per build (seeds 1..K for both builds: "
            f"each interval is paired by seed); an interval is benchstats' mean ratio and its "
            f"95 % interval over layouts and runs" + (f"; {note}" if note else ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, metavar="BUILD", help=variant.SPEC_HELP)
    ap.add_argument("--patch", required=True, metavar="BUILD", help=variant.SPEC_HELP)
    ap.add_argument("--reps", type=int, default=2 * bs.CLAIM_LAYOUTS,
                    help="runs per configuration, rep i on layout i mod K (default %d: at 1M "
                         "frames and in rss half as many)" % (2 * bs.CLAIM_LAYOUTS))
    ap.add_argument("--layouts", type=int, default=bs.CLAIM_LAYOUTS, metavar="K",
                    help="spread each configuration's runs over K seeded layouts of each build "
                         "(tools/layout.py; default %d, fewer than 3 is a screen); 0: the "
                         "build's own binaries, no interval" % bs.CLAIM_LAYOUTS)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--only", default="gc_depth,programs,rss")
    a = ap.parse_args()
    builds, records = {}, {}
    for b, spec in (("baseline", a.baseline), ("stack-chunks", a.patch)):
        builds[b], records[b] = variant.resolve_or_exit(spec, ROOT, "stack-chunks",
                                                        ["bench/micro/deep_stack_gc"])
    only = a.only.split(",")
    os.makedirs(a.out, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    results = {"date": datetime.datetime.utcnow().isoformat() + "Z", "commit": commit,
               "machine": platform.platform() + ", " + str(os.cpu_count()) + " CPUs",
               "load_before": os.getloadavg(), "builds": builds, "build_records": records,
               "runs": []}
    tables = []

    def order(r):
        names = list(builds)
        return names if r % 2 == 0 else names[::-1]

    def spread(program):
        """{build: [(layout seed, binary)]}: rep r of a build runs entry r % K."""
        try:
            return {b: layout.spread(d, program, a.layouts, log=print) for b, d in builds.items()}
        except layout.LayoutError as e:
            sys.exit(f"stack-chunks: {e}")

    if "gc_depth" in only:
        bins = spread("bench/micro/deep_stack_gc")
        rows = []
        for d in (1000, 10000, 100000, 1000000):
            reps = a.reps if d < 1000000 else max(3, a.reps // 2)
            got = {b: [] for b in builds}
            for r in range(reps):
                for b in order(r):
                    seed, exe = bins[b][r % len(bins[b])]
                    argv = [exe, str(d), "100", "+RTS", "-K1g", "-RTS"]
                    st, out, err, wall, _ = run(argv)
                    m = re.search(r"metric gc_total_ms ([0-9.]+)", out + err)
                    if st != 0 or not m:
                        sys.exit(f"deep_stack_gc failed: {' '.join(argv)}\n{out}{err}")
                    got[b].append(float(m.group(1)))
                    results["runs"].append({"exp": "gc_depth", "depth": d, "build": b,
                                            "layout": seed, "argv": argv,
                                            "gc_total_ms": float(m.group(1))})
            mb, mp = med(got["baseline"]), med(got["stack-chunks"])
            ci = interval(got["stack-chunks"], got["baseline"], bins["baseline"],
                          lambda v: f"{v:.0f}x" if v >= 100 else f"{v:.3g}x")
            rows.append(f"| {d:,} | {mb:.2f} | {mp:.3f} | {mb / mp:.0f}x | {ci} | "
                        f"{min(got['stack-chunks']):.3f}-{max(got['stack-chunks']):.3f} |")
            print(rows[-1], flush=True)
        tables.append("### 100 minor GCs at depth D (deep_stack_gc D 100 +RTS -K1g), total pause, ms\n\n"
                      f"{rests_on(a.reps, bins['baseline'])}; at 1M frames "
                      f"{rests_on(max(3, a.reps // 2), bins['baseline'])}."
                      "\n\n| frames deep | baseline (median) | stack-chunks (median) | "
                      "baseline / patch (medians) | baseline / patch (mean, 95 % interval) | "
                      "patch min-max |\n|---|---|---|---|---|---|\n" + "\n".join(rows))

    if "programs" in only:
        progs = [
            ("deep-stack norm -N1", ["testsuite/bench/gc/deep-stack.scm", "400000", "6", "600000"], ["-K1g"]),
            ("binary-trees 17 -N1", ["testsuite/bench/spectral/binary-trees.scm", "17"], []),
            ("binary-trees 17 -N2", ["testsuite/bench/spectral/binary-trees.scm", "17"], ["-N2"]),
            ("deep.scm (1M frames) -N1", ["testsuite/patches/stack-chunks/deep.scm"], []),
        ]
        bins = spread("rtslab")
        rows = []
        for name, args, opts in progs:
            got = {b: {"wall": [], "gc": []} for b in builds}
            for r in range(a.reps):
                for b in order(r):
                    seed, exe = bins[b][r % len(bins[b])]
                    argv = [exe] + args + ["+RTS", "-s", "--machine-readable"] + opts + ["-RTS"]
                    st, out, err, wall, _ = run(argv, cwd=ROOT)
                    if st != 0:
                        sys.exit(f"failed: {' '.join(argv)}\n{err[-2000:]}")
                    k = mr(err)
                    got[b]["wall"].append(float(k["total_wall_seconds"]))
                    got[b]["gc"].append(float(k["GC_wall_seconds"]))
                    results["runs"].append({"exp": "programs", "name": name, "build": b,
                                            "layout": seed, "argv": argv, "stats": k})
            wb, wp = med(got["baseline"]["wall"]), med(got["stack-chunks"]["wall"])
            gb, gp = med(got["baseline"]["gc"]), med(got["stack-chunks"]["gc"])
            ci = {x: interval(got["baseline"][x], got["stack-chunks"][x], bins["baseline"])
                  for x in ("wall", "gc")}
            rows.append(f"| {name} | {wb:.3f} | {wp:.3f} | {wp / wb:.2f} | {ci['wall']} | "
                        f"{gb:.3f} | {gp:.3f} | {(gp / gb if gb else float('nan')):.3f} | "
                        f"{ci['gc']} |")
            print(rows[-1], flush=True)
        tables.append("### Programs (medians, seconds; ratio = patch / baseline)\n\n"
                      f"{rests_on(a.reps, bins['baseline'])}.\n\n"
                      "| program | elapsed base | elapsed patch | ratio | mean, 95 % interval | "
                      "GC base | GC patch | GC ratio | mean, 95 % interval |\n"
                      "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))

    if "rss" in only:
        bins = spread("rtslab")
        rows = []
        for n, d in ((100000, 8), (100000, 40)):
            got = {b: {"rss": [], "mem": []} for b in builds}
            for r in range(max(2, a.reps // 2)):
                for b in order(r):
                    seed, exe = bins[b][r % len(bins[b])]
                    argv = [exe, os.path.join(HERE, "threads_rss.scm"),
                            str(n), str(d), "+RTS", "-s", "--machine-readable", "-RTS"]
                    st, out, err, wall, rss = run_rusage(argv)
                    if st != 0 or out.strip() != str(n * d):
                        sys.exit(f"failed: {' '.join(argv)}\n{out}{err[-2000:]}")
                    k = mr(err)
                    got[b]["rss"].append(rss / 1024)
                    got[b]["mem"].append(int(k["max_mem_in_use_bytes"]) / 2**20)
                    results["runs"].append({"exp": "rss", "threads": n, "depth": d, "build": b,
                                            "layout": seed, "argv": argv, "maxrss_kib": rss,
                                            "stats": k})
            rb, rp = med(got["baseline"]["rss"]), med(got["stack-chunks"]["rss"])
            mb, mp = med(got["baseline"]["mem"]), med(got["stack-chunks"]["mem"])
            ci = interval(got["baseline"]["rss"], got["stack-chunks"]["rss"], bins["baseline"])
            rows.append(f"| {n:,} threads x {d} frames | {rb:.0f} | {rp:.0f} | {rp / rb:.2f} | "
                        f"{ci} | {rb * 1024 / n:.2f} | {rp * 1024 / n:.2f} | {mb:.0f} | {mp:.0f} |")
            print(rows[-1], flush=True)
        tables.append("### 100 000 threads alive at once (threads_rss.scm N D)\n\n"
                      f"{rests_on(max(2, a.reps // 2), bins['baseline'])}.\n\n"
                      "| run | peak RSS base (MiB) | patch (MiB) | ratio (medians) | "
                      "mean, 95 % interval | KiB/thread base | KiB/thread patch | "
                      "heap in use base (MiB) | patch (MiB) |\n"
                      "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))

    results["load_after"] = os.getloadavg()
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write(f"Commit {commit}, {results['date']}, {results['machine']}, load "
                f"{results['load_before']} -> {results['load_after']}\n\n"
                + "".join(variant.describe(b, r) + "\n" for b, r in records.items()) + "\n"
                + "\n\n".join(tables) + "\n")
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
