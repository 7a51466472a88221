#!/usr/bin/env python3
"""+RTS -p, the time profile (Note [Time profile] in runtime/sched/profile.h).

    profile_check.py [--busy N] RTSLAB PROFILE.scm [ARG] -- RTS options...

Runs RTSLAB PROFILE.scm [ARG] +RTS -p <options> -RTS in a scratch directory (profile.scm:
heavy-loop does three times the iterations of light-loop), reads the .prof it leaves
(profile.prof, or STEM.prof after -poSTEM) and checks:

 - the header: the ticks @ 1000 us and the capabilities (-N);
 - the rows' ticks add up to the total, and their %time agree with the ticks;
 - heavy-loop and light-loop are named with their source positions (lines 4 and 6);
 - the two loops hold most of the ticks (at least 60 %), and heavy-loop's share of the
   two is about 3/4: between 0.6 and 0.9 (the run has about 140 ticks; a timer signal
   counts about 4 of them at HZ=250, so some 35 samples, taken every few ms of each
   thread's CPU time, not at random: 0.74-0.77 in 20 runs beside 6 busy processes).
Counts, not times: the loops' ratio holds on a slow or loaded machine, as a tick is CPU
time (--busy N runs N busy processes beside it: with elapsed-time ticks the ratio fell to
0.53 on a loaded machine), and each thread's own (with RTSLAB_TEST_TIMER_STALL, as in
trace/profile_N2_stall, the timer thread is away for a while: before, when a timer thread
read the threads' CPU clocks, light-loop's ticks were lost then). A failure prints the
whole .prof, whose header says how many timer signals there were and the most ticks one
counted.
"""
import os
import re
import subprocess
import sys
import tempfile


def main():
    args = sys.argv[1:]
    busy = []
    if args[:1] == ["--busy"]:
        # N CPU-bound processes beside the run, so that the program's OS threads wait for a
        # CPU: a tick must be CPU time, or the loop whose thread waits more gets more ticks
        busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                for _ in range(int(args[1]))]
        args = args[2:]
    try:
        run(args)
    finally:
        for b in busy:
            b.kill()
            b.wait()


def run(args):
    split = args.index("--")
    rtslab, prog, rest, rts = os.path.abspath(args[0]), args[1], args[2:split], args[split + 1:]
    caps = 1
    stem = "profile"
    for o in rts:
        if re.fullmatch(r"-N\d+", o):
            caps = int(o[2:])
        if o.startswith("-po"):
            stem = o[3:]
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [rtslab, os.path.abspath(prog)] + rest + ["+RTS", "-p"] + rts + ["-RTS"]
        p = subprocess.run(cmd, cwd=tmp, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=300)
        if p.returncode != 0 or p.stdout.strip() != "(12000000 4000000)":
            sys.exit(f"profile: {' '.join(cmd)} exited {p.returncode}, stdout {p.stdout!r}\n"
                     f"{p.stderr}")
        path = os.path.join(tmp, stem + ".prof")
        if not os.path.exists(path):
            sys.exit(f"profile: no {stem}.prof; the directory holds {os.listdir(tmp)}")
        text = open(path).read()
    fails = []
    m = re.search(r"total time\s+=\s+([\d.]+) secs\s+\((\d+) ticks @ 1000 us, (\d+) "
                  r"capabilit(?:y|ies)\)", text)
    if not m:
        sys.exit("profile: no total time line in:\n" + text)
    total, ncaps = int(m.group(2)), int(m.group(3))
    if ncaps != caps:
        fails.append(f"the header says {ncaps} capabilities, -N{caps} was given")
    if total < 30:
        fails.append(f"only {total} ticks")
    rows = {}
    ticks_sum = 0
    for line in text.split("PROCEDURE", 1)[1].splitlines()[1:]:
        if not line.strip():
            continue
        r = re.fullmatch(r"(.+?)\s{2,}(\S+)\s+([\d.]+)\s+(\d+)", line.rstrip())
        if not r:
            fails.append(f"a row that does not parse: {line!r}")
            continue
        name, src, pct, n = r.group(1).strip(), r.group(2), float(r.group(3)), int(r.group(4))
        rows[name] = (src, n)
        ticks_sum += n
        if total and abs(pct - 100.0 * n / total) > 0.051:
            fails.append(f"{name}: {pct} %time for {n} of {total} ticks")
    if ticks_sum != total:
        fails.append(f"the rows' ticks add up to {ticks_sum}, the header says {total}")
    for name, line in (("heavy-loop", 4), ("light-loop", 6)):
        if name not in rows:
            fails.append(f"no row for {name}")
        elif not rows[name][0].endswith(f"profile.scm:{line}:1"):
            fails.append(f"{name} at {rows[name][0]}, not profile.scm:{line}:1")
    if not fails:
        heavy, light = rows["heavy-loop"][1], rows["light-loop"][1]
        if heavy + light < 0.6 * total:
            fails.append(f"the loops hold {heavy + light} of {total} ticks")
        share = heavy / (heavy + light)
        if not 0.6 <= share <= 0.9:
            fails.append(f"heavy-loop has {share:.2f} of the loops' ticks, not about 0.75")
    for f in fails:
        print("profile: " + f)
    if fails:
        print(text)
        sys.exit(1)
    print(f"profile ok: {total} ticks, heavy-loop {rows['heavy-loop'][1]}, "
          f"light-loop {rows['light-loop'][1]} ({heavy / (heavy + light):.2f})")


if __name__ == "__main__":
    main()
