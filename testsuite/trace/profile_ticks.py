#!/usr/bin/env python3
"""+RTS -p counts every tick (Note [Time profile] in runtime/sched/profile.h).

    profile_ticks.py RTSLAB PROFILE_BUSY.scm prim|gc

Runs RTSLAB PROFILE_BUSY.scm MODE +RTS -p -s<file> --machine-readable -RTS at -N1 in a
scratch directory and checks the .prof against two counts the run itself gives, not against
a time the test measures:

 - the process's CPU time (its rusage, user + system): the ticks (1 ms each, counted while
   the thread runs or a GC is under way) are at least half of it in ms. Wall time is at least
   CPU time for this one thread, so only lost ticks can fail this: before, the ticks that fell
   in one primitive of several ms (prim) or in one GC (gc) were one sample, and prim got
   about 1 tick a call for about 8 ms of CPU a call;
 - the run's elapsed time (-s's total_wall_seconds): the ticks are at most that in ms (+10 %
   and 50), so no tick is counted twice;
 - prim: fill-loop, which calls the primitive, holds most of the ticks (at least half);
   gc: the "(garbage collection)" row holds at least half of -s's GC_cpu_seconds in ms (a
   tick is CPU time: against GC_wall_seconds it failed on a loaded machine).
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    rtslab, prog, mode = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [rtslab, prog, mode, "+RTS", "-p", "-s" + os.path.join(tmp, "s"),
               "--machine-readable", "-RTS"]
        with open(os.path.join(tmp, "out"), "w+") as fo, open(os.path.join(tmp, "err"), "w+") as fe:
            p = subprocess.Popen(cmd, cwd=tmp, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe)
            _, status, ru = os.wait4(p.pid, 0)      # its own rusage, not the driver's
            p.returncode = os.waitstatus_to_exitcode(status)
            fo.seek(0)
            fe.seek(0)
            out, err = fo.read(), fe.read()
        cpu = ru.ru_utime + ru.ru_stime
        want = "1000000" if mode == "gc" else "1"
        if p.returncode != 0 or out.strip() != want:
            sys.exit(f"profile_ticks: {' '.join(cmd)} exited {p.returncode}, stdout {out!r}\n{err}")
        stats = dict(re.findall(r'\("([^"]+)", "([^"]*)"\)', open(os.path.join(tmp, "s")).read()))
        text = open(os.path.join(tmp, "profile_busy.prof")).read()
    m = re.search(r"\((\d+) ticks @ 1000 us, 1 capability\)", text)
    if not m:
        sys.exit("profile_ticks: no total line in:\n" + text)
    total = int(m.group(1))
    rows = {}
    for line in text.split("PROCEDURE", 1)[1].splitlines()[1:]:
        r = re.fullmatch(r"(.+?)\s{2,}(\S+)\s+([\d.]+)\s+(\d+)", line.rstrip())
        if r:
            rows[r.group(1).strip()] = int(r.group(4))
    elapsed_ms = 1000 * float(stats["total_wall_seconds"])
    gc_ms = 1000 * float(stats["GC_cpu_seconds"])
    fails = []
    if total < 0.5 * cpu * 1000:
        fails.append(f"{total} ticks for {cpu * 1000:.0f} ms of CPU time (fewer than half)")
    if total > 1.1 * elapsed_ms + 50:
        fails.append(f"{total} ticks in a run of {elapsed_ms:.0f} ms")
    if mode == "prim":
        if rows.get("fill-loop", 0) < 0.5 * total:
            fails.append(f"fill-loop has {rows.get('fill-loop', 0)} of {total} ticks")
    else:
        g = rows.get("(garbage collection)", 0)
        if g < 0.5 * gc_ms:
            fails.append(f"{g} ticks in GC for {gc_ms:.0f} ms of GC CPU time")
    for f in fails:
        print("profile_ticks: " + f)
    if fails:
        print(text)
        sys.exit(1)
    print(f"profile_ticks ok: {mode}: {total} ticks, {cpu * 1000:.0f} ms CPU, "
          f"{elapsed_ms:.0f} ms elapsed, GC CPU {gc_ms:.0f} ms, rows {rows}")


if __name__ == "__main__":
    main()
