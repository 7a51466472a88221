#!/usr/bin/env python3
"""rtslab microbenchmarks: runs the programs built from testsuite/bench/micro/*.c and prints
a table of what they measured.

    python3 testsuite/bench/micro/run.py --build BUILDDIR [--reps N] [--only SUBSTR]...
                                         [--rts 'OPTS'] [--json PATH] [-v] [--list]

`make bench` runs it with --build . (the build directory). Each benchmark runs several times
(--reps overrides the per-benchmark default); the table gives the median over the runs and
[min .. max]. Nothing here passes or fails on a timing: the exit status is 1 only when a
benchmark program failed (non-zero exit, or no metrics printed).

Benchmark programs print lines
    metric NAME VALUE UNIT
    info NAME VALUE
(see bench.h); every other line is ignored. The raw results of every run, and the
summaries, go to BUILDDIR/_bench/micro.json (or --json PATH), with the runtime's --info.

RTSLAB_RTS is removed from the benchmarks' environment so that runs are comparable; use
--rts to add RTS options to every run (they go after the benchmark's own, so they win).
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import time

# name, program, program arguments, RTS options, default repetitions
BENCHMARKS = [
    ("alloc_rate -A1m",     "alloc_rate",    ["1g"],      ["-A1m"],  5),
    ("alloc_rate -A4m",     "alloc_rate",    ["1g"],      ["-A4m"],  3),
    ("alloc_rate -A64k",    "alloc_rate",    ["1g"],      ["-A64k"], 3),
    ("minor_gc -A4m",       "minor_gc",      ["1000", "50", "1m"], ["-A4m"], 5),
    ("deep_stack_gc 10k",   "deep_stack_gc", ["10000", "100"],   ["-K1g"], 5),
    ("deep_stack_gc 100k",  "deep_stack_gc", ["100000", "100"],  ["-K1g"], 5),
    ("deep_stack_gc 1M",    "deep_stack_gc", ["1000000", "100"], ["-K1g"], 3),
]

TIMEOUT_S = 300

# The summary table: (section title, None) or (row label, benchmark, metric, extra)
# where extra(summaries) gives a short note for the row's right-hand side (or "").
def _note_gcs(bench):
    def f(summ):
        m = summ.get(bench, {}).get("alloc_rate_minor_gcs")
        return "%d minor GCs" % m["median"] if m else ""
    return f


def _note_per_gc(bench):
    def f(summ):
        s = summ.get(bench, {})
        per, used = s.get("gc_per_gc_us"), s.get("stack_used_bytes")
        parts = []
        if per:
            parts.append("%s us/GC" % fmt(per["median"]))
        if used:
            parts.append("stack %s" % fmt_bytes(used["median"]))
        return ", ".join(parts)
    return f


def _note_copied(bench, metric):
    def f(summ):
        m = summ.get(bench, {}).get(metric)
        return "copies %s" % fmt_bytes(m["median"]) if m else ""
    return f


def _note_mean(bench, metric):
    def f(summ):
        m = summ.get(bench, {}).get(metric)
        return "mean %s us" % fmt(m["median"]) if m else ""
    return f


SUMMARY = [
    ("Allocation rate, tight allocate-and-drop loop (1 GiB of 3-word pairs)", None, None, None),
    ("inline fast path (sm_alloc), -A1m", "alloc_rate -A1m", "alloc_rate", _note_gcs("alloc_rate -A1m")),
    ("inline fast path (sm_alloc), -A4m", "alloc_rate -A4m", "alloc_rate", _note_gcs("alloc_rate -A4m")),
    ("inline fast path (sm_alloc), -A64k", "alloc_rate -A64k", "alloc_rate", _note_gcs("alloc_rate -A64k")),
    ("through rts_cons (a call), -A1m", "alloc_rate -A1m", "alloc_rate_cons", None),
    ("Minor GC pause (-A4m): median of 1000 / 50 GCs per run", None, None, None),
    ("empty nursery", "minor_gc -A4m", "minor_gc_empty_median",
     _note_mean("minor_gc -A4m", "minor_gc_empty_mean")),
    ("1 MB live in the nursery", "minor_gc -A4m", "minor_gc_1mb_median",
     _note_copied("minor_gc -A4m", "minor_gc_1mb_copied")),
    ("100 minor GCs while the running thread's stack is deep (total GC time)", None, None, None),
    ("10k frames", "deep_stack_gc 10k", "gc_total_ms", _note_per_gc("deep_stack_gc 10k")),
    ("100k frames", "deep_stack_gc 100k", "gc_total_ms", _note_per_gc("deep_stack_gc 100k")),
    ("1M frames", "deep_stack_gc 1M", "gc_total_ms", _note_per_gc("deep_stack_gc 1M")),
]


def fmt(x):
    """A number in a readable width: 14302, 448.1, 6.51, 0.0123."""
    a = abs(x)
    if a >= 1000:
        return "%.0f" % x
    if a >= 100:
        return "%.1f" % x
    if a >= 1:
        return "%.2f" % x
    return "%.3g" % x


def fmt_bytes(n):
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return "%s %s" % (fmt(n / k), unit)
    return "%d B" % n


def parse_output(text):
    metrics, info = {}, {}
    for line in text.splitlines():
        w = line.split()
        if len(w) == 4 and w[0] == "metric":
            try:
                metrics[w[1]] = {"value": float(w[2]), "unit": w[3]}
            except ValueError:
                pass
        elif len(w) == 3 and w[0] == "info":
            try:
                info[w[1]] = int(w[2])
            except ValueError:
                info[w[1]] = w[2]
    return metrics, info


def run_once(cmd, cwd, env):
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=TIMEOUT_S)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc = None
        out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode(errors="replace")
        err = "timed out after %d s" % TIMEOUT_S
    wall = time.monotonic() - t0
    metrics, info = parse_output(out)
    return {"rc": rc, "wall_s": round(wall, 4), "metrics": metrics, "info": info,
            "stderr": err[-2000:]}


def summarise(runs):
    """Per metric over the successful runs: median, min, max, unit, values."""
    out = {}
    names = []
    for r in runs:
        for n in r["metrics"]:
            if n not in names:
                names.append(n)
    for n in names:
        vals = [r["metrics"][n]["value"] for r in runs if n in r["metrics"]]
        unit = next(r["metrics"][n]["unit"] for r in runs if n in r["metrics"])
        out[n] = {"median": statistics.median(vals), "min": min(vals), "max": max(vals),
                  "n": len(vals), "unit": unit, "values": vals}
    return out


def runtime_info(prog, cwd, env):
    try:
        p = subprocess.run([prog, "+RTS", "--info", "-RTS"], cwd=cwd, env=env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=30)
        return p.stdout
    except (OSError, subprocess.SubprocessError) as e:
        return "unavailable: %s" % e


def info_field(text, key):
    """The value of ("key","value") in the runtime's --info output."""
    needle = '("%s","' % key
    for line in text.splitlines():
        i = line.find(needle)
        if i >= 0:
            rest = line[i + len(needle):]
            return rest[:rest.find('")')] if '")' in rest else rest
    return None


