#!/usr/bin/env python3
"""`bench.py --slurm` against a real Slurm (slurmtest.py: slurmctld and slurmd of Debian's
slurm-wlm, started here from a slurm.conf of their own, stopped by PID at the end).

    python3 testsuite/slurm/test_slurm.py --build BUILDDIR [--part one|two|readme]

one (one node):
  1. no sbatch on the PATH: one line naming what to do, exit 2, before any build;
  2. the same matrix (3 programs x 2 configurations x 2 layouts x 1 run, quick size) run
     locally and through Slurm: the same cells, every run's output checked and right, the
     same commands but for the binary's path, the same table's rows and columns, each run's
     node recorded with its CPU model, cores, kernel and lscpu's topology;
  3. a task killed (SIGKILL) mid-run is resubmitted once and the merge is complete;
  4. a shard whose program fails its output check fails the run, naming the program;
  5. a partition that does not exist, a controller that does not answer: one line each;
  6. a -N row beyond the node's cores: the shard refuses, naming the row and what to do;
     the runs.json says what is missing;
  7. --no-wait, then --collect at once (half finished: a partial merge, exit 1, what is
     missing), then Ctrl-C while waiting (exit 130, the job named, what to do).
two: two slurmd in two network namespaces: the shards spread over both nodes, each run
  names its node, the report lists the nodes; Slurm's overhead per task is measured (a
  job array of empty tasks) and printed.
readme: testsuite/bench/README.md's "On a cluster" commands run as given, from scratch,
  against the test's Slurm.
hidden: slurmd in a mount namespace where the shared directory is an empty tmpfs (the
  nodes cannot see it): the task fails, is resubmitted once, and bench.py says what to
  check; the program is missing in runs.json.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTSUITE = os.path.dirname(HERE)
SRC = os.path.dirname(TESTSUITE)
BENCH = os.path.join(TESTSUITE, "bench.py")
sys.path.insert(0, os.path.join(TESTSUITE, "bench"))
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402
import slurmtest  # noqa: E402

PROGRAMS = ["imaginary/tak", "spectral/deriv", "smp/sieve"]
MATRIX = ["-c", "baseline:-N1", "-c", "baseline:-N2", "--layouts", "2", "-k", "1",
          "--metrics", "elapsed", "-p", ",".join(f"^{p}$" for p in PROGRAMS)]


def bench(args, env=None, timeout=240, cwd=None):
    r = subprocess.run([sys.executable, BENCH] + args, capture_output=True, text=True,
                       env=env, timeout=timeout, cwd=cwd)
    return r.returncode, r.stdout, r.stderr


def runs_json(stdout):
    m = re.search(r"raw runs in (\S+)/runs\.json", stdout)
    if not m:
        return None
    with open(os.path.join(m.group(1), "runs.json"), encoding="utf-8") as f:
        return json.load(f)


def table_shape(stdout):
    """The elapsed table's rows (first word) and its header line, values left out."""
    lines = stdout.splitlines()
    try:
        i = next(i for i, l in enumerate(lines) if l.startswith("Elapsed (s;"))
    except StopIteration:
        return None
    block = lines[i:i + 12]
    rows = [l.split()[0] for l in block[4:] if l.strip() and not l.startswith("---")]
    head = " ".join(block[2].split())
    return head, rows


def cells(data):
    return sorted((r["program"], r["config"], r["layout"], r["run"]) for r in data["runs"])


# -- one node --------------------------------------------------------------------------------

