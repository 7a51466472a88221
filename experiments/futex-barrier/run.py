#!/usr/bin/env python3
"""futex-barrier (issue 12, seed 001): the baseline's polling barriers against futex waits.

    python3 experiments/futex-barrier/run.py --baseline BUILD --patch BUILD [--reps N]
                                             [--layouts K] [--quick] [--only abcdef] [--out DIR]

BUILD are build directories (`make` done), or variants built for the purpose, VARIANT or
VARIANT@REV (e.g. `--baseline baseline@main --patch futex-barrier@my-branch`: built in
_build/ from the working tree or that git revision, tools/variant.py): --baseline one
configured without patches, --patch one configured with --enable-futex-barrier (their
`rtslab --info` is checked). The exact revision, configure arguments and patches of both
head the tables and go to results.json ("builds"). Their
bench/micro/{simple_alloc,busy_one} are copied to a temporary directory first. Every part runs
both builds, with the repetitions interleaved (rep 1 of every configuration of both builds,
then rep 2, ...), so the two see the same machine; figures are medians, and the tables give
patch/baseline ratios from the same run.
With --layouts K (K >= 1; default 5, with 10 reps) each build's programs are K seeded
layouts of its code (tools/layout.py, Note [Code layout as a factor]) and rep i runs layout
i % K; every run records its layout's seed, and the patch/baseline ratios of (a), (b), (c)
and (f) add the mean ratio with its 95 % interval over layouts and runs
(testsuite/benchstats.py; both builds run seeds 1..K, so the interval is paired by seed;
fewer than 3 layouts is a screen). 0 measures the build's own binaries, one per build, with
no interval.
  (a) simple_alloc MB (one worker per capability) at -N1 -N2 -N4 -N8: elapsed, CPU, the
      stop-the-world mean and max, barrier sleeps (the baseline's nanosleeps, the patch's
      FUTEX_WAIT calls), the patch's FUTEX_WAKE calls and wakes without a system call;
  (b) the same work as N -N1 processes vs one -NN process, N = 2, 4, 8 (seed 001's
      domains vs processes): the caps/processes ratio of each build;
  (c) busy_one (one busy thread, the other capabilities idle) at -N1 -N2 -N4 -N8;
  (d) futex system calls, counted by `strace -f -c -e trace=futex` (one run per configuration;
      strace slows the program, so only the counts are reported): simple_alloc and busy_one
      at -N2 and -N8. (perf's syscalls:sys_enter_futex tracepoint is not readable here.)
  (e) the spin count (Note [Spinning when oversubscribed] in
      runtime/sync/wait_futex_barrier.c): simple_alloc and busy_one at -N2 -N4 -N8, the
      patch at -qw1000, -qw100, -qw30, -qw0 and its default, against the baseline: elapsed,
      as a ratio to the patch at -qw1000.
  (f) -N2 beside one CPU-bound process (a busy loop started for the part and killed after
      it; seed 001's case of a machine shared with other work): simple_alloc and busy_one,
      elapsed, CPU and the stop-the-world mean and max.
Prints markdown tables, writes them to OUT/tables.md and every run's figures to
OUT/results.json (OUT defaults to experiments/futex-barrier/results/). Exit status 1 only if a
program failed; nothing depends on timings.
"""

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# the baseline measurements' runner: its parsing and running helpers
_spec = importlib.util.spec_from_file_location(
    "bp_run", os.path.join(ROOT, "experiments", "baseline-parallel", "run.py"))
bp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bp)
import layout  # noqa: E402  (tools/layout.py, on the path bp set for tools/variant.py)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats as bs  # noqa: E402

PROGS = ["simple_alloc", "busy_one"]
VARIANTS = ["baseline", "patch"]
SIMPLE_MB = (1000, 200)
BUSY_MB = (500, 100)
KINDS = ["enter barrier", "leader awaiting arrival", "leader awaiting GC threads",
         "leave barrier"]


