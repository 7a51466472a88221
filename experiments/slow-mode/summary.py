#!/usr/bin/env python3
"""The goal table of issue 43 from a bench.py run of smp/par-alloc (runs.json or runs.json.gz):
per configuration, elapsed (median, min-max), how many runs took more than 1.25x the fastest
of their configuration, the clusters benchstats finds in elapsed and CPU time, and CPU time
against the same variant's -N1 with its 95 % interval (the parallel efficiency table's
figure; paired by layout seed, as one variant's configurations share their binaries).

    python3 experiments/slow-mode/summary.py experiments/slow-mode/results/runs.json.gz
"""
import gzip
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats  # noqa: E402


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    with (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz")
          else open(path, encoding="utf-8")) as f:
        data = json.load(f)
    runs = [r for r in data["runs"] if r.get("ok")]
    print("| configuration | elapsed s, median (min-max) | runs > 1.25x the fastest | modes "
          "(elapsed / CPU) | CPU s, median (min-max) | CPU against the variant's -N1 |")
    print("|---|---|---|---|---|---|")
    for c in (c["label"] for c in data["configs"]):
        mine = [r for r in runs if r["config"] == c]
        if not mine:
            continue
        el = [r["stats"]["total_wall_seconds"] for r in mine]
        cpu = [r["stats"]["total_cpu_seconds"] for r in mine]
        n1 = [r for r in runs if r["config"] == f"{c.split()[0]} -N1"]
        eff = "-"
        if n1 and "-N1" not in c.split()[1:]:
            def get(r):
                return r["stats"]["total_cpu_seconds"]
            ci = benchstats.ratio_ci(benchstats.sample_of(n1, get),
                                     benchstats.sample_of(mine, get))
            eff = benchstats.fmt_ci(ci, lambda x: f"{x:.2f}x")
        slow = sum(1 for e in el if e > 1.25 * min(el))
        modes = [len(benchstats.clusters(x) or [x]) for x in (el, cpu)]
        print(f"| {c} | {statistics.median(el):.3f} ({min(el):.3f}-{max(el):.3f}) "
              f"| {slow}/{len(el)} | {modes[0]} / {modes[1]} "
              f"| {statistics.median(cpu):.3f} ({min(cpu):.3f}-{max(cpu):.3f}) | {eff} |")


if __name__ == "__main__":
    main()