def test_no_sbatch(build, tmp):
    empty = os.path.join(tmp, "emptybin")
    os.makedirs(empty, exist_ok=True)
    rc, out, err = bench(["--slurm", "--shared", os.path.join(tmp, "nosbatch"),
                          "--use-build", f"baseline={build}"] + MATRIX,
                         env=dict(os.environ, PATH=empty))
    check(rc == 2 and "`sbatch` is not on the PATH" in err and "login node" in err
          and len(err.strip().splitlines()) == 1,
          f"no sbatch: exit 2, one line saying what to do (rc {rc}): {err}")
    check(not os.path.exists(os.path.join(tmp, "nosbatch")), "no sbatch: nothing prepared")
    # bench_patches.py (make bench-patches) passes the Slurm options to bench.py
    r = subprocess.run([sys.executable, os.path.join(TESTSUITE, "bench_patches.py"),
                        "--slurm", "--shared", os.path.join(tmp, "nosbatch"), "--partition",
                        "p1", "--time", "9:00", "--nodes-max", "3", "--sbatch-arg=--qos=x",
                        "--pool-nodes", "-p", "^imaginary/tak$", "--out",
                        os.path.join(tmp, "patches-out")],
                       capture_output=True, text=True, env=dict(os.environ, PATH=empty),
                       timeout=120)
    line = next((l for l in r.stdout.splitlines() if l.startswith("bench-patches: /")), "")
    if "no patch is written yet" in r.stdout:
        print("  (bench_patches: no patch written in this tree; its pass-through not checked)")
    else:
        passed = ("--slurm", "--pool-nodes", f"--shared={tmp}/nosbatch", "--partition=p1",
                  "--time=9:00", "--nodes-max=3", "--sbatch-arg=--qos=x")
        check(all(a in line.split() for a in passed)
              and "`sbatch` is not on the PATH" in r.stderr and r.returncode == 2
              and "Traceback" not in r.stderr,
              f"bench_patches.py passes the Slurm options to bench.py (rc {r.returncode}):\n"
              f"{line}\n{r.stdout[-800:]}\n{r.stderr[-800:]}")


def test_same_as_local(build, tmp, env):
    rc, out, err = bench(["--use-build", f"baseline={build}", "--out",
                          os.path.join(tmp, "local")] + MATRIX)
    local = runs_json(out)
    check(rc == 0 and local is not None, f"the local matrix runs (rc {rc}): {err[-2000:]}")
    t0 = time.monotonic()
    rc, out2, err2 = bench(["--slurm", "--shared", os.path.join(tmp, "same"), "--use-build",
                            f"baseline={build}", "--out", os.path.join(tmp, "slurm")] + MATRIX,
                           env=env)
    print(f"  the matrix through Slurm: {time.monotonic() - t0:.1f} s")
    remote = runs_json(out2)
    check(rc == 0 and remote is not None,
          f"the matrix through Slurm runs (rc {rc}):\n{out2[-3000:]}\n{err2[-3000:]}")
    if not (local and remote):
        return
    check(len(cells(local)) == 3 * 2 * 2 and cells(local) == cells(remote),
          f"the same 12 cells: {cells(local)} vs {cells(remote)}")
    check(all(r["ok"] for r in remote["runs"]) and all(r["ok"] for r in local["runs"]),
          "every run's output is the expected one, here and on the node: "
          + str([(r["program"], r["why"]) for r in remote["runs"] if not r["ok"]]))
    def command(r):         # but for the binary's path and the -s file's (a temporary)
        return [a for a in r["command"][1:] if not a.startswith("-s/")]
    key = {(r["program"], r["config"], r["layout"], r["run"]): command(r)
           for r in local["runs"]}
    check(all(key[(r["program"], r["config"], r["layout"], r["run"])] == command(r)
              for r in remote["runs"]),
          "the same commands (program, arguments, RTS options) but for the binary's path: "
          f"{[command(r) for r in local['runs'][:2]]} vs "
          f"{[command(r) for r in remote['runs'][:2]]}")
    check(remote["state"] == "finished" and remote["missing"] == [],
          f"merged: finished, nothing missing ({remote['state']}, {remote.get('missing')})")
    check(table_shape(out) is not None and table_shape(out) == table_shape(out2),
          f"the same table's rows and columns:\n{table_shape(out)}\n{table_shape(out2)}")
    node = remote["nodes"].get("rtslab1", {})
    check(all(r.get("node") == "rtslab1" and r.get("cores_available") for r in remote["runs"])
          and node.get("cpu") and node.get("kernel") and node.get("cores_available")
          and node.get("topology", {}).get("cores") and node["topology"].get("lscpu"),
          f"each run names its node; the node's CPU model, cores, kernel, lscpu: {node}")
    check("node rtslab1: " in out2, "the report names the node:\n" + out2[:1500])
    check(all(r.get("node") for r in local["runs"]) and local.get("nodes"),
          "a local run records its node too")


