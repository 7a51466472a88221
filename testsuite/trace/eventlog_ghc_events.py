#!/usr/bin/env python3
"""Read an eventlog of the runtime with GHC's own ghc-events library (the reader of
ThreadScope, `ghc-events show` and eventlog2html), and check what it counts.

    eventlog_ghc_events.py [--out DIR] PROGRAM [ARGS...]

Builds testsuite/trace/ReadEventlog.hs with ghc (`-package ghc-events`; Debian 12's ghc and
libghc-ghc-events-dev) into DIR/read-eventlog unless it is there and newer than its source,
runs PROGRAM with `+RTS -l<file> -s<file> -RTS`, and has read-eventlog decode every event.
It must read the whole log with no error, count as many events as ghc_eventlog.py does, and
its GCs (GC_STATS_GHC, minor and major) and threads (created and finished, as
ghc_eventlog.py counts them; migrated, as -s's threads pushed to idle capabilities) must
match. Prints "ok: ..." or what differs (exit 1). DIR defaults to tests/trace.
"""

import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ghc_eventlog as ge  # noqa: E402

GEN_RE = re.compile(r"^\s*Gen\s+(\d+)\s+(\d+) colls,", re.MULTILINE)
PUSHED_RE = re.compile(r"threads pushed to idle capabilities: (\d+)")
READ_RE = re.compile(r"^events (\d+) \(rtslab's own: (\d+); \d+ characters shown\); GCs: minor "
                     r"(\d+), major (\d+); threads: created (\d+), finished (\d+), migrated "
                     r"(\d+); capabilities (\d+)$", re.MULTILINE)


def build_reader(out):
    src = os.path.join(HERE, "ReadEventlog.hs")
    exe = os.path.join(out, "read-eventlog")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    # Built under names of this process's own and renamed into place: the tests that use it
    # run side by side, and one ran the reader while the other's ghc was still writing it.
    part = f"{exe}.{os.getpid()}"
    p = subprocess.run(["ghc", "-O0", "-v0", "-package", "ghc-events",
                        "-outputdir", f"{part}.o", "-o", part, src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.stderr.write(p.stdout)
        return None
    os.replace(part, exe)
    shutil.rmtree(f"{part}.o", ignore_errors=True)
    return exe


def main(argv):
    out = os.path.join("tests", "trace")
    if len(argv) >= 2 and argv[0] == "--out":
        out, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    exe = build_reader(out)
    if not exe:
        print("FAILED: ghc could not build ReadEventlog.hs")
        return 1
    base = os.path.basename(argv[0])
    trace = os.path.join(out, f"{base}.{os.getpid()}.ghc.eventlog")
    stats = os.path.join(out, f"{base}.{os.getpid()}.ghc.s")
    cmd = list(argv) + ["+RTS", f"-l{trace}", f"-s{stats}", "-RTS"]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        print(f"FAILED: {' '.join(cmd)} exited with {p.returncode}")
        return 1
    r = subprocess.run([exe, trace], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        print(f"FAILED: ghc-events could not read {trace}")
        return 1
    m = READ_RE.search(r.stdout)
    if not m:
        print(f"FAILED: read-eventlog printed {r.stdout!r}")
        return 1
    events, own, minor, major, created, finished, migrated, ncaps = map(int, m.groups())
    with open(stats, encoding="utf-8") as f:
        s = f.read()
    gens = {int(g): int(n) for g, n in GEN_RE.findall(s)}
    pushed = PUSHED_RE.search(s)
    log = ge.read(trace)
    c = ge.counts(log)
    ours_finished = sum(1 for e in log.events if e.num == ge.EV_STOP_THREAD
                        and ge._u16(e.payload, 4) == 5)
    want = {
        "events": (events, len(log.events)),
        "rtslab's own events": (own, sum(n for num, n in c.items() if num >= 2000)),
        "minor GCs": (minor, gens.get(0)),
        "major GCs": (major, sum(n for g, n in gens.items() if g > 0)),
        "threads created": (created, c.get(ge.EV_CREATE_THREAD, 0)),
        "threads finished": (finished, ours_finished),
        "threads migrated": (migrated, int(pushed.group(1)) if pushed else None),
        "capabilities": (ncaps, len(log.caps)),
    }
    bad = [f"{k}: ghc-events counts {a}, expected {b}" for k, (a, b) in want.items() if a != b]
    if bad or log.errors:
        for b in bad:
            print(f"FAILED: {b}")
        for e in log.errors[:10]:
            print(f"FAILED: {trace}: {e}")
        return 1
    os.remove(trace)
    os.remove(stats)
    print(f"ok: ghc-events read {events} events ({own} of rtslab's own, skipped) on {ncaps} "
          f"capabilities: {minor} minor and {major} major GCs, {created} threads created, "
          f"{finished} finished, {migrated} migrated, as -s and ghc_eventlog.py say")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