def print_summary(summ, reps_of):
    rows = []
    for label, bench, metric, note in SUMMARY:
        if bench is None:
            rows.append((label, None))
            continue
        m = summ.get(bench, {}).get(metric)
        if m is not None:
            rows.append(("  " + label, (m, note(summ) if note else "", reps_of.get(bench, 0))))
    # Drop the section titles left without rows (benchmarks not run, or failed).
    rows = [r for i, r in enumerate(rows)
            if r[1] is not None or (i + 1 < len(rows) and rows[i + 1][1] is not None)]
    if not rows:
        return
    width = max(len(r[0]) for r in rows if r[1] is not None) + 2
    print()
    print("%-*s %10s %-5s  %-21s %s" % (width, "", "median", "", "[min .. max]", "runs, notes"))
    for label, data in rows:
        if data is None:
            print(label)
            continue
        m, note, n = data
        rng = "[%s .. %s]" % (fmt(m["min"]), fmt(m["max"]))
        extra = "%dx" % n + (", " + note if note else "")
        print("%-*s %10s %-5s  %-21s %s" % (width, label, fmt(m["median"]), m["unit"], rng, extra))


def print_details(results):
    print()
    print("All metrics (median [min .. max] over the runs):")
    for b in results:
        print("  %s: %s" % (b["name"], " ".join(b["argv"])))
        for name, m in b["summary"].items():
            print("    %-34s %12s %-6s [%s .. %s]" % (name, fmt(m["median"]), m["unit"],
                                                    fmt(m["min"]), fmt(m["max"])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=".", help="the build directory (holds bench/micro/)")
    ap.add_argument("--reps", type=int, help="runs per benchmark (default: per benchmark, 3-5)")
    ap.add_argument("--only", action="append", default=[], metavar="SUBSTR",
                    help="run only the benchmarks whose name contains SUBSTR (repeatable)")
    ap.add_argument("--rts", default="", metavar="OPTS",
                    help="extra RTS options for every run, e.g. --rts='-N2'")
    ap.add_argument("--json", metavar="PATH",
                    help="where to write the raw results (default BUILD/_bench/micro.json)")
    ap.add_argument("-v", "--verbose", action="store_true", help="also print every metric")
    ap.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    args = ap.parse_args()

    build = os.path.abspath(args.build)
    benches = [b for b in BENCHMARKS
               if not args.only or any(s in b[0] for s in args.only)]
    if args.list:
        for name, prog, pargs, rts, reps in BENCHMARKS:
            print("%-20s bench/micro/%s %s +RTS %s -RTS  (%dx)"
                  % (name, prog, " ".join(pargs), " ".join(rts), reps))
        return 0
    if not benches:
        print("run.py: no benchmark matches %s" % args.only, file=sys.stderr)
        return 1
    for prog in sorted({b[1] for b in benches}):
        path = os.path.join(build, "bench", "micro", prog)
        if not os.access(path, os.X_OK):
            print("run.py: %s is not built (run make in %s)" % (path, build), file=sys.stderr)
            return 1

    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    extra_rts = args.rts.split()
    info_text = runtime_info(os.path.join(build, "bench", "micro", benches[0][1]), build, env)
    patches = info_field(info_text, "Patches") or "?"
    debug = info_field(info_text, "Debug") or "?"

    print("rtslab microbenchmarks in %s (patches: %s, debug: %s%s)"
          % (build, patches, debug, ", extra RTS options: " + args.rts if args.rts else ""))
    t_start = time.monotonic()
    results, failed, reps_of = [], [], {}
    for name, prog, pargs, rts, reps in benches:
        reps = args.reps if args.reps else reps
        argv = [os.path.join("bench", "micro", prog)] + pargs + ["+RTS"] + rts + extra_rts + ["-RTS"]
        cmd = [os.path.join(build, argv[0])] + argv[1:]
        sys.stdout.write("  %-20s %dx ..." % (name, reps))
        sys.stdout.flush()
        t0 = time.monotonic()
        runs = [run_once(cmd, build, env) for _ in range(reps)]
        good = [r for r in runs if r["rc"] == 0 and r["metrics"]]
        print(" %.1f s%s" % (time.monotonic() - t0,
                             "" if len(good) == len(runs) else
                             "  FAILED %d of %d runs" % (len(runs) - len(good), len(runs))))
        for r in runs:
            if not (r["rc"] == 0 and r["metrics"]):
                failed.append(name)
                print("    exit %s; stderr: %s" % (r["rc"], r["stderr"].strip()[-500:] or "(none)"))
                break
        reps_of[name] = len(good)
        results.append({"name": name, "program": prog, "argv": argv, "reps": reps,
                        "runs": runs, "summary": summarise(good)})
    elapsed = time.monotonic() - t_start

    summ = {b["name"]: b["summary"] for b in results}
    print_summary(summ, reps_of)
    if args.verbose:
        print_details(results)

    doc = {
        "schema": 1,
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "build": build,
        "extra_rts": extra_rts,
        "runtime_info": info_text,
        "patches": patches,
        "elapsed_s": round(elapsed, 2),
        "failed": failed,
        "benchmarks": results,
    }
    json_path = args.json or os.path.join(build, "_bench", "micro.json")
    os.makedirs(os.path.dirname(os.path.abspath(json_path)), exist_ok=True)
    with open(json_path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print()
    print("%d benchmarks in %.1f s; raw results in %s" % (len(results), elapsed, json_path))
    if failed:
        print("FAILED: %s" % ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