def test_killed_task(build, tmp, env):
    shared = os.path.join(tmp, "killed")
    killed = {}

    def killer():
        # kill task 0's shard (bench.py --shard) with SIGKILL once it is running its runs
        # (it writes its shard file, "running", just before the first)
        path = os.path.join(shared, "shards", "task-0.json")
        end = time.monotonic() + 120
        while time.monotonic() < end and not killed:
            try:
                with open(path) as f:
                    s = json.load(f)
            except (OSError, ValueError):
                time.sleep(0.02)
                continue
            if s.get("state") == "running":
                os.kill(s["pid"], signal.SIGKILL)
                killed["runs"] = len(s["runs"])
                return
            if s.get("state") != "running":
                killed["missed"] = s.get("state")
                return
            time.sleep(0.02)

    th = threading.Thread(target=killer)
    th.start()
    # 5 runs a cell: a second or two of runs to kill the shard in
    rc, out, err = bench(["--slurm", "--shared", shared, "--use-build", f"baseline={build}",
                          "-c", "baseline:-N1", "-c", "baseline:-N2", "-k", "5", "--metrics",
                          "elapsed", "-p", "^imaginary/nfib$,^imaginary/tak$",
                          "--out", os.path.join(tmp, "killed-out")], env=env)
    th.join()
    data = runs_json(out)
    check("runs" in killed, f"task 0 was killed mid-run (after {killed.get('runs')} runs; "
          f"missed: {killed.get('missed')})")
    check(rc == 0 and data is not None, f"the killed task's submission ends well (rc {rc}):"
          f"\n{out[-3000:]}\n{err[-2000:]}")
    check(re.search(r"task\(s\) 0 failed or timed out .*resubmitted once", out) is not None,
          "the runner says task 0 failed and is resubmitted:\n" + out[-2000:])
    if data:
        check(data["state"] == "finished" and not data["missing"]
              and len(data["runs"]) == 2 * 2 * 5 and all(r["ok"] for r in data["runs"]),
              f"the merge is complete: 20 runs, all good ({data['state']}, "
              f"{len(data['runs'])} runs, missing {data['missing']})")
        check(data["slurm"]["tasks"]["0"]["attempts"] == 2
              and data["slurm"]["tasks"]["1"]["attempts"] == 1
              and len(data["slurm"]["jobs"]) == 2,
              f"task 0 ran twice, in a second job: {data['slurm']}")


PROG = """;; {name}: a test program of the Slurm runner
;; quick: 18
;; norm: 19
;; slow: 20
(define n (string->number (cadr (command-line))))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(display (list (fib n) {extra}))
(newline)
"""


def fixture_tree(tmp):
    """A source tree with two programs: t/good, and t/bad, whose output is wrong at -N2."""
    tree = os.path.join(tmp, "tree")
    gdir = os.path.join(tree, "testsuite", "bench", "t")
    os.makedirs(gdir)
    shutil.copy(os.path.join(SRC, "configure.ac"), tree)
    for name, extra in (("good", "'ok"), ("bad", "(num-capabilities)")):
        with open(os.path.join(gdir, name + ".scm"), "w") as f:
            f.write(PROG.format(name=name, extra=extra))
        with open(os.path.join(gdir, name + ".quick.stdout"), "w") as f:
            f.write(f"(2584 {'ok' if name == 'good' else 1})\n")
    return tree


