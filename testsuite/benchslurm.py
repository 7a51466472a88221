"""bench.py on a Slurm cluster (`bench.py --slurm`, testsuite/bench/README.md "On a
cluster"): the matrix built here into a shared directory, one job array whose tasks are
shards (one program each, every configuration of it interleaved on one node, the node to
itself), the shards' runs merged into the usual runs.json.

The shared directory (--shared DIR; every node must read and write it):

    plan.json           what to run: the configurations, layouts, programs, one shard per
                        task, the size, runs, timeout, and the runs.json to be (data)
    submission.json     the job ids and each task's attempts (bench.py's, for --collect)
    src/                the runner (testsuite/*.py, tools/{layout,variant}.py) and the
                        programs (testsuite/bench/GROUP/*.scm, their expected outputs)
    bin/V<i>/<seed>/rtslab   each variant's binaries, one per layout
    job.sh              the script every task runs: bench.py --shard DIR --task N
    shards/task-N.json  a shard's runs, its node, its state (running, interrupted,
                        finished, refused), written as they go
    logs/JOB_TASK.out   Slurm's output of each task

Note [The node as a block]
A shard is one program, so every configuration of a program runs on one node, interleaved
as bench.py runs them locally: each comparison of two configurations (a row of the table,
its interval over layouts and runs) is within one node, and the node's own speed cancels
out of it. Only the geometric mean pools programs, so programs from different nodes; that
is sound when the nodes are the same machine (the same CPU model), and the report refuses
nodes of different CPU models unless --pool-nodes, and then says so. The node is not a
third random level above layouts: that would need every program on several nodes and an
interval over a handful of nodes, with as few degrees of freedom; what a cluster gives is
many identical nodes, and blocking on them costs nothing.
"""

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import types

PLAN_VERSION = 1
POLL_SECONDS = 1.0
# squeue failing this long means the controller does not answer
CONTROLLER_PATIENCE = 60.0
SBATCH_TIMEOUT = 120.0


class SlurmError(Exception):
    """A failure to report in one line (and what to do about it)."""


# -- the node ------------------------------------------------------------------------------

