#!/usr/bin/env python3
"""Wake-ups of idle capabilities, two builds side by side (issue 19, Note [Idle in the ring]).

    run.py BEFORE AFTER [RUNS]

BEFORE and AFTER are build directories, or variants built for the purpose, VARIANT or
VARIANT@REV (`baseline@HEAD~1 baseline`: built in _build/ from a git revision or the working
tree, tools/variant.py); the exact revision, configure arguments and patches of both are
printed first.

Runs pingpong.scm (100,000 round trips between threads on capabilities 0 and 1) and the
suite's smp/sieve (norm size: an MVar chain across capabilities) at -N2 on both IO back
ends, RUNS times (default 7) each, the two builds interleaved, under `perf stat -e
context-switches,task-clock,duration_time`, and prints the medians and the after/before
ratios. perf must be allowed to count (perf_event_paranoid <= 2 for a process's own events).
"""
import os
import statistics
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
src = os.path.dirname(os.path.dirname(here))
sys.path.insert(0, os.path.join(src, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)

if len(sys.argv) < 3:
    sys.exit(__doc__)
records = {b: variant.resolve_or_exit(spec, src, "idle-in-ring")[1]
           for b, spec in (("before", sys.argv[1]), ("after", sys.argv[2]))}
for b, r in records.items():
    print(variant.describe(b, r))
builds = {b: r["binary"] for b, r in records.items()}
runs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
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
        res = {b: [] for b in builds}
        for _ in range(runs):
            for b, exe in builds.items():
                res[b].append(one(exe, argv, rts))
        med = {b: [statistics.median(r[i] for r in res[b]) for i in range(3)] for b in builds}
        for b in builds:
            print("%-10s %-6s %-6s context switches %8.0f  CPU %8.1f ms  elapsed %8.1f ms"
                  % (name, manager, b, *med[b]))
        print("%-10s %-6s after/before: context switches %.2f, CPU %.2f, elapsed %.2f (medians of %d)"
              % (name, manager, *(med["after"][i] / med["before"][i] for i in range(3)), runs))