def test_failed_check(build, tmp, env):
    tree = fixture_tree(tmp)
    rc, out, err = bench(["--src", tree, "--slurm", "--shared", os.path.join(tmp, "failing"),
                          "--use-build", f"baseline={build}", "-c", "baseline:-N1", "-c",
                          "baseline:-N2", "-k", "1", "--metrics", "elapsed",
                          "--out", os.path.join(tmp, "failing-out")], env=env)
    check(rc == 1 and re.search(r"run\(s\) FAILED:\n  t/bad \[baseline -N2\] run 1: stdout",
                                out) is not None and "t/good [" not in out,
          f"a shard failing its output check fails the run, naming t/bad (rc {rc}):\n"
          f"{out[-2500:]}\n{err[-1000:]}")
    data = runs_json(out)
    check(data is not None and data["state"] == "finished"
          and len(data["slurm"]["jobs"]) == 1,
          "a failed check is not a failed task: no resubmission, the merge is complete")


def test_bad_input(build, tmp, env, cluster):
    rc, out, err = bench(["--slurm", "--shared", os.path.join(tmp, "nopart"), "--use-build",
                          f"baseline={build}", "--partition", "nosuch"] + MATRIX, env=env)
    check(rc == 2 and "--partition nosuch: Slurm has no such partition (`sinfo -s` lists "
          "them)" in err, f"a partition that does not exist (rc {rc}): {err[-1500:]}")
    # a controller that does not answer: the cluster's slurm.conf with a port nobody holds
    dead = os.path.join(tmp, "dead.conf")
    with open(cluster.env["SLURM_CONF"]) as f:
        conf = f.read()
    with open(dead, "w") as f:
        f.write(re.sub(r"(?m)^SlurmctldPort=\d+", f"SlurmctldPort={slurmtest.free_port()}",
                       conf))
    rc, out, err = bench(["--slurm", "--shared", os.path.join(tmp, "dead"), "--use-build",
                          f"baseline={build}"] + MATRIX, env=dict(env, SLURM_CONF=dead))
    check(rc == 2 and "the Slurm controller does not answer" in err and "scontrol ping" in err,
          f"a controller that does not answer (rc {rc}): {err[-1500:]}")
    # ... and one that stops answering while bench.py waits (benchslurm.wait, its patience
    # cut from 60 s to 1 s)
    sys.path.insert(0, TESTSUITE)
    import benchslurm
    patience = benchslurm.CONTROLLER_PATIENCE, benchslurm.POLL_SECONDS
    benchslurm.CONTROLLER_PATIENCE, benchslurm.POLL_SECONDS = 1.0, 0.2
    try:
        benchslurm.wait(os.path.join(tmp, "gone"), ["7"], 1, lambda m: None,
                        dict(env, SLURM_CONF=dead))
        why = "returned"
    except benchslurm.SlurmError as e:
        why = str(e)
    finally:
        benchslurm.CONTROLLER_PATIENCE, benchslurm.POLL_SECONDS = patience
    check("the Slurm controller has not answered for 1 s" in why and "may still run" in why
          and f"--collect {tmp}/gone" in why,
          f"a controller silent while bench.py waits: what to do: {why}")
    # a row beyond the node's cores
    n = cluster.cpus + 2
    rc, out, err = bench(["--slurm", "--shared", os.path.join(tmp, "cores"), "--use-build",
                          f"baseline={build}", "-c", "baseline:-N1", "-c", f"baseline:-N{n}",
                          "-k", "1", "-p", "^imaginary/tak$", "--metrics", "elapsed",
                          "--out", os.path.join(tmp, "cores-out")], env=env)
    data = runs_json(out)
    check(rc == 1 and f"'baseline -N{n}' asks {n}" in out
          and f"this node has {cluster.cpus} core(s)" in out
          and "submit to nodes with that many cores" in out and "INCOMPLETE" in out,
          f"-N{n} on a {cluster.cpus}-core node: refused, saying what to do (rc {rc}):\n"
          f"{out[-2000:]}\n{err[-1000:]}")
    check(data is not None and data["missing"] == ["imaginary/tak"]
          and data["state"] == "incomplete" and len(data["slurm"]["jobs"]) == 1,
          "the runs.json says what is missing; a refused shard is not resubmitted")


