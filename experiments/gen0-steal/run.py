#!/usr/bin/env python3
"""gen0-steal (issue 16): the measurements of the issue's "Measure" section.

    python3 experiments/gen0-steal/run.py --baseline BUILD --patch BUILD [--reps N] [--quick]
                                          [--only skewed,synth,suite] [--layouts K] [--out DIR]

BUILD are build directories -- --baseline configured without the patch, --patch with
--enable-gen0-steal -- or variants built for the purpose, VARIANT or VARIANT@REV (e.g.
`--baseline baseline@main --patch gen0-steal@HEAD`: built in _build/ from the working tree or
that git revision, tools/variant.py). The exact revision, configure arguments and patches of
both head tables.md and go to results.json ("builds"). Parts:
  skewed  skewed_live (live data on capability 0, garbage on capability 1) at -N2, default
          and -F100 (minor GCs only after the start): the baseline, the patch with -qb0 (its
          default) and with -qb1. From -S (per-GC lines) for every configuration alike: the
          work balance of minor and of major GCs (GHC's formula over the GCs of each kind),
          GC elapsed, mean and max pause per kind; steals from the patch's counters.
  synth   real/synth (the suite's model of `ghc --make -j`) at -N2 with the default -A and
          with -A64m (seed 000's -A256M scaled to this machine), through testsuite/bench.py:
          elapsed, GC time, work balance.
  suite   the whole suite at norm size, -N1, -N2 and -N4, baseline against the patch, through
          testsuite/bench.py.
Runs are interleaved across configurations (rep 1 of every configuration, then rep 2...),
so the drift of a shared machine spreads over all of them; report ratios from one run.
Code layout is a random factor (Note [Code layout as a factor], tools/layout.py): with
--layouts K (default 5) each build is linked K ways (seeds 1..K, layout.spread) and rep i
runs layout i % K; the skewed table gives the patch/baseline GC elapsed as benchstats' mean
ratio with its 95 % interval over layouts and runs (both builds on seeds 1..K: paired by
seed), and synth and suite pass --layouts K to bench.py (with -k the runs divided by K,
rounded up). With K = 0 each build's own binary is measured, with no interval.
Raw results go to OUT/results.json (skewed; each run with its layout's seed) and
OUT/bench-*/ (bench.py's runs.json and table.txt); tables to OUT/tables.md. OUT defaults to
experiments/gen0-steal/results/.
Nothing passes or fails on a timing; the exit status is 1 when a program failed.
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

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_S = 300
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: seeded code layouts)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats  # noqa: E402  (testsuite/benchstats.py: intervals over layouts and runs)
failures = []

S_LINE = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\S+\s+\(Gen:\s*(\d)\)"
                    r"\s+(minor|major)\s+(\S+)\s+(\S+)\s+(\d+)\s+(\S+)")
MR = re.compile(r'\("([^"]+)", "([^"]*)"\)')


def run_skewed(build, args, rts, tmp):
    """One run of skewed_live: the per-GC lines and the machine-readable summary."""
    path = os.path.join(tmp, "stats.txt")
    cmd = [os.path.join(build, "bench/micro/skewed_live")] + args + \
        ["+RTS"] + rts + ["-S" + path, "--machine-readable", "-RTS"]
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        failures.append(" ".join(cmd) + ": timeout")
        return None
    if p.returncode != 0 or "info bad 0" not in p.stdout:
        failures.append(" ".join(cmd) + f": exit {p.returncode}")
        return None
    text = open(path).read()
    gcs = []
    for line in text.splitlines():
        m = S_LINE.match(line)
        if m:
            bal = None if m.group(9) == "-" else float(m.group(9)) / 100
            gcs.append({"copied": int(m.group(2)), "kind": m.group(5),
                        "pause": float(m.group(6)), "threads": int(m.group(8)), "balance": bal})
    kv = dict(MR.findall(text))
    r = {"cmd": " ".join(cmd), "summary": kv}
    for kind in ("minor", "major"):
        g = [x for x in gcs if x["kind"] == kind]
        num = den = 0.0
        for x in g:
            if x["threads"] > 1 and x["balance"] is not None and x["copied"]:
                # copied = max * (1 + b (n - 1))  (GHC's formula inverted)
                mx = x["copied"] / (1 + x["balance"] * (x["threads"] - 1))
                num += (x["copied"] - mx) / (x["threads"] - 1)
                den += mx
        r[kind] = {
            "gcs": len(g),
            "balance": num / den if den else None,
            "elapsed": sum(x["pause"] for x in g),
            "mean_pause": statistics.mean([x["pause"] for x in g]) if g else 0.0,
            "max_pause": max([x["pause"] for x in g], default=0.0),
        }
    r["gc_elapsed"] = r["minor"]["elapsed"] + r["major"]["elapsed"]
    r["total_elapsed"] = float(kv.get("total_wall_seconds", "nan"))
    for k in ("rtslab_minor_steals", "rtslab_minor_steal_tries", "rtslab_major_steals",
              "rtslab_minor_work_balance", "rtslab_major_work_balance"):
        if k in kv:
            r[k] = float(kv[k])
    return r


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(x, scale=1.0, nd=1, unit=""):
    return "-" if x is None else f"{x * scale:.{nd}f}{unit}"


def by_layout(runs, key):
    """A benchstats sample {layout seed: [values]} of KEY over RUNS."""
    out = {}
    for r in runs:
        out.setdefault(r["layout"], []).append(r[key])
    return out


def spread_note(k, reps):
    """What a table's runs rest on: layouts x runs, or the warning that one binary was, and
    what the design cannot say (benchstats.design: a screen, too few runs to see modes)."""
    if k <= 1:
        return (f"{reps} runs of one binary per build: no interval, and a difference between "
                f"builds may be a layout artefact (--layouts K); {benchstats.design(1, reps)}")
    k = min(k, reps)
    said = (f"{reps} runs over {k} layouts per build" if reps % k
            else f"{k} layouts x {reps // k} run(s) per build")
    note = benchstats.design(k, reps // k)
    return (said + ", seeds 1..K for both builds: each interval is paired by seed"
            + (f"; {note}" if note else ""))


def part_skewed(a, out, tables):
    size = a.skew_args.split(",") if a.skew_args else \
        (["16", "32", "16"] if a.quick else ["48", "128", "16"])
    configs = []
    for f in ([], ["-F100"]):
        configs += [("baseline", a.baseline, f), ("patch", a.patch, f + ["-qb0"]),
                    ("patch", a.patch, f + ["-qb1"])]
    res = {f"{c[0]} {' '.join(c[2])}".strip(): [] for c in configs}
    with tempfile.TemporaryDirectory() as tmp:
        bins = {}          # build -> [(layout seed, a directory holding bench/micro/skewed_live)]
        for name, build in (("baseline", a.baseline), ("patch", a.patch)):
            try:
                spread = layout.spread(build, "bench/micro/skewed_live", a.layouts, log=print)
            except layout.LayoutError as e:
                sys.exit(f"gen0-steal: {e}")
            bins[build] = []
            for seed, binary in spread:
                d = os.path.join(tmp, name, str(seed))
                os.makedirs(os.path.join(d, "bench/micro"))
                shutil.copy(binary, os.path.join(d, "bench/micro/skewed_live"))
                bins[build].append((seed, d))
        for rep in range(a.reps):
            for label, build, f in configs:
                key = f"{label} {' '.join(f)}".strip()
                seed, d = bins[build][rep % len(bins[build])]
                r = run_skewed(d, size, ["-N2"] + f, tmp)
                print(f"  skewed rep {rep + 1}: {key}: " +
                      ("FAILED" if r is None else
                       f"minor bal {fmt(r['minor']['balance'], 100)}% GC {r['gc_elapsed']:.3f}s"),
                      flush=True)
                if r:
                    r["layout"] = seed
                    res[key].append(r)
    lines = [f"### skewed_live {' '.join(size)} at -N2 (median of {a.reps} interleaved runs: "
             f"{spread_note(a.layouts, a.reps)})", "",
             "The GC elapsed interval: benchstats' mean ratio (the mean of the layout means) "
             "against the baseline, with its 95 % interval over layouts and runs.", "",
             "| configuration | minor balance | major balance | minor GCs | GC elapsed "
             "| vs baseline (median) | GC elapsed vs baseline, mean [95 % CI] "
             "| minor mean / max pause | major mean / max pause | minor steals | total elapsed |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    summary = {}
    for key, runs in res.items():
        if not runs:
            continue
        base_key = "baseline" + (" -F100" if "-F100" in key else "")
        s = {
            "minor_balance": med([r["minor"]["balance"] for r in runs]),
            "major_balance": med([r["major"]["balance"] for r in runs]),
            "minor_gcs": med([r["minor"]["gcs"] for r in runs]),
            "gc_elapsed": med([r["gc_elapsed"] for r in runs]),
            "minor_mean_pause": med([r["minor"]["mean_pause"] for r in runs]),
            "minor_max_pause": med([r["minor"]["max_pause"] for r in runs]),
            "major_mean_pause": med([r["major"]["mean_pause"] for r in runs]),
            "major_max_pause": med([r["major"]["max_pause"] for r in runs]),
            "minor_steals": med([r.get("rtslab_minor_steals") for r in runs]),
            "total_elapsed": med([r["total_elapsed"] for r in runs]),
        }
        summary[key] = s
        b = summary.get(base_key)
        ratio = "-" if not b or not b["gc_elapsed"] else f"{s['gc_elapsed'] / b['gc_elapsed']:.2f}"
        ci = "-"
        if key != base_key and len(res[base_key]) >= 2 and len(runs) >= 2:
            s["gc_elapsed_ci"] = benchstats.ratio_ci(by_layout(res[base_key], "gc_elapsed"),
                                                     by_layout(runs, "gc_elapsed"))
            ci = benchstats.fmt_ci(s["gc_elapsed_ci"])
        lines.append(
            f"| {key} | {fmt(s['minor_balance'], 100, 1, '%')} | {fmt(s['major_balance'], 100, 1, '%')} "
            f"| {fmt(s['minor_gcs'], 1, 0)} | {s['gc_elapsed']:.3f} s | {ratio} | {ci} "
            f"| {fmt(s['minor_mean_pause'], 1e3, 2)} / {fmt(s['minor_max_pause'], 1e3, 1)} ms "
            f"| {fmt(s['major_mean_pause'], 1e3, 1)} / {fmt(s['major_max_pause'], 1e3, 1)} ms "
            f"| {fmt(s['minor_steals'], 1, 0)} | {s['total_elapsed']:.3f} s |")
    tables.append("\n".join(lines) + "\n")
    return {"size": size, "runs": res, "summary": summary}


def bench(a, out, name, configs, programs, runs):
    """testsuite/bench.py over the two builds; returns its runs.json path."""
    d = os.path.join(out, "bench-" + name)
    cmd = [sys.executable, os.path.join(ROOT, "testsuite/bench.py"), "--size",
           "quick" if a.quick else "norm", "--out", d,
           "--use-build", f"baseline={a.baseline}", "--use-build", f"gen0-steal={a.patch}",
           "--metrics", "elapsed,gc,balance,maxpause"]
    if a.layouts:               # bench.py's -k is then the runs per layout
        cmd += ["--layouts", str(a.layouts), "-k", str(-(-runs // a.layouts))]
    else:
        cmd += ["-k", str(runs)]
    for c in configs:
        cmd += ["-c", c]
    for p in programs:
        cmd += ["-p", p]
    print("  " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        failures.append(f"bench {name}: exit {p.returncode}")
    with open(os.path.join(d, "latest", "table.txt")) as f:
        table = f.read()
    return " ".join(cmd), table


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", required=True, metavar="BUILD", help=variant.SPEC_HELP)
    ap.add_argument("--patch", required=True, metavar="BUILD", help=variant.SPEC_HELP)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="skewed,synth,suite")
    ap.add_argument("--suite-runs", type=int, default=3)
    ap.add_argument("--suite-n", default="2,4", help="capability counts for the suite")
    ap.add_argument("--skew-args", default=None, help="skewed_live's arguments (default 48,128,16)")
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K",
                    help="link each build K ways and spread the reps over them (default %d; "
                         "fewer than 3 is a screen; 0: the build's own binaries, no "
                         "interval)" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.layouts < 0:
        ap.error("--layouts must be 0 or more")
    builds = {}
    for v in ("baseline", "patch"):
        d, builds[v] = variant.resolve_or_exit(getattr(a, v), ROOT, "gen0-steal",
                                               ["bench/micro/skewed_live"])
        setattr(a, v, d)
    os.makedirs(a.out, exist_ok=True)
    parts = a.only.split(",")
    tables, results = [], {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs",
        "load_before": os.getloadavg(),
        "commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], stdout=subprocess.PIPE,
                                 text=True).stdout.strip(),
        "argv": sys.argv,
        "builds": builds,
    }
    tables.append("\n".join(variant.describe(v, r) for v, r in builds.items()) + "\n")
    if "skewed" in parts:
        results["skewed"] = part_skewed(a, a.out, tables)
    if "synth" in parts:
        cmd, table = bench(a, a.out, "synth",
                           ["baseline:-N2", "gen0-steal:-N2", "gen0-steal:-N2,-qb1",
                            "baseline:-N2,-A64m", "gen0-steal:-N2,-A64m"],
                           ["real/synth"], a.reps)
        results["synth"] = {"cmd": cmd}
        tables.append("### synth at -N2\n\n    " + cmd + "\n\n```\n" + table + "```\n")
    if "suite" in parts:
        cfgs = []
        for n in a.suite_n.split(","):
            cfgs += [f"baseline:-N{n}", f"gen0-steal:-N{n}"]
        cmd, table = bench(a, a.out, "suite", cfgs, [], a.suite_runs)
        results["suite"] = {"cmd": cmd}
        tables.append("### The suite\n\n    " + cmd + "\n\n```\n" + table + "```\n")
    results["load_after"] = os.getloadavg()
    results["failures"] = failures
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write("\n".join(tables))
    print("\n".join(tables))
    for x in failures:
        print("FAILED: " + x)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