def futex_lines(text):
    """The patch's -s block: per kind announced, futex waits, futex wakes, no-syscall wakes."""
    out = {"futex_wakes": 0, "quiet_wakes": 0, "futex_waits": 0, "announced": 0}
    if "Futex barrier (-qw" not in text:
        return {}
    block = text.split("Futex barrier (-qw", 1)[1]
    out["spins_set"] = int(re.match(r"\d+", block).group(0))
    for k in KINDS:
        r = re.search(r"^\s+%s\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$" % re.escape(k), block, re.M)
        if r:
            out["announced"] += int(r.group(1))
            out["futex_waits"] += int(r.group(2))
            out["futex_wakes"] += int(r.group(3))
            out["quiet_wakes"] += int(r.group(4))
    return out


def patch_stats(rec):
    return rec.get("futex", {})


def run_one(lay, tmp, prog, args, rts):
    """bp.run in LAY, a (layout seed, directory) of the build, plus the futex block of the -s
    text (bp.run drops the text: rerun parse)."""
    seed, bindir = lay
    sf = os.path.join(tmp, "stats.%d" % time.monotonic_ns())
    t = time.monotonic()
    argv, p = bp.start(bindir, prog, args, rts, sf)
    text = ""
    try:
        p.wait(timeout=bp.TIMEOUT_S)
    except subprocess.TimeoutExpired:
        pass
    if os.path.exists(sf):
        with open(sf) as fh:
            text = fh.read()
    rec = bp.finish(argv, p, sf, t)             # parses the same file, then deletes it
    rec["futex"] = futex_lines(text)
    rec["variant_dir"] = bindir
    rec["layout"] = seed
    return rec


med, f = bp.med, bp.f


def ratio(a, b):
    return "%.2f" % (a / b) if a and b else "-"


def lay(dirs, v, i):
    """Build V's (layout seed, directory) for rep I: rep i runs layout i % K."""
    return dirs[v][i % len(dirs[v])]


def mean_ci(base, other, value):
    """' (mean +3.1% [+1.0, +5.2])', benchstats' mean ratio other/base of VALUE over the runs
    BASE and OTHER and its 95 % interval over layouts and runs; '' unless each side has 2
    values or more."""
    counted = lambda x: value(x) or None        # a run without the value (0) is left out
    b, o = bs.sample_of(base, counted), bs.sample_of(other, counted)
    if min(sum(map(len, s.values())) for s in (b, o)) < 2:
        return ""
    return " (mean %s)" % bs.fmt_ci(bs.ratio_ci(b, o))


