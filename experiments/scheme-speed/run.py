#!/usr/bin/env python3
"""Scheme speed: rtslab against Lua 5.4 and Guile 3.0 (issue 4, "Speed").

    python3 experiments/scheme-speed/run.py [--rtslab BUILD] [--rtslab-args ARGS] [--reps R]
                                            [--layouts K] [--only fib,tak,list] [--out DIR]

BUILD is the rtslab measured: a binary, a build directory, or a variant built for the
purpose, VARIANT or VARIANT@REV (`baseline`, `all-patches@HEAD~2`, `baseline@v0.1`: from the
working tree or a git revision, tools/variant.py). Its exact revision, configure arguments
and patches head the tables and go to results.json ("build").

Runs each program (fib, tak, list) in each implementation R times (default 5), the
repetitions alternating between implementations (rep 1 of every implementation, then rep 2,
...) so that the machine's noise spreads over all of them, and checks every run's output.
Code layout is a random factor (Note [Code layout as a factor], tools/layout.py): with
--layouts K (default 5 when BUILD is a build), rtslab is linked K ways (seeds 1..K,
layout.spread) and rep i runs layout i % K; Lua and Guile are not ours and run as
installed, so their runs are the replicates of their side of an interval
(benchstats.one_binary). 0 measures BUILD's own rtslab, with no interval.
Before the timed runs, every program is run once untimed in every implementation: that run
checks the output and lets Guile auto-compile the program (its .go file goes to Guile's
cache), so the timed Guile runs execute compiled code.

Exact commands, each run from this directory:
  rtslab     RTSLAB NAME.scm [ARGS]              (RTSLAB: --rtslab's binary, default ./rtslab
                                                  in the repository root, copied to a temporary
                                                  directory first; ARGS: --rtslab-args)
  lua5.4     lua5.4 NAME.lua
  guile-3.0  guile-3.0 NAME.scm                  (with GUILE_AUTO_COMPILE=1: Guile's normal
                                                  mode, compiled to bytecode + JIT)
A "startup" row times an empty program (rtslab -e 0, lua5.4 -e '', guile-3.0 -c 0) for
reference; it is not checked.

When rtslab is missing, the script still runs Lua and Guile and says so. Prints markdown
tables (median wall time, min wall time, median CPU time, and the ratios rtslab/lua and
rtslab/guile; then those ratios as benchstats' mean ratio with its 95 % interval over layouts
and runs) and writes them to OUT/tables.md, with every run's figures (rtslab's with its
layout's seed) in OUT/results.json (OUT defaults to experiments/scheme-speed/results/). Exit
status 1 when a
run failed (non-zero exit, timeout, or wrong output); nothing depends on timings.
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TIMEOUT_S = 300
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant  # noqa: E402  (tools/variant.py: builds named by directory, binary or VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: seeded code layouts)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchstats  # noqa: E402  (testsuite/benchstats.py: intervals over layouts and runs)

# program -> expected standard output (stripped)
PROGRAMS = {
    "fib": "832040",
    "tak": "7",
    "list": "1000003000000",
}
IMPLS = ["rtslab", "lua5.4", "guile-3.0"]

failures = []


def command(impl, prog, rtslab, rtslab_args):
    """The argv that runs prog in impl; prog None means the empty startup program."""
    if impl == "rtslab":
        return [rtslab] + (["-e", "0"] if prog is None else [prog + ".scm"]) + rtslab_args
    if impl == "lua5.4":
        return ["lua5.4"] + (["-e", ""] if prog is None else [prog + ".lua"])
    return ["guile-3.0"] + (["-c", "0"] if prog is None else [prog + ".scm"])


def run_once(argv, env):
    """Runs argv here; returns (wall s, cpu s, rc, stdout, stderr)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    try:
        p = subprocess.run(argv, cwd=HERE, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=TIMEOUT_S)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        out = out if isinstance(out, str) else out.decode(errors="replace")
        err = err if isinstance(err, str) else err.decode(errors="replace")
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, rc, out, err


def check(impl, prog, argv, rc, out, err):
    ok = rc == 0 and (prog is None or out.strip() == PROGRAMS[prog])
    if not ok:
        failures.append("%s %s: rc=%s stdout=%r stderr=%r" % (
            impl, prog or "startup", rc, out.strip()[-200:], err.strip()[-500:]))
        print("FAILED: %s (rc=%s)\n  stdout: %s\n  stderr: %s" % (
            " ".join(shlex.quote(a) for a in argv), rc, out.strip()[-200:],
            err.strip()[-500:]), file=sys.stderr)
    return ok


def version(argv):
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=30)
        text = (p.stdout + p.stderr).strip()
        return text.splitlines()[0] if text else ""
    except (OSError, subprocess.TimeoutExpired):
        return ""


