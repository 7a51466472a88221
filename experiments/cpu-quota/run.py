#!/usr/bin/env python3
"""cpu-quota: the baseline against the patch at the default -N, in a real cgroup with a CPU
quota, with the benchmark runner.

    sudo python3 experiments/cpu-quota/run.py [--quota 1.0 --quota 0.5] [--size norm]
        [--layouts 5] [-k 1] [-p REGEX]... [--out DIR]

For each quota Q (in CPUs) it makes a cgroup of its own, rtslab-cpu-quota-<pid>, under the
cgroup v1 `cpu` controller's mount (or, without one, under cgroup v2's root with the cpu
controller), sets its quota (v1: cpu.cfs_period_us 100000 and cpu.cfs_quota_us Q * 100000;
v2: cpu.max "Q*100000 100000"), and runs testsuite/bench.py inside it (the runner's process
is moved into the cgroup before it starts, so every run inherits it) with the configurations
baseline:-N and cpu-quota:-N: each build's default -N, which the baseline takes from the CPUs
(2 here) and the patch from the quota (1 for Q <= 1). The runs are interleaved and spread
over code layouts (tools/layout.py; 5 by default, bench.py's independent seeds per build),
so the ratios carry benchstats' 95 % intervals (t over the layout means). The
cgroup's throttling counters (cpu.stat: periods, throttled periods, throttled time) before
and after each quota's runs are printed and kept. The cgroup is removed at the end, whatever
happens. Both builds must exist first (_build/baseline and _build/cpu-quota: `python3
tools/variant.py cpu-quota --enable-cpu-quota && make -C _build/cpu-quota`), so that nothing
is compiled under the quota. Root is needed; run it alone on a quiet machine.
"""
import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PERIOD = 100000
PROGRAMS = ["parallel/parfib", "parallel/nbody", "parallel/partree", "spectral/binary-trees",
            "gc/gcbench"]


def mounts():
    """(v1 cpu mount point, v2 mount point) from /proc/self/mountinfo; None where absent."""
    v1 = v2 = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fields, tail = pre.split(), post.split()
            if len(fields) < 5 or len(tail) < 3:
                continue
            mp = fields[4].encode().decode("unicode_escape")
            if tail[0] == "cgroup" and "cpu" in tail[2].split(",") and v1 is None:
                v1 = mp
            elif tail[0] == "cgroup2" and v2 is None:
                v2 = mp
    return v1, v2


class Cgroup:
    def __init__(self, quota):
        v1, v2 = mounts()
        name = "rtslab-cpu-quota-%d" % os.getpid()
        if v1:
            self.version, self.path = 1, os.path.join(v1, name)
        elif v2 and "cpu" in open(os.path.join(v2, "cgroup.controllers")).read().split():
            self.version, self.path = 2, os.path.join(v2, name)
            with open(os.path.join(v2, "cgroup.subtree_control"), "w") as f:
                f.write("+cpu")
        else:
            sys.exit("cpu-quota: no cgroup v1 cpu controller and no cgroup v2 cpu controller here")
        os.mkdir(self.path)
        q = int(round(quota * PERIOD))
        if self.version == 1:
            self.write("cpu.cfs_period_us", str(PERIOD))
            self.write("cpu.cfs_quota_us", str(q))
        else:
            self.write("cpu.max", "%d %d" % (q, PERIOD))

    def write(self, name, value):
        with open(os.path.join(self.path, name), "w") as f:
            f.write(value)

    def stat(self):
        out = {}
        with open(os.path.join(self.path, "cpu.stat")) as f:
            for line in f:
                k, v = line.split()
                out[k] = int(v)
        return out

    def enter(self):
        """For preexec_fn: moves the calling (child) process into the cgroup."""
        self.write("cgroup.procs", str(os.getpid()))

    def remove(self):
        parent = os.path.dirname(self.path)
        for _ in range(50):
            try:
                os.rmdir(self.path)
                return
            except OSError:
                try:
                    for pid in open(os.path.join(self.path, "cgroup.procs")).read().split():
                        with open(os.path.join(parent, "cgroup.procs"), "w") as f:
                            f.write(pid)
                except OSError:
                    pass
                time.sleep(0.1)
        print("cpu-quota: warning: could not remove %s" % self.path, file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quota", type=float, action="append", help="CPUs (repeat); default 1.0, 0.5")
    ap.add_argument("--size", default="norm", choices=["quick", "norm", "slow"])
    ap.add_argument("--layouts", default="5",
                    help="code layouts of each build (default 5; fewer than 3 is a screen)")
    ap.add_argument("-k", "--runs", default="1", help="runs per layout (default 1)")
    ap.add_argument("-p", "--programs", action="append", default=[])
    ap.add_argument("--metrics", default="elapsed,cpu,gc,maxpause,gcs,stw,syncs")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("cpu-quota: making a cgroup needs root")
    builds = {v: os.path.join(ROOT, "_build", v) for v in ("baseline", "cpu-quota")}
    for v, d in builds.items():
        if not os.path.exists(os.path.join(d, "rtslab")):
            sys.exit("cpu-quota: build %s first (%s/rtslab)" % (v, d))
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    for quota in a.quota or [1.0, 0.5]:
        out = os.path.join(a.out, "%s-quota-%.2f" % (stamp, quota))
        cmd = [sys.executable, os.path.join(ROOT, "testsuite", "bench.py"), "--src", ROOT,
               "--size", a.size, "--layouts", a.layouts, "-k", a.runs, "--metrics", a.metrics,
               "--out", out, "-c", "baseline:-N", "-c", "cpu-quota:-N"]
        for v, d in builds.items():
            cmd += ["--use-build", "%s=%s" % (v, d)]
        for p in a.programs or PROGRAMS:
            cmd += ["-p", p]
        cg = Cgroup(quota)
        try:
            print("== quota %.2f CPUs: cgroup v%d %s" % (quota, cg.version, cg.path), flush=True)
            print(" ".join(cmd), flush=True)
            before = cg.stat()
            rc = subprocess.call(cmd, preexec_fn=cg.enter)
            after = cg.stat()
        finally:
            cg.remove()
        delta = {k: after[k] - before.get(k, 0) for k in after}
        line = ("cgroup cpu.stat over the runs (both builds): " +
                ", ".join("%s %d" % (k, v) for k, v in sorted(delta.items())))
        print(line, flush=True)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "cgroup.txt"), "w") as f:
            f.write("quota %.2f CPUs (period %d us), cgroup v%d\n%s\n" % (quota, PERIOD,
                                                                        cg.version, line))
        if rc != 0:
            sys.exit("cpu-quota: the benchmark runner failed (exit %d) under quota %.2f" % (rc, quota))


if __name__ == "__main__":
    main()
