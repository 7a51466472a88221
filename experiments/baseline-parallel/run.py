#!/usr/bin/env python3
"""Baseline parallel runtime: the measurements of issue 3 ("Measure").

    python3 experiments/baseline-parallel/run.py [--build BUILD] [--reps N] [--quick]
                                                 [--only a,b,c,d] [--layouts K] [--out DIR]

Runs, against the in-tree build (BUILD defaults to the repository root; `make` first), or
another: BUILD is a build directory, or VARIANT or VARIANT@REV (`baseline`, `all-patches`,
`baseline@v0.1`: built in _build/ from the working tree or that git revision,
tools/variant.py); its exact revision, configure arguments and patches head the tables and
go to results.json (context.build):
  (a) simple_alloc (fixed total allocation, one worker per capability, worker i on cap i)
      at -N1, -N2, -N4, -N8: elapsed (median of --reps runs), CPU time, and from -s: GC
      count, stop-the-world mean/max, barrier sleeps;
  (b) the same total work as N separate -N1 processes started together (each 1/N of the
      work, one worker) vs N capabilities in one process, N = 1, 2, 4, 8 (seed 001);
  (c) busy_one: one busy thread at -N1, -N2, -N8, -N16: elapsed, process CPU time, idle
      capabilities woken for GC (from -s);
  (d) skewed_live at -N2 (live data on capability 0, garbage on capability 1): stop-the-
      world mean/max, Gen 0/Gen 1 collections, "Parallel GC work balance" (from -s); also
      -N2 -F100 (no major GC after the start: minor GCs only), -N2 -qb (no work stealing
      at all) and -N1 for reference.

The benchmark binaries are copied to a temporary directory first, so a rebuild of the tree
while this runs does not change what is measured. Repetitions of one part are interleaved
across its configurations (rep 1 of every configuration, then rep 2, ...) so that the
machine's noise spreads over all of them. Nothing passes or fails on a timing; the exit
status is 1 only when a program failed (non-zero exit, timeout, or missing output).

Code layout is a random factor (Note [Code layout as a factor], tools/layout.py): with
--layouts K each program is linked K ways (seeds 1..K, layout.spread), every binary is
copied, and rep i runs layout i % K; every run records its layout's seed, and the ratios
between configurations (vs -N2, caps / processes, vs -N1) add benchstats' mean ratio with its
95 % interval over layouts and runs. The default, 0, measures the build's own binaries.

Prints markdown tables on stdout and writes them to OUT/tables.md, with every run's raw
figures in OUT/results.json (OUT defaults to experiments/baseline-parallel/results/).
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PROGS = ["simple_alloc", "busy_one", "skewed_live"]
TIMEOUT_S = 180
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: seeded code layouts)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats  # noqa: E402  (testsuite/benchstats.py: intervals over layouts and runs)

# Sizes: (normal, --quick)
SIMPLE_MB = (4000, 400)
BUSY_MB = (2000, 200)
SKEW_ARGS = (["48", "128", "16"], ["16", "32", "16"])

failures = []


# --- running and parsing ---------------------------------------------------------------------

def parse_metrics(text):
    m = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0] == "metric":
            m[p[1]] = float(p[2])
        elif len(p) == 3 and p[0] == "info":
            try:
                m[p[1]] = float(p[2])
            except ValueError:
                pass
    return m


BARRIERS = ["enter barrier", "leader awaiting arrival", "leader awaiting GC threads",
            "leave barrier"]


def parse_stats(text):
    """The -s summary (GHC lines + ours) as a dict."""
    s = {}
    for g in (0, 1):
        r = re.search(r"Gen  %d\s+(\d+) colls,\s+(\d+) par\s+([\d.]+)s\s+([\d.]+)s\s+([\d.]+)s\s+([\d.]+)s"
                      % g, text)
        if r:
            s["gen%d_colls" % g] = int(r.group(1))
            s["gen%d_par" % g] = int(r.group(2))
            s["gen%d_cpu_s" % g] = float(r.group(3))
            s["gen%d_elapsed_s" % g] = float(r.group(4))
            s["gen%d_avg_pause_s" % g] = float(r.group(5))
            s["gen%d_max_pause_s" % g] = float(r.group(6))
    r = re.search(r"Parallel GC work balance: ([\d.]+)%", text)
    if r:
        s["balance_pct"] = float(r.group(1))
    r = re.search(r"Stop the world: (\d+) syncs, mean ([\d.]+) us, max ([\d.]+) us", text)
    if r:
        s["stw_syncs"] = int(r.group(1))
        s["stw_mean_us"] = float(r.group(2))
        s["stw_max_us"] = float(r.group(3))
    sleeps = 0
    for b in BARRIERS:
        r = re.search(r"^\s+%s\s+(\d+)\s+(\d+)\s+(\d+)\s+([\d.]+)s" % re.escape(b), text, re.M)
        if r:
            key = b.replace(" ", "_")
            s[key + "_waits"] = int(r.group(1))
            s[key + "_spins"] = int(r.group(2))
            s[key + "_sleeps"] = int(r.group(3))
            s[key + "_time_s"] = float(r.group(4))
            sleeps += int(r.group(3))
    s["barrier_sleeps"] = sleeps
    r = re.search(r"Idle capabilities woken for GC: (\d+)", text)
    if r:
        s["idle_woken"] = int(r.group(1))
    r = re.search(r"sm \(block allocator\)\s+(\d+)\s+(\d+)", text)
    if r:
        s["sm_lock_acq"] = int(r.group(1))
        s["sm_lock_spins"] = int(r.group(2))
    for k in ("MUT", "GC", "Total"):
        r = re.search(r"%s\s+time\s+([\d.]+)s\s+\(\s*([\d.]+)s elapsed\)" % k, text)
        if r:
            s[k.lower() + "_cpu_s"] = float(r.group(1))
            s[k.lower() + "_elapsed_s"] = float(r.group(2))
    return s


def start(bindir, prog, args, rts, statsfile):
    argv = [os.path.join(bindir, prog)] + args + ["+RTS"] + rts + ["-s" + statsfile, "-RTS"]
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    return argv, p


def finish(argv, p, statsfile, t_start):
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        rc = "timeout"
    wall = time.monotonic() - t_start
    stats_text = ""
    if os.path.exists(statsfile):
        with open(statsfile) as f:
            stats_text = f.read()
        os.unlink(statsfile)
    rec = {"argv": [os.path.basename(argv[0])] + argv[1:], "rc": rc, "wall_s": wall,
           "metrics": parse_metrics(out), "stats": parse_stats(stats_text)}
    if rc != 0 or not rec["metrics"] or "stw_syncs" not in rec["stats"]:
        rec["stdout"], rec["stderr"] = out[-4000:], err[-4000:]
        failures.append(rec)
        print("FAILED (rc %s): %s\n%s%s" % (rc, " ".join(argv), out[-2000:], err[-2000:]),
              file=sys.stderr)
    return rec


def run(bindir, tmp, prog, args, rts):
    sf = os.path.join(tmp, "stats.%d" % time.monotonic_ns())
    t = time.monotonic()
    argv, p = start(bindir, prog, args, rts, sf)
    return finish(argv, p, sf, t)


def run_in(bindirs, i, tmp, prog, args, rts):
    """run() for rep I, in its layout of BINDIRS ([(layout seed, directory)]: rep i runs
    layout i % K); the record gains the layout's seed."""
    seed, bindir = bindirs[i % len(bindirs)]
    rec = run(bindir, tmp, prog, args, rts)
    rec["layout"] = seed
    return rec


