"""A real Slurm for the tests (Debian 12's slurm-wlm, 22.05): slurmctld and one or two slurmd
started from a slurm.conf of their own in a temporary directory, on ports of their own, with
no munge (AuthType=auth/none), no cgroups (proctrack/linuxproc, task/none) and no
accounting; stopped by PID at the end, always.

    with Cluster(nodes=1) as c:          # c.env: SLURM_CONF for sbatch, squeue, ...
        subprocess.run(["sinfo"], env=c.env)

nodes=2 puts each slurmd in a network namespace of its own (ip netns, a veth pair, an
address of its own, 10.201.K.2, with the controller reachable at 10.201.1.1), so the
controller sees two machines at two addresses, as on a cluster, and spreads a job array's
tasks over both. Both are this machine's cores: no faster.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DAEMONS = ("slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scancel")


def missing():
    """Why a real Slurm cannot run here (a string), or None."""
    for d in DAEMONS:
        if not shutil.which(d) and not os.path.exists(os.path.join("/usr/sbin", d)):
            return f"{d} is not installed (Debian: apt-get install slurm-wlm)"
    if os.geteuid() != 0:
        return "slurmd must run as root here (SlurmUser=root)"
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def sbin(name):
    return shutil.which(name) or os.path.join("/usr/sbin", name)


class Cluster:
    def __init__(self, nodes=1, cpus=None, name="rtslab", hide=None):
        self.nodes = nodes
        self.cpus = cpus or os.cpu_count() or 1
        self.dir = tempfile.mkdtemp(prefix="rtslab-slurm-")
        self.tag = f"{os.getpid() % 100000}"
        self.names = [f"{name}{i + 1}" for i in range(nodes)]
        self.procs = []            # (what, pid)
        self.netns = []
        self.veths = []
        self.env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))
        # a directory the nodes cannot see: slurmd in a mount namespace of its own with an
        # empty tmpfs over it (a shared directory that is not shared)
        self.hide = hide

    # -- setup ---------------------------------------------------------------------------
    def _netns(self):
        """Two network namespaces with veth pairs; returns the controller's address and each
        node's."""
        # a subnet of our own per process: 10.201.<pid-derived>.0/24 pairs
        base = 16 + (os.getpid() % 100) * 2
        addrs = []
        for i, n in enumerate(self.names):
            ns = f"rtslab-{self.tag}-{i}"
            host_if, ns_if = f"rs{self.tag}h{i}", f"rs{self.tag}n{i}"
            sub = f"10.201.{base + i}"
            cmds = [["ip", "netns", "add", ns]]
            self.netns.append(ns)
            cmds += [["ip", "link", "add", host_if, "type", "veth", "peer", "name", ns_if],
                     ["ip", "link", "set", ns_if, "netns", ns],
                     ["ip", "addr", "add", f"{sub}.1/24", "dev", host_if],
                     ["ip", "link", "set", host_if, "up"],
                     ["ip", "netns", "exec", ns, "ip", "addr", "add", f"{sub}.2/24",
                      "dev", ns_if],
                     ["ip", "netns", "exec", ns, "ip", "link", "set", ns_if, "up"],
                     ["ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"],
                     ["ip", "netns", "exec", ns, "ip", "route", "add", "default", "via",
                      f"{sub}.1"]]
            for c in cmds:
                subprocess.run(c, check=True, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
                if c[:3] == ["ip", "link", "add"]:
                    self.veths.append(host_if)
            addrs.append(f"{sub}.2")
        return f"10.201.{base}.1", addrs

    def start(self, timeout=60):
        d = self.dir
        for sub in ("state", "spool", "log"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
        os.chmod(d, 0o755)
        ctl_port, d_port = free_port(), free_port()
        if self.nodes == 1:
            ctl_addr, addrs = "127.0.0.1", ["127.0.0.1"]
        else:
            ctl_addr, addrs = self._netns()
        nodes = "\n".join(
            f"NodeName={n} NodeAddr={a} NodeHostname={socket.gethostname()} CPUs={self.cpus} "
            f"RealMemory=100 State=UNKNOWN" for n, a in zip(self.names, addrs))
        conf = f"""\
ClusterName=rtslabtest{self.tag}
SlurmctldHost={socket.gethostname().split('.')[0]}({ctl_addr})
MailProg=/bin/true
SlurmctldPort={ctl_port}
SlurmdPort={d_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=2
MessageTimeout=5
{nodes}
PartitionName=bench Nodes={','.join(self.names)} Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
"""
        with open(os.path.join(d, "slurm.conf"), "w") as f:
            f.write(conf)
        for n in self.names:
            os.makedirs(os.path.join(d, "spool", n), exist_ok=True)
        self._daemon("slurmctld", [sbin("slurmctld"), "-D", "-i", "-f",
                                   os.path.join(d, "slurm.conf")])
        for i, n in enumerate(self.names):
            cmd = [sbin("slurmd"), "-D", "-N", n, "-f", os.path.join(d, "slurm.conf")]
            if self.hide:
                cmd = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                       'mount -t tmpfs rtslab-hidden "$0" && exec "$@"', self.hide] + cmd
            if self.netns:
                # nsenter, not `ip netns exec`: that one remounts /sys, where slurmd then
                # finds no /sys/fs/cgroup and refuses to start
                cmd = ["nsenter", f"--net=/var/run/netns/{self.netns[i]}"] + cmd
            self._daemon(f"slurmd {n}", cmd)
        self.wait_idle(timeout)
        return self

    def _daemon(self, what, cmd):
        log = open(os.path.join(self.dir, "log", what.replace(" ", "-") + ".out"), "w")
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                             stdin=subprocess.DEVNULL, start_new_session=True)
        log.close()
        self.procs.append((what, p))

    def wait_idle(self, timeout):
        """Until every node is idle (sinfo), or RuntimeError with the daemons' logs."""
        end = time.monotonic() + timeout
        out = ""
        while time.monotonic() < end:
            for what, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{what} exited ({p.returncode}):\n{self.logs()}")
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], env=self.env,
                               capture_output=True, text=True, timeout=30)
            out = r.stdout + r.stderr
            states = dict(l.split() for l in r.stdout.splitlines() if len(l.split()) == 2)
            if r.returncode == 0 and all(states.get(n) == "idle" for n in self.names):
                return
            time.sleep(0.5)
        raise RuntimeError(f"the nodes are not idle after {timeout} s: {out}\n{self.logs()}")

    def logs(self, tail=20):
        text = []
        logdir = os.path.join(self.dir, "log")
        for f in sorted(os.listdir(logdir)):
            with open(os.path.join(logdir, f), errors="replace") as fh:
                lines = fh.read().splitlines()[-tail:]
            text.append(f"--- {f}\n" + "\n".join(lines))
        return "\n".join(text)

    # -- teardown ------------------------------------------------------------------------
    def stop(self):
        # every job first (its tasks are children of slurmstepd, not of our daemons)
        try:
            subprocess.run(["scancel", "--full", "-u", "root"], env=self.env, timeout=15,
                           capture_output=True)
        except (OSError, subprocess.TimeoutExpired):
            pass
        for what, p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except OSError:
                    pass
        for what, p in reversed(self.procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except OSError:
                    pass
                p.wait()
        self._kill_steps()
        for v in self.veths:
            subprocess.run(["ip", "link", "del", v], capture_output=True)
        for ns in self.netns:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        self.procs, self.veths, self.netns = [], [], []

    def _kill_steps(self):
        """slurmstepd processes of this cluster left behind (they outlive slurmd): found by
        their spool directory in /proc/PID/cmdline or environ, killed by PID."""
        me = self.dir.encode()
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if b"SLURM_CONF=" + me in env and int(pid) != os.getpid():
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except OSError:
                    pass

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc):
        self.stop()
        if not exc[0]:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False
