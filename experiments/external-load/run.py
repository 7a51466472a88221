#!/usr/bin/env python3
"""external-load experiment (issue 43, item 4; seed 003's "last core busy"): how much slower a
parallel program runs when one other CPU-bound process shares the machine, for rtslab's
variants, a C program with the same number of threads (what the OS gives threads that never
wait for each other) and, when `ghc` is installed, GHC's runtime on the same loop.

    python3 experiments/external-load/run.py [--variants baseline,spin-yield,...]
                                             [--rounds R] [--layouts K] [--size norm]
                                             [-w GROUP/NAME:RTSOPT,...]... [--no-ghc]
                                             [--control-iters N] [--out DIR]

Each subject runs alone and beside a busy process (`sh -c 'while :; do :; done'`, started
0.2 s before the run and killed after it), back to back, in an order that alternates between
rounds. Its figure is the ratio of the two elapsed times: on 2 cores, two threads that share
a machine with one busy process get 2/3 of it each at best, so 1.5x is the ideal; issue 43's
goal is 1.7x for two workers at -N2. Subjects:

  * each variant (a build directory, an rtslab binary or VARIANT[@REV]: tools/variant.py;
    default baseline, spin-yield, futex-barrier, all-patches) on each workload (default:
    smp/par-alloc at -N2, smp/sieve at -N4, parallel/parfib at -N2), its rtslab linked K ways
    (--layouts, seeds 1..K; round i runs layout i % K). The alone and loaded runs of a round
    use the same binary, so the interval (testsuite/benchstats.ratio_ci) is paired by
    layout seed;
  * control: control.c, two threads of fixed arithmetic work (--control-iters each), built
    here with cc -O2; one binary, so its runs are the replicates (benchstats.one_binary);
  * ghc: alloc.hs (par-alloc's loop, two forkIO workers) built with ghc -O2 -threaded and
    run with +RTS -N2, when ghc is on PATH (--no-ghc to skip); one binary, as control.

Every rtslab run's stdout is checked against the program's expected output and its `-s
--machine-readable` statistics are kept (stop-the-world syncs and their mean, barrier
sleeps); control and ghc must exit 0 (ghc's program checks its sums). CPU is the child's
user + system time (getrusage). Writes DIR/tables.md and DIR/runs.json.gz (every run) and
prints the tables; DIR defaults to experiments/external-load/results/.
"""

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchlib  # noqa: E402
import benchstats  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402
import layout  # noqa: E402

VARIANTS = ["baseline", "spin-yield", "futex-barrier", "all-patches"]
WORKLOADS = ["smp/par-alloc:-N2", "smp/sieve:-N4", "parallel/parfib:-N2"]
GHC_N = 100000000     # alloc.hs's iterations per worker: compiled code does 10 par-alloc norm
                      # iterations in the time our VM does one, so both run about 0.3 s alone


HZ = os.sysconf("SC_CLK_TCK")