def run_concurrent(bindir, tmp, jobs):
    """Starts every (prog, args, rts) together; returns (wall from first start to last exit,
    the records)."""
    t = time.monotonic()
    started = []
    for i, (prog, args, rts) in enumerate(jobs):
        sf = os.path.join(tmp, "stats.%d.%d" % (time.monotonic_ns(), i))
        started.append((sf,) + start(bindir, prog, args, rts, sf))
    recs = [finish(argv, p, sf, t) for sf, argv, p in started]
    return time.monotonic() - t, recs


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def rng(xs):
    xs = [x for x in xs if x is not None]
    return (min(xs), max(xs)) if xs else (None, None)


def f(x, nd=0):
    if x is None:
        return "-"
    return ("{:,.%df}" % nd).format(x)


def mean_ci(base, other, value):
    """'1.23x [1.10, 1.37]': benchstats' mean ratio OTHER/BASE of VALUE over the runs and its
    95 % interval over layouts and runs; '-' unless each side has 2 values or more."""
    b, o = benchstats.sample_of(base, value), benchstats.sample_of(other, value)
    if min(sum(map(len, x.values())) for x in (b, o)) < 2:
        return "-"
    return benchstats.fmt_ci(benchstats.ratio_ci(b, o), lambda v: "%.2fx" % v)