def cores_available():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def lscpu_topology():
    """{cpus, cores, sockets, numa_nodes, threads_per_core} and lscpu's parseable lines."""
    try:
        out = subprocess.run(["lscpu", "-p=CPU,CORE,SOCKET,NODE"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    rows = [l.split(",") for l in out.splitlines() if l and not l.startswith("#")]
    if not rows:
        return {}
    cores = {(r[2], r[1]) for r in rows}
    return {"cpus": len(rows), "cores": len(cores), "sockets": len({r[2] for r in rows}),
            "numa_nodes": len({r[3] for r in rows if len(r) > 3}),
            "threads_per_core": len(rows) // max(len(cores), 1),
            "lscpu": out.strip().splitlines()}


def node_info():
    """This node: its name (Slurm's, else the host name), host, CPU model, CPUs, the cores
    this process may run on, the kernel and lscpu's topology."""
    info = {"name": os.environ.get("SLURMD_NODENAME") or platform.node(),
            "host": platform.node(), "cpus": os.cpu_count(),
            "cores_available": cores_available(), "kernel": platform.release()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    info.setdefault("cpu", platform.processor() or "?")
    info["topology"] = lscpu_topology()
    return info


def capabilities_asked(opts):
    """The -N of RTS options OPTS (an int), or None (no -N, or a bare -N: all cores)."""
    n = None
    for o in opts:
        m = re.fullmatch(r"-N(\d+)", o)
        if m:
            n = int(m.group(1))
    return n


def cores_check(configs, cores):
    """Why a node with CORES cores cannot run CONFIGS (a message), or None."""
    short = [(label, capabilities_asked(opts)) for label, _, opts in configs
             if (capabilities_asked(opts) or 0) > cores]
    if not short:
        return None
    rows = ", ".join(f"'{l}' asks {n}" for l, n in short)
    return (f"this node has {cores} core(s) for the task, and {rows}: submit to nodes with "
            f"that many cores (--partition, or --sbatch-arg=--mincpus=N), or drop those rows")


# -- the shared directory ------------------------------------------------------------------

def _ignore_objects(d, names):
    return [n for n in names if n.endswith((".o", ".pyc")) or n == "__pycache__"
            or n.startswith("test_") or n == "perf-fixtures"]


def prepare(shared, src, progs, configs, seeds, binaries, data, size, runs, layouts,
            timeout, no_perf):
    """The shared directory filled: code, programs, binaries, plan.json, job.sh. Returns
    the plan."""
    shared = os.path.abspath(shared)
    if os.path.exists(os.path.join(shared, "plan.json")):
        raise SlurmError(f"--shared {shared} holds a submission already (plan.json): "
                         f"`bench.py --collect {shared}` merges it; give another --shared "
                         f"for a new one")
    try:
        os.makedirs(shared, exist_ok=True)
        for sub in ("shards", "logs", "bin", "src/testsuite", "src/tools"):
            os.makedirs(os.path.join(shared, sub), exist_ok=True)
        here = os.path.dirname(os.path.abspath(__file__))
        for f in os.listdir(here):
            if f.endswith(".py"):
                shutil.copy2(os.path.join(here, f), os.path.join(shared, "src/testsuite", f))
        for f in ("layout.py", "variant.py"):
            shutil.copy2(os.path.join(os.path.dirname(here), "tools", f),
                         os.path.join(shared, "src/tools", f))
        shutil.copytree(os.path.join(src, "testsuite", "bench"),
                        os.path.join(shared, "src/testsuite/bench"), ignore=_ignore_objects,
                        dirs_exist_ok=True)
        bins = {}
        for vi, variant in enumerate(binaries):
            bins[variant] = {}
            for seed, path in binaries[variant].items():
                rel = os.path.join("bin", f"v{vi}", str(seed), "rtslab")
                os.makedirs(os.path.dirname(os.path.join(shared, rel)), exist_ok=True)
                shutil.copy2(path, os.path.join(shared, rel))
                bins[variant][str(seed)] = rel
        plan = {"version": PLAN_VERSION, "size": size, "runs": runs, "layouts": layouts,
                "timeout": timeout, "no_perf": no_perf,
                "configs": [list(c) for c in configs], "seeds": seeds, "binaries": bins,
                "shards": [[p.id] for p in progs], "data": data}
        write_json(os.path.join(shared, "plan.json"), plan)
        script = os.path.join(shared, "job.sh")
        with open(script, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\n# a shard of bench.py --slurm (testsuite/benchslurm.py)\n"
                    f"exec python3 '{shared}/src/testsuite/bench.py' --shard '{shared}' "
                    "--task \"$SLURM_ARRAY_TASK_ID\"\n")
        os.chmod(script, 0o755)
    except OSError as e:
        raise SlurmError(f"--shared {shared}: {e.strerror or e} ({e.filename or ''}): it must "
                         f"be a directory this machine can write and every node can read "
                         f"and write (a shared file system)")
    return plan


def write_json(path, obj):
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=1)
    os.replace(tmp, path)


def read_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return None


def load_plan(shared):
    plan = read_json(os.path.join(shared, "plan.json"))
    if not isinstance(plan, dict) or plan.get("version") != PLAN_VERSION:
        raise SlurmError(f"{shared}: no plan.json of bench.py --slurm there (or an unreadable "
                         f"one): is it the --shared directory of a submission?")
    return plan


def shard_path(shared, task):
    return os.path.join(shared, "shards", f"task-{task}.json")


# -- a shard (on a node) ---------------------------------------------------------------------

def run_shard(shared, task, bench):
    """Task TASK of the submission in SHARED, on this node: its programs' runs, every
    configuration interleaved (bench.run_all), saved as they go. BENCH is bench.py's module
    (its runner, its signals). Returns the exit status."""
    import benchlib
    import oscounters
    plan = load_plan(shared)
    ids = plan["shards"][task]
    src = os.path.join(shared, "src")
    progs = [row for p in benchlib.discover(src) for row in benchlib.per_route(p)]
    progs = [p for i in ids for p in progs if p.id == i]
    configs = [tuple(c) for c in plan["configs"]]
    seeds = {v: s for v, s in plan["seeds"].items()}
    binaries = {v: {int(s): os.path.join(shared, p) for s, p in b.items()}
                for v, b in plan["binaries"].items()}
    node = node_info()
    shard = {"task": task, "programs": ids, "node": node, "pid": os.getpid(),
             "job": os.environ.get("SLURM_ARRAY_JOB_ID"), "state": "running", "runs": []}
    path = shard_path(shared, task)
    why = cores_check(configs, node["cores_available"])
    if why:
        shard.update(state="refused", why=f"node {node['name']}: {why}")
        write_json(path, shard)
        print(f"bench: {shard['why']}", file=sys.stderr)
        return 2
    probe = oscounters.Probe("rusage", why="--no-perf") if plan["no_perf"] else \
        oscounters.probe_perf()
    shard["os_counters"] = probe.describe()
    write_json(path, shard)
    runs, failures = shard["runs"], []
    args = types.SimpleNamespace(runs=plan["runs"], layouts=plan["layouts"],
                                 size=plan["size"])
    try:
        bench.run_all(progs, configs, args, seeds, binaries, plan["timeout"], probe, runs,
                      failures, lambda: write_json(path, shard), node=node)
    except bench.Interrupted as e:
        shard["state"] = "interrupted"
        shard["why"] = f"interrupted by {e}"
        write_json(path, shard)
        return 128 + e.signum
    shard["state"] = "finished"
    write_json(path, shard)
    return 0


# -- submitting and waiting (here) ---------------------------------------------------------

def need(cmd):
    if not shutil.which(cmd):
        raise SlurmError(f"--slurm: `{cmd}` is not on the PATH: run bench.py where Slurm's "
                         f"commands are (a login node of the cluster; Debian: slurm-client), "
                         f"or set PATH")


def sbatch(shared, tasks, opts, env=None):
    """One job array of TASKS (task numbers) in SHARED; its job id."""
    need("sbatch")
    spec = ",".join(str(t) for t in tasks)
    if opts.nodes_max:
        spec += f"%{opts.nodes_max}"
    cmd = ["sbatch", "--parsable", f"--array={spec}", "--exclusive",
           "--job-name=rtslab-bench", f"--output={shared}/logs/%A_%a.out",
           f"--chdir={shared}"]
    if opts.partition:
        cmd.append(f"--partition={opts.partition}")
    if opts.time:
        cmd.append(f"--time={opts.time}")
    cmd += list(opts.sbatch_arg or []) + [os.path.join(shared, "job.sh")]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=SBATCH_TIMEOUT,
                           env=env)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"sbatch did not return in {SBATCH_TIMEOUT:.0f} s: the Slurm "
                         f"controller does not answer (`scontrol ping` says whether it is up)")
    err = r.stderr.strip()
    if r.returncode != 0:
        if "invalid partition" in err.lower():
            raise SlurmError(f"--partition {opts.partition}: Slurm has no such partition "
                             f"(`sinfo -s` lists them): {err}")
        if "unable to contact slurm controller" in err.lower() or "connect" in err.lower():
            raise SlurmError(f"the Slurm controller does not answer ({err}): is slurmctld up "
                             f"(`scontrol ping`)? Is SLURM_CONF the cluster's?")
        raise SlurmError(f"sbatch failed (exit {r.returncode}): {err}\n  command: "
                         f"{' '.join(cmd)}")
    job = r.stdout.strip().split(";")[0]
    if not job.isdigit():
        raise SlurmError(f"sbatch printed no job id: {r.stdout.strip()} {err}")
    return job