def layouts_said(dirs, reps):
    """What a table's figures rest on, for its title."""
    k = len(dirs["baseline"])
    if k <= 1:
        return ("; one binary per build was measured, so there is no interval and a difference "
                "may be a layout artefact; " + bs.design(1, reps))
    k = min(k, reps)
    note = bs.design(k, reps // k)
    return ("; %d runs over %d layouts per build (seeds 1..K for both builds: each interval is "
            "paired by seed)%s" % (reps, k, "; " + note if note else ""))


def part_a(dirs, tmp, reps, quick):
    mb = str(SIMPLE_MB[quick])
    ns = [1, 2, 4, 8]
    runs = {(v, n): [] for v in VARIANTS for n in ns}
    for i in range(reps):
        for n in ns:
            for v in VARIANTS:
                runs[v, n].append(run_one(lay(dirs, v, i), tmp, "simple_alloc", [mb],
                                          ["-N%d" % n]))
    rows = []
    el = {k: med([bp.metric(x, "simple_alloc_elapsed") for x in r]) for k, r in runs.items()}
    for n in ns:
        for v in VARIANTS:
            rr = runs[v, n]
            rows.append([
                "-N%d" % n, v, f(el[v, n]),
                ratio(el[v, n], el[v, 2]),
                f(med([bp.metric(x, "simple_alloc_cpu") for x in rr])),
                f(med([bp.stat(x, "gen0_colls") for x in rr])),
                f(med([bp.stat(x, "stw_mean_us") for x in rr]), 1),
                f(med([bp.stat(x, "stw_max_us") for x in rr])),
                f(med([bp.stat(x, "barrier_sleeps") for x in rr])),
                f(med([patch_stats(x).get("futex_wakes") for x in rr])),
                f(med([patch_stats(x).get("quiet_wakes") for x in rr])),
            ])
        sm = {v: med([bp.stat(x, "stw_mean_us") for x in runs[v, n]]) for v in VARIANTS}
        rb, rp = runs["baseline", n], runs["patch", n]
        rows.append(["-N%d" % n, "**patch/baseline**", ratio(el["patch", n], el["baseline", n]) +
                     mean_ci(rb, rp, lambda x: bp.metric(x, "simple_alloc_elapsed")),
                     "", "", "", ratio(sm["patch"], sm["baseline"]) +
                     mean_ci(rb, rp, lambda x: bp.stat(x, "stw_mean_us")), "", "", "", ""])
    table = bp.md_table(["RTS", "build", "elapsed ms", "vs own -N2", "CPU ms", "Gen 0 GCs",
                         "STW mean us", "STW max us", "barrier sleeps", "futex wakes",
                         "wakes w/o syscall"], rows)
    title = ("(a) simple_alloc %s MiB total, one worker per capability; median of %d runs%s"
             % (mb, reps, layouts_said(dirs, reps)))
    return title, table, {"%s -N%d" % k: r for k, r in runs.items()}


def part_b(dirs, tmp, reps, quick):
    mb = SIMPLE_MB[quick]
    ns = [2, 4, 8]
    procs = {(v, n): [] for v in VARIANTS for n in ns}
    caps = {(v, n): [] for v in VARIANTS for n in ns}
    for i in range(reps):
        for n in ns:
            for v in VARIANTS:
                seed, bindir = lay(dirs, v, i)
                wall, recs = bp.run_concurrent(bindir, tmp, [
                    ("simple_alloc", [str(mb // n), "1"], ["-N1"]) for _ in range(n)])
                procs[v, n].append({"wall_s": wall, "procs": recs, "layout": seed})
                caps[v, n].append(run_one((seed, bindir), tmp, "simple_alloc", [str(mb)],
                                          ["-N%d" % n]))
    rows = []
    cp = {}
    for n in ns:
        for v in VARIANTS:
            pw = med([x["wall_s"] * 1e3 for x in procs[v, n]])
            cw = med([x["wall_s"] * 1e3 for x in caps[v, n]])
            cp[v, n] = cw / pw if cw and pw else None
            rows.append([str(n), v, f(pw), f(cw), "%.2fx" % cp[v, n] if cp[v, n] else "-"])
        # the interval's sample: each rep's caps / processes, both from that rep's layout
        each = {v: [{"layout": p["layout"], "cp": c["wall_s"] / p["wall_s"]}
                    for p, c in zip(procs[v, n], caps[v, n])] for v in VARIANTS}
        rows.append([str(n), "**patch/baseline**", "", "",
                     ratio(cp["patch", n], cp["baseline", n]) +
                     mean_ci(each["baseline"], each["patch"], lambda x: x["cp"])])
    table = bp.md_table(["N", "build", "N processes: wall ms", "N caps: wall ms",
                         "caps / processes"], rows)
    title = ("(b) %d MiB of simple_alloc work as N -N1 processes (each %d/N MiB) vs one -NN "
             "process; median of %d runs%s" % (mb, mb, reps, layouts_said(dirs, reps)))
    raw = {"procs": {"%s -N%d" % k: r for k, r in procs.items()},
           "caps": {"%s -N%d" % k: r for k, r in caps.items()}}
    return title, table, raw


def part_c(dirs, tmp, reps, quick):
    mb = str(BUSY_MB[quick])
    ns = [1, 2, 4, 8]
    runs = {(v, n): [] for v in VARIANTS for n in ns}
    for i in range(reps):
        for n in ns:
            for v in VARIANTS:
                runs[v, n].append(run_one(lay(dirs, v, i), tmp, "busy_one", [mb], ["-N%d" % n]))
    rows = []
    for n in ns:
        el = {}
        for v in VARIANTS:
            rr = runs[v, n]
            el[v] = med([bp.metric(x, "busy_one_elapsed") for x in rr])
            rows.append(["-N%d" % n, v, f(el[v]), f(med([bp.metric(x, "busy_one_cpu") for x in rr])),
                         f(med([bp.stat(x, "stw_mean_us") for x in rr]), 1),
                         f(med([bp.stat(x, "stw_max_us") for x in rr])),
                         f(med([bp.stat(x, "barrier_sleeps") for x in rr])),
                         f(med([bp.stat(x, "idle_woken") for x in rr])),
                         f(med([patch_stats(x).get("futex_wakes") for x in rr]))])
        rows.append(["-N%d" % n, "**patch/baseline**", ratio(el["patch"], el["baseline"]) +
                     mean_ci(runs["baseline", n], runs["patch", n],
                             lambda x: bp.metric(x, "busy_one_elapsed")),
                     "", "", "", "", "", ""])
    table = bp.md_table(["RTS", "build", "elapsed ms", "CPU ms", "STW mean us", "STW max us",
                         "barrier sleeps", "idle caps woken", "futex wakes"], rows)
    title = ("(c) busy_one %s MiB, one busy thread, the rest idle; median of %d runs%s"
             % (mb, reps, layouts_said(dirs, reps)))
    return title, table, {"%s -N%d" % k: r for k, r in runs.items()}


def strace_futex(lay, prog, args, rts):
    seed, bindir = lay
    out = tempfile.mktemp(prefix="strace.")
    argv = ["strace", "-f", "-c", "-e", "trace=futex,nanosleep,clock_nanosleep", "-o", out,
            os.path.join(bindir, prog)] + args + ["+RTS"] + rts + ["-RTS"]
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=bp.TIMEOUT_S)
    calls = {"futex": 0, "nanosleep": 0, "clock_nanosleep": 0}
    errors = 0
    if os.path.exists(out):
        with open(out) as fh:
            for line in fh:
                p_ = line.split()
                if p_ and p_[-1] in calls:
                    # % time, seconds, usecs/call, calls, [errors], syscall
                    calls[p_[-1]] = int(p_[3])
                    if p_[-1] == "futex" and len(p_) > 5:
                        errors = int(p_[4])
        os.unlink(out)
    if p.returncode != 0:
        bp.failures.append({"argv": argv, "rc": p.returncode, "stderr": p.stderr[-2000:]})
    return {"argv": argv[7:], "futex_calls": calls["futex"], "futex_errors": errors,
            "sleep_calls": calls["nanosleep"] + calls["clock_nanosleep"], "layout": seed}


def part_d(dirs, tmp, reps, quick):
    cfgs = [("simple_alloc", [str(SIMPLE_MB[quick] // 4)], ["-N2"]),
            ("simple_alloc", [str(SIMPLE_MB[quick] // 4)], ["-N8"]),
            ("busy_one", [str(BUSY_MB[quick] // 4)], ["-N2"]),
            ("busy_one", [str(BUSY_MB[quick] // 4)], ["-N8"])]
    rows, raw = [], {}
    for prog, args, rts in cfgs:
        r = {v: strace_futex(lay(dirs, v, 0), prog, args, rts) for v in VARIANTS}
        name = "%s %s %s" % (prog, " ".join(args), " ".join(rts))
        raw[name] = r
        tot = {v: r[v]["futex_calls"] + r[v]["sleep_calls"] for v in VARIANTS}
        rows.append([name, f(r["baseline"]["futex_calls"]), f(r["baseline"]["sleep_calls"]),
                     f(r["patch"]["futex_calls"]), f(r["patch"]["sleep_calls"]),
                     ratio(tot["patch"], tot["baseline"])])
    table = bp.md_table(["program", "baseline futex", "baseline nanosleep", "patch futex",
                         "patch nanosleep", "patch/baseline (futex + nanosleep)"], rows)
    title = ("(d) system calls of the whole process that wait (`strace -f -c -e "
             "trace=futex,nanosleep,clock_nanosleep`, one run each): the baseline's futex calls "
             "come from its condition variables (idle capabilities), its nanosleeps from the "
             "barriers' polling; with --layouts, each build's first layout")
    return title, table, raw


SPIN_COUNTS = [1000, 100, 30, 0, None]      # None: the default (no -qw)


def part_e(dirs, tmp, reps, quick):
    ns = [2, 4, 8]
    progs = [("simple_alloc", str(SIMPLE_MB[quick])), ("busy_one", str(BUSY_MB[quick]))]
    cols = [("baseline", None)] + [("patch", q) for q in SPIN_COUNTS]
    runs = {(p, n, c): [] for p, _ in progs for n in ns for c in cols}
    for i in range(reps):
        for p, mb in progs:
            for n in ns:
                for v, q in cols:
                    rts = ["-N%d" % n] + (["-qw%d" % q] if q is not None else [])
                    runs[p, n, (v, q)].append(run_one(lay(dirs, v, i), tmp, p, [mb], rts))
    rows = []
    for p, mb in progs:
        for n in ns:
            el = {c: med([bp.metric(x, p + "_elapsed") for x in runs[p, n, c]]) for c in cols}
            spun = {c: med([float(x["futex"].get("spins_set", 0) or 0) for x in runs[p, n, c]])
                    for c in cols}
            ref = el["patch", 1000]
            row = ["%s %s" % (p, mb), "-N%d" % n]
            for c in cols:
                row.append("%s (%s)" % (f(el[c]), ratio(el[c], ref)))
            row.append("-qw%d" % spun["patch", None] if spun["patch", None] else "-")
            rows.append(row)
    table = bp.md_table(["program", "RTS", "baseline"] +
                        ["patch -qw%d" % q if q is not None else "patch, default"
                         for q in SPIN_COUNTS] + ["the default chose"], rows)
    title = ("(e) the spin count: elapsed ms (and its ratio to the patch at -qw1000) of the "
             "patch at several -qw and its default, against the baseline; median of %d runs%s"
             % (reps, layouts_said(dirs, reps)))
    return title, table, {"%s -N%d %s" % (p, n, c): r for (p, n, c), r in runs.items()}


def part_f(dirs, tmp, reps, quick):
    progs = [("simple_alloc", str(SIMPLE_MB[quick])), ("busy_one", str(BUSY_MB[quick]))]
    runs = {(p, v): [] for p, _ in progs for v in VARIANTS}
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        time.sleep(0.5)
        for i in range(reps):
            for p, mb in progs:
                for v in VARIANTS:
                    runs[p, v].append(run_one(lay(dirs, v, i), tmp, p, [mb], ["-N2"]))
    finally:
        hog.kill()
        hog.wait()
    rows = []
    for p, mb in progs:
        el, sm = {}, {}
        for v in VARIANTS:
            rr = runs[p, v]
            el[v] = med([bp.metric(x, p + "_elapsed") for x in rr])
            sm[v] = med([bp.stat(x, "stw_mean_us") for x in rr])
            rows.append(["%s %s" % (p, mb), v, f(el[v]), f(med([bp.metric(x, p + "_cpu") for x in rr])),
                         f(sm[v], 1), f(med([bp.stat(x, "stw_max_us") for x in rr])),
                         f(med([bp.stat(x, "barrier_sleeps") for x in rr]))])
        rb, rp = runs[p, "baseline"], runs[p, "patch"]
        rows.append(["%s %s" % (p, mb), "**patch/baseline**", ratio(el["patch"], el["baseline"]) +
                     mean_ci(rb, rp, lambda x: bp.metric(x, p + "_elapsed")), "",
                     ratio(sm["patch"], sm["baseline"]) +
                     mean_ci(rb, rp, lambda x: bp.stat(x, "stw_mean_us")), "", ""])
    table = bp.md_table(["program", "build", "elapsed ms", "CPU ms", "STW mean us",
                         "STW max us", "barrier sleeps"], rows)
    title = ("(f) -N2 beside one CPU-bound process on the 2 CPUs; median of %d runs%s"
             % (reps, layouts_said(dirs, reps)))
    return title, table, {"%s %s" % k: r for k, r in runs.items()}


def info(bindir):
    p = subprocess.run([os.path.join(bindir, "rtslab"), "+RTS", "--info", "-RTS"],
                       capture_output=True, text=True)
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, metavar="BUILD", help=bp.variant.SPEC_HELP)
    ap.add_argument("--patch", required=True, metavar="BUILD", help=bp.variant.SPEC_HELP)
    ap.add_argument("--reps", type=int, default=2 * bs.CLAIM_LAYOUTS,
                    help="runs per configuration of (a), (b), (f), rep i on layout i mod K; "
                         "(c), (d), (e) take 2 fewer (default %d)" % (2 * bs.CLAIM_LAYOUTS))
    ap.add_argument("--layouts", type=int, default=bs.CLAIM_LAYOUTS, metavar="K",
                    help="spread each configuration's runs over K seeded layouts of each build "
                         "(tools/layout.py; default %d, fewer than 3 is a screen); 0: the "
                         "build's own binaries, no interval" % bs.CLAIM_LAYOUTS)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="abcdef")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    quick = 1 if a.quick else 0
    builds = {}
    for v in VARIANTS:
        d, builds[v] = bp.variant.resolve_or_exit(getattr(a, v), ROOT, "futex-barrier",
                                                  ["bench/micro/" + p for p in PROGS])
        setattr(a, v, d)
    infos = {"baseline": info(a.baseline), "patch": info(a.patch)}
    if '"Patch futex-barrier","NO"' not in infos["baseline"]:
        sys.exit("run.py: --baseline %s has the futex-barrier patch" % a.baseline)
    if '"Patch futex-barrier","YES' not in infos["patch"]:
        sys.exit("run.py: --patch %s lacks the futex-barrier patch" % a.patch)
    tmp = tempfile.mkdtemp(prefix="futex-barrier.")
    dirs = {}           # {build: [(layout seed, directory of its PROGS)]}
    for v, d in (("baseline", a.baseline), ("patch", a.patch)):
        try:
            spread = {p: layout.spread(d, "bench/micro/" + p, a.layouts, log=print)
                      for p in PROGS}
        except layout.LayoutError as e:
            sys.exit("run.py: %s" % e)
        dirs[v] = []
        for i, (seed, _) in enumerate(spread[PROGS[0]]):
            dirs[v].append((seed, os.path.join(tmp, "%s-%d" % (v, seed))))
            os.makedirs(dirs[v][-1][1])
            for p in PROGS:
                shutil.copy(spread[p][i][1], os.path.join(dirs[v][-1][1], p))
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    t0 = time.monotonic()
    load0 = os.getloadavg()
    parts = {"a": part_a, "b": part_b, "c": part_c, "d": part_d, "e": part_e, "f": part_f}
    out_md, raw = [], {}
    for k in a.only:
        reps = a.reps if k in "abf" else max(3, a.reps - 2)
        title, table, r = parts[k](dirs, tmp, reps, quick)
        out_md.append("### " + title + "\n\n" + table + "\n")
        raw[k] = r
        print(out_md[-1], flush=True)
    secs = time.monotonic() - t0
    head = ("Run %s, %.0f s in all, commit %s, machine %s (%d CPUs), load average at start "
            "%.2f %.2f %.2f, at end %.2f %.2f %.2f.\n" % (
                started, secs, commit, platform.processor() or platform.machine(),
                os.cpu_count(), *load0, *os.getloadavg()))
    head += "".join("  %s\n" % bp.variant.describe(v, builds[v]) for v in VARIANTS)
    head += ("patch/baseline: the ratio of the medians, then (mean ...) benchstats' mean ratio as "
             "a % change with its 95 % interval over layouts and runs (none with one layout; "
             "a screen with fewer than 3).\n")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tables.md"), "w") as fh:
        fh.write(head + "\n" + "\n".join(out_md))
    with open(os.path.join(a.out, "results.json"), "w") as fh:
        json.dump({"started": started, "seconds": secs, "commit": commit, "builds": builds,
                   "info": infos,
                   "argv": sys.argv, "parts": raw, "failures": bp.failures}, fh, indent=1,
                  default=str)
    print(head)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bp.failures else 0


if __name__ == "__main__":
    sys.exit(main())
