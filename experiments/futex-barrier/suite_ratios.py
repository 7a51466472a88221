#!/usr/bin/env python3
"""Pairwise patch/baseline ratios from one bench.py run (runs.json or runs.json.gz) of the
configurations baseline:-N2, futex-barrier:-N2, baseline:-N4, futex-barrier:-N4:

    python3 experiments/futex-barrier/suite_ratios.py _bench/DATE-norm/runs.json > suite.md

The header names every configuration's exact revision and configure flags (bench.py's
`VARIANT@REV` builds one from a git revision). Per program and N: the median elapsed (bench.py's own wall clock) and user CPU of each build,
and patch/baseline for both; then the geometric means. Runs that failed are left out."""
import gzip
import json
import math
import statistics
import sys


def main():
    path = sys.argv[1]                             # runs.json or runs.json.gz
    with (gzip.open(path, "rt", encoding="utf-8") if path.endswith(".gz")
          else open(path, encoding="utf-8")) as f:
        d = json.load(f)
    runs = [r for r in d["runs"] if r.get("ok")]
    progs = sorted({r["program"] for r in runs})
    out = ["Suite (`bench.py`, size %s, %s run(s) per configuration, %s; %s)\n"
           % (d["size"], d["runs_per_config"], d["date"], d["machine"])]
    # the exact revision and configure flags of every column (bench.py records them)
    out += ["  %s: revision %s, configure %s" % (c["label"], c.get("revision") or "?",
                                                 " ".join(c.get("configure") or []) or "(none)")
            for c in d.get("configs", [])] + [""]
    geo = {}
    for n in ("-N2", "-N4"):
        out += ["#### %s" % n, "",
                "| program | baseline s | patch s | patch/baseline elapsed | baseline CPU s | patch CPU s | patch/baseline CPU |",
                "|---|---|---|---|---|---|---|"]
        for p in progs:
            row = {}
            for v in ("baseline", "futex-barrier"):
                rr = [r for r in runs if r["program"] == p and r["variant"] == v and r["rts"] == [n]]
                if rr:
                    row[v] = (statistics.median(r["wall_seconds"] for r in rr),
                              statistics.median(r["user_seconds"] + r["sys_seconds"] for r in rr))
            if len(row) < 2:
                continue
            (be, bc), (pe, pc) = row["baseline"], row["futex-barrier"]
            geo.setdefault(n, []).append((pe / be, pc / bc if bc else 1.0))
            out.append("| %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.2f |"
                       % (p, be, pe, pe / be, bc, pc, pc / bc if bc else float("nan")))
        g = geo.get(n, [])
        if g:
            ge = math.exp(sum(math.log(x) for x, _ in g) / len(g))
            gc = math.exp(sum(math.log(y) for _, y in g) / len(g))
            out.append("| **geometric mean (%d programs)** | | | **%.2f** | | | **%.2f** |"
                       % (len(g), ge, gc))
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