def queued(jobs, env=None):
    """The tasks of JOBS still pending or running (squeue), or None if squeue failed (with
    why as the second value)."""
    try:
        r = subprocess.run(["squeue", "-h", "-r", "-j", ",".join(jobs), "-o", "%i %T"],
                           capture_output=True, text=True, timeout=60, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    if r.returncode != 0:
        # a job the controller has forgotten (MinJobAge) is not an error of the controller
        if "invalid job id" in r.stderr.lower():
            return [], None
        return None, r.stderr.strip()
    return [l.split() for l in r.stdout.splitlines() if l.strip()], None


def wait(shared, jobs, ntasks, log, env=None):
    """Until no task of JOBS is queued; progress on LOG. SlurmError if the controller stops
    answering."""
    failing_since, last = None, None
    while True:
        q, why = queued(jobs, env)
        if q is None:
            failing_since = failing_since or time.monotonic()
            if time.monotonic() - failing_since > CONTROLLER_PATIENCE:
                raise SlurmError(f"the Slurm controller has not answered for "
                                 f"{CONTROLLER_PATIENCE:.0f} s (squeue: {why}); the jobs "
                                 f"{','.join(jobs)} may still run: `bench.py --collect "
                                 f"{shared}` merges what they wrote")
        else:
            failing_since = None
            done = sum(1 for t in range(ntasks) if shard_state(shared, t) in FINAL)
            status = (len(q), done)
            if status != last:
                log(f"  slurm: job {','.join(jobs)}: {len(q)} task(s) queued or running, "
                    f"{done} of {ntasks} finished")
                last = status
            if not q:
                return
        time.sleep(POLL_SECONDS)


FINAL = ("finished", "refused")


def shard_state(shared, task):
    s = read_json(shard_path(shared, task))
    return s.get("state") if isinstance(s, dict) else None


def submit_and_wait(shared, plan, opts, log, env=None, interrupted=()):
    """Submit every shard, wait, resubmit the failed ones once, wait; the submission record.
    With opts.no_wait, return after submitting."""
    ntasks = len(plan["shards"])
    sub = {"jobs": [], "attempts": {str(t): 1 for t in range(ntasks)}, "resubmitted": []}
    job = sbatch(shared, range(ntasks), opts, env)
    sub["jobs"].append(job)
    write_json(os.path.join(shared, "submission.json"), sub)
    log(f"  slurm: submitted job {job}: {ntasks} task(s) (one program each), array "
        f"0-{ntasks - 1}{f' at most {opts.nodes_max} at a time' if opts.nodes_max else ''}")
    if opts.no_wait:
        return sub
    wait(shared, sub["jobs"], ntasks, log, env)
    again = [t for t in range(ntasks) if shard_state(shared, t) not in FINAL]
    if again:
        log(f"  slurm: task(s) {','.join(map(str, again))} failed or timed out "
            f"({'; '.join(task_why(shared, sub, t) for t in again)}): resubmitted once")
        job = sbatch(shared, again, opts, env)
        sub["jobs"].append(job)
        sub["resubmitted"] = again
        for t in again:
            sub["attempts"][str(t)] += 1
        write_json(os.path.join(shared, "submission.json"), sub)
        wait(shared, sub["jobs"], ntasks, log, env)
    return sub


def task_why(shared, sub, task):
    """Why task TASK did not finish, in a few words, from its shard file and Slurm's log."""
    s = read_json(shard_path(shared, task))
    if s is None:
        tail = log_tail(shared, sub, task)
        return f"task {task} wrote no shard" + (f" (its log: {tail})" if tail else
                                                 " and no log: can the nodes read and write "
                                                 f"{shared}?")
    return f"task {task} stopped {s.get('state')} on {s['node']['name']}" + (
        f": {s['why']}" if s.get("why") else "")


def log_tail(shared, sub, task):
    for job in reversed(sub.get("jobs", [])):
        p = os.path.join(shared, "logs", f"{job}_{task}.out")
        try:
            with open(p, encoding="utf-8", errors="replace") as f:
                lines = [l.strip() for l in f if l.strip()]
            if lines:
                return lines[-1][:200]
        except OSError:
            continue
    return None


# -- merging -----------------------------------------------------------------------------------

def merge(shared, plan, sub):
    """The runs.json data of the submission: every shard's runs, in the plan's order, the
    nodes, and what is missing (programs whose shard did not finish)."""
    data = dict(plan["data"])
    runs, nodes, missing, tasks = [], {}, [], {}
    for t, ids in enumerate(plan["shards"]):
        s = read_json(shard_path(shared, t))
        state = s.get("state") if isinstance(s, dict) else None
        tasks[str(t)] = {"programs": ids, "state": state or "no shard",
                         "attempts": (sub or {}).get("attempts", {}).get(str(t))}
        if s is None:
            missing += ids
            tasks[str(t)]["why"] = task_why(shared, sub or {}, t)
            continue
        nodes[s["node"]["name"]] = s["node"]
        tasks[str(t)]["node"] = s["node"]["name"]
        runs += s["runs"]
        if state != "finished":
            tasks[str(t)]["why"] = task_why(shared, sub or {}, t)
            missing += ids           # its runs that finished are kept, the program is not
    data["runs"] = runs
    data["nodes"] = nodes
    data["slurm"] = {"shared": shared, "jobs": (sub or {}).get("jobs", []), "tasks": tasks}
    data["missing"] = missing
    data["state"] = "finished" if not missing else "incomplete"
    return data
