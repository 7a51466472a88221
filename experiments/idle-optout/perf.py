#!/usr/bin/env python3
"""idle-optout under perf (issue 35): seed 001's `perf stat` of context switches and its
`perf sched` view of stop-the-world latency, on our runtime, before and after the patch.

    python3 experiments/idle-optout/perf.py [--baseline BUILD] [--idle-optout BUILD]
                                            [--size quick|norm|slow] [--settings N2,N4,N8]
                                            [-p micro/busy_one:500,spectral/nbody]
                                            [--tools stat,sched] [--reps R] [--out DIR]

Seed 001: every minor GC of OCaml 5 stops every domain, idle ones included, so a program
with one busy domain pays context switches and wake-ups for all the others (perf stat:
far more context switches than the process version). Our baseline wakes every idle
capability for every GC; the patch lets one that already took part in a GC opt out, so it
is neither woken nor waited for. Here busy_one (testsuite/bench/micro/busy_one.c: one busy
thread, the other capabilities idle) and spectral/nbody (a sequential suite program) run
under `perf stat` (context switches, migrations, the futex and nanosleep system calls) and
`perf sched record` (per thread: switches, time asleep, scheduling delay), each beside the
runtime's -s of the same run: idle capabilities woken for GC, the patch's opt-outs and
rejoins, GCs, stop-the-world mean and max, and the runtime's own count of context switches.
BUILD as in run.py. Figures to be taken on a quiet machine (README, "perf").
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import perfdiag  # noqa: E402  (tools/perfdiag.py: the seeds' perf diagnoses)

SETTINGS = {"N2": (["-N2"], False), "N4": (["-N4"], False), "N8": (["-N8"], False)}
ROWS = [("GCs", r"num_GCs"),
        ("idle capabilities woken for GC", r"rtslab_idle_gc_wakeups"),
        ("opt-outs (patch)", r"rtslab_idle_optouts"),
        ("GCs with a capability opted out (patch)", r"rtslab_idle_optout_gcs"),
        ("rejoins (patch)", r"rtslab_idle_rejoins"),
        ("stop-the-world sync, mean (ms)", r"rtslab_stw_mean_seconds", 1e3),
        ("stop-the-world sync, max (ms)", r"rtslab_stw_max_seconds", 1e3),
        ("context switches (the runtime's getrusage)", r"rtslab_os_context_switches"),
        ("elapsed (s)", r"total_wall_seconds")]

if __name__ == "__main__":
    sys.exit(perfdiag.main(
        who="idle-optout", here=HERE, about=__doc__, patch="idle-optout",
        default_builds=[("baseline", "baseline"), ("idle-optout", "idle-optout")],
        programs=["micro/busy_one:500", "spectral/nbody"], settings=SETTINGS,
        tools=["stat", "sched"], runtime_rows={"stat": ROWS, "sched": ROWS}))
