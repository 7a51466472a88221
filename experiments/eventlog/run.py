#!/usr/bin/env python3
"""The eventlog's cost (issue 35, section 1): tracing off, tracing on in GHC's binary format
and as Chrome JSON, and the size of the logs.

    python3 experiments/eventlog/run.py [--parts sizes,off,on] [--size quick|norm]
                                        [-N CAPS] [--programs REGEX] [--layouts K]
                                        [-k RUNS] [--before REV] [--out DIR]
                                        [--build DIR]

Parts:

  sizes  every program of the suite (but the request server, which wrk drives) once at
         --size and -N CAPS with `-l` in each format: the log's bytes, its events (read back
         by testsuite/trace/ghc_eventlog.py), bytes per event, and bytes per second of the
         run's elapsed time (from -s; one run, so the rate is as noisy as that time, the
         sizes are exact). The busiest program is the one whose binary log grows fastest.
  off    tracing off: the trace points this change added (thread lifecycle, GC idle and
         work, statistics) against the runtime before them, `baseline@REV` (--before, the
         commit before the eventlog change) vs `baseline`, both without -l, through
         testsuite/bench.py --layouts K (testsuite/bench/README.md, "The method"): a claim
         of "no measurable cost" is an interval on the geometric mean that holds 0.
  on     tracing on: `baseline` without -l, with -l (GHC's format) and with -l
         --eventlog-format=chrome, through bench.py --layouts K; the overhead per event is
         the elapsed time's difference over the events the sizes part counted.

Writes OUT/<part>/ (bench.py's runs.json and table.txt for off and on; sizes.json and
sizes.txt for sizes); OUT defaults to experiments/eventlog/results. Nothing passes or fails
on a timing; the exit status is 1 when a run failed. README.md says what was run and what
it showed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
sys.path.insert(0, os.path.join(ROOT, "testsuite", "trace"))
sys.dont_write_bytecode = True
import benchlib  # noqa: E402
import ghc_eventlog  # noqa: E402

# The last commit of main before the eventlog change (its branch's base).
DEFAULT_BEFORE = "15803a8"
ELAPSED_RE = re.compile(r'\("total_wall_seconds", "([0-9.]+)"\)')


def build(variant):
    """The build directory of VARIANT (tools/variant.py configures and syncs it), built."""
    d = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "variant.py"), variant],
                       check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    subprocess.run(["make", "-C", d, "-j2", "rtslab"], check=True, stdout=subprocess.DEVNULL)
    return d


def part_sizes(out, size, caps, patterns, build_dir):
    os.makedirs(out, exist_ok=True)
    rtslab = os.path.abspath(os.path.join(build_dir or build("baseline"), "rtslab"))
    progs = [p for p in benchlib.select(benchlib.discover(ROOT), patterns)
             if not p.routes and size in p.args]
    rows, failed = [], False
    with tempfile.TemporaryDirectory() as tmp:
        for p in progs:
            row = {"program": p.id}
            for fmt in ("ghc", "chrome"):
                log = os.path.join(tmp, "log." + fmt)
                st = os.path.join(tmp, "s")
                cmd = benchlib.command(rtslab, p, size, [f"-N{caps}", "-l" + log,
                                                         f"--eventlog-format={fmt}"], st)
                r = subprocess.run(cmd, cwd=os.path.dirname(p.path), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
                if r.returncode != 0:
                    print(f"{p.id} ({fmt}): exit {r.returncode}: {r.stderr[-300:]}", file=sys.stderr)
                    failed = True
                    break
                with open(st) as f:
                    m = ELAPSED_RE.search(f.read())
                row[fmt + "_bytes"] = os.path.getsize(log)
                row[fmt + "_elapsed"] = float(m.group(1)) if m else None
                if fmt == "ghc":
                    row["events"] = len(ghc_eventlog.read(log).events)
            else:
                e, s = row["events"], row["ghc_elapsed"]
                row["ghc_bytes_per_event"] = row["ghc_bytes"] / e if e else None
                row["chrome_bytes_per_event"] = row["chrome_bytes"] / e if e else None
                row["ghc_bytes_per_s"] = row["ghc_bytes"] / s if s else None
                row["chrome_bytes_per_s"] = (row["chrome_bytes"] / row["chrome_elapsed"]
                                             if row["chrome_elapsed"] else None)
                rows.append(row)
    rows.sort(key=lambda r: -(r["ghc_bytes_per_s"] or 0))
    with open(os.path.join(out, "sizes.json"), "w") as f:
        json.dump({"size": size, "caps": caps, "rows": rows}, f, indent=1)
    lines = [f"{'program':24} {'events':>9} {'ghc B':>11} {'json B':>12} {'B/ev':>6} "
             f"{'json B/ev':>9} {'ghc MB/s':>9} {'json MB/s':>9}"]
    for r in rows:
        lines.append(f"{r['program']:24} {r['events']:9d} {r['ghc_bytes']:11d} "
                     f"{r['chrome_bytes']:12d} {r['ghc_bytes_per_event'] or 0:6.1f} "
                     f"{r['chrome_bytes_per_event'] or 0:9.1f} "
                     f"{(r['ghc_bytes_per_s'] or 0) / 1e6:9.2f} {(r['chrome_bytes_per_s'] or 0) / 1e6:9.2f}")
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "sizes.txt"), "w") as f:
        f.write(text)
    print(text)
    return not failed


def bench(out, configs, size, layouts, runs, patterns):
    cmd = [sys.executable, os.path.join(ROOT, "testsuite", "bench.py"), "--size", size,
           "--layouts", str(layouts), "-k", str(runs), "--out", out,
           "--metrics", "elapsed,mutator,gc,taskclock"]
    for c in configs:
        cmd += ["-c", c]
    for p in patterns:
        cmd += ["-p", p]
    print("+", " ".join(cmd), flush=True)
    return subprocess.run(cmd).returncode == 0


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parts", default="sizes,off,on")
    ap.add_argument("--size", default="norm", choices=("quick", "norm"))
    ap.add_argument("-N", dest="caps", type=int, default=4)
    ap.add_argument("--programs", action="append", default=[])
    ap.add_argument("--layouts", type=int, default=5)
    ap.add_argument("-k", dest="runs", type=int, default=2)
    ap.add_argument("--before", default=DEFAULT_BEFORE)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--build", help="sizes: the build directory whose rtslab runs (default: "
                    "the baseline variant, built)")
    a = ap.parse_args(argv)
    ok = True
    parts = a.parts.split(",")
    n = f"-N{a.caps}"
    if "sizes" in parts:
        ok &= part_sizes(os.path.join(a.out, "sizes"), a.size, a.caps, a.programs, a.build)
    if "off" in parts:
        ok &= bench(os.path.join(a.out, "off"), [f"baseline@{a.before}:{n}", f"baseline:{n}"],
                    a.size, a.layouts, a.runs, a.programs)
    if "on" in parts:
        with tempfile.TemporaryDirectory() as tmp:
            ok &= bench(os.path.join(a.out, "on"),
                        [f"baseline:{n}", f"baseline:{n},-l{tmp}/on.eventlog",
                         f"baseline:{n},-l{tmp}/on.json,--eventlog-format=chrome"],
                        a.size, a.layouts, a.runs, a.programs)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
