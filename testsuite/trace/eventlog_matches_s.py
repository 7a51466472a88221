#!/usr/bin/env python3
"""Run a program with `+RTS -l<file> -s<file> -RTS`, check its eventlog (as
trace_summary.py --check does: for the binary format, its structure too) and that its counts
match `-s`.

    eventlog_matches_s.py [--out DIR] [--format ghc|chrome] PROGRAM [ARGS...]

The files go in DIR (default tests/trace, under the build directory the tests run in); the
format is the eventlog's (--eventlog-format, default ghc). Prints "ok: ..." and exits 0, or
says what differs and exits 1. What must match:
  - GCs: the minor GC spans must equal `Gen  0 ... colls` and the major ones the sum of the
    older generations' colls; so must the GC statistics events (GHC's GC_STATS_GHC), by
    generation;
  - threads: the threads migrated to other capabilities (MIGRATE_THREAD) must equal `-s`'s
    "threads pushed to idle capabilities"; every thread that runs (RUN_THREAD) must have been
    created (CREATE_THREAD), and no thread may finish twice or more threads finish than were
    created.
"""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib  # noqa: E402

GEN_RE = re.compile(r"^\s*Gen\s+(\d+)\s+(\d+) colls,", re.MULTILINE)
PUSHED_RE = re.compile(r"threads pushed to idle capabilities: (\d+)")


def main(argv):
    out = os.path.join("tests", "trace")
    fmt = "ghc"
    while argv and argv[0] in ("--out", "--format") and len(argv) >= 2:
        if argv[0] == "--out":
            out = argv[1]
        else:
            fmt = argv[1]
        argv = argv[2:]
    if not argv or fmt not in ("ghc", "chrome"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    base = os.path.basename(argv[0])
    trace = os.path.join(out, f"{base}.{os.getpid()}.eventlog" + (".json" if fmt == "chrome" else ""))
    stats = os.path.join(out, f"{base}.{os.getpid()}.s")
    cmd = list(argv) + ["+RTS", f"-l{trace}", f"--eventlog-format={fmt}", f"-s{stats}", "-RTS"]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        print(f"FAILED: {' '.join(cmd)} exited with {p.returncode}")
        return 1
    try:
        tr = tracelib.load(trace)
    except tracelib.TraceError as e:
        print(f"FAILED: {e}")
        return 1
    if (fmt == "ghc") != (tr.log is not None):
        print(f"FAILED: {trace} is not in the {fmt} format")
        return 1
    if tr.errors:
        for m in tr.errors[:20]:
            print(f"error: {trace}: {m}", file=sys.stderr)
        print(f"FAILED: {trace}: {len(tr.errors)} violation(s)")
        return 1
    with open(stats, encoding="utf-8") as f:
        s = f.read()
    gens = {int(g): int(n) for g, n in GEN_RE.findall(s)}
    pushed = PUSHED_RE.search(s)
    if 0 not in gens or not pushed:
        print(f"FAILED: no 'Gen  0 ... colls' or 'threads pushed' line in {stats}")
        return 1
    s_minor = gens[0]
    s_major = sum(n for g, n in gens.items() if g > 0)
    fails = []
    minor = sum(1 for g in tr.gcs if g.kind == "minor")
    major = sum(1 for g in tr.gcs if g.kind == "major")
    if (minor, major) != (s_minor, s_major):
        fails.append(f"the eventlog has {minor} minor and {major} major GC spans; -s says "
                     f"Gen 0: {s_minor} colls, older generations: {s_major}")
    stats_gens = [i.args.get("gen") for i in tr.instants if i.name == "gc stats"]
    st_minor = sum(1 for g in stats_gens if g == 0)
    st_major = len(stats_gens) - st_minor
    if (st_minor, st_major) != (s_minor, s_major):
        fails.append(f"the eventlog has GC statistics of {st_minor} minor and {st_major} major "
                     f"GCs; -s says {s_minor} and {s_major}")
    migrated = sum(1 for i in tr.instants if i.name == "thread migrate")
    if migrated != int(pushed.group(1)):
        fails.append(f"the eventlog migrates {migrated} threads; -s says "
                     f"{pushed.group(1)} were pushed to idle capabilities")
    created = [i.args.get("thread") for i in tr.instants if i.name == "thread create"]
    ran = {sp.args.get("thread") for sp in tr.spans if sp.name == tracelib.MUTATOR}
    finished = [sp.args.get("thread") for sp in tr.spans
                if sp.name == tracelib.MUTATOR and sp.args.get("status") == "ThreadFinished"]
    if len(set(created)) != len(created):
        fails.append("a thread is created twice")
    if ran - set(created):
        fails.append(f"{len(ran - set(created))} thread(s) run that were never created, e.g. "
                     f"{sorted(ran - set(created))[:5]}")
    if len(set(finished)) != len(finished) or len(finished) > len(created):
        fails.append(f"{len(finished)} thread finishes ({len(set(finished))} threads) for "
                     f"{len(created)} threads created")
    if fails:
        for m in fails:
            print(f"FAILED: {m}")
        return 1
    os.remove(trace)
    os.remove(stats)
    print(f"ok: {len(tr.events)} events, {len(tr.spans)} spans balanced on "
          f"{len(tr.caps)} capabilities; {minor} minor and {major} major GCs, "
          f"{len(created)} threads created, {len(finished)} finished, {migrated} migrated, "
          f"as -s says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
