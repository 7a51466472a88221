#!/usr/bin/env python3
"""rtslab's benchmark runner: builds variant runtimes out of tree, runs the nofib-style suite
in testsuite/bench/ over configurations (variant x RTS options), checks every output, and
prints a nofib-analyse-style comparison (testsuite/benchlib.py says how to read it).

    python3 testsuite/bench.py [-c VARIANT[:RTSOPT,...]]... [--size quick|norm|slow]
                               [--runs R] [--layouts K] [-p REGEX]... [--metrics LIST]
                               [--out DIR] [--plan HALFWIDTH] [--perf | --no-perf]
    python3 testsuite/bench.py --report _bench/latest/runs.json [--metrics LIST]   # or .json.gz

With --layouts K every variant is linked K ways (tools/layout.py, Note [Code layout as a
factor]) and each program runs R times on each layout, so that where the code lands is a
level of random repetition: every % change, of a time or a counter, comes with its 95 %
interval over layouts and runs (testsuite/benchstats.py: t over the layout means), and
--plan says how many layouts and runs a precision needs. With K < 3 a figure is a screen
(marked ?): nothing is called moved or not; one layout has no interval at all; a claim
wants K >= 5. testsuite/bench/README.md, "The method", explains it.

A configuration is a variant and RTS options: `baseline:-N4` runs the baseline build at -N4,
`all-patches:-N4,-A64m` the all-patches build at -N4 -A64m. The first configuration is the
one the others are compared against. Variants:

    baseline        configure with no patch
    all-patches     configure --enable-all-patches
    PATCH           configure --enable-PATCH, for each patch in configure.ac's table
    NAME=FLAGS      configure FLAGS (a comma-separated list), e.g.
                    'nodebug=--disable-debug'   (define once, then use NAME)
    VARIANT@REV     any of the above built from git revision REV (a tag, branch or commit,
                    e.g. 'baseline@v0.1:-N2', 'all-patches@HEAD:-N2', 'NAME@my-branch'):
                    REV is checked out in a git worktree, SRC/_build/rev-<commit>/, and the
                    variant is built there; the report records the exact commit of every
                    configuration. Without @REV a variant is built from the working tree.
                    (tools/variant.py does this, for the experiments' runners too.)

Each variant is configured and built (only the `rtslab` binary) in SRC/_build/VARIANT/;
it is reconfigured when its flags change and rebuilt incrementally every time.
--use-build VARIANT=DIR uses an existing build directory instead (no build step).

Each program runs R times in every configuration (on each layout), interleaved (run 1 of
every configuration on layout 1, on layout 2, ..., then run 2, ...), so that slow drift of a
shared machine spreads evenly.
Runs go one at a time. A run fails if it exits non-zero, times out, or prints anything but
the program's expected output for the size; failed runs are reported and kept out of the
table, and the exit status is then 1.

The raw runs, every statistic of `-s --machine-readable` plus the runner's own wall clock,
the child's rusage, the OS's counters (testsuite/oscounters.py: perf stat where it may count,
with instructions and cycles where the machine has hardware counters, else rusage), the
layout seed and the environment padding, go to OUT/<date>-<size>/runs.json and runs.csv,
with the table in table.txt; OUT/latest points at the newest. --perf prints the OS
counters' tables (context switches, CPU migrations, ...) instead of the default set.

A server (testsuite/bench/io/, a `;; load:` line in its header) runs under load instead:
wrk drives each of its paths (one table row each, GROUP/NAME:PATH) on 127.0.0.1 for the
size's duration and connections (benchlib.LOAD), and the tables rps, p50 and p99 show what
wrk measured. A run fails if wrk saw a socket error or a non-2xx answer. Without wrk (Debian's package wrk)
the servers are left out, and the runner says so. (The child's user and system CPU come from
RUSAGE_CHILDREN deltas; its memory, from the runtime's own max_mem_in_use_bytes.)

On a Slurm cluster, `--slurm --shared DIR` builds here into DIR (which every node must
read and write), submits one job array whose tasks are the programs (each runs every
configuration of its program interleaved, on one node given to it whole), waits (or
--no-wait, then --collect DIR), resubmits a failed or timed-out task once and merges the
tasks' runs into the usual runs.json; --partition, --time, --nodes-max and --sbatch-arg
pass to sbatch (testsuite/benchslurm.py; testsuite/bench/README.md, "On a cluster"). Every
run records its node (name, CPU model, cores, kernel, lscpu's topology: "nodes" in
runs.json) and the cores it had; a node is a block (each program on one node), and the
report refuses runs of nodes with different CPU models unless --pool-nodes.

runs.json is written as the runs go (after each program, and every SAVE_EVERY seconds
within one), each time to a temporary file renamed over it, with "state": "running". Ctrl-C
(SIGINT) or SIGTERM stops the runner cleanly: the run in progress is killed and dropped,
its temporary files are removed, runs.json, runs.csv and table.txt keep every finished run
("state": "interrupted"; --report prints their table), and the exit status is 130 (143 for
SIGTERM) with one line on stderr. Bad arguments (a -p that is not a regular expression,
--timeout not above 0, --layouts above LAYOUTS_MAX, a --report that is missing or not a
runs.json) are one line on stderr and exit status 2.
"""

import argparse
import csv
import datetime
import json
import math
import os
import platform
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import benchslurm  # noqa: E402
import benchstats  # noqa: E402
import oscounters  # noqa: E402
import serverload  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import layout as layout_tool  # noqa: E402  (tools/layout.py: seeded code layouts)
import variant as variant_tool  # noqa: E402  (tools/variant.py: out-of-tree variant builds)

