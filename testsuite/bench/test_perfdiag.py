#!/usr/bin/env python3
"""Tests of the experiments' perf diagnoses (tools/perfdiag.py, experiments/*/perf.py).

    python3 testsuite/bench/test_perfdiag.py --build BUILDDIR [--live]

1. On perf output recorded on this project's 2-core KVM guest (perf 6.1), in perf-fixtures/:
   `perf script` call chains of smp/thread-churn at -N4 in a build whose spin-waits yield
   (ten samples picked from the run, the binary's path shortened to /build/rtslab; an
   eleventh of another process added), and `perf sched
   timehist --state` of simple_alloc 5 at -N2 (the whole output: other processes, idle,
   exited threads): the samples' places (a system call by its kernel entry, page faults,
   the experiment's user functions), and each thread's switches, run, wait and scheduling
   delay, counted by hand here; other processes are left out.
2. The report's tables on made-up results: the builds side by side, the runtime's rows
   from -s, a tool that could not run says why.
3. With --live (the TESTS line says needs=perf): perf stat, perf record and perf sched of a
   small program of BUILDDIR, each either run (its figures there, the program's own process
   found) or refused with perf's reason; and an experiment's whole perf script
   (perfdiag.main, as experiments/*/perf.py call it) on BUILDDIR's simple_alloc.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTSUITE = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "perf-fixtures")
sys.path.insert(0, os.path.join(os.path.dirname(TESTSUITE), "tools"))
import perfdiag  # noqa: E402
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def near(a, b):
    return abs(a - b) < 1e-9


def test_script():
    text = fixture("script-thread-churn-N4.txt")
    every = perfdiag.parse_script(text)
    mine = perfdiag.parse_script(text, {1245})
    check(len(every) == 11 and len(mine) == 10,
          f"11 samples, 10 of process 1245 (got {len(every)}, {len(mine)})")
    check(all(frames for _, frames in mine) and mine[0][1][0] == ("exc_page_fault",
                                                                   "[kernel.kallsyms]"),
          f"frames leaf first, as (symbol, dso): {mine[0]}")
    groups = {"look for work": r"^gc_scavenge_loop$", "obj_lock": r"^obj_lock$",
              "barrier": r"^sync_wait$"}
    shares, n = perfdiag.shares(mine, groups)
    counts = {k: round(v * n) for k, v in shares.items()}
    check(n == 10 and counts == {"syscall:sched_yield": 1, "syscall:clock_nanosleep": 2,
                                 "kernel: page faults": 2, "look for work": 1, "obj_lock": 1,
                                 "barrier": 1, "user: other": 2},
          f"each sample's place: a system call by its kernel entry, page faults, the user "
          f"groups by the leaf, vm_loop elsewhere: {counts}")
    check(perfdiag.classify([("finish_task_switch.isra.0", "[kernel.kallsyms]"),
                             ("__x64_sys_futex", "[kernel.kallsyms]"),
                             ("syscall", "libc.so.6")], {}) == "syscall:futex",
          "a sample inside futex() is the futex system call's")
    check(perfdiag.classify([("schedule", "[kernel.kallsyms]")], {}) == "kernel: other"
          and perfdiag.classify([], {}) == "user: other", "kernel work of no system call")


def test_timehist():
    text = fixture("sched-timehist-simple_alloc-N2.txt")
    th = perfdiag.parse_timehist(text, 1905)
    check(sorted(th) == [-1, 1905, 1907, 1908, 1909],
          f"the threads of 1905, exited ones as -1; rtslab[1684/1679] and perf left out: "
          f"{sorted(th)}")
    main = th[1905]
    check(main["switches"] == 7 and near(main["run_ms"], 4.211) and near(main["wait_ms"], 0.319)
          and near(main["delay_ms"], 0.214) and near(main["max_delay_ms"], 0.132)
          and main["preempted"] == 1 and main["slept"] == 4,
          f"the main thread, counted by hand: 7 switches, 4.211 ms run, 0.319 ms asleep, "
          f"0.214 ms delayed (max 0.132), 1 preempted, 4 asleep: {main}")
    t = th[1909]
    check(t["switches"] == 6 and near(t["run_ms"], 1.429) and near(t["wait_ms"], 0.295)
          and t["preempted"] == 0 and t["slept"] == 4, f"thread 1909 (W lines count as "
          f"neither preempted nor asleep): {t}")
    tot = perfdiag.sched_totals(th)
    check(tot["threads"] == 5 and tot["switches"] == 18 and near(tot["max_delay_ms"], 0.132)
          and near(tot["mean_delay_ms"], tot["delay_ms"] / 18), f"the totals: {tot}")
    everyone = perfdiag.parse_timehist(text)
    check(1684 in everyone and 1900 in everyone, "without a pid every task is read")


def test_report():
    def stat_run(cs, syncs):
        return {"ok": True, "events": {"task-clock": 0.5, "context-switches": cs,
                                       "cpu-migrations": 2.0, "page-faults": 9.0},
                "stats": {"rtslab_stw_syncs": syncs, "rtslab_lock_a_yields": 2.0,
                          "rtslab_lock_b_yields": 3.0}, "syscalls_counted": False,
                "perf_command": "perf stat -e context-switches -- prog"}
    results = {"prog, `+RTS -N2`": {
        "stat": {"base": [stat_run(100.0, 10.0), stat_run(300.0, 30.0), stat_run(200.0, 20.0)],
                 "patch": [stat_run(40.0, 10.0)] * 3},
        "sched": {"base": [{"ok": False, "why": "perf sched: not allowed", "stats": {}}],
                  "patch": [{"ok": False, "why": "perf sched: not allowed", "stats": {}}]}}}
    rows = {"stat": [("syncs", r"rtslab_stw_syncs"), ("yields", r"rtslab_lock_\w+_yields"),
                     ("syncs (k)", r"rtslab_stw_syncs", 1e-3)]}
    text = "\n".join(perfdiag.report(results, ["base", "patch"], ["stat", "sched"], {}, rows,
                                     False))
    check("| context switches | 200 | 40 |" in text, "medians, builds side by side:\n" + text)
    check("| -s: syncs | 20 | 10 |" in text and "| -s: yields | 5 | 5 |" in text
          and "| -s: syncs (k) | 0.020 | 0.010 |" in text,
          "the runtime's rows: summed over the keys a pattern matches, scaled:\n" + text)
    check("by hand (base): perf stat -e context-switches -- prog" in text,
          "the command that gives the same view by hand")
    check("instructions" not in text and "system calls" not in text,
          "no hardware rows without hardware counters, no system call rows uncounted")
    check("**perf sched (what the threads waited for)**: not run here, perf sched: not "
          "allowed" in text, "a tool perf refused says why:\n" + text)
    try:
        perfdiag.Workload("nosuch/prog", "quick")
        check(False, "an unknown suite program is an error")
    except perfdiag.PerfDiagError as e:
        check("no suite program nosuch/prog" in str(e), str(e))
    w = perfdiag.Workload("micro/simple_alloc:20:x", "quick")
    argv, cwd = w.command("/b", ["-N2"], "/tmp/s")
    check(argv == ["/b/bench/micro/simple_alloc", "20", "x", "+RTS", "-N2", "-s/tmp/s",
                   "--machine-readable", "-RTS"] and cwd is None and w.id == "micro/simple_alloc 20 x",
          f"a microbenchmark's command: {argv}")


LOOP = "smp/threadring"          # a small suite program that starts threads


def test_live(build, tmp):
    caps = perfdiag.probe()
    check(caps["stat"][0], "needs=perf: perf stat may count here")
    w = perfdiag.Workload(LOOP, "quick")
    stats = os.path.join(tmp, "s")
    argv, cwd = w.command(build, ["-N2"], stats)
    r = perfdiag.stat(argv, cwd, stats)
    check(r["ok"] and r["events"].get("context-switches", 0) >= 1
          and r["stats"].get("n_capabilities") == 2 and w.check(r["stdout"]) is None,
          f"perf stat: counted, the program's -s and output kept: {r.get('events')}")
    check(("syscalls:sys_enter_futex" in r["events"]) == caps["tracepoints"][0],
          "the system calls are counted exactly where tracepoints may be read")
    r = perfdiag.record(argv, cwd, stats, {"interpreter": r"^vm_loop$"})
    if caps["record"][0]:
        check(r["ok"] and r["samples"] > 0 and abs(sum(r["shares"].values()) - 1) < 1e-9
              and r["top"] and "n_capabilities" in r["stats"],
              f"perf record: samples of this process, shares summing to 1: {r.get('shares')}")
    else:
        check(not r["ok"] and r["why"], "perf record refused, and why")
    r = perfdiag.sched(argv, cwd, stats)
    if caps["sched"][0]:
        check(r["ok"] and r["pid"] in r["threads"] and r["totals"]["threads"] >= 3
              and r["latency"], f"perf sched: this process's threads (the main one, two "
              f"capabilities' at least): {r.get('totals')}")
    else:
        check(not r["ok"] and r["why"], "perf sched refused, and why")

    out = os.path.join(tmp, "exp")
    rc = perfdiag.main(["--a", build, "--b", build, "--out", out, "--settings", "N2",
                        "--tools", "stat,sched", "-p", "micro/simple_alloc:5"],
                       who="test", here=tmp, default_builds=[("a", "x"), ("b", "y")],
                       programs=["micro/simple_alloc:5"], settings={"N2": (["-N2"], False)},
                       tools=["stat", "sched"],
                       runtime_rows={"stat": [("stop-the-world syncs", r"rtslab_stw_syncs")]})
    with open(os.path.join(out, "perf.md"), encoding="utf-8") as f:
        md = f.read()
    with open(os.path.join(out, "perf.json"), encoding="utf-8") as f:
        data = json.load(f)
    check(rc == 0 and "### micro/simple_alloc 5, `+RTS -N2`" in md
          and "| context switches |" in md and "| -s: stop-the-world syncs |" in md,
          "an experiment's perf script writes its tables:\n" + md)
    check(("| switched in |" in md) == caps["sched"][0], "perf sched's table where it may run")
    check(set(data["builds"]) == {"a", "b"} and data["results"], "perf.json keeps every run")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--live", action="store_true", help="run perf itself (needs=perf)")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="rtslab-perfdiag-test-")
    try:
        if args.live:
            test_live(os.path.abspath(args.build), tmp)
        else:
            test_script()
            test_timehist()
            test_report()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