def rtslab_version(rtslab):
    """'Version 0.1.0, patches: none' from GHC-style `+RTS --info` output."""
    try:
        p = subprocess.run([rtslab, "+RTS", "--info", "-RTS"], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    info = dict(re.findall(r'\("([^"]*)","([^"]*)"\)', p.stdout))
    return "version %s, patches: %s" % (info.get("Version", "?"), info.get("Patches", "?"))


def fmt(x, nd=3):
    return "-" if x is None else "%.*f" % (nd, x)


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def mean_ci(base, other, key):
    """'1.23 [1.10, 1.37]': benchstats' mean ratio of OTHER's KEY (rtslab's runs, over its
    layouts) over BASE's (another system's installed binary, whose runs are its replicates:
    benchstats.one_binary) and its 95 % interval; none when rtslab ran one layout, a screen
    with fewer than 3; '-' unless each has 2 runs or more."""
    if not base or not other or min(len(base), len(other)) < 2:
        return "-"
    ci = benchstats.ratio_ci(benchstats.one_binary(benchstats.sample_of(base, key)),
                             benchstats.sample_of(other, key))
    return benchstats.fmt_ci(ci, lambda v: "%.2f" % v)


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rtslab", default=os.path.join(ROOT, "rtslab"), metavar="BUILD",
                    help="the rtslab measured: " + variant.SPEC_HELP +
                    " (default: ./rtslab in the repository root)")
    ap.add_argument("--rtslab-args", default="",
                    help="extra arguments after the program, e.g. '+RTS -N1 -RTS'")
    ap.add_argument("--reps", type=int, default=5, help="timed runs per program and "
                    "implementation (default 5)")
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K",
                    help="link rtslab K ways and spread its reps over them (default %d when "
                         "rtslab is a build; fewer than 3 is a screen; 0: the build's own "
                         "rtslab, no interval)" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--only", default=",".join(PROGRAMS),
                    help="comma-separated programs to run (default: all)")
    ap.add_argument("--no-startup", action="store_true", help="skip the startup row")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()

    progs = [p for p in args.only.split(",") if p]
    for p in progs:
        if p not in PROGRAMS:
            ap.error("unknown program %r (known: %s)" % (p, ", ".join(PROGRAMS)))
    if args.layouts < 0:
        ap.error("--layouts must be 0 or more")
    rtslab_args = shlex.split(args.rtslab_args)
    # Copies in a temporary directory: a rebuild of the tree during the run cannot change
    # what is measured.
    build = None
    if args.rtslab != ap.get_default("rtslab") or os.path.exists(args.rtslab):
        build = variant.resolve_or_exit(args.rtslab, ROOT, "scheme-speed")[1]
    spread = [(0, args.rtslab)]
    if build:
        try:
            spread = layout.spread(build["dir"], os.path.relpath(build["binary"], build["dir"]),
                                   args.layouts, log=print)
        except layout.LayoutError as e:
            sys.exit("scheme-speed: %s" % e)
    elif args.layouts and args.layouts != ap.get_default("layouts"):
        sys.exit("scheme-speed: --layouts needs an rtslab build (none at %s)" % args.rtslab)
    else:
        args.layouts = 0
    tmp = tempfile.mkdtemp(prefix="scheme-speed-")
    rtslabs = []            # [(layout seed, rtslab)]: rep i runs layout i % K
    for seed, binary in spread:
        copy = os.path.join(tmp, "rtslab-%d" % seed)
        try:
            shutil.copy2(binary, copy)
        except OSError:
            copy = os.path.abspath(binary)
        rtslabs.append((seed, copy))
    rtslab = rtslabs[0][1]  # the untimed runs' and --info's

    impls, missing = [], {}
    for impl in IMPLS:
        exe = rtslab if impl == "rtslab" else shutil.which(impl)
        if exe and os.path.isfile(exe) and os.access(exe, os.X_OK):
            impls.append(impl)
        else:
            missing[impl] = "not found" + (" at %s" % os.path.abspath(args.rtslab)
                                           if impl == "rtslab" else " on PATH")
            print("%s is missing (%s): its column is left empty" % (impl, missing[impl]),
                  file=sys.stderr)

    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    env["GUILE_AUTO_COMPILE"] = "1"
    env.pop("GUILE_LOAD_COMPILED_PATH", None)

    ctx = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "host": platform.node(),
        "cpu": version(["sh", "-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"]),
        "cpus": os.cpu_count(),
        "loadavg_before": open("/proc/loadavg").read().strip(),
        "reps": args.reps,
        "layouts": args.layouts,
        "rtslab": build["binary"] if build else os.path.abspath(args.rtslab),
        "build": build,
        "commands": {impl: " ".join(command(impl, "NAME", "rtslab", rtslab_args))
                     for impl in IMPLS},
        "versions": {
            "rtslab": rtslab_version(rtslab) if "rtslab" in impls else "",
            "lua5.4": version(["lua5.4", "-v"]) if "lua5.4" in impls else "",
            "guile-3.0": version(["guile-3.0", "--version"]) if "guile-3.0" in impls else "",
        },
        "missing": missing,
    }
    print("# scheme-speed: %s, %s (%s CPUs), load %s" % (
        ctx["date"], ctx["cpu"], ctx["cpus"], ctx["loadavg_before"]))
    for impl in impls:
        print("#   %-9s %s   [%s]" % (impl, ctx["commands"][impl], ctx["versions"][impl]))
    if build:
        print("#   " + variant.describe("rtslab", build))

    rows = ([] if args.no_startup else [None]) + progs     # None: the startup row
    runs = {(impl, prog): [] for impl in impls for prog in rows}

    # Untimed first run: checks the output; Guile compiles the program here.
    for prog in rows:
        for impl in impls:
            argv = command(impl, prog, rtslab, rtslab_args)
            wall, cpu, rc, out, err = run_once(argv, env)
            if not check(impl, prog, argv, rc, out, err):
                runs[(impl, prog)] = None

    for rep in range(args.reps):
        for prog in rows:
            for impl in impls:
                if runs[(impl, prog)] is None:
                    continue
                seed, exe = rtslabs[rep % len(rtslabs)]
                argv = command(impl, prog, exe, rtslab_args)
                wall, cpu, rc, out, err = run_once(argv, env)
                if check(impl, prog, argv, rc, out, err):
                    run = {"wall_s": wall, "cpu_s": cpu}
                    if impl == "rtslab":
                        run["layout"] = seed
                    runs[(impl, prog)].append(run)
                if impl == "guile-3.0" and "compiling" in err:
                    print("warning: guile compiled %s during a timed run" % prog,
                          file=sys.stderr)
        print("rep %d/%d done" % (rep + 1, args.reps), file=sys.stderr)
    ctx["loadavg_after"] = open("/proc/loadavg").read().strip()
    shutil.rmtree(tmp, ignore_errors=True)

    def summary(impl, prog, key, f):
        r = runs.get((impl, prog))
        return f([x[key] for x in r]) if r else None

    results = {"context": ctx, "programs": {}}
    tables = []
    k = args.layouts
    if k <= 1:
        spread_said = ("rtslab: one binary was measured, so there is no interval and a "
                       "difference may be a layout artefact")
    elif args.reps % k:
        spread_said = "rtslab: %d runs over %d layouts" % (args.reps, min(k, args.reps))
    else:
        spread_said = "rtslab: %d layouts x %d run(s)" % (k, args.reps // k)
    note = benchstats.design(min(max(k, 1), args.reps), args.reps // min(max(k, 1), args.reps))
    spread_said += ("; " + note if note else "") + "; Lua, Guile: the runs of the installed binary"
    for title, key, f in (("Median wall time (s)", "wall_s", statistics.median),
                          ("Min wall time (s)", "wall_s", min),
                          ("Median CPU time, user+system (s)", "cpu_s", statistics.median)):
        table_rows = []
        for prog in rows:
            t = {impl: summary(impl, prog, key, f) for impl in IMPLS}
            table_rows.append([prog or "startup (empty program)",
                               fmt(t["rtslab"]), fmt(t["lua5.4"]), fmt(t["guile-3.0"]),
                               fmt(ratio(t["rtslab"], t["lua5.4"]), 2),
                               fmt(ratio(t["rtslab"], t["guile-3.0"]), 2)])
        tables.append("### %s, %d runs each (%s)\n\n%s" % (
            title, args.reps, spread_said, md_table(
                ["program", "rtslab", "lua5.4", "guile-3.0", "rtslab/lua", "rtslab/guile"],
                table_rows)))
    table_rows = [[prog or "startup (empty program)"] +
                  [mean_ci(runs.get((other, prog)), runs.get(("rtslab", prog)), key)
                   for key in ("wall_s", "cpu_s") for other in ("lua5.4", "guile-3.0")]
                  for prog in rows]
    tables.append("### The ratios as benchstats' mean ratio [95 %% interval over layouts and "
                  "runs], %d runs each (%s)\n\n%s" % (args.reps, spread_said, md_table(
                      ["program", "wall rtslab/lua", "wall rtslab/guile", "CPU rtslab/lua",
                       "CPU rtslab/guile"], table_rows)))
    for prog in rows:
        results["programs"][prog or "startup"] = {
            impl: {"runs": runs.get((impl, prog)),
                   "median_wall_s": summary(impl, prog, "wall_s", statistics.median),
                   "min_wall_s": summary(impl, prog, "wall_s", min),
                   "median_cpu_s": summary(impl, prog, "cpu_s", statistics.median)}
            for impl in impls}
    results["failures"] = failures

    notes = []
    if missing:
        notes.append("Missing: " + "; ".join("%s (%s)" % kv for kv in missing.items()))
    notes.append("Load average before: %s; after: %s" % (ctx["loadavg_before"],
                                                          ctx["loadavg_after"]))
    text = "\n\n".join(tables + notes)
    print()
    print(text)

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tables.md"), "w") as fh:
        fh.write("# scheme-speed, %s, %s (%s CPUs)\n\n%s%s\n" % (
            ctx["date"], ctx["cpu"], ctx["cpus"],
            variant.describe("rtslab", build) + "\n\n" if build else "", text))
    with open(os.path.join(args.out, "results.json"), "w") as fh:
        json.dump(results, fh, indent=1)
        fh.write("\n")
    if failures:
        print("\n%d failed run(s):\n  %s" % (len(failures), "\n  ".join(failures)),
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
