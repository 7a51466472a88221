#!/usr/bin/env python3
"""Wake-ups of idle capabilities, two builds side by side (issue 19, Note [Idle in the ring]).

    run.py [--layouts K] BEFORE AFTER [RUNS]

BEFORE and AFTER are build directories, or variants built for the purpose, VARIANT or
VARIANT@REV (`baseline@HEAD~1 baseline`: built in _build/ from a git revision or the working
tree, tools/variant.py); the exact revision, configure arguments and patches of both are
printed first.

Runs pingpong.scm (100,000 round trips between threads on capabilities 0 and 1) and the
suite's smp/sieve (norm size: an MVar chain across capabilities) at -N2 on both IO back
ends, RUNS times (default 10) each, the two builds interleaved, under `perf stat -e
context-switches,task-clock,duration_time`, and prints the medians and the after/before
ratios. perf must be allowed to count (perf_event_paranoid <= 2 for a process's own events).

With --layouts K (K >= 1; default 5) each build's rtslab is K seeded layouts of its code
(tools/layout.py, Note [Code layout as a factor]) and run i uses layout i % K; each
after/before ratio then gains benchstats' mean ratio with its 95 % interval over layouts and
runs (testsuite/benchstats.py; both builds run seeds 1..K, so it is paired by seed; fewer
than 3 layouts is a screen). 0 runs the build's own binary, one per build, with no interval.
"""
import argparse
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(src, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: an experiment's binaries over K layouts)
sys.path.insert(0, os.path.join(src, "testsuite"))
import benchstats  # noqa: E402

ap = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1].strip())
ap.add_argument("before")
ap.add_argument("after")
ap.add_argument("runs", nargs="?", type=int, default=2 * benchstats.CLAIM_LAYOUTS)
ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K")
a = ap.parse_args()
records = {b: variant.resolve_or_exit(spec, src, "idle-in-ring")[1]
           for b, spec in (("before", a.before), ("after", a.after))}
for b, r in records.items():
    print(variant.describe(b, r))
try:    # {build: [(layout seed, rtslab)]}: run i uses entry i % K
    builds = {b: layout.spread(r["dir"], "rtslab", a.layouts, log=print) if a.layouts
              else [(0, r["binary"])] for b, r in records.items()}
except layout.LayoutError as e:
    sys.exit("idle-in-ring: %s" % e)
runs = a.runs
if a.layouts <= 1:
    print("%d runs of one binary per build, so there is no interval and a difference may be a "
          "layout artefact; %s" % (runs, benchstats.design(1, runs)))
else:
    k = min(a.layouts, runs)
    note = benchstats.design(k, runs // k)
    print("%d runs over %d layouts per build (seeds 1..K for both builds: paired by seed); "
          "\"mean\": benchstats' mean ratio after/before and its 95 %% interval over layouts "
          "and runs%s" % (runs, k, "; " + note if note else ""))
CASES = [("pingpong", [os.path.join(here, "pingpong.scm"), "100000"]),
         ("smp/sieve", [os.path.join(src, "testsuite/bench/smp/sieve.scm"), "4000"])]


def one(exe, argv, rts):
    err = subprocess.run(["perf", "stat", "-x,", "-e", "context-switches,task-clock,duration_time",
                          exe] + argv + ["+RTS"] + rts + ["-RTS"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True).stderr
    got = {}
    for line in err.splitlines():
        f = line.split(",")
        if len(f) > 2 and f[2] in ("context-switches", "task-clock", "duration_time"):
            got[f[2]] = float(f[0])
    return got["context-switches"], got["task-clock"], got["duration_time"] / 1e6


for name, argv in CASES:
    for manager in ("uring", "epoll"):
        rts = ["-N2", "--io-manager=" + manager]
        res = {b: {} for b in builds}      # {build: {layout seed: [(switches, CPU, elapsed)]}}
        for n in range(runs):
            for b, bins in builds.items():
                seed, exe = bins[n % len(bins)]
                res[b].setdefault(seed, []).append(one(exe, argv, rts))
        med = {b: [statistics.median(r[i] for rs in res[b].values() for r in rs)
                   for i in range(3)] for b in builds}
        for b in builds:
            print("%-10s %-6s %-6s context switches %8.0f  CPU %8.1f ms  elapsed %8.1f ms"
                  % (name, manager, b, *med[b]))
        print("%-10s %-6s after/before: context switches %.2f, CPU %.2f, elapsed %.2f (medians of %d)"
              % (name, manager, *(med["after"][i] / med["before"][i] for i in range(3)), runs))
        if runs >= 2:
            sample = {b: [{s: [r[i] for r in rs] for s, rs in res[b].items()} for i in range(3)]
                      for b in builds}
            ci = [benchstats.fmt_ci(benchstats.ratio_ci(sample["before"][i], sample["after"][i]))
                  for i in range(3)]
            print("%-10s %-6s mean: context switches %s, CPU %s, elapsed %s"
                  % (name, manager, *ci))
