#!/usr/bin/env python3
"""Run a program with `+RTS -l<file> -s<file> -RTS`, check its eventlog (as
trace_summary.py --check does) and that the eventlog's GC counts match `-s`.

    eventlog_matches_s.py [--out DIR] PROGRAM [ARGS...]

The files go in DIR (default tests/trace, under the build directory the tests run in).
Prints "ok: ..." and exits 0, or says what differs and exits 1. The minor GCs must equal
`Gen  0 ... colls` and the major GCs the sum of the older generations' colls.
"""

import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib  # noqa: E402

GEN_RE = re.compile(r"^\s*Gen\s+(\d+)\s+(\d+) colls,", re.MULTILINE)


def main(argv):
    out = os.path.join("tests", "trace")
    if len(argv) >= 2 and argv[0] == "--out":
        out, argv = argv[1], argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    base = os.path.basename(argv[0])
    trace = os.path.join(out, f"{base}.{os.getpid()}.eventlog.json")
    stats = os.path.join(out, f"{base}.{os.getpid()}.s")
    cmd = list(argv) + ["+RTS", f"-l{trace}", f"-s{stats}", "-RTS"]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        print(f"FAILED: {' '.join(cmd)} exited with {p.returncode}")
        return 1
    try:
        tr = tracelib.load(trace)
    except tracelib.TraceError as e:
        print(f"FAILED: {e}")
        return 1
    if tr.errors:
        for m in tr.errors[:20]:
            print(f"error: {trace}: {m}", file=sys.stderr)
        print(f"FAILED: {trace}: {len(tr.errors)} violation(s)")
        return 1
    with open(stats, encoding="utf-8") as f:
        s = f.read()
    gens = {int(g): int(n) for g, n in GEN_RE.findall(s)}
    if 0 not in gens:
        print(f"FAILED: no 'Gen  0 ... colls' line in {stats}")
        return 1
    minor = sum(1 for g in tr.gcs if g.kind == "minor")
    major = sum(1 for g in tr.gcs if g.kind == "major")
    s_minor = gens[0]
    s_major = sum(n for g, n in gens.items() if g > 0)
    if (minor, major) != (s_minor, s_major):
        print(f"FAILED: the eventlog has {minor} minor and {major} major GCs; "
              f"-s says Gen 0: {s_minor} colls, older generations: {s_major}")
        return 1
    os.remove(trace)
    os.remove(stats)
    print(f"ok: {len(tr.events)} events, {len(tr.spans)} spans balanced on "
          f"{len(tr.caps)} capabilities; {minor} minor and {major} major GCs, as -s says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
