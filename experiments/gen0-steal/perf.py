#!/usr/bin/env python3
"""gen0-steal under perf (issue 35): seed 000's perf view of `ghc --make`, on our runtime,
before and after the patch.

    python3 experiments/gen0-steal/perf.py [--baseline BUILD] [--gen0-steal BUILD]
                                           [--size quick|norm|slow] [--settings N2,N4]
                                           [-p real/synth,micro/skewed_live:48:128:16]
                                           [--tools stat,record] [--reps R] [--out DIR]

Seed 000 found GHC's GC threads idle in minor GCs: with -qb1 the allocation area was not
shared, the other GC threads looked for work and found none (perf: sched_yield, the GC's
wait loop; -sstderr: work balance 22 %); -qb0 (work stealing in gen 0) raised the balance to
74-80 %. Here: real/synth (the suite's model of `ghc --make -j`) and skewed_live (live data
on capability 0 only), under `perf stat` and `perf record -g`, each beside the runtime's -s of
the same run: the work balance, GC time, steals, and the spins and yields of the GC's locks.
With the patch, samples should move from the look-for-work loop (gc_scavenge_loop) to the
copying (gc_evacuate, gc_scavenge_object). Our baseline does not yield, so "sched_yield" as
the seed saw it shows only with spin-yield in both builds, as GHC had it: build them with
tools/variant.py and pass the directories (README, "perf"). Figures to be taken on a quiet
machine.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tools"))
import perfdiag  # noqa: E402  (tools/perfdiag.py: the seeds' perf diagnoses)

SETTINGS = {"N2": (["-N2"], False), "N4": (["-N4"], False)}
USER_GROUPS = {"GC: look for work (gc_scavenge_loop)": r"^gc_scavenge_loop$",
               "GC: work-stealing deques (wsdeque_*)": r"^wsdeque_",
               "GC: copy and scavenge (gc_evacuate, gc_scavenge_*)":
                   r"^(gc_evacuate|gc_scavenge_(object|block|\w*stack\w*)|await_copy)",
               "barrier wait (sync_wait)": r"^sync_wait$",
               "sched_yield, libc's side": r"sched_yield"}
ROWS = [("work balance (0 serial, 1 perfect)", r"work_balance"),
        ("GC time (s, wall)", r"GC_wall_seconds"), ("GCs", r"num_GCs"),
        ("minor GCs' work balance (patch's -s)", r"rtslab_minor_work_balance"),
        ("steals (patch's -s)", r"rtslab_(minor|major)_steals"),
        ("GC lock spins", r"rtslab_lock_gc_\w+_spins"),
        ("GC lock yields", r"rtslab_lock_gc_\w+_yields"),
        ("elapsed (s)", r"total_wall_seconds")]

if __name__ == "__main__":
    sys.exit(perfdiag.main(
        who="gen0-steal", here=HERE, about=__doc__, patch="gen0-steal",
        default_builds=[("baseline", "baseline"), ("gen0-steal", "gen0-steal")],
        programs=["real/synth", "micro/skewed_live:48:128:16"], settings=SETTINGS,
        tools=["stat", "record"], user_groups=USER_GROUPS,
        runtime_rows={"stat": ROWS, "record": ROWS}))
