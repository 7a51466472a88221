#!/usr/bin/env python3
"""Draws the patch matrix from a bench_patches run (testsuite/bench_patches.py):
grouped bars, one group per program group of the suite (imaginary, spectral, real, parallel,
smp, gc), one bar per variant (each patch alone, all patches): the geometric mean over the
group's programs of elapsed time against the baseline at the same -N, one panel per -N.
A server's elapsed time is the load's fixed duration, so its bar is the time per request
(1 / requests per second, from wrk) instead, which is lower-is-better like the others.

    /usr/bin/python3 experiments/patch-matrix/plot.py RUNS.json OUT.png

Needs matplotlib (Debian: python3-matplotlib); the runner itself does not.
"""
import json
import math
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testsuite"))
import benchlib  # noqa: E402
import bench_patches  # noqa: E402


def time_per_request(stats):
    rps = benchlib.METRICS["rps"].get(stats)
    return 1.0 / rps if isinstance(rps, float) and rps > 0 else None


def main():
    runs_json, out = sys.argv[1], sys.argv[2]
    with benchlib.open_text(runs_json) as f:       # runs.json or runs.json.gz
        data = json.load(f)
    runs = data["runs"]
    programs = []
    for r in runs:
        if r["program"] not in programs:
            programs.append(r["program"])
    groups = []
    for p in programs:
        g = p.split("/")[0]
        if g not in groups:
            groups.append(g)
    configs = [c["label"] for c in data["configs"]]
    ns = sorted({c.split(" -N")[1] for c in configs if " -N" in c}, key=int)
    servers = {p for p in programs if bench_patches.is_server(runs, p)}
    elapsed = benchlib.METRICS["elapsed"]
    per_request = benchlib.Metric("per-request", "Time per request", "s", time_per_request,
                                  None)
    fig, axes = plt.subplots(len(ns), 1, figsize=(11, 3.6 * len(ns)), squeeze=False)
    for ax, n in zip(axes[:, 0], ns):
        base = f"baseline -N{n}"
        variants = [c for c in configs if c.endswith(f" -N{n}") and c != base
                    and not c.startswith("allbut-")]
        grid = benchlib.cells(runs, [p for p in programs if p not in servers],
                              [base] + variants, elapsed)
        grid.update(benchlib.cells(runs, sorted(servers), [base] + variants, per_request))
        width = 0.8 / max(1, len(variants))
        for i, v in enumerate(variants):
            ys = []
            for g in groups:
                ratios = []
                for p in programs:
                    if not p.startswith(g + "/"):
                        continue
                    a, b = grid[(p, base)], grid[(p, v)]
                    if a and b and a.center and b.center:
                        ratios.append(b.center / a.center)
                gm = benchlib.geomean(ratios)
                ys.append((gm - 1) * 100 if gm else math.nan)
            xs = [k + (i - (len(variants) - 1) / 2) * width for k in range(len(groups))]
            ax.bar(xs, ys, width, label=v.rsplit(" -N", 1)[0])
        ax.axhline(0, color="black", linewidth=0.8)
        ax.set_xticks(range(len(groups)))
        ax.set_xticklabels([g + (" (time per request)" if any(
            p.startswith(g + "/") for p in servers) else "") for g in groups])
        ax.set_ylabel(f"time vs baseline, % (-N{n})")
        ax.legend(fontsize=8, ncol=3)
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"rtslab: each patch against the baseline, geometric mean per program group "
                 f"(size {data['size']}, {data['runs_per_config']} runs, commit "
                 f"{(data.get('commit') or '?')[:10]})", fontsize=10)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    main()