def machine_busy():
    """CPU seconds the whole machine has spent busy (not idle or waiting for IO) since boot."""
    with open("/proc/stat", encoding="ascii") as f:
        ticks = [int(x) for x in f.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / HZ


def timed(cmd, cwd=None, stdout=subprocess.PIPE):
    """Runs CMD; (elapsed s, CPU s of the child, the machine's busy CPU s meanwhile,
    completed process)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    b0 = machine_busy()
    t0 = time.monotonic()
    p = subprocess.run(cmd, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, text=True,
                       timeout=900)
    elapsed = time.monotonic() - t0
    busy = machine_busy() - b0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return elapsed, cpu, busy, p


def busy_start():
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    time.sleep(0.2)
    return hog


def busy_stop(hog):
    hog.kill()
    hog.wait()


def others(r):
    """The CPU seconds that neither the run nor its busy process used during the run: another
    process on the machine, which this experiment must not have (the busy process, when
    there is one, takes at most the elapsed time)."""
    return max(0.0, r["machine_busy"] - r["cpu"] - (r["elapsed"] if r["loaded"] else 0.0))


class Subject:
    """One thing measured alone and loaded: a name and how to run it once."""

    def __init__(self, name, kind, runs_for):
        self.name, self.kind, self.runs_for = name, kind, runs_for


def rtslab_subject(v, binaries, prog, rts, size, tmp):
    def run(rnd):
        seed, binary = binaries[rnd % len(binaries)]
        stats = os.path.join(tmp, "stats")
        if os.path.exists(stats):
            os.remove(stats)
        cmd = benchlib.command(binary, prog, size, rts, stats)
        env_rts = os.environ.pop("RTSLAB_RTS", None)
        try:
            elapsed, cpu, busy, p = timed(cmd, cwd=os.path.dirname(prog.path))
        finally:
            if env_rts is not None:
                os.environ["RTSLAB_RTS"] = env_rts
        with open(prog.expected_path(size), encoding="utf-8") as f:
            if p.returncode != 0 or p.stdout != f.read():
                sys.exit(f"run.py: {' '.join(cmd)}: exit {p.returncode}, stdout not as "
                         f"expected\n{p.stderr[-2000:]}")
        with open(stats, encoding="utf-8") as f:
            s = benchlib.parse_machine_readable(f.read())
        sleeps = sum(v for k, v in s.items()
                     if re.fullmatch(r"rtslab_barrier_\w+_sleeps", k) and isinstance(v, float))
        return {"elapsed": elapsed, "cpu": cpu, "machine_busy": busy, "layout": seed,
                "syncs": s.get("rtslab_stw_syncs"), "stw_mean": s.get("rtslab_stw_mean_seconds"),
                "barrier_sleeps": sleeps}
    return Subject(f"{v} {prog.id} {' '.join(rts)}", "rtslab", run)


def binary_subject(name, cmd):
    def run(rnd):
        elapsed, cpu, busy, p = timed(cmd)
        if p.returncode != 0:
            sys.exit(f"run.py: {' '.join(cmd)}: exit {p.returncode}\n{p.stderr[-2000:]}")
        return {"elapsed": elapsed, "cpu": cpu, "machine_busy": busy}
    return Subject(name, "binary", run)


def analyse(subjects, runs):
    rows, summary = [], {}
    for s in subjects:
        mine = [r for r in runs if r["subject"] == s.name]
        alone = [r for r in mine if not r["loaded"]]
        loaded = [r for r in mine if r["loaded"]]
        by_round = {r["round"]: r for r in alone}
        ratios = [r["elapsed"] / by_round[r["round"]]["elapsed"] for r in loaded
                  if r["round"] in by_round]
        a_s = benchstats.sample_of(alone, "elapsed")
        l_s = benchstats.sample_of(loaded, "elapsed")
        if s.kind == "binary":
            a_s, l_s = benchstats.one_binary(a_s), benchstats.one_binary(l_s)
        ci = benchstats.ratio_ci(a_s, l_s)
        med = statistics.median(ratios)
        summary[s.name] = {"median_ratio": med, "ratio": ci.ratio if ci else None,
                           "lo": ci.lo if ci else None, "hi": ci.hi if ci else None}
        extra = "-"
        if s.kind == "rtslab":
            def md(rs, k):
                vals = [r[k] for r in rs if isinstance(r.get(k), float)]
                return statistics.median(vals) if vals else float("nan")
            extra = (f"{md(alone, 'syncs'):.0f} / {md(loaded, 'syncs'):.0f} | "
                     f"{md(alone, 'stw_mean') * 1e6:.0f} / {md(loaded, 'stw_mean') * 1e6:.0f} | "
                     f"{md(alone, 'barrier_sleeps'):.0f} / {md(loaded, 'barrier_sleeps'):.0f}")
        else:
            extra = "- | - | -"
        ci_text = benchstats.fmt_ci(ci, lambda x: f"{x:.2f}x") if ci else "-"
        rows.append(
            f"| {s.name} | {statistics.median(r['elapsed'] for r in alone):.3f} "
            f"| {statistics.median(r['elapsed'] for r in loaded):.3f} "
            f"| {med:.2f}x ({min(ratios):.2f}-{max(ratios):.2f}) | {ci_text} "
            f"| {statistics.median(r['cpu'] for r in alone):.3f} "
            f"/ {statistics.median(r['cpu'] for r in loaded):.3f} | {extra} |")
    head = ["| subject | alone, s | beside a busy process, s | loaded / alone: median of "
            "rounds (min-max) | mean ratio, 95 % interval | CPU s alone / loaded "
            "| syncs alone / loaded | STW mean us alone / loaded "
            "| barrier sleeps alone / loaded |",
            "|---|---|---|---|---|---|---|---|---|"]
    return "\n".join(head + rows), summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated builds, each " + variant.SPEC_HELP)
    ap.add_argument("--rounds", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help="rounds; each runs every subject alone and loaded (default %(default)s)")
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help="layouts of each variant's rtslab, round i on layout i %% K; 0: the "
                         "build's own binary (default %(default)s)")
    ap.add_argument("--size", default="norm", choices=benchlib.SIZES)
    ap.add_argument("-w", "--workload", action="append", metavar="GROUP/NAME:RTSOPT,...",
                    help="a suite program and its RTS options; repeat (default: "
                         + " ".join(WORKLOADS) + ")")
    ap.add_argument("--control-iters", type=int, default=1300000000,
                    help="control.c's iterations per thread (default %(default)s: about "
                         "0.3 s alone on the 2-core machine of the report)")
    ap.add_argument("--no-ghc", action="store_true", help="leave GHC out even when installed")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    progs = {p.id: p for p in benchlib.discover(ROOT)}
    workloads = []
    for w in a.workload or WORKLOADS:
        name, _, opts = w.partition(":")
        if name not in progs:
            ap.error(f"unknown program {name} (python3 testsuite/bench.py --list)")
        workloads.append((progs[name], [o for o in opts.split(",") if o]))
    variants = [v for v in a.variants.split(",") if v]
    builds = {v: variant.resolve_or_exit(v, ROOT, "external-load")[1] for v in variants}
    ghc = None if a.no_ghc else shutil.which("ghc")
    os.makedirs(a.out, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        subjects = []
        for v in variants:
            b = builds[v]
            try:
                bins = layout.spread_copies(b["dir"], os.path.relpath(b["binary"], b["dir"]),
                                            a.layouts, tmp, str(len(subjects)), log=print)
            except layout.LayoutError as e:
                sys.exit(f"run.py: {e}")
            for prog, rts in workloads:
                subjects.append(rtslab_subject(v, bins, prog, rts, a.size, tmp))
        control = os.path.join(tmp, "control")
        subprocess.run(["cc", "-O2", "-pthread", "-o", control, os.path.join(HERE, "control.c")],
                       check=True)
        subjects.append(binary_subject("control: C, 2 threads", [control, str(a.control_iters)]))
        ghc_version = None
        if ghc:
            hs = os.path.join(tmp, "alloc.hs")
            shutil.copy(os.path.join(HERE, "alloc.hs"), hs)
            subprocess.run([ghc, "-O2", "-threaded", "-rtsopts", "-v0", "-o",
                            os.path.join(tmp, "alloc"), hs], check=True, cwd=tmp)
            ghc_version = subprocess.run([ghc, "--numeric-version"], stdout=subprocess.PIPE,
                                         text=True).stdout.strip()
            subjects.append(binary_subject(f"ghc {ghc_version}: alloc.hs -N2",
                                           [os.path.join(tmp, "alloc"), str(GHC_N),
                                            "+RTS", "-N2", "-RTS"]))
        for rnd in range(a.rounds):
            for i, s in enumerate(subjects):
                line = []
                for loaded in ((False, True) if (rnd + i) % 2 == 0 else (True, False)):
                    hog = busy_start() if loaded else None
                    try:
                        r = s.runs_for(rnd)
                    finally:
                        if hog:
                            busy_stop(hog)
                    r.update(subject=s.name, round=rnd, loaded=loaded)
                    r["others_cpu"] = others(r)
                    runs.append(r)
                    line.append(f"{'loaded' if loaded else 'alone'} {r['elapsed']:.3f}s"
                                f" (others {r['others_cpu']:.2f}s)")
                print(f"[round {rnd + 1}/{a.rounds}] {s.name:40} " + "  ".join(line), flush=True)
    text, summary = analyse(subjects, runs)
    worst = max(runs, key=lambda r: r["others_cpu"])
    text += (f"\n\nOther processes' CPU during a run (the machine's busy time less the run's "
             f"and its busy process's): at most {worst['others_cpu']:.2f} s "
             f"({worst['subject']}, round {worst['round'] + 1}); median "
             f"{statistics.median(r['others_cpu'] for r in runs):.3f} s.")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            stdout=subprocess.PIPE, text=True).stdout.strip()
    cpu_model = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu_model = next((l.split(":", 1)[1].strip() for l in f
                              if l.startswith("model name")), "")
    except OSError:
        pass
    load = os.getloadavg()
    head = (f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {platform.node()} "
            f"({os.cpu_count()} CPUs, {cpu_model}), commit {commit}, size {a.size}, "
            f"{a.rounds} rounds, {a.layouts} layouts per variant, load average at the end "
            f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}.\n"
            "Loaded: beside one busy process (sh's empty loop). Ideal for two threads on 2 "
            "cores: 1.5x; goal (issue 43): 1.7x.\n"
            + "".join(f"  {variant.describe(v, builds[v])}\n" for v in variants))
    with open(os.path.join(a.out, "tables.md"), "w", encoding="utf-8") as f:
        f.write(head + "\n" + text + "\n")
    with gzip.open(os.path.join(a.out, "runs.json.gz"), "wt", encoding="utf-8") as f:
        json.dump({"commit": commit, "size": a.size, "rounds": a.rounds, "layouts": a.layouts,
                   "builds": builds, "ghc": ghc_version, "summary": summary, "runs": runs},
                  f, indent=1)
    print(head)
    print(text)


if __name__ == "__main__":
    main()
