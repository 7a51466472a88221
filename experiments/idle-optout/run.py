#!/usr/bin/env python3
"""idle-optout: busy_one (and simple_alloc) on two or more builds, runs interleaved.

    python3 experiments/idle-optout/run.py --build baseline=DIR --build idle-optout=DIR \
        [--prog busy_one:2000] [-N 1,2,8,16] [--reps 10] [--layouts 5] [--rts=-qi0] [--out DIR]

Each --build is [NAME=]BUILD: a build directory holding bench/micro/<prog> (a built tree), or
a variant built for the purpose, VARIANT or VARIANT@REV (`--build baseline@main --build
idle-optout`: built in _build/ from the working tree or that git revision, tools/variant.py);
NAME defaults to BUILD. The exact revision, configure arguments and patches of every build
head the table's file and go to the results ("builds"). The binaries are copied to a
temporary directory first (a rebuild of the tree cannot change them mid-run). For every
repetition, every (N, build) pair runs once, in turn, so that load on the machine hits all
configurations alike. With --layouts K (K >= 1; default 5, with 10 reps) each build's binary is K seeded layouts
of its code (tools/layout.py, Note [Code layout as a factor]), all copied, and rep i runs
layout i % K; the ratios to the first build gain benchstats' mean ratio with its 95 %
interval over layouts and runs (testsuite/benchstats.py; every build runs seeds 1..K, so it
is paired by seed; fewer than 3 layouts is a screen). 0 runs the build's own binary, one per
build, with no interval. Every run gets `+RTS -N<n> -s<file> --machine-readable`; the program's
own `metric` lines (elapsed and CPU time of the work), the -s keys and the layout's seed
are kept. Prints a table of medians and the ratios of each build to the first, and writes
every run to OUT/results.json (default: results/ beside this script). A failed run makes it exit 1.
Python stdlib only; RTSLAB_RTS is removed from the environment.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: an experiment's binaries over K layouts)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "testsuite"))
import benchstats  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KEYS = ["rtslab_idle_gc_wakeups", "rtslab_stw_mean_seconds", "num_GCs", "total_cpu_seconds",
        "rtslab_idle_optout_gcs", "rtslab_idle_optouts", "rtslab_idle_rejoins"]


def parse_mr(text):
    return {k: v for k, v in re.findall(r'\("([^"]+)", "([^"]*)"\)', text)}


def run_one(binary, args, n, extra, tmp):
    sfile = os.path.join(tmp, "s.txt")
    if os.path.exists(sfile):
        os.unlink(sfile)
    cmd = [binary] + args + ["+RTS", "-N%d" % n, "-s" + sfile, "--machine-readable"] + extra + ["-RTS"]
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    wall = time.monotonic() - t0
    if p.returncode != 0 or not os.path.exists(sfile):
        sys.exit("run failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
    metrics = {}
    for m in re.finditer(r"^metric (\S+) ([0-9.]+)", p.stdout, re.M):
        metrics[m.group(1)] = float(m.group(2))
    if "info bad 1" in p.stdout:
        sys.exit("data check failed: " + " ".join(cmd))
    mr = parse_mr(open(sfile).read())
    return {"cmd": " ".join(cmd), "wall_s": wall, "metrics": metrics,
            "stats": {k: mr[k] for k in mr if k in KEYS or k.startswith("rtslab_idle")}}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", required=True,
                    help="[NAME=]BUILD (repeat; the first is the reference); BUILD is " + variant.SPEC_HELP)
    ap.add_argument("--prog", default="busy_one:2000", help="PROG[:ARG,...] from bench/micro")
    ap.add_argument("-N", default="1,2,8,16", help="capability counts")
    ap.add_argument("--reps", type=int, default=2 * benchstats.CLAIM_LAYOUTS,
                    help="runs per configuration, rep r on layout r mod K (default %d)" % (2 * benchstats.CLAIM_LAYOUTS))
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K",
                    help="spread each configuration's runs over K seeded layouts of each build (tools/layout.py; default %d, fewer than 3 is a screen); 0: the build's own binary, no interval" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--rts", action="append", default=[], help="extra RTS option for every run (NAME:OPT for one build)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    ap.add_argument("--tag", default="run")
    a = ap.parse_args()
    prog, _, pargs = a.prog.partition(":")
    pargs = [x for x in pargs.split(",") if x]
    ns = [int(x) for x in a.N.split(",")]
    tmp = tempfile.mkdtemp(prefix="idle-optout-")
    builds, records = [], {}
    for b in a.build:
        name, eq, spec = b.partition("=")
        d, records[name] = variant.resolve_or_exit(spec if eq else name, ROOT, "idle-optout",
                                                   ["bench/micro/" + prog])
        try:
            spread = layout.spread(d, "bench/micro/" + prog, a.layouts, log=print)
        except layout.LayoutError as e:
            sys.exit("idle-optout: %s" % e)
        bins = []   # [(layout seed, its copy)]: rep r runs bins[r % K]
        for seed, binary in spread:
            bins.append((seed, os.path.join(tmp, "%s-%s-%d" % (name, prog, seed))))
            shutil.copy2(binary, bins[-1][1])
        extra = [o for o in a.rts if ":" not in o] + [o.split(":", 1)[1] for o in a.rts if o.startswith(name + ":")]
        builds.append((name, bins, extra, d))
    runs = []
    for r in range(a.reps):
        for n in ns:
            for name, bins, extra, _ in builds:
                seed, binary = bins[r % len(bins)]
                res = run_one(binary, pargs, n, extra, tmp)
                res.update({"build": name, "N": n, "rep": r, "layout": seed, "extra": extra})
                runs.append(res)
                print("rep %d -N%-2d %-12s elapsed %8.1f ms  cpu %8.1f ms  woken %s" % (
                    r, n, name, res["metrics"].get(prog + "_elapsed", 0), res["metrics"].get(prog + "_cpu", 0),
                    res["stats"].get("rtslab_idle_gc_wakeups", "?")), flush=True)
    shutil.rmtree(tmp)

    def med(name, n, f):
        return statistics.median(f(x) for x in runs if x["build"] == name and x["N"] == n)

    def interval(name, n, f):
        """benchstats' mean ratio of f for NAME to the first build at -Nn, with its 95 % interval
        over layouts and runs ("-" for the first build, or with fewer than 2 runs)."""
        if name == builds[0][0] or a.reps < 2:
            return "-"
        sample = {}
        for x in runs:
            if x["N"] == n and x["build"] in (name, builds[0][0]):
                sample.setdefault(x["build"], {}).setdefault(x["layout"], []).append(f(x))
        return benchstats.fmt_ci(benchstats.ratio_ci(sample[builds[0][0]], sample[name]))

    el = lambda x: x["metrics"].get(prog + "_elapsed", 0.0)
    cpu = lambda x: x["metrics"].get(prog + "_cpu", 0.0)
    st = lambda k: (lambda x: float(x["stats"].get(k, "nan")))
    k = len(builds[0][1])
    if k <= 1:
        lines = ["Medians of %d runs of one binary per build, so there is no interval and a difference may be a layout artefact; %s." % (a.reps, benchstats.design(1, a.reps))]
    else:
        k = min(k, a.reps)
        note = benchstats.design(k, a.reps // k)
        lines = ["Medians of %d runs over %d layouts per build (seeds 1..K for every build: paired by seed); an interval is benchstats' mean ratio to %s and its 95 %% interval over layouts and runs%s." % (a.reps, k, builds[0][0], "; " + note if note else "")]
    lines += ["", "| build | RTS | elapsed ms | vs -N%d | CPU ms | vs -N%d | GCs | idle wake-ups for GC | woken per GC | STW mean us | GCs with caps opted out | opt-outs | rejoins | elapsed vs %s | mean, 95 %% interval | CPU vs %s | mean, 95 %% interval |" % (ns[0], ns[0], builds[0][0], builds[0][0]),
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for n in ns:
        for name, _, extra, _ in builds:
            e, c = med(name, n, el), med(name, n, cpu)
            g = med(name, n, st("num_GCs"))
            w = med(name, n, st("rtslab_idle_gc_wakeups"))
            e0, c0 = med(name, ns[0], el), med(name, ns[0], cpu)
            eb, cb = med(builds[0][0], n, el), med(builds[0][0], n, cpu)
            opt = lambda k: ("%d" % med(name, n, st(k))) if any(k in x["stats"] for x in runs if x["build"] == name) else "-"
            lines.append("| %s | -N%d %s | %s | %.2fx | %s | %.2fx | %d | %d | %.2f | %.1f | %s | %s | %s | %.2fx | %s | %.2fx | %s |" % (
                name, n, " ".join(extra), format(round(e), ","), e / e0, format(round(c), ","), c / c0, g, w, w / g,
                med(name, n, st("rtslab_stw_mean_seconds")) * 1e6,
                opt("rtslab_idle_optout_gcs"), opt("rtslab_idle_optouts"), opt("rtslab_idle_rejoins"),
                e / eb, interval(name, n, el), c / cb, interval(name, n, cpu)))
    table = "\n".join(lines)
    print("\n".join(variant.describe(n, r) for n, r in records.items()))
    print(table)
    os.makedirs(a.out, exist_ok=True)
    info = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "prog": prog, "args": pargs,
            "N": ns, "reps": a.reps, "builds": records, "load": os.getloadavg(),
            "uname": " ".join(os.uname())}
    with open(os.path.join(a.out, a.tag + ".json"), "w") as f:
        json.dump({"info": info, "runs": runs}, f, indent=1)
    with open(os.path.join(a.out, a.tag + ".md"), "w") as f:
        f.write("%s, %s\n\n%s\n\n%s\n" % (info["date"], " ".join(sys.argv[1:]),
                                          "\n".join(variant.describe(n, r) for n, r in records.items()),
                                          table))


if __name__ == "__main__":
    main()