DEFAULT_CONFIGS = ["baseline:-N1", "baseline:-N2", "baseline:-N4"]
TIMEOUT = {"quick": 60.0, "norm": 300.0, "slow": 1800.0}
# --layouts at most: each layout is a linked copy of every variant's rtslab (about 2 MB) and
# multiplies every program's runs; benchstats.plan never asks for more than 40, a claim wants
# 5 (benchstats.CLAIM_LAYOUTS), and the seeds of variant i are 1000 i + 1..K, which must not
# reach the next variant's.
LAYOUTS_MAX = 64
# runs.json is saved after each program and, within a long one, at most this often (seconds):
# each save writes every run so far.
SAVE_EVERY = 10.0


class Interrupted(Exception):
    """SIGINT (Ctrl-C) or SIGTERM arrived; signum says which."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# Note [Stopping between fork and Popen]
# A signal whose handler raises while subprocess.Popen() is starting a child (after the fork,
# before Popen returns) leaves that child running with nobody holding it: the runner cannot
# kill what it has no Popen of (seen: a run's rtslab left running, reparented to init, by a
# Ctrl-C as it started). So while a run's process starts, the handler only notes the signal
# (deferred), and the runner raises it once it holds the process (raise_pending), which it
# then kills (abandon).
_signal = {"defer": False, "pending": None}


def on_signal(signum, frame):
    # the first signal stops the runner; one more (a second Ctrl-C) must not break the
    # cleaning up and saving that follow
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if _signal["defer"]:
        _signal["pending"] = signum
        return
    raise Interrupted(signum)


def raise_pending():
    if _signal["pending"] is not None:
        signum, _signal["pending"] = _signal["pending"], None
        raise Interrupted(signum)


def start_process(start, *args, **kw):
    """START(*ARGS, **KW) (subprocess.Popen, serverload.Server) with SIGINT and SIGTERM
    deferred until it returns (Note [Stopping between fork and Popen]); the caller calls
    raise_pending() once it holds what it returned."""
    _signal["defer"] = True
    try:
        return start(*args, **kw)
    finally:
        _signal["defer"] = False


def usage_error(msg):
    """A bad argument: one line on stderr, exit status 2 (as argparse's)."""
    print(f"bench: {msg}", file=sys.stderr)
    sys.exit(2)


def parse_configs(specs, src):
    """[(label, variant, rts_opts)] and {variant: configure flags}; a variant built from a
    git revision is named VARIANT@REV and has the flags of VARIANT."""
    flags = variant_tool.variant_flags(src)
    configs = []
    for spec in specs:
        head, _, rts = spec.partition(":")
        if "=" in head:                             # NAME=FLAGS[:RTS]
            variant, _, fl = head.partition("=")
            flags[variant] = [f for f in fl.split(",") if f]
        else:
            variant = head
        base, at, rev = variant.partition("@")
        if at and not rev:
            sys.exit(f"bench: '{spec}': no revision after '@'")
        if base not in flags:
            sys.exit(f"bench: unknown variant '{base}' (known: "
                     f"{', '.join(sorted(flags))}; or define one as NAME=FLAGS)")
        if at:
            flags[variant] = flags[base]
        opts = [o for o in rts.split(",") if o]
        for o in opts:
            if not o.startswith("-"):
                sys.exit(f"bench: RTS option '{o}' in '{spec}' does not start with '-'")
        label = " ".join([variant] + opts)
        if any(c[0] == label for c in configs):
            sys.exit(f"bench: configuration '{label}' given twice")
        configs.append((label, variant, opts))
    used = {c[1] for c in configs}
    return configs, {v: f for v, f in flags.items() if v in used}


def build_variant(src, variant, flags, jobs, log):
    """SRC/_build/VARIANT configured with FLAGS (tools/variant.py: again only when they
    changed) and its `rtslab` built; returns the build directory."""
    try:
        return variant_tool.build(src, variant, flags, jobs=jobs, log=log)
    except variant_tool.VariantError as e:
        sys.exit(f"bench: {e}")


def revision_tree(src, rev, log):
    """A git worktree of revision REV of SRC's repository, in SRC/_build/rev-<commit>/:
    (its directory, the full commit) (tools/variant.py, Note [Naming a build])."""
    try:
        return variant_tool.revision_tree(src, rev, log)
    except variant_tool.VariantError as e:
        sys.exit(f"bench: {e}")


rtslab_info = variant_tool.rtslab_info


# Note [The environment's size as a run-level factor]
# Where the process stack starts depends on the size of the environment (Mytkowicz et al.,
# ASPLOS 2009, saw 0-300 % swings from it), so a runner whose environment never changes fixes
# one draw of that factor for every run. Each run gets RTSLAB_BENCH_PAD, 0-4095 bytes drawn
# from (program, round), the same for every configuration of a round: the factor varies
# between runs like the others and is recorded with each run (env_pad).
ENV_PAD_MAX = 4096


def env_pad(prog_id, round_no):
    return random.Random(f"{prog_id}/{round_no}").randrange(ENV_PAD_MAX)


def prepare_run(binary, prog, size, opts, pad=0):
    """A run's statistics file (the runtime writes -s there), command and environment."""
    with tempfile.NamedTemporaryFile(prefix="rtslab-bench-", suffix=".stats",
                                     delete=False) as tf:
        stats_path = tf.name
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    env["RTSLAB_BENCH_PAD"] = "x" * pad
    return stats_path, benchlib.command(binary, prog, size, opts, stats_path), env


def run_once(binary, prog, size, opts, timeout, pad=0, counters="rusage"):
    """One run: a dict with ok, why, wall, rusage and the parsed statistics, with the OS's
    counters (oscounters) among them."""
    if prog.route:
        return run_server_once(binary, prog, size, opts, timeout, pad)
    stats_path, cmd, env = prepare_run(binary, prog, size, opts, pad)
    p, read_counters = None, None
    try:
        argv, read_counters = oscounters.wrap(counters, cmd)
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # A session of its own, so that a timeout kills the runtime under perf too (and a
        # terminal's Ctrl-C reaches the runner only, which kills it: abandon()).
        p = start_process(subprocess.Popen, argv, cwd=os.path.dirname(prog.path), env=env,
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, start_new_session=True)
        raise_pending()
        try:
            out, err = p.communicate(timeout=timeout)
            status, why = p.returncode, None
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            status, why = None, f"timed out after {timeout:.0f} s"
    except BaseException:
        abandon(p, stats_path, read_counters)
        raise
    timing = (time.perf_counter() - start, before, resource.getrusage(resource.RUSAGE_CHILDREN))
    return finish_run(prog, size, cmd, stats_path, status,
                      out.decode("utf-8", errors="replace"), why, timing,
                      err.decode("utf-8", errors="replace").splitlines(),
                      read_counters=read_counters)


def abandon(p, stats_path, read_counters=None):
    """A run given up (Ctrl-C, SIGTERM, an error): its process group killed and reaped, its
    statistics file and perf's output file removed."""
    if p is not None:
        if p.poll() is None:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
        p.wait()
        for f in (p.stdout, p.stderr):
            if f:
                f.close()
    try:
        os.unlink(stats_path)
    except FileNotFoundError:
        pass
    if read_counters is not None:
        now = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            read_counters(oscounters.rusage_delta(now, now))   # reads and removes perf's file
        except Exception:
            pass


def finish_run(prog, size, cmd, stats_path, status, out, why, timing, stderr_lines, load=None,
               read_counters=None):
    """A run's record: its -s statistics (the file removed), the checks a run must pass
    (exit 0, the expected output, statistics written), the OS's counters, and wrk's figures
    for a server."""
    wall, before, after = timing
    try:
        with open(stats_path, encoding="utf-8", errors="replace") as f:
            stats = benchlib.parse_machine_readable(f.read())
    finally:
        os.unlink(stats_path)
    read_counters = read_counters or oscounters.wrap("rusage", cmd)[1]
    stats.update(read_counters(oscounters.rusage_delta(before, after)))
    if why is None and status != 0:
        why = f"exit status {status}"
    if why is None:
        with open(prog.expected_path(size), encoding="utf-8") as f:
            expected = f.read()
        if out != expected:
            why = "stdout " + benchlib.first_difference(expected, out)
    if why is None and "total_wall_seconds" not in stats:
        why = "no statistics from -s --machine-readable"
    run = {
        "ok": why is None, "why": why, "exit": status,
        "command": cmd, "wall_seconds": wall,
        "user_seconds": after.ru_utime - before.ru_utime,
        "sys_seconds": after.ru_stime - before.ru_stime,
        "stderr_tail": stderr_lines[-10:] if why else [],
        "stats": stats,
    }
    if load is not None:
        for key in ("requests", "requests_per_second", "errors"):
            if key in load:
                stats[f"load_{key}"] = float(load[key])
        for key in ("latency_p50", "latency_p99", "latency_avg", "latency_max"):
            if key in load:
                stats[f"load_{key}_seconds"] = load[key]
        run.update(load_command=load.get("command"), load_output=load.get("text"))
    return run


def run_server_once(binary, prog, size, opts, timeout, pad=0):
    """One run of a server (benchlib's `load:`): start it, drive prog.route with wrk for the
    size's LOAD, stop it with SIGTERM; its statistics gain wrk's figures as load_* keys. Its
    OS counters come from rusage (perf is not put between the server and its SIGTERM)."""
    seconds, connections = benchlib.LOAD[size]
    stats_path, cmd, env = prepare_run(binary, prog, size, opts, pad)
    why, status, out, load, srv = None, None, "", {}, None
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        # (a server says it listens within moments; a Ctrl-C meanwhile waits for that)
        srv = start_process(serverload.Server, cmd, cwd=os.path.dirname(prog.path), env=env)
        raise_pending()
        load = serverload.wrk(srv.url(prog.route), connections, seconds,
                              timeout_s=min(timeout, seconds + 60))
        if load["errors"]:
            why = f"wrk saw errors: {load['error_detail']}"
        status, out = srv.stop()
    except (serverload.ServerError, ValueError, OSError, subprocess.TimeoutExpired) as e:
        why = str(e)
        if srv:
            srv.kill()
    except BaseException:
        if srv:
            srv.kill()
        abandon(None, stats_path)
        raise
    timing = (time.perf_counter() - start, before, resource.getrusage(resource.RUSAGE_CHILDREN))
    return finish_run(prog, size, cmd, stats_path, status, out, why, timing,
                      srv.stderr_lines if srv else [], load)


def machine():
    info = {"host": platform.node(), "system": platform.platform(),
            "cpus": os.cpu_count(), "python": platform.python_version()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["memory"] = f.readline().split(":", 1)[1].strip()
    except OSError:
        pass
    return info


def git_commit(src):
    commit, modified = variant_tool.tree_revision(src)
    return commit + ("+dirty" if modified else "") if commit else None


def replace_file(path, write, **open_args):
    """PATH written by WRITE(file) into a temporary file beside it, then renamed over it: a
    reader (or a runner stopped half way) sees the old file or the new, never part of one."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix="." + os.path.basename(path),
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", **open_args) as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_runs(outdir, data):
    """runs.json only (as the runs go), and OUTDIR/../latest."""
    os.makedirs(outdir, exist_ok=True)
    replace_file(os.path.join(outdir, "runs.json"), lambda f: json.dump(data, f, indent=1))
    point_latest(outdir)


def point_latest(outdir):
    latest = os.path.join(os.path.dirname(outdir), "latest")
    tmp = latest + ".%d.tmp" % os.getpid()
    try:
        if os.path.islink(latest) and os.readlink(latest) == os.path.basename(outdir):
            return
        os.symlink(os.path.basename(outdir), tmp)
        os.replace(tmp, latest)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def write_outputs(outdir, data, table_lines):
    save_runs(outdir, data)
    keys = sorted({k for r in data["runs"] for k in r["stats"]})

    def write_csv(f):
        w = csv.writer(f)
        w.writerow(["program", "config", "variant", "rts", "size", "run", "ok", "why",
                    "wall_seconds", "user_seconds", "sys_seconds"] + keys)
        for r in data["runs"]:
            w.writerow([r["program"], r["config"], r["variant"], " ".join(r["rts"]),
                        data["size"], r["run"], int(r["ok"]), r["why"] or "",
                        f"{r['wall_seconds']:.6f}", f"{r['user_seconds']:.6f}",
                        f"{r['sys_seconds']:.6f}"]
                       + [r["stats"].get(k, "") for k in keys])
    replace_file(os.path.join(outdir, "runs.csv"), write_csv, newline="")
    replace_file(os.path.join(outdir, "table.txt"),
                 lambda f: f.write("\n".join(table_lines) + "\n"))


class NodesError(Exception):
    """Runs the report will not pool (Note [The node as a block] in benchslurm.py)."""


def node_lines(data, pool_nodes):
    """The report's lines on the nodes: which node ran which programs, with its CPU model
    and cores. NodesError for nodes of different CPU models (unless POOL_NODES), or a
    program whose configurations ran on different nodes (its comparisons would not be
    within one node)."""
    nodes = data.get("nodes") or {}
    ran = {}
    for r in data["runs"]:
        if r.get("node"):
            ran.setdefault(r["node"], [])
            if r["program"] not in ran[r["node"]]:
                ran[r["node"]].append(r["program"])
    if not ran:
        return []
    models = {}
    for n in ran:
        models.setdefault(nodes.get(n, {}).get("cpu", "?"), []).append(n)
    split = {}
    for n, progs in ran.items():
        for p in progs:
            split.setdefault(p, []).append(n)
    split = {p: ns for p, ns in split.items() if len(ns) > 1}
    out = []
    if len(ran) > 1 or data.get("slurm"):
        for n in sorted(ran):
            info = nodes.get(n, {})
            out.append(f"node {n}: {info.get('cpu', '?')}, {info.get('cores_available', '?')} "
                       f"cores, kernel {info.get('kernel', '?')}: {len(ran[n])} program(s): "
                       f"{', '.join(ran[n])}")
    problems = []
    if len(models) > 1:
        problems.append("the runs come from nodes of different CPU models ("
                        + "; ".join(f"{m}: {', '.join(sorted(ns))}" for m, ns in models.items())
                        + ")")
    if split:
        problems.append("program(s) ran on more than one node ("
                        + "; ".join(f"{p}: {', '.join(ns)}" for p, ns in split.items()) + ")")
    if problems and not pool_nodes:
        raise NodesError(" and ".join(problems) + ": a comparison is made within one node "
                         "and the geometric mean pools one machine; run on nodes of one model "
                         "(--partition), or give --pool-nodes to pool them anyway")
    if problems:
        out.append("POOLED (--pool-nodes): " + " and ".join(problems) + "; the figures mix "
                   "machines")
    return out


def print_report(data, metrics, pool_nodes=False):
    progs = []
    for r in data["runs"]:
        if r["program"] not in progs:
            progs.append(r["program"])
    configs = [c["label"] for c in data["configs"]]
    how = (f"{data['layouts']} layouts x {data['runs_per_layout']} run(s)"
           if data.get("layouts") else "one layout (the build's rtslab)")
    note = benchstats.design(data.get("layouts") or 1,
                             data.get("runs_per_layout") or data["runs_per_config"])
    head = [f"rtslab nofib-style suite: size {data['size']}, {data['runs_per_config']} "
            f"run(s) per configuration ({how}), {data['date']}",
            f"{'submitted from' if data.get('slurm') else 'machine'}: "
            f"{data['machine'].get('cpu', '?')}, {data['machine'].get('cpus')} CPUs; "
            f"commit {data.get('commit') or '?'}"]
    if data.get("state") in ("running", "interrupted"):
        head.append(f"{data['state'].upper()}: {len(data['runs'])} of "
                    f"{data.get('runs_planned', '?')} runs finished")
    if data.get("missing"):
        head.append(f"INCOMPLETE: no finished shard for {', '.join(data['missing'])}")
    head += node_lines(data, pool_nodes)
    if note:
        head.append(f"design: {note}")
    if data.get("os_counters_tool"):
        head.append(f"OS counters: {data['os_counters_tool']}")
    revs = {c["label"]: c.get("revision") for c in data["configs"]}
    if any(r and r != data.get("commit") for r in revs.values()):
        head += [f"  {label}: built from {rev}" for label, rev in revs.items()]
    head.append("")
    return head + benchlib.report(data["runs"], progs, configs, metrics)


def plan_report(data, target, link_seconds):
    """--plan: from the pilot's runs, the layouts x runs per layout that reach a geometric
    mean of elapsed time within +-TARGET for each configuration against the first, cheapest
    first (benchstats.plan), with what that costs in time on this machine. Servers run for
    a fixed time and are left out."""
    runs = data["runs"]
    labels = [c["label"] for c in data["configs"]]
    progs = []
    for r in runs:
        if r["program"] not in progs and ":" not in r["program"]:
            progs.append(r["program"])
    el = benchlib.METRICS["elapsed"]
    out = [f"Plan: layouts (K) and runs per layout (R) for a geometric mean of elapsed time "
           f"within +-{target * 100:g}% (95%),",
           f"from a pilot of {data['layouts']} layouts x {data['runs_per_layout']} runs; a "
           f"layout costs {link_seconds:.1f} s to link; the time is for one pair of "
           f"configurations.", ""]
    for other in labels[1:]:
        pilots, secs = {}, {}
        for p in progs:
            a = benchlib.sample(runs, p, labels[0], el)
            b = benchlib.sample(runs, p, other, el)
            if a and b:
                pilots[p], secs[p] = (a, b), (benchstats.mean(a), benchstats.mean(b))
        if not pilots:
            out.append(f"{labels[0]} vs {other}: no program ran in both")
            continue
        now, _ = benchstats.predict(pilots, data["layouts"], data["runs_per_layout"])
        out.append(f"{labels[0]} vs {other}: the pilot's own half-width {now * 100:.1f}%")
        choices = benchstats.plan(pilots, target, secs, link_seconds)
        if not choices:
            out.append("  no K <= 40, R <= 40 reaches it: the programs vary too much "
                       "(look at the clusters and layout spreads above)")
        for c in choices[:6]:
            w = c["worst_program"]
            out.append(f"  K={c['k']:2} R={c['r']:2}  +-{c['halfwidth'] * 100:.1f}%  "
                       f"{c['seconds'] / 60:6.1f} min  (widest: {w[0]} +-{w[1] * 100:.1f}%)")
        out.append("")
    return out


def main():
    ap = argparse.ArgumentParser(
        description="Run rtslab's nofib-style benchmark suite and compare configurations.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                    help="the source tree (default: this script's)")
    ap.add_argument("-c", "--config", action="append", metavar="VARIANT[:OPT,...]",
                    help=f"a configuration; repeat (default: {' '.join(DEFAULT_CONFIGS)})")
    ap.add_argument("--size", choices=benchlib.SIZES, default="quick")
    ap.add_argument("-k", "--runs", type=int, default=None,
                    help="runs per configuration (3); with --layouts, runs per layout")
    ap.add_argument("--layouts", type=int, default=None, metavar="K",
                    help="link every variant K ways (tools/layout.py, seeds 1..K; a later "
                         "variant's seeds are 1001.., 2001..) and spread its runs over them; "
                         "0 (the default) runs the build's own rtslab, one layout, with no "
                         "interval; K < 3 is a screen that calls nothing moved; K >= 5 for "
                         "a claim")
    ap.add_argument("--plan", type=float, default=None, metavar="HALFWIDTH",
                    help="a pilot (--layouts, default 3, x --runs, default 2) then the layouts "
                         "and runs that reach a geometric mean within +-HALFWIDTH (e.g. 0.02) "
                         "for each configuration against the first, and how long they take")
    ap.add_argument("--perf", action="store_true",
                    help="print the OS counters' tables: elapsed, then task clock, context "
                         "switches, CPU migrations, page faults, and instructions and cycles "
                         "where the machine has hardware counters (perf stat; getrusage where "
                         "perf may not count, which has no migrations); with --metrics, "
                         "after those tables")
    ap.add_argument("--no-perf", action="store_true",
                    help="take the OS counters from rusage even where perf could count")
    ap.add_argument("-p", "--programs", action="append", metavar="REGEX",
                    help="only programs whose GROUP/NAME matches; repeat or comma-separate")
    ap.add_argument("--metrics", default=None,
                    help="tables to print, from: " + ", ".join(benchlib.METRICS))
    ap.add_argument("--out", default=None, help="where results go (default SRC/_bench)")
    ap.add_argument("--use-build", action="append", default=[], metavar="VARIANT=DIR",
                    help="use the rtslab already built in DIR for VARIANT")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2,
                    help="parallel make jobs when building variants")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds before a run is killed (default by size: "
                         + ", ".join(f"{k} {v:.0f}" for k, v in TIMEOUT.items()) + ")")
    ap.add_argument("--list", action="store_true", help="list the programs and their sizes")
    ap.add_argument("--report", metavar="RUNS.json",
                    help="print the table of saved runs (runs.json or runs.json.gz)")
    ap.add_argument("--pool-nodes", action="store_true",
                    help="pool runs from nodes of different CPU models in the report (refused "
                         "without it; the report then says so)")
    sl = ap.add_argument_group("on a Slurm cluster (testsuite/bench/README.md, On a cluster)")
    sl.add_argument("--slurm", action="store_true",
                    help="build here into --shared DIR, run the programs as one sbatch job "
                         "array (a task per program, every configuration on one node), wait, "
                         "resubmit failed tasks once, merge the shards into runs.json")
    sl.add_argument("--shared", metavar="DIR",
                    help="with --slurm: a new directory every node can read and write")
    sl.add_argument("--no-wait", action="store_true",
                    help="with --slurm: submit and return; --collect DIR merges later")
    sl.add_argument("--collect", metavar="DIR",
                    help="merge the shards of the submission in DIR (--shared) and report")
    sl.add_argument("--partition", help="sbatch --partition")
    sl.add_argument("--time", help="sbatch --time, per task (e.g. 30:00)")
    sl.add_argument("--nodes-max", type=int, default=None, metavar="N",
                    help="at most N tasks (so nodes) at a time (sbatch --array=...%%N)")
    sl.add_argument("--sbatch-arg", action="append", default=[], metavar="ARG",
                    help="one more argument for sbatch (repeat), e.g. --sbatch-arg=--qos=long")
    sl.add_argument("--shard", metavar="DIR", help=argparse.SUPPRESS)
    sl.add_argument("--task", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.shard:
        if args.task is None:
            usage_error("--shard wants --task N (a task runs it: $SLURM_ARRAY_TASK_ID)")
        try:
            return benchslurm.run_shard(os.path.abspath(args.shard), args.task,
                                        sys.modules[__name__])
        except benchslurm.SlurmError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 2
    if args.slurm and not args.shared:
        usage_error("--slurm wants --shared DIR: a directory every node can read and write")
    if (args.no_wait or args.shared or args.partition or args.time or args.nodes_max
            or args.sbatch_arg) and not args.slurm:
        usage_error("--shared, --no-wait, --partition, --time, --nodes-max and --sbatch-arg "
                    "go with --slurm")
    if args.nodes_max is not None and args.nodes_max < 1:
        usage_error("--nodes-max must be at least 1")
    if args.slurm:
        try:
            benchslurm.need("sbatch")
            benchslurm.need("squeue")
        except benchslurm.SlurmError as e:
            usage_error(str(e))
    src = os.path.abspath(args.src)
    patterns = [p for spec in (args.programs or []) for p in spec.split(",") if p]
    for p in patterns:
        try:
            re.compile(p)
        except re.error as e:
            usage_error(f"-p {p!r} is not a regular expression: {e}")
    if args.timeout is not None and not (args.timeout > 0 and math.isfinite(args.timeout)):
        usage_error(f"--timeout wants a positive number of seconds, not {args.timeout:g}")
    if args.perf and args.no_perf:
        ap.error("--perf and --no-perf contradict each other")
    if args.metrics is None:
        metrics = list(benchlib.PERF_METRICS if args.perf else benchlib.DEFAULT_METRICS)
    else:
        metrics = [m for m in args.metrics.split(",") if m]
        if args.perf:
            metrics += [m for m in benchlib.OS_METRICS if m not in metrics]
    for m in metrics:
        if m not in benchlib.METRICS:
            ap.error(f"unknown metric '{m}' (known: {', '.join(benchlib.METRICS)})")

    if args.report:
        try:
            with benchlib.open_text(args.report) as f:          # runs.json or runs.json.gz
                data = json.load(f)
        except (OSError, EOFError) as e:
            usage_error(f"--report {args.report}: {e.strerror or e}")
        except (ValueError, UnicodeDecodeError) as e:      # json.JSONDecodeError is a ValueError
            usage_error(f"--report {args.report}: not JSON ({e})")
        if not (isinstance(data, dict) and isinstance(data.get("runs"), list)
                and isinstance(data.get("configs"), list)):
            usage_error(f"--report {args.report}: not a runs.json of bench.py (no list of "
                        f"runs and configurations)")
        try:
            lines = print_report(data, metrics, args.pool_nodes)
        except NodesError as e:
            usage_error(f"--report {args.report}: {e}")
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as e:
            usage_error(f"--report {args.report}: a runs.json of bench.py that cannot be read "
                        f"({type(e).__name__}: {e})")
        print("\n".join(lines))
        return 0

    if args.collect:
        return collect(os.path.abspath(args.collect), args, src, metrics)
    try:
        progs = [row for p in benchlib.discover(src) for row in benchlib.per_route(p)]
    except benchlib.HeaderError as e:
        sys.exit(f"bench: {e}")
    progs = benchlib.select(progs, patterns)
    if not progs:
        sys.exit("bench: no program matches " + ", ".join(patterns))
    servers = [p.id for p in progs if p.route]
    if servers and not serverload.have_wrk() and not args.list:
        print(f"bench: wrk is not installed (Debian: apt-get install wrk), so the servers "
              f"are left out: {', '.join(servers)}")
        progs = [p for p in progs if not p.route]
        if not progs:
            sys.exit("bench: nothing left to run")
    if args.list:
        for p in progs:
            print(f"{p.id:24} quick: {' '.join(p.args['quick']):14} norm: "
                  f"{' '.join(p.args['norm']):14} slow: {' '.join(p.args['slow']):14} "
                  f"{' '.join(p.rts)}")
        return 0
    if args.plan is not None:
        if not 0 < args.plan < 1:
            ap.error("--plan wants a relative half-width between 0 and 1, e.g. 0.02")
        args.layouts = 3 if args.layouts is None else args.layouts
        args.runs = 2 if args.runs is None else args.runs
        if args.layouts < 2:
            ap.error("--plan needs a pilot of at least 2 layouts (--layouts): one layout "
                     "cannot show how much layouts vary")
        if len(args.config or DEFAULT_CONFIGS) < 2:
            ap.error("--plan compares configurations: give at least two (-c)")
    args.layouts = args.layouts or 0
    args.runs = 3 if args.runs is None else args.runs
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.layouts < 0:
        ap.error("--layouts must be 0 or more")
    for p in progs:
        if not os.path.exists(p.expected_path(args.size)):
            sys.exit(f"bench: {p.id} has no expected output {p.expected_path(args.size)}")

    configs, variant_flags = parse_configs(args.config or DEFAULT_CONFIGS, src)
    use = {}
    for spec in args.use_build:
        v, _, d = spec.partition("=")
        if not d:
            ap.error(f"--use-build wants VARIANT=DIR, got '{spec}'")
        use[v] = os.path.abspath(d)
    if args.layouts > LAYOUTS_MAX:
        usage_error(too_many_layouts(args, src, progs, configs, variant_flags, use))

    def log(msg):
        print(msg, flush=True)

    per = f"{args.layouts} layout(s) x {args.runs} run(s)" if args.layouts else f"{args.runs} run(s)"
    log(f"bench: {len(progs)} programs, size {args.size}, {per} x "
        f"{len(configs)} configuration(s): {'; '.join(c[0] for c in configs)}")
    binaries, infos, revisions, seeds = {}, {}, {}, {}
    link_seconds = 1.0
    for vi, (variant, flags) in enumerate(variant_flags.items()):
        base, at, rev = variant.partition("@")
        if variant in use:
            bdir = use[variant]
            log(f"  {variant}: using the build in {bdir}")
        elif at:
            tree, revisions[variant] = revision_tree(src, rev, log)
            bdir = build_variant(tree, base, flags, args.jobs, log)
        else:
            bdir = build_variant(src, variant, flags, args.jobs, log)
        rtslab = os.path.join(bdir, "rtslab")
        if not os.access(rtslab, os.X_OK):
            sys.exit(f"bench: no rtslab binary in {bdir}")
        infos[variant] = rtslab_info(rtslab)
        if args.layouts:
            seeds[variant] = [1000 * vi + j for j in range(1, args.layouts + 1)]
            t0 = time.perf_counter()
            try:
                binaries[variant] = layout_tool.binaries(bdir, seeds[variant])
            except layout_tool.LayoutError as e:
                sys.exit(f"bench: {variant}: {e}")
            link_seconds = (time.perf_counter() - t0) / args.layouts
            log(f"  {variant}: layouts {seeds[variant][0]}..{seeds[variant][-1]} in "
                f"{bdir}/layouts/")
        else:
            seeds[variant] = [0]
            binaries[variant] = {0: rtslab}
    probe = oscounters.Probe("rusage", why="--no-perf") if args.no_perf else \
        oscounters.probe_perf()
    counters = probe.tool
    log(f"  OS counters from {probe.describe()}")
    if args.perf and counters != "perf":
        log("  bench: --perf: perf stat cannot count here, so the tables show getrusage's "
            "task clock, context switches and page faults, and no CPU migrations")

    timeout = args.timeout or TIMEOUT[args.size]
    runs, failures = [], []
    start = time.time()
    nlayouts = max(args.layouts, 1)
    data = {
        "size": args.size, "runs_per_config": args.runs * nlayouts,
        "layouts": args.layouts, "runs_per_layout": args.runs, "os_counters": counters,
        "os_counters_tool": probe.describe(), "os_counters_events": list(probe.events),
        "layout_seeds": seeds,
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": machine(), "commit": git_commit(src),
        "configs": [{"label": l, "variant": v, "rts": o, "configure": variant_flags[v],
                     "revision": revisions.get(v) or git_commit(src)}
                    for l, v, o in configs],
        "rtslab_info": infos,
        "programs": [{"id": p.id, "args": p.args[args.size], "rts": p.rts} for p in progs],
        "state": "running", "runs_planned": len(progs) * args.runs * nlayouts * len(configs),
        "runs": runs,
    }
    # The runs are saved as they go (an hour of runs must survive a report that fails, a
    # Ctrl-C, a crash; bench.py --report rereads them).
    outdir = out_dir(args, src)
    if args.slurm:
        return slurm(args, src, progs, configs, seeds, binaries, timeout, data, metrics,
                     outdir, start)
    node = benchslurm.node_info()
    data["nodes"] = {node["name"]: node}
    short = benchslurm.cores_check(configs, node["cores_available"])
    if short:
        log(f"  bench: note: {short.replace('this node', 'this machine', 1)} (runs beyond "
            f"the cores are recorded as such: cores_available in runs.json)")
    try:
        run_all(progs, configs, args, seeds, binaries, timeout, probe, runs, failures,
                lambda: save_runs(outdir, data), node=node)
    except Interrupted as e:
        data["state"] = "interrupted"
        write_outputs(outdir, data, [f"(interrupted by {e}: {len(runs)} of "
                                     f"{data['runs_planned']} runs finished; bench.py --report "
                                     f"{os.path.join(outdir, 'runs.json')} prints their table)"])
        print(flush=True)                                  # ends the progress line
        print(f"bench: interrupted ({e}) after {len(runs)} of {data['runs_planned']} runs; "
              f"they are in {outdir}/runs.json", file=sys.stderr, flush=True)
        return 128 + e.signum
    elapsed = time.time() - start
    data["state"] = "finished"
    return finish(data, outdir, metrics, args, failures, elapsed, link_seconds)


def out_dir(args, src):
    out = args.out or os.path.join(src, "_bench")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return os.path.join(out, f"{stamp}-{args.size}")


def finish(data, outdir, metrics, args, failures, elapsed, link_seconds=1.0):
    """runs.json, runs.csv and table.txt written, the table printed, the failed runs listed;
    the exit status."""
    runs = data["runs"]
    write_outputs(outdir, data, ["(the report was not made)"])
    try:
        table_lines = print_report(data, metrics, args.pool_nodes)
    except NodesError as e:
        print(f"bench: {e}; the runs are in {outdir}/runs.json", file=sys.stderr)
        return 2
    if args.plan is not None:
        table_lines += plan_report(data, args.plan, link_seconds)
    print()
    print("\n".join(table_lines))
    write_outputs(outdir, data, table_lines)
    print(f"bench: {len(runs)} runs in {elapsed:.0f} s; raw runs in {outdir}/runs.json and "
          f"runs.csv, the table in table.txt")
    status = 0
    if data.get("missing"):
        print(f"bench: INCOMPLETE: no finished shard for {', '.join(data['missing'])}; "
              f"runs.json keeps the runs that finished and lists what is missing")
        for t, info in sorted(data.get("slurm", {}).get("tasks", {}).items(),
                              key=lambda kv: int(kv[0])):
            if info.get("why"):
                print(f"  {info['why']}")
        status = 1
    if failures:
        print(f"bench: {len(failures)} run(s) FAILED:")
        for r in failures:
            print(f"  {r['program']} [{r['config']}] run {r['run']}: {r['why']}")
            print(f"    command: {' '.join(shlex.quote(c) for c in r['command'])}")
            for l in r["stderr_tail"]:
                print(f"    | {l}")
        return 1
    return status


def slurm(args, src, progs, configs, seeds, binaries, timeout, data, metrics, outdir, start):
    """--slurm: the shared directory filled, the job array submitted, waited for (a failed
    task resubmitted once), the shards merged and reported (testsuite/benchslurm.py)."""
    def log(msg):
        print(msg, flush=True)
    shared = os.path.abspath(args.shared)
    data = dict(data, runs=[])
    plan = None
    try:
        plan = benchslurm.prepare(shared, src, progs, configs, seeds, binaries, data,
                                  args.size, args.runs, args.layouts, timeout, args.no_perf)
        log(f"  slurm: the matrix is in {shared} (plan.json, bin/, src/, job.sh)")
        sub = benchslurm.submit_and_wait(shared, plan, args, log)
    except benchslurm.SlurmError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    except Interrupted as e:
        sub = benchslurm.read_json(os.path.join(shared, "submission.json")) or {}
        jobs = ",".join(sub.get("jobs", [])) or "(none)"
        print(f"\nbench: interrupted ({e}) while waiting: the job(s) {jobs} keep running on "
              f"the cluster (`scancel {jobs}` stops them); `bench.py --collect {shared}` "
              f"merges what they write", file=sys.stderr, flush=True)
        if sub and plan:
            merged = benchslurm.merge(shared, plan, sub)
            merged["state"] = "interrupted"
            write_outputs(outdir, merged, ["(interrupted while waiting for Slurm)"])
            print(f"bench: the {len(merged['runs'])} runs finished so far are in "
                  f"{outdir}/runs.json", file=sys.stderr)
        return 128 + e.signum
    if args.no_wait:
        print(f"bench: submitted; `bench.py --collect {shared}` merges the runs once the "
              f"job(s) {','.join(sub['jobs'])} are done (squeue -j {','.join(sub['jobs'])})")
        return 0
    merged = benchslurm.merge(shared, plan, sub)
    failures = [r for r in merged["runs"] if not r["ok"]]
    return finish(merged, outdir, metrics, args, failures, time.time() - start)


def collect(shared, args, src, metrics):
    """--collect DIR: the shards of a submission merged and reported; a submission still
    queued or running is merged as far as it got (runs.json says what is missing)."""
    try:
        plan = benchslurm.load_plan(shared)
    except benchslurm.SlurmError as e:
        usage_error(str(e))
    sub = benchslurm.read_json(os.path.join(shared, "submission.json")) or {}
    args.size = plan["size"]
    still = None
    if sub.get("jobs") and shutil.which("squeue"):
        q, why = benchslurm.queued(sub["jobs"])
        if q is None:
            print(f"bench: squeue does not answer ({why}); merging what is there")
        elif q:
            still = len(q)
    merged = benchslurm.merge(shared, plan, sub)
    if still:
        merged["state"] = "incomplete"
        print(f"bench: {still} task(s) of job(s) {','.join(sub['jobs'])} are still queued or "
              f"running: this is a partial merge; --collect {shared} again once squeue -j "
              f"{','.join(sub['jobs'])} is empty")
    failures = [r for r in merged["runs"] if not r["ok"]]
    status = finish(merged, out_dir(args, src), metrics, args, failures, 0.0)
    return status or (1 if still else 0)


def run_all(progs, configs, args, seeds, binaries, timeout, probe, runs, failures, save,
            node=None):
    """Every run, interleaved, appended to RUNS (and the failed to FAILURES) as it ends;
    SAVE() after each program and at most every SAVE_EVERY seconds within one. Each run
    records NODE's name (benchslurm.node_info()) and the cores the runner had there."""
    nlayouts = max(args.layouts, 1)
    saved = time.monotonic()
    for i, prog in enumerate(progs, 1):
        line = f"[{i:2}/{len(progs)}] {prog.id:24}"
        print(line, end="", flush=True)
        per_config = {c[0]: [] for c in configs}
        # Interleaved: every configuration's run of a round and layout, then the next layout,
        # then the next round, so drift spreads over all of them.
        for k, j in ((k, j) for k in range(1, args.runs + 1) for j in range(nlayouts)):
            pad = env_pad(prog.id, (k - 1) * nlayouts + j)
            for label, variant, opts in configs:
                seed = seeds[variant][j]
                raise_pending()
                r = run_once(binaries[variant][seed], prog, args.size, opts, timeout, pad,
                             probe)
                r.update(program=prog.id, config=label, variant=variant, rts=opts, run=k,
                         layout=seed, env_pad=pad)
                if node:
                    r.update(node=node["name"], cores_available=node["cores_available"])
                runs.append(r)
                if r["ok"]:
                    per_config[label].append(r["stats"]["load_requests_per_second"]
                                             if prog.route else
                                             r["stats"]["total_wall_seconds"])
                else:
                    failures.append(r)
                if time.monotonic() - saved >= SAVE_EVERY:
                    save()
                    saved = time.monotonic()
                print("." if r["ok"] else "F", end="", flush=True)
        save()
        saved = time.monotonic()
        unit = "{:.0f} req/s" if prog.route else "{:.3f}s"
        summary = "  ".join(
            unit.format(sorted(v)[len(v) // 2]) if v else "FAIL" for v in per_config.values())
        print(f"  {summary}", flush=True)


def too_many_layouts(args, src, progs, configs, variant_flags, use):
    """Why --layouts K above LAYOUTS_MAX is refused: the copies it would link, their size
    (an existing build's rtslab, where there is one), and the runs."""
    k = args.layouts
    size = None
    for v in variant_flags:
        for d in (use.get(v), os.path.join(src, "_build", v), src):
            if d and os.path.isfile(os.path.join(d, "rtslab")):
                size = os.path.getsize(os.path.join(d, "rtslab"))
                break
        if size:
            break
    copies = k * len(variant_flags)
    disk = (f" ({size / 1e6:.1f} MB each: {copies * size / 1e9:.1f} GB)" if size else "")
    nruns = len(progs) * len(configs) * k * args.runs
    return (f"--layouts {k}: at most {LAYOUTS_MAX}. It would link {copies} copies of rtslab"
            f"{disk} and make {nruns} runs ({k} x {args.runs} per program and configuration); "
            f"5 layouts make a claim, --plan never asks for more than 40")


def entry():
    """main(), with SIGINT and SIGTERM turned into Interrupted: the run loop saves the runs
    (main); anywhere else (a build, the report) the runner stops with one line."""
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    try:
        return main()
    except Interrupted as e:
        print(f"\nbench: interrupted ({e})", file=sys.stderr, flush=True)
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(entry())