def test_collect_and_interrupt(build, tmp, env):
    shared = os.path.join(tmp, "nowait")
    rc, out, err = bench(["--slurm", "--no-wait", "--shared", shared, "--use-build",
                          f"baseline={build}", "-c", "baseline:-N1", "-k", "3", "-p",
                          "^imaginary/nfib$,^imaginary/tak$", "--metrics", "elapsed"], env=env)
    m = re.search(r"--collect (\S+)` merges", out)
    check(rc == 0 and m and m.group(1) == shared,
          f"--no-wait submits and says how to collect (rc {rc}): {out[-1500:]} {err}")
    rc, out, err = bench(["--collect", shared, "--out", os.path.join(tmp, "half")], env=env)
    data = runs_json(out)
    check(rc == 1 and "still queued or running: this is a partial merge" in out
          and data is not None and data["state"] == "incomplete" and data["missing"],
          f"--collect of a half-finished submission: partial, says so, exit 1 (rc {rc}):\n"
          f"{out[-2000:]}\n{err[-500:]}")
    # Ctrl-C while waiting
    p = subprocess.Popen([sys.executable, BENCH, "--slurm", "--shared",
                          os.path.join(tmp, "ctrlc"), "--use-build", f"baseline={build}",
                          "-c", "baseline:-N1", "-k", "1", "-p", "^imaginary/tak$",
                          "--out", os.path.join(tmp, "ctrlc-out")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    seen = ""
    for line in p.stdout:
        seen += line
        if "slurm: submitted job" in line:
            p.send_signal(signal.SIGINT)
            break
    rest, err = p.communicate(timeout=60)
    job = re.search(r"submitted job (\d+)", seen)
    check(p.returncode == 130 and job and f"`scancel {job.group(1)}` stops them" in err
          and "--collect" in err,
          f"Ctrl-C while waiting: exit 130, the job named, what to do (rc {p.returncode}): "
          f"{err[-1500:]}")
    kept = re.search(r"runs finished so far are in (\S+)/runs\.json", err)
    state = None
    if kept:
        with open(os.path.join(kept.group(1), "runs.json")) as f:
            state = json.load(f).get("state")
    check(state == "interrupted", f"Ctrl-C while waiting: what finished is kept in a "
          f"runs.json, state interrupted ({state}): {err[-800:]}")
    rc, out, err = bench(["--shared", os.path.join(tmp, "x"), "-p", "^imaginary/tak$"])
    check(rc == 2 and "go with --slurm" in err, f"--shared without --slurm: refused: {err}")
    # wait for those jobs to go, and collect the finished submission
    for _ in range(120):
        if not subprocess.run(["squeue", "-h"], env=env, capture_output=True,
                              text=True).stdout.strip():
            break
        time.sleep(0.5)
    rc, out, err = bench(["--collect", shared, "--out", os.path.join(tmp, "whole")], env=env)
    data = runs_json(out)
    check(rc == 0 and data is not None and data["state"] == "finished"
          and len(data["runs"]) == 2 * 3,
          f"--collect once the job is done: the whole matrix (rc {rc}): {out[-1500:]}")


# -- two nodes --------------------------------------------------------------------------------

def test_two_nodes(build, tmp, env, cluster):
    progs = PROGRAMS + ["imaginary/queens"]
    rc, out, err = bench(["--slurm", "--shared", os.path.join(tmp, "two"), "--use-build",
                          f"baseline={build}", "-c", "baseline:-N1", "-c", "baseline:-N2",
                          "-k", "1", "--metrics", "elapsed",
                          "-p", ",".join(f"^{p}$" for p in progs),
                          "--out", os.path.join(tmp, "two-out")], env=env)
    data = runs_json(out)
    check(rc == 0 and data is not None, f"the matrix on two nodes (rc {rc}):\n{out[-2500:]}"
          f"\n{err[-1500:]}")
    if not data:
        return
    used = {r["node"] for r in data["runs"]}
    check(used == {"rtslab1", "rtslab2"}, f"the shards spread over both nodes: {used}")
    per_prog = {}
    for r in data["runs"]:
        per_prog.setdefault(r["program"], set()).add(r["node"])
    check(all(len(v) == 1 for v in per_prog.values()),
          f"every configuration of a program on one node (the node as a block): {per_prog}")
    for n in sorted(used):
        progs_there = sorted(p for p, v in per_prog.items() if n in v)
        check(re.search(rf"^node {n}: .*: {len(progs_there)} program\(s\): "
                        + re.escape(", ".join(progs_there)), out, re.M) is not None,
              f"the report names node {n} and its programs {progs_there}:\n{out[:2000]}")
    # the report refuses to pool nodes of different CPU models, unless --pool-nodes
    runs = os.path.join(tmp, "two-models.json")
    data["nodes"]["rtslab2"] = dict(data["nodes"]["rtslab2"], cpu="Another CPU 9000")
    with open(runs, "w") as f:
        json.dump(data, f)
    rc, out, err = bench(["--report", runs, "--metrics", "elapsed"])
    check(rc == 2 and "nodes of different CPU models" in err and "--pool-nodes" in err,
          f"nodes of two CPU models: refused (rc {rc}): {err}")
    rc, out, err = bench(["--report", runs, "--metrics", "elapsed", "--pool-nodes"])
    check(rc == 0 and "POOLED (--pool-nodes): the runs come from nodes of different CPU "
          "models" in out, f"--pool-nodes: pooled, and said (rc {rc}): {out[:1500]}")
    # Slurm's own overhead per task: an array of empty tasks, at most one at a time
    n = 8
    t0 = time.monotonic()
    r = subprocess.run(["sbatch", "--parsable", f"--array=0-{n - 1}%1", "--exclusive",
                        f"--output={tmp}/empty-%a.out", "--wrap", "true"], env=env,
                       capture_output=True, text=True)
    job = r.stdout.strip()
    while subprocess.run(["squeue", "-h", "-j", job], env=env, capture_output=True,
                         text=True).stdout.strip():
        time.sleep(0.1)
    per = (time.monotonic() - t0) / n
    print(f"  Slurm's overhead per task (an array of {n} empty tasks, one at a time): "
          f"{per:.2f} s")
    check(job.isdigit() and per < 30, f"the empty tasks ran ({r.stderr})")


# -- a shared directory that is not shared ------------------------------------------------

def test_hidden(build, tmp, env, hidden):
    shared = os.path.join(hidden, "shared")
    rc, out, err = bench(["--slurm", "--shared", shared, "--use-build", f"baseline={build}",
                          "-c", "baseline:-N1", "-k", "1", "-p", "^imaginary/tak$",
                          "--metrics", "elapsed", "--out", os.path.join(tmp, "hidden-out")],
                         env=env)
    data = runs_json(out)
    # said at the end, under what is missing (not only when the task is resubmitted)
    check(rc == 1 and re.search(r"^bench: INCOMPLETE: no finished shard for imaginary/tak;.*\n"
                                r"  task 0 wrote no shard and no log: can the nodes read and "
                                rf"write {re.escape(shared)}\?$", out, re.M) is not None,
          f"a shared directory the node cannot see: said, with what to check (rc {rc}):\n"
          f"{out[-2000:]}\n{err[-1000:]}")
    check(data is not None and data["missing"] == ["imaginary/tak"]
          and len(data["slurm"]["jobs"]) == 2,
          "the task was resubmitted once, and runs.json says what is missing")


# -- the README -----------------------------------------------------------------------------

def readme_commands():
    """The commands of README.md's "On a cluster" section: its lines starting with `$ `,
    in order."""
    with open(os.path.join(TESTSUITE, "bench", "README.md"), encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^## On a cluster\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    if not m:
        return None
    return [l[2:] for l in m.group(1).splitlines() if l.startswith("$ ")]


def test_readme(build, tmp, env):
    cmds = readme_commands()
    check(cmds and len(cmds) >= 3, f"README.md's 'On a cluster' has its commands: {cmds}")
    if not cmds:
        return
    # as a new user would: in a tree of their own (a copy of what the commands read: the
    # distributed tree may be read-only, and _bench/ is written in the tree), with SHARED set,
    # the tree's build for `baseline=.`
    tree = os.path.join(tmp, "readme-tree")
    os.makedirs(tree)
    shutil.copy(os.path.join(SRC, "configure.ac"), tree)
    for d in ("testsuite", "tools"):
        shutil.copytree(os.path.join(SRC, d), os.path.join(tree, d), symlinks=True,
                        ignore=shutil.ignore_patterns("*.o", "__pycache__", "_bench"))
    shell_env = dict(env, SHARED=os.path.join(tmp, "readme-shared"))
    os.makedirs(shell_env["SHARED"])
    job = None
    outputs = []
    for c in cmds:
        c = c.replace("baseline=.", f"baseline={shlex.quote(build)}")
        if job:
            c = c.replace("JOB", job)
        if c.startswith("squeue"):
            # the README says: until it lists nothing
            for _ in range(240):
                r = subprocess.run(c, shell=True, env=shell_env, capture_output=True,
                                   text=True, cwd=tree)
                if (r.returncode == 0 and not r.stdout.strip().splitlines()[1:]
                        or "invalid job id" in r.stderr.lower()):
                    break
                time.sleep(0.5)
            outputs.append(r.stdout)
            continue
        r = subprocess.run(c, shell=True, env=shell_env, capture_output=True, text=True,
                           timeout=240, cwd=tree)
        outputs.append(r.stdout)
        check(r.returncode == 0, f"README command ran: {c} (rc {r.returncode}):\n"
              f"{r.stdout[-2000:]}\n{r.stderr[-1500:]}")
        m = re.search(r"submitted job (\d+)", r.stdout)
        if m:
            job = m.group(1)
    check(sum(1 for o in outputs if "Geometric Mean" in o and "node rtslab1:" in o) == 2,
          "the README's commands give two tables (the waited one, the collected one) with "
          "the node named")
    check(any("--collect" in c for c in cmds) and job is not None,
          "the README shows --no-wait and --collect")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--part", choices=("one", "two", "readme", "hidden"), default="one")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    why = slurmtest.missing()
    if why:
        print(f"cannot run: {why}")
        return 1
    tmp = tempfile.mkdtemp(prefix="rtslab-slurm-test-")
    t0 = time.monotonic()
    try:
        if args.part == "one":
            test_no_sbatch(build, tmp)
        hidden = os.path.join(tmp, "hidden")
        os.makedirs(hidden)
        with slurmtest.Cluster(nodes=2 if args.part == "two" else 1,
                               hide=hidden if args.part == "hidden" else None) as cluster:
            print(f"  Slurm up in {time.monotonic() - t0:.1f} s ({cluster.dir})")
            env = cluster.env
            if args.part == "one":
                test_same_as_local(build, tmp, env)
                test_killed_task(build, tmp, env)
                test_failed_check(build, tmp, env)
                test_bad_input(build, tmp, env, cluster)
                test_collect_and_interrupt(build, tmp, env)
            elif args.part == "two":
                test_two_nodes(build, tmp, env, cluster)
            elif args.part == "hidden":
                test_hidden(build, tmp, env, hidden)
            else:
                test_readme(build, tmp, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"  {time.monotonic() - t0:.1f} s")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