def layouts_said(bindirs, reps):
    """What a part's figures rest on, for its title."""
    k = len(bindirs)
    if k <= 1:
        return ("; one binary was measured, so a difference may be a layout artefact (an "
                "interval is over that binary's runs only)")
    spread = ("%d layouts x %d run(s)" % (k, reps // k) if reps % k == 0
              else "%d runs over %d layouts" % (reps, k))
    return ("; %s; the mean ratio and its 95 %% interval: benchstats, over layouts and runs"
            % spread)


def metric(rec, name):
    return rec["metrics"].get(name)


def stat(rec, name):
    return rec["stats"].get(name)


# --- the four parts --------------------------------------------------------------------------

def part_a(bindirs, tmp, reps, quick):
    mb = str(SIMPLE_MB[quick])
    ns = [1, 2, 4, 8]
    runs = {n: [] for n in ns}
    for r in range(reps):
        for n in ns:
            runs[n].append(run_in(bindirs, r, tmp, "simple_alloc", [mb], ["-N%d" % n]))
    rows = []
    base = med([metric(x, "simple_alloc_elapsed") for x in runs[2]])
    for n in ns:
        rr = runs[n]
        el = med([metric(x, "simple_alloc_elapsed") for x in rr])
        lo, hi = rng([metric(x, "simple_alloc_elapsed") for x in rr])
        rows.append([
            "-N%d" % n, f(el), "%s..%s" % (f(lo), f(hi)),
            "%.2fx" % (el / base) if el and base else "-",
            mean_ci(runs[2], rr, lambda x: metric(x, "simple_alloc_elapsed")) if n != 2 else "-",
            f(med([metric(x, "simple_alloc_cpu") for x in rr])),
            f(med([stat(x, "gen0_colls") for x in rr])),
            f(med([stat(x, "gen1_colls") for x in rr])),
            f(med([stat(x, "stw_mean_us") for x in rr]), 1),
            f(med([stat(x, "stw_max_us") for x in rr]), 0),
            f(med([stat(x, "barrier_sleeps") for x in rr])),
            f(med([stat(x, "gen0_elapsed_s") for x in rr]) * 1e3 if rr[0]["stats"].get("gen0_elapsed_s") is not None else None),
        ])
    table = md_table(["RTS", "elapsed ms (median)", "min..max", "vs -N2",
                      "vs -N2, mean [95 % CI]", "CPU ms",
                      "Gen 0 GCs", "Gen 1 GCs", "STW mean us", "STW max us",
                      "barrier sleeps", "Gen 0 GC elapsed ms"], rows)
    title = ("(a) simple_alloc %s MiB total, one worker per capability (worker i on cap i); "
             "median of %d runs%s" % (mb, reps, layouts_said(bindirs, reps)))
    return title, table, {"runs": {str(n): runs[n] for n in ns}}


def part_b(bindirs, tmp, reps, quick):
    mb = SIMPLE_MB[quick]
    ns = [1, 2, 4, 8]
    procs = {n: [] for n in ns}
    caps = {n: [] for n in ns}
    for r in range(reps):
        for n in ns:
            seed, bindir = bindirs[r % len(bindirs)]
            wall, recs = run_concurrent(bindir, tmp, [
                ("simple_alloc", [str(mb // n), "1"], ["-N1"]) for _ in range(n)])
            procs[n].append({"wall_s": wall, "procs": recs, "layout": seed})
            caps[n].append(run_in(bindirs, r, tmp, "simple_alloc", [str(mb)], ["-N%d" % n]))
    rows = []
    for n in ns:
        pw = med([x["wall_s"] * 1e3 for x in procs[n]])
        pmax = med([max((metric(p, "simple_alloc_elapsed") or 0) for p in x["procs"])
                    for x in procs[n]])
        pcpu = med([sum((metric(p, "simple_alloc_cpu") or 0) for p in x["procs"])
                    for x in procs[n]])
        cw = med([x["wall_s"] * 1e3 for x in caps[n]])
        cel = med([metric(x, "simple_alloc_elapsed") for x in caps[n]])
        ccpu = med([metric(x, "simple_alloc_cpu") for x in caps[n]])
        rows.append([str(n), f(pw), f(pmax), f(pcpu), f(cw), f(cel), f(ccpu),
                     "%.2fx" % (cw / pw) if cw and pw else "-",
                     mean_ci(procs[n], caps[n], lambda x: x["wall_s"])])
    table = md_table(["N", "N processes: wall ms", "slowest process's elapsed ms",
                      "CPU ms (sum)", "N caps: wall ms", "elapsed ms", "CPU ms",
                      "caps / processes (wall)", "caps / processes, mean [95 % CI]"], rows)
    title = ("(b) %d MiB of simple_alloc work as N -N1 processes (each %d/N MiB, 1 worker, "
             "started together) vs one -NN process with N workers; median of %d runs%s"
             % (mb, mb, reps, layouts_said(bindirs, reps)))
    return title, table, {"processes": {str(n): procs[n] for n in ns},
                          "caps": {str(n): caps[n] for n in ns}}


def part_c(bindirs, tmp, reps, quick):
    mb = str(BUSY_MB[quick])
    ns = [1, 2, 8, 16]
    runs = {n: [] for n in ns}
    for r in range(reps):
        for n in ns:
            runs[n].append(run_in(bindirs, r, tmp, "busy_one", [mb], ["-N%d" % n]))
    rows = []
    base = med([metric(x, "busy_one_elapsed") for x in runs[1]])
    for n in ns:
        rr = runs[n]
        el = med([metric(x, "busy_one_elapsed") for x in rr])
        lo, hi = rng([metric(x, "busy_one_elapsed") for x in rr])
        gcs = med([stat(x, "gen0_colls") for x in rr])
        woken = med([stat(x, "idle_woken") for x in rr])
        rows.append([
            "-N%d" % n, f(el), "%s..%s" % (f(lo), f(hi)),
            "%.2fx" % (el / base) if el and base else "-",
            mean_ci(runs[1], rr, lambda x: metric(x, "busy_one_elapsed")) if n != 1 else "-",
            f(med([metric(x, "busy_one_cpu") for x in rr])),
            f(gcs), f(woken),
            f(woken / gcs, 1) if woken is not None and gcs else "-",
            f(med([stat(x, "stw_mean_us") for x in rr]), 1),
            f(med([stat(x, "stw_max_us") for x in rr]), 0),
            f(med([stat(x, "barrier_sleeps") for x in rr])),
        ])
    table = md_table(["RTS", "elapsed ms (median)", "min..max", "vs -N1",
                      "vs -N1, mean [95 % CI]", "process CPU ms",
                      "Gen 0 GCs", "idle caps woken for GC", "woken per GC",
                      "STW mean us", "STW max us", "barrier sleeps"], rows)
    title = ("(c) busy_one %s MiB: one busy thread on cap 0, the other capabilities idle; "
             "median of %d runs%s" % (mb, reps, layouts_said(bindirs, reps)))
    return title, table, {"runs": {str(n): runs[n] for n in ns}}


SKEW_CONFIGS = [
    ("-N2", ["-N2"]),
    ("-N2 -F100 (minor GCs only)", ["-N2", "-F100"]),
    ("-N2 -qb (no stealing)", ["-N2", "-qb"]),
    ("-N1", ["-N1"]),
]


def part_d(bindirs, tmp, reps, quick):
    args = SKEW_ARGS[quick]
    runs = {c: [] for c, _ in SKEW_CONFIGS}
    for r in range(reps):
        for c, rts in SKEW_CONFIGS:
            runs[c].append(run_in(bindirs, r, tmp, "skewed_live", args, rts))
    rows = []
    for c, _ in SKEW_CONFIGS:
        rr = runs[c]
        bal = [stat(x, "balance_pct") for x in rr]
        rows.append([
            c, f(med([metric(x, "skewed_live_elapsed") for x in rr])),
            f(med([stat(x, "stw_mean_us") for x in rr]), 1),
            f(med([stat(x, "stw_max_us") for x in rr]), 0),
            f(med([stat(x, "gen0_colls") for x in rr])),
            f(med([stat(x, "gen1_colls") for x in rr])),
            f(med([stat(x, "gen0_avg_pause_s") for x in rr]) * 1e3 if rr[0]["stats"].get("gen0_avg_pause_s") is not None else None, 2),
            f(med([stat(x, "gen1_avg_pause_s") for x in rr]) * 1e3 if rr[0]["stats"].get("gen1_avg_pause_s") is not None else None, 1),
            ("%s%% (%s..%s)" % (f(med(bal), 2), f(rng(bal)[0], 2), f(rng(bal)[1], 2))
             if med(bal) is not None else "- (no parallel GC)"),
            f(med([metric(x, "skewed_live_copied") for x in rr]) / 2**20
              if med([metric(x, "skewed_live_copied") for x in rr]) is not None else None),
        ])
    table = md_table(["RTS", "elapsed ms", "STW mean us", "STW max us", "Gen 0 GCs",
                      "Gen 1 GCs", "Gen 0 avg pause ms", "Gen 1 avg pause ms",
                      "work balance (median, min..max)", "copied MiB"], rows)
    title = ("(d) skewed_live %s (live MiB, steps, trees): %s MiB of trees kept by a thread on "
             "cap 0, garbage from a thread on cap 1; median of %d runs%s"
             % (" ".join(args), args[0], reps, layouts_said(bindirs, reps)))
    return title, table, {"runs": runs}


PARTS = {"a": part_a, "b": part_b, "c": part_c, "d": part_d}


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def sh(cmd, cwd=ROOT):
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception as e:          # noqa: BLE001 - context only
        return "(%s)" % e


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=ROOT, metavar="BUILD",
                    help=variant.SPEC_HELP + " (default: the repository root)")
    ap.add_argument("--reps", type=int, default=None,
                    help="runs per configuration (default 5 for a and b, 3 for c and d)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    ap.add_argument("--only", default="abcd", help="parts to run, e.g. 'ad' (default abcd)")
    ap.add_argument("--layouts", type=int, default=0, metavar="K",
                    help="link each program K ways and spread the reps over them (default 0: "
                         "the build's own binaries)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    if args.layouts < 0:
        ap.error("--layouts must be 0 or more")

    bdir, build = variant.resolve_or_exit(args.build, ROOT, "baseline-parallel",
                                          ["bench/micro/" + p for p in PROGS])
    try:
        spreads = {p: layout.spread(bdir, "bench/micro/" + p, args.layouts, log=print)
                   for p in PROGS}
    except layout.LayoutError as e:
        sys.exit("baseline-parallel: %s" % e)
    tmp = tempfile.mkdtemp(prefix="rtslab-baseline-parallel.")
    bindirs = []                # [(layout seed, a directory holding that layout of PROGS)]
    for i, (seed, _) in enumerate(spreads[PROGS[0]]):
        bindirs.append((seed, os.path.join(tmp, "bin", str(seed))))
        os.makedirs(bindirs[-1][1])
        for p in PROGS:
            shutil.copy2(spreads[p][i][1], os.path.join(bindirs[-1][1], p))

    quick = 1 if args.quick else 0
    ctx = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu": sh(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]),
        "nproc": os.cpu_count(),
        "loadavg_before": open("/proc/loadavg").read().strip(),
        "git_head": sh(["git", "rev-parse", "--short", "HEAD"]),
        "git_dirty_runtime": sh(["git", "status", "--short", "runtime"]),
        "rts_info": sh([os.path.join(bindirs[0][1], "simple_alloc"), "+RTS", "--info"]),
        "build": build,
        "layouts": args.layouts,
        "quick": bool(args.quick),
    }
    print("# baseline-parallel: %s, %s, %d CPUs, HEAD %s%s, load %s"
          % (ctx["date"], ctx["cpu"], ctx["nproc"], ctx["git_head"],
             " (runtime/ modified)" if ctx["git_dirty_runtime"] else "", ctx["loadavg_before"]))
    print("# " + variant.describe("build", build))
    sys.stdout.flush()

    os.makedirs(args.out, exist_ok=True)
    results = {"context": ctx, "parts": {}}
    md = []
    t_all = time.monotonic()
    for part in args.only:
        if part not in PARTS:
            sys.exit("run.py: unknown part %r" % part)
        reps = args.reps or (5 if part in "ab" else 3)
        t = time.monotonic()
        title, table, raw = PARTS[part](bindirs, tmp, reps, quick)
        secs = time.monotonic() - t
        text = "### %s\n\n%s\n\n(%.0f s)\n" % (title, table, secs)
        print("\n" + text)
        sys.stdout.flush()
        md.append(text)
        results["parts"][part] = {"title": title, "table": table, "seconds": secs, "raw": raw}
    ctx["loadavg_after"] = open("/proc/loadavg").read().strip()
    ctx["total_seconds"] = time.monotonic() - t_all
    print("total %.0f s; load after: %s" % (ctx["total_seconds"], ctx["loadavg_after"]))
    with open(os.path.join(args.out, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)
    with open(os.path.join(args.out, "tables.md"), "w") as fh:
        fh.write("# baseline-parallel results (%s, %s, %d CPUs, HEAD %s)\n\n%s\n\n"
                 % (ctx["date"], ctx["cpu"], ctx["nproc"], ctx["git_head"],
                    variant.describe("build", build)) + "\n".join(md))
    shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print("%d run(s) failed; see results.json" % len(failures), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
