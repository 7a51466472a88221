#!/usr/bin/env python3
"""spin-yield experiment (seed 003): the baseline against the spin-yield patch, in one run
with the two interleaved, on the parallel and smp programs of the suite.

    python3 experiments/spin-yield/run.py [--baseline BUILD] [--patch BUILD] [--reps R]
                                          [--layouts K] [--size norm]
                                          [--settings N4,N8,N2busy,N2,N1]
                                          [-p REGEX]... [--out DIR]

BUILD is a build directory holding `rtslab`, or a variant built for the purpose, VARIANT or
VARIANT@REV (defaults: `baseline` and `spin-yield`, built in _build/baseline and
_build/spin-yield from the working tree, configured with no flag and with
--enable-spin-yield; `spin-yield@my-branch` builds a git revision in a worktree,
tools/variant.py). The exact revision, configure arguments and patches of both head
tables.md and go to results.json ("builds"). Both binaries are copied to a temporary
directory first, so a rebuild during the run cannot change them.

Code layout is a random factor (Note [Code layout as a factor], tools/layout.py): with
--layouts K each build's rtslab is linked K ways (seeds 1..K, layout.spread), every binary
is copied, and repetition i runs layout i % K: --reps R over --layouts K is K layouts x
R / K runs (the defaults, 5 and 5: 5 layouts x 1 run). Both builds use seeds 1..K, so the
interval is paired by seed (testsuite/benchstats.py says why); fewer than 3 layouts is a
screen that calls nothing moved, and 0 measures the build's own rtslab, with no interval.

Settings (seed 003's two situations, and the unloaded controls):
  N4, N8    oversubscribed: -N4 / -N8 on this machine's cores
  N2busy    the last core busy: -N2 while a busy loop (`sh -c 'while :; do :; done'`, started
            before each run and killed after it) keeps one core busy
  N2, N1    unloaded -N2 and -N1: must not move beyond the noise

For each repetition, setting and program, the two variants run back to back, in an order that
alternates between repetitions. Every run's stdout is checked against the program's expected
output. Elapsed is the wall time of the process; spins and yields are the sums over every
lock of `-s --machine-readable` (rtslab_lock_*). Writes results/results.json (every run,
with its layout's seed) and results/tables.md (medians, ratios, geometric means, and the
mean ratios with their 95 % intervals over layouts and runs from testsuite/benchstats.py)
and prints the tables.
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchlib  # noqa: E402
import benchstats  # noqa: E402  (testsuite/benchstats.py: intervals over layouts and runs)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: seeded code layouts)

SETTINGS = {
    "N4": (["-N4"], False),
    "N8": (["-N8"], False),
    "N2busy": (["-N2"], True),
    "N2": (["-N2"], False),
    "N1": (["-N1"], False),
}
VARIANTS = ["baseline", "spin-yield"]


def run_one(binary, prog, size, rts, busy, tmp):
    stats = os.path.join(tmp, "stats")
    if os.path.exists(stats):
        os.remove(stats)
    cmd = benchlib.command(binary, prog, size, rts, stats)
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if busy else None
    try:
        t0 = time.monotonic()
        p = subprocess.run(cmd, cwd=os.path.dirname(prog.path), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env, timeout=600)
        elapsed = time.monotonic() - t0
    finally:
        if hog:
            hog.kill()
            hog.wait()
    with open(prog.expected_path(size), encoding="utf-8") as f:
        expected = f.read()
    if p.returncode != 0 or p.stdout != expected:
        sys.exit(f"run.py: {' '.join(cmd)}: exit {p.returncode}, stdout "
                 f"{'as expected' if p.stdout == expected else 'WRONG'}\n{p.stderr[-2000:]}")
    with open(stats, encoding="utf-8") as f:
        s = benchlib.parse_machine_readable(f.read())
    locks = {}
    for k, v in s.items():
        m = re.fullmatch(r"rtslab_lock_(\w+)_(spins|yields)", k)
        if m:
            locks.setdefault(m.group(2), {})[m.group(1)] = int(v)
    return {"elapsed": elapsed, "cpu": s.get("total_cpu_seconds"),
            "gc_wall": s.get("GC_wall_seconds"),
            "spins": sum(locks.get("spins", {}).values()),
            "yields": sum(locks.get("yields", {}).values()),
            "locks": locks, "cmd": cmd}


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def pct(r):
    return f"{(r - 1) * 100:+.1f}%"


def tables(runs, progs, settings):
    out = []
    summary = {}
    for st in settings:
        rows, ratios, pairs = [], [], []
        for prog in progs:
            cell = {v: [r for r in runs if r["setting"] == st and r["program"] == prog.id
                        and r["variant"] == v] for v in VARIANTS}
            if not all(cell.values()):
                continue
            b = statistics.median(r["elapsed"] for r in cell["baseline"])
            p = statistics.median(r["elapsed"] for r in cell["spin-yield"])
            blo = min(r["elapsed"] for r in cell["baseline"])
            bhi = max(r["elapsed"] for r in cell["baseline"])
            ratios.append(p / b)
            ci = "-"
            if min(len(cell[v]) for v in VARIANTS) >= 2:
                pairs.append((benchstats.sample_of(cell["baseline"], "elapsed"),
                              benchstats.sample_of(cell["spin-yield"], "elapsed")))
                ci = benchstats.fmt_ci(benchstats.ratio_ci(*pairs[-1]))
            rows.append(f"| {prog.id} | {b:.2f} ({blo:.2f}..{bhi:.2f}) | {p:.2f} | {pct(p / b)} "
                        f"| {ci} "
                        f"| {statistics.median(r['spins'] for r in cell['baseline']):,.0f} "
                        f"| {statistics.median(r['spins'] for r in cell['spin-yield']):,.0f} "
                        f"| {statistics.median(r['yields'] for r in cell['spin-yield']):,.0f} |")
        if not ratios:
            continue
        g = geomean(ratios)
        summary[st] = g
        gci = (benchstats.fmt_ci(benchstats.geomean_ci(pairs))
               if len(pairs) == len(ratios) else "-")
        rts, busy = SETTINGS[st]
        out.append(f"### {st}: `+RTS {' '.join(rts)}`{' with one core kept busy' if busy else ''}\n")
        out.append("| program | baseline s (min..max) | spin-yield s | elapsed | mean [95 % CI] "
                   "| baseline spins | spin-yield spins | spin-yield yields |")
        out.append("|---|---|---|---|---|---|---|---|")
        out.extend(rows)
        out.append(f"| **geometric mean** | | | **{pct(g)}** | **{gci}** | | | |")
        out.append(f"| min / max | | | {pct(min(ratios))} / {pct(max(ratios))} | | | | |\n")
    return "\n".join(out), summary


def layouts_said(k, reps):
    """What the ratios rest on, for the tables' head (benchstats.design: a screen below 3
    layouts, too few runs to see modes)."""
    if k <= 1:
        return ("from one binary per build, so there is no interval and a difference may be "
                "a layout artefact (--layouts K); " + benchstats.design(1, reps))
    said = (f"from {reps} runs over {k} layouts per build" if reps % k
            else f"from {k} layouts x {reps // k} run(s) per build")
    said += ("; both builds on seeds 1..K, so each ratio is paired by seed "
             "(testsuite/benchstats.py)")
    note = benchstats.design(k, reps / k)
    return said + (f"; {note}" if note else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", default="baseline", metavar="BUILD",
                    help=variant.SPEC_HELP + " (default: baseline)")
    ap.add_argument("--patch", default="spin-yield", metavar="BUILD",
                    help=variant.SPEC_HELP + " (default: spin-yield)")
    ap.add_argument("--reps", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help="runs per build, setting and program, rep i on layout i mod K "
                         "(default %d)" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K",
                    help="link each build K ways and spread the reps over them (default "
                         "%d; fewer than 3 is a screen; 0: the build's own rtslab, no "
                         "interval)" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--size", default="norm")
    ap.add_argument("--settings", default="N4,N8,N2busy,N2,N1")
    ap.add_argument("-p", "--programs", action="append", default=[])
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.layouts < 0:
        ap.error("--layouts must be 0 or more")
    settings = a.settings.split(",")
    for st in settings:
        if st not in SETTINGS:
            ap.error(f"unknown setting {st}")
    progs = benchlib.select(benchlib.discover(ROOT), a.programs or [r"^parallel/", r"^smp/"])
    builds = {}
    for v, spec in (("baseline", a.baseline), ("spin-yield", a.patch)):
        builds[v] = variant.resolve_or_exit(spec, ROOT, "spin-yield")[1]
    os.makedirs(a.out, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        bins, infos = {}, {}        # bins: variant -> [(layout seed, copy of its rtslab)]
        for v in VARIANTS:
            b = builds[v]
            try:
                bins[v] = layout.spread_copies(b["dir"], os.path.relpath(b["binary"], b["dir"]),
                                               a.layouts, tmp, v, log=print)
            except layout.LayoutError as e:
                sys.exit(f"run.py: {e}")
            infos[v] = subprocess.run([bins[v][0][1], "+RTS", "--info", "-RTS"],
                                      stdout=subprocess.PIPE, text=True).stdout
        if "Patch spin-yield\",\"NO" not in infos["baseline"] or \
           "Patch spin-yield\",\"YES" not in infos["spin-yield"]:
            sys.exit("run.py: --baseline must be built without spin-yield, --patch with it")
        for rep in range(a.reps):
            for st in settings:
                rts, busy = SETTINGS[st]
                for prog in progs:
                    order = VARIANTS if (rep + len(runs)) % 2 == 0 else VARIANTS[::-1]
                    line = []
                    for v in order:
                        seed, binary = bins[v][rep % len(bins[v])]
                        r = run_one(binary, prog, a.size, rts, busy, tmp)
                        r.update(variant=v, setting=st, program=prog.id, rep=rep, layout=seed)
                        r["cmd"] = [os.path.basename(r["cmd"][0])] + r["cmd"][1:]
                        runs.append(r)
                        line.append(f"{v} {r['elapsed']:.2f}s y={r['yields']}")
                    print(f"[rep {rep + 1}/{a.reps}] {st:6} {prog.id:22} " + "  ".join(line),
                          flush=True)
    text, summary = tables(runs, progs, settings)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    load = os.getloadavg()
    head = (f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {platform.node()} "
            f"({os.cpu_count()} CPUs), commit {commit}, size {a.size}, {a.reps} reps, "
            f"load average at the end {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}.\n"
            "Elapsed: median over the reps; the ratio is spin-yield against baseline "
            "(negative = faster).\n"
            "Mean [95 % CI]: benchstats' mean ratio (the mean of the layout means) and its 95 % "
            "interval over layouts and runs, " + layouts_said(a.layouts, a.reps) + ".\n"
            + "".join(f"  {variant.describe(v, builds[v])}\n" for v in VARIANTS))
    with open(os.path.join(a.out, "tables.md"), "w", encoding="utf-8") as f:
        f.write(head + "\n" + text + "\n")
    with open(os.path.join(a.out, "results.json"), "w", encoding="utf-8") as f:
        json.dump({"commit": commit, "size": a.size, "reps": a.reps, "layouts": a.layouts,
                   "builds": builds,
                   "infos": infos,
                   "geomean_ratio": summary, "runs": runs}, f, indent=1)
    print(head)
    print(text)


if __name__ == "__main__":
    main()
