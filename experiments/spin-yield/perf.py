#!/usr/bin/env python3
"""spin-yield under perf (issue 35): seed 000's "perf suggested GHC did mostly sched_yield()",
on our runtime, before and after the patch.

    python3 experiments/spin-yield/perf.py [--baseline BUILD] [--spin-yield BUILD]
                                           [--size quick|norm|slow] [--settings N4,N2busy,N2]
                                           [-p real/synth,smp/thread-churn] [--tools stat,record]
                                           [--reps R] [--out DIR]

The baseline's spin-waits never yield: where capabilities outnumber cores (-N4 on two, or
-N2 beside a busy loop), a waiter spins through its time slice, and `perf record` shows the
time in the loops that spin (the GC's look-for-work loop gc_scavenge_loop, await_copy,
obj_lock, the barrier's sync_wait). With the patch every N spins is a sched_yield(): perf
then shows the time in the sched_yield system call, as the seed's perf showed GHC's, and
perf stat counts the calls. Each program runs once per tool and build (interleaved): under
`perf stat` (software events and the sched_yield, futex and nanosleep system calls) and under
`perf record -g`; beside each, the runtime's own -s of the same run: the spins and yields
of every lock (rtslab_lock_*), which perf's count of sched_yield calls should match, the
barrier sleeps and the GC time. OUT/perf.md holds the tables and perf's own report; BUILD as
in run.py (a build directory, an rtslab binary, VARIANT or VARIANT@REV: tools/variant.py).
The figures are to be taken on a quiet machine (README, "perf").
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import perfdiag  # noqa: E402  (tools/perfdiag.py: the seeds' perf diagnoses)

SETTINGS = {"N4": (["-N4"], False),          # oversubscribed: four capabilities, two cores
            "N2busy": (["-N2"], True),       # the last core busy (seed 003)
            "N2": (["-N2"], False)}          # the control: must not move
USER_GROUPS = {"spinning: GC look for work (gc_scavenge_loop)": r"^gc_scavenge_loop$",
               "spinning: await another GC thread's copy (await_copy)": r"^await_copy$",
               "spinning: object header lock (obj_lock)": r"^obj_lock$",
               "spinning: barrier wait (sync_wait)": r"^sync_wait$",
               "sched_yield, libc's side": r"sched_yield"}
LOCKS = [("lock spins", r"rtslab_lock_\w+_spins"), ("lock yields", r"rtslab_lock_\w+_yields"),
         ("barrier sleeps", r"rtslab_barrier_\w+_sleeps"), ("GC time (s, wall)",
                                                            r"GC_wall_seconds"),
         ("elapsed (s)", r"total_wall_seconds")]

if __name__ == "__main__":
    sys.exit(perfdiag.main(
        who="spin-yield", here=HERE, about=__doc__, patch="spin-yield",
        default_builds=[("baseline", "baseline"), ("spin-yield", "spin-yield")],
        programs=["real/synth", "smp/thread-churn"], settings=SETTINGS,
        tools=["stat", "record"], user_groups=USER_GROUPS,
        runtime_rows={"stat": LOCKS, "record": LOCKS}))
