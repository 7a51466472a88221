#!/usr/bin/env python3
"""The effect of each patch (`make bench-patches`): runs the nofib-style suite on the
baseline, each written patch alone, all patches, and all patches but one, at each -N given,
in ONE interleaved bench.py run, and prints a summary table with a row per patch:

    alone      the patch alone against the baseline
    last       all patches against all patches but this one (its effect as the last added)

for elapsed time and GC time: the geometric mean of the per-program ratios with its 95 %
interval, the worst program (the largest ratio) and how many programs moved (their own
interval excludes 1.0). The intervals come from benchstats (t over the layout means): every
configuration is linked --layouts ways (tools/layout.py; 5 by default, fewer than 3 is a
screen that calls nothing moved) and each program runs -k times on each layout, so an
effect of code layout is part of the noise, not of a patch (testsuite/bench/README.md).
The servers (a `;; load:` line) run for the load's fixed duration, so their elapsed and GC
times say nothing of speed: they are left out of those two and summarized by requests per
second instead, where the worst row is the lowest ratio.

    python3 testsuite/bench_patches.py [--size norm] [--layouts 5] [-k 1] [-N 2,4] [-p REGEX]
                                       [--out DIR]
    python3 testsuite/bench_patches.py --summary RUNS.json     # or RUNS.json.gz

On a Slurm cluster, --slurm --shared DIR (and --partition, --time, --nodes-max,
--sbatch-arg, --pool-nodes) pass to bench.py: the matrix runs as one job array
(testsuite/bench/README.md, "On a cluster"); `make bench-patches
BENCH_PATCHES_ARGS='--size norm --layouts 5 -k 1 -N 2,4 --slurm --shared DIR'`.

A patch is written once testsuite/patches/NAME/ exists (the others have no code, so their
variants would be the baseline); with one written patch, "all but it" is the baseline.
The per-program tables of bench.py are printed too; the raw runs go to OUT/.../runs.json,
the summary to summary.txt and summary.json beside it.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import benchstats  # noqa: E402

METRICS = ("elapsed", "gc")       # over the programs that are not servers
SERVER_METRICS = ("rps",)         # over the servers' routes; higher is better


def written(src):
    return [p for p in benchlib.patch_names(src)
            if os.path.isdir(os.path.join(src, "testsuite", "patches", p))]


def config_specs(src, ns):
    """bench.py -c arguments, and {(role, patch, n): label}."""
    ws = written(src)
    every = benchlib.patch_names(src)
    specs, labels, defined = [], {}, set()

    def add(variant, flags, n, key):
        head = variant
        if flags is not None and variant not in defined:
            head = f"{variant}={','.join(flags)}"
            defined.add(variant)
        specs.append(f"{head}:-N{n}")
        labels[key] = f"{variant} -N{n}"

    for n in ns:
        add("baseline", None, n, ("baseline", None, n))
        for p in ws:
            add(p, None, n, ("alone", p, n))
        if ws:
            add("all-patches", None, n, ("all", None, n))
        for p in ws:
            if len(ws) == 1:
                labels[("allbut", p, n)] = labels[("baseline", None, n)]
                continue
            rest = [q for q in ws if q != p]
            # every written patch but p; the unwritten ones have no code either way
            add("allbut-" + p, [f"--enable-{q}" for q in rest]
                + [f"--disable-{q}" for q in every if q not in rest], n, ("allbut", p, n))
    return specs, labels, ws


def effect(runs, programs, a, b, metric, higher_better=False):
    """b against a over the programs: {geomean, lo, hi, k, verdict, worst: (program, ratio),
    moved, programs}. geomean's interval [lo, hi] and each program's come from benchstats
    (t over the layout means); lo and hi are None when a program has a run of 0 or one
    layout. verdict is benchstats.verdict() of the geomean's interval: below
    benchstats.MIN_LAYOUTS layouts a "screen", and then no program is counted as moved
    (moved is None). The worst program has the largest ratio, or the smallest when higher
    is better."""
    grid = benchlib.cells(runs, programs, [a, b], metric)
    ratios, pairs, worst, moved = [], [], None, 0
    intervals, screen = True, False
    for p in programs:
        ca, cb = grid[(p, a)], grid[(p, b)]
        if not benchlib.comparable(ca, cb):
            continue
        r = cb.center / ca.center
        ratios.append(r)
        pairs.append((ca.sample, cb.sample))
        if worst is None or (r < worst[1] if higher_better else r > worst[1]):
            worst = (p, r)
        if not benchlib.positive(ca, cb):
            intervals = False            # a run of 0 (a GC time): no interval
            continue
        v = benchstats.verdict(benchstats.ratio_ci(ca.sample, cb.sample))
        screen = screen or v in ("screen", "none")
        moved += v == "moved" or (v == "exact" and r != 1.0)
    g, lo, hi, k, verdict = benchlib.geomean(ratios), None, None, None, None
    if pairs and intervals:
        ci = benchstats.geomean_ci(pairs)
        g, lo, hi, k, verdict = ci.ratio, ci.lo, ci.hi, ci.k, benchstats.verdict(ci)
    return {"geomean": g, "lo": lo, "hi": hi, "k": k, "verdict": verdict, "worst": worst,
            "moved": None if screen else moved, "programs": len(ratios)}


def is_server(runs, program):
    """A server's runs carry wrk's figures in their statistics (bench.py's run_server_once)."""
    return any(r["program"] == program and r["ok"]
               and benchlib.METRICS["rps"].get(r["stats"]) is not None for r in runs)


def summarize(data, labels, ws, ns):
    runs = data["runs"]
    everything = []
    for r in runs:
        if r["program"] not in everything:
            everything.append(r["program"])
    servers = [p for p in everything if is_server(runs, p)]
    programs = [p for p in everything if p not in servers]
    rows = []
    for n in ns:
        for p in ws:
            row = {"patch": p, "n": n}
            for role, a, b in (("alone", labels[("baseline", None, n)], labels[("alone", p, n)]),
                               ("last", labels[("allbut", p, n)], labels[("all", None, n)])):
                for m, progs, higher in ([(m, programs, False) for m in METRICS]
                                         + [(m, servers, True) for m in SERVER_METRICS]):
                    cell = effect(runs, progs, a, b, benchlib.METRICS[m], higher)
                    cell.update(against=a, config=b)
                    row[f"{role}_{m}"] = cell
            rows.append(row)
    return rows


def fmt(cell):
    if cell["geomean"] is None or cell["worst"] is None:
        return "-----"
    w = cell["worst"]
    ci = ""
    v = cell.get("verdict")
    if v == "exact":
        ci = " exact"
    elif cell["lo"] is not None:
        ci = (f" [{(cell['lo'] - 1) * 100:+.1f},{(cell['hi'] - 1) * 100:+.1f}]"
              + benchlib.MARKS.get(v, ""))
    elif v == "none":
        ci = " ?"
    count = ("screen only" if cell["moved"] is None
             else f"{cell['moved']}/{cell['programs']} moved")
    return (f"{(cell['geomean'] - 1) * 100:+6.1f}%{ci} worst {w[0].split('/', 1)[-1]} "
            f"{(w[1] - 1) * 100:+.0f}% ({count})")


def summary_lines(rows, data):
    k = data.get("layouts") or 1
    how = (f"{data['layouts']} layouts x {data['runs_per_layout']} run(s)" if data.get("layouts")
           else f"{data.get('runs_per_config')} run(s) of ONE layout per configuration: no "
                "interval, and a difference may be code layout, not the patch (--layouts K)")
    note = benchstats.design(k, data.get("runs_per_layout") or data.get("runs_per_config") or 1)
    out = ["The effect of each patch: geometric mean of the per-program ratios (mean of the",
           "layout means) with its 95% interval ([lo,hi], % change; ~: it holds 0%; ?: a",
           f"screen, fewer than {benchstats.MIN_LAYOUTS} layouts, neither moved nor not), the "
           "worst program, and how",
           "many programs moved (their own interval excludes 0%; not counted in a screen).",
           "alone: the patch against the baseline.  last: all patches against all but it.",
           "Elapsed and GC time leave the servers out; requests per second are the servers'",
           f"routes alone (higher is better; the worst route is the lowest).  {how}"
           + (f"; {note}" if note else "") + ".", ""]
    for m in METRICS + SERVER_METRICS:
        if all(r[f"alone_{m}"]["programs"] == 0 for r in rows):
            continue            # e.g. no server ran (wrk is not installed)
        title = benchlib.METRICS[m].title
        out.append(f"{title}")
        out.append(f"{'patch':>14} {'-N':>3}  {'alone':<62}  last added")
        for r in rows:
            out.append(f"{r['patch']:>14} {r['n']:>3}  {fmt(r['alone_' + m]):<62}  "
                       f"{fmt(r['last_' + m])}")
        out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    ap.add_argument("--src", default=os.path.dirname(HERE))
    ap.add_argument("--size", choices=benchlib.SIZES, default="norm")
    ap.add_argument("-k", "--runs", type=int, default=1, help="runs per layout (1)")
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help=f"layouts of every configuration ({benchstats.CLAIM_LAYOUTS}; fewer "
                         f"than {benchstats.MIN_LAYOUTS} is a screen that calls nothing "
                         "moved; 0: each build's own rtslab, no interval)")
    ap.add_argument("-N", dest="ns", default="2,4", help="capability counts (default 2,4)")
    ap.add_argument("-p", "--programs", action="append", default=[])
    ap.add_argument("--out", default=None)
    ap.add_argument("--summary", metavar="RUNS.json",
                    help="summarize saved runs of an earlier bench_patches run (runs.json "
                         "or runs.json.gz)")
    sl = ap.add_argument_group("on a Slurm cluster: passed to bench.py (its --help; "
                               "testsuite/bench/README.md, On a cluster)")
    sl.add_argument("--slurm", action="store_true")
    sl.add_argument("--shared", metavar="DIR")
    sl.add_argument("--partition")
    sl.add_argument("--time")
    sl.add_argument("--nodes-max", metavar="N")
    sl.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG")
    sl.add_argument("--pool-nodes", action="store_true")
    args = ap.parse_args()
    src = os.path.abspath(args.src)
    ns = [int(x) for x in args.ns.split(",") if x]
    specs, labels, ws = config_specs(src, ns)
    if not ws:
        print("bench-patches: no patch is written yet (no testsuite/patches/NAME/)")
        return 0
    if args.summary:
        runs_json = args.summary
    else:
        out = args.out or os.path.join(src, "_bench", "patches")
        cmd = [sys.executable, os.path.join(HERE, "bench.py"), "--src", src, "--size", args.size,
               "-k", str(args.runs), "--layouts", str(args.layouts), "--out", out,
               "--metrics", ",".join(METRICS + SERVER_METRICS)]
        cmd += [a for s in specs for a in ("-c", s)]
        cmd += [a for p in args.programs for a in ("-p", p)]
        cmd += (["--slurm"] if args.slurm else []) + (["--pool-nodes"] if args.pool_nodes else [])
        cmd += [f"--{k.replace('_', '-')}={v}" for k in ("shared", "partition", "time",
                                                         "nodes_max")
                for v in [getattr(args, k)] if v is not None]
        cmd += [f"--sbatch-arg={a}" for a in args.sbatch_arg]
        print("bench-patches: " + " ".join(cmd), flush=True)
        r = subprocess.run(cmd)
        runs_json = os.path.join(out, "latest", "runs.json")
        if r.returncode:
            if not os.path.exists(runs_json):
                print("bench-patches: bench.py failed (see above) before any run")
                return r.returncode
            print("bench-patches: bench.py failed (see above); summarizing what ran")
    with benchlib.open_text(runs_json) as f:       # runs.json or runs.json.gz
        data = json.load(f)
    rows = summarize(data, labels, ws, ns)
    lines = summary_lines(rows, data)
    print("\n".join(lines))
    d = os.path.dirname(runs_json)
    with open(os.path.join(d, "summary.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(d, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"rows": rows, "size": data["size"], "commit": data.get("commit"),
                   "machine": data.get("machine"), "date": data.get("date")}, f, indent=1)
    print(f"bench-patches: summary in {d}/summary.txt and summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
