#!/usr/bin/env python3
"""futex-barrier under perf (issue 35): seed 001's `perf sched` view of stop-the-world
latency and its `perf stat` of context switches, on our runtime, before and after the patch.

    python3 experiments/futex-barrier/perf.py [--baseline BUILD] [--futex-barrier BUILD]
                                              [--settings N2,N4,N2busy]
                                              [-p micro/simple_alloc:200] [--tools stat,sched]
                                              [--reps R] [--out DIR]

Seed 001 ran the simple allocator test (one domain per core allocating short-lived data)
under `perf sched record` and saw domains late to a minor GC because they slept (the
barrier's spin-then-sleep) or waited for a CPU that another process held; `perf stat`
counted many more context switches with domains than with processes. Our baseline's
barriers spin 1000 times and then nanosleep; the patch blocks on a futex that the last to
arrive wakes. Here simple_alloc (testsuite/bench/micro/simple_alloc.c: one worker per
capability) runs under `perf stat` (software events, and the futex and nanosleep system
calls) and under `perf sched record` (per thread of this run: switches, preempted or asleep,
time asleep, scheduling delay and its maximum), each beside the runtime's -s of the same
run: stop-the-world syncs with their mean and max, the barriers' sleeps (the baseline's
nanosleeps, the patch's FUTEX_WAITs), the patch's FUTEX_WAKEs and wakes without a system
call, and the runtime's own count of context switches. N2busy runs beside a busy loop (seed
001's machine shared with other work). BUILD as in run.py. Figures to be taken on a quiet
machine (README, "perf").
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import perfdiag  # noqa: E402  (tools/perfdiag.py: the seeds' perf diagnoses)

SETTINGS = {"N2": (["-N2"], False), "N4": (["-N4"], False), "N2busy": (["-N2"], True)}
ROWS = [("stop-the-world syncs", r"rtslab_stw_syncs"),
        ("stop-the-world sync, mean (ms)", r"rtslab_stw_mean_seconds", 1e3),
        ("stop-the-world sync, max (ms)", r"rtslab_stw_max_seconds", 1e3),
        ("barrier sleeps (baseline: nanosleep; patch: FUTEX_WAIT)",
         r"rtslab_barrier_\w+_sleeps"),
        ("barrier FUTEX_WAKEs (patch)", r"rtslab_barrier_\w+_futex_wakes"),
        ("barrier wakes without a system call (patch)",
         r"rtslab_barrier_\w+_wakes_without_syscall"),
        ("context switches (the runtime's getrusage)", r"rtslab_os_context_switches"),
        ("elapsed (s)", r"total_wall_seconds")]

if __name__ == "__main__":
    sys.exit(perfdiag.main(
        who="futex-barrier", here=HERE, about=__doc__, patch="futex-barrier",
        default_builds=[("baseline", "baseline"), ("futex-barrier", "futex-barrier")],
        programs=["micro/simple_alloc:200"], settings=SETTINGS, tools=["stat", "sched"],
        runtime_rows={"stat": ROWS, "sched": ROWS}))
