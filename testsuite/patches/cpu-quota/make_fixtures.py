#!/usr/bin/env python3
"""The cgroup fixture trees of testsuite/patches/cpu-quota/TESTS, made at test time, and the
exact output test_cpu_quota must print on each.

Each fixture is a directory laid out like the root of a Linux machine, holding only what
runtime/os/cpu_quota.c reads: proc/self/mountinfo (where the cgroup hierarchies are mounted),
proc/self/cgroup (where this process is in each) and the cgroup files under sys/fs/cgroup
(v2: cpu.max; v1: cpu.cfs_quota_us and cpu.cfs_period_us), with the contents a real kernel
would show, or, for the cases about bad input, would not. The trees are not committed (150
data files, one line of them 27,000 characters long, are no patch to review by mail): each
test writes its tree in a scratch directory and runs the reader on it.

    make_fixtures.py --run NAME PROGRAM [ARG...]   # PROGRAM ARG... DIR, DIR holding NAME's tree
    make_fixtures.py --out DIR                     # every tree, as DIR/NAME, to look at

--run passes PROGRAM's output on, and fails (exit 1, both outputs on stderr) unless it is
exactly the output expected of the case.

Every case names its expected result: the hierarchy, quota, period and file that hold, or
None (no limit). The expected outputs are derived from that here, not from a run of the
reader. A directory standing where a file should be holds a README.
"""
import os
import shutil
import subprocess
import sys
import tempfile


# mountinfo lines every machine has: the root file system, /proc, /sys and the tmpfs that a
# v1 or hybrid host mounts its controllers under.
BASE_MOUNTS = [
    "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro",
    "23 22 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw",
    "24 22 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw",
]
TMPFS = "31 23 0:28 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755"
# An overlay mount (a container's root) whose line is longer than the reader's line buffer
# (3 * PATH_MAX): it must be skipped whole, and the lines after it still read.
LONG_OVERLAY = ("25 22 0:50 / /var/lib/docker/overlay2/merged rw,relatime - overlay overlay "
                "rw,lowerdir="
                + ":".join(f"/var/lib/docker/overlay2/l/LAYER{i:05d}ABCDEFGHIJKLMNOP"
                           for i in range(500))
                + ",upperdir=/var/lib/docker/overlay2/u,workdir=/var/lib/docker/overlay2/w")


def v2_mount(mount_point="/sys/fs/cgroup", root="/", mid=30):
    return (f"{mid} 23 0:27 {root} {mount_point} rw,nosuid,nodev,noexec,relatime "
            f"shared:{mid - 20} - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot")


def v1_mount(mount_point, superopts, root="/", mid=32):
    return (f"{mid} 31 0:{mid - 3} {root} {mount_point} rw,nosuid,nodev,noexec,relatime "
            f"shared:{mid - 20} - cgroup cgroup rw,{superopts}")


# This machine's layout (systemd's hybrid one): v1 controllers under /sys/fs/cgroup/NAME, the
# v2 tree with no controller at /sys/fs/cgroup/unified.
def hybrid_mounts():
    return BASE_MOUNTS + [TMPFS] + [
        v1_mount("/sys/fs/cgroup/cpu", "cpu", mid=32),
        v1_mount("/sys/fs/cgroup/cpuacct", "cpuacct", mid=33),
        v1_mount("/sys/fs/cgroup/cpuset", "cpuset", mid=34),
        v1_mount("/sys/fs/cgroup/memory", "memory", mid=35),
        v1_mount("/sys/fs/cgroup/pids", "pids", mid=39),
        v1_mount("/sys/fs/cgroup/systemd", "xattr,name=systemd", mid=40),
        v2_mount("/sys/fs/cgroup/unified", mid=41),
    ]


def hybrid_cgroup(path):
    return (f"9:name=systemd:{path}\n8:pids:{path}\n4:memory:{path}\n3:cpuset:/\n"
            f"2:cpuacct:{path}\n1:cpu:{path}\n0::{path}\n")


def v1_files(d, quota, period="100000"):
    return {f"{d}/cpu.cfs_quota_us": quota + "\n", f"{d}/cpu.cfs_period_us": period + "\n"}


V2_ONLY = BASE_MOUNTS + [v2_mount()]
V1_ONLY = BASE_MOUNTS + [TMPFS, v1_mount("/sys/fs/cgroup/cpu", "cpu"),
                         v1_mount("/sys/fs/cgroup/memory", "memory", mid=35)]
G = "sys/fs/cgroup"

# name: (what it shows, mountinfo lines or None (no file), proc/self/cgroup, {file: contents},
#        expected (version, quota, period, file) or None)
CASES = {
    "v2_quota": (
        "cgroup v2 only: the parent slice allows 2.5 CPUs, the process's own cgroup no limit",
        V2_ONLY, "0::/rtslab.slice/job.scope\n",
        {f"{G}/cpu.max": "max 100000\n",      # not at the root of a real host, but harmless
         f"{G}/rtslab.slice/cpu.max": "250000 100000\n",
         f"{G}/rtslab.slice/job.scope/cpu.max": "max 100000\n"},
        (2, 250000, 100000, "/sys/fs/cgroup/rtslab.slice/cpu.max")),
    "v2_max": (
        "cgroup v2 only, \"max\" at every level: no limit",
        V2_ONLY, "0::/rtslab.slice/job.scope\n",
        {f"{G}/rtslab.slice/cpu.max": "max 100000\n",
         f"{G}/rtslab.slice/job.scope/cpu.max": "max 100000\n"},
        None),
    "v2_parent_lower": (
        "cgroup v2, nested: the grandparent allows 1 CPU, the parent 4, the child 3",
        V2_ONLY, "0::/a.slice/b.slice/job.scope\n",
        {f"{G}/a.slice/cpu.max": "100000 100000\n",
         f"{G}/a.slice/b.slice/cpu.max": "400000 100000\n",
         f"{G}/a.slice/b.slice/job.scope/cpu.max": "300000 100000\n"},
        (2, 100000, 100000, "/sys/fs/cgroup/a.slice/cpu.max")),
    "v2_child_lower": (
        "cgroup v2, nested: the child allows 1.5 CPUs, its parents 4 (another period) and "
        "none",
        V2_ONLY, "0::/a.slice/b.slice/job.scope\n",
        {f"{G}/a.slice/cpu.max": "max 100000\n",
         f"{G}/a.slice/b.slice/cpu.max": "800000 200000\n",
         f"{G}/a.slice/b.slice/job.scope/cpu.max": "150000 100000\n"},
        (2, 150000, 100000, "/sys/fs/cgroup/a.slice/b.slice/job.scope/cpu.max")),
    "v2_huge": (
        "cgroup v2, quotas and periods near 2^63 whose ratios differ by about 1e-38: the "
        "comparison must be exact and not overflow (the parent's is the lower)",
        V2_ONLY, "0::/a/b\n",
        {f"{G}/a/cpu.max": "9223372036854775807 9223372036854775806\n",
         f"{G}/a/b/cpu.max": "9223372036854775806 9223372036854775805\n"},
        (2, 9223372036854775807, 9223372036854775806, "/sys/fs/cgroup/a/cpu.max")),
    "v1_quota": (
        "cgroup v1 only: cpu at /sys/fs/cgroup/cpu, 50000/100000 (0.5 CPU) on the process's "
        "cgroup, -1 at the root",
        V1_ONLY, "4:memory:/x\n3:cpu:/x\n",
        {**v1_files(f"{G}/cpu", "-1"), **v1_files(f"{G}/cpu/x", "50000")},
        (1, 50000, 100000, "/sys/fs/cgroup/cpu/x/cpu.cfs_quota_us")),
    "v1_unlimited": (
        "cgroup v1 only, -1 at every level: no limit",
        V1_ONLY, "4:memory:/x\n3:cpu:/x\n",
        {**v1_files(f"{G}/cpu", "-1"), **v1_files(f"{G}/cpu/x", "-1")},
        None),
    "v1_cpu_cpuacct": (
        "cgroup v1 with cpu and cpuacct on one hierarchy (\"cpu,cpuacct\", mounted at "
        "/sys/fs/cgroup/cpu,cpuacct); the cpuacct-only and cpuset mounts beside it hold "
        "files that must not be read",
        BASE_MOUNTS + [TMPFS, v1_mount("/sys/fs/cgroup/cpu,cpuacct", "cpu,cpuacct"),
                       v1_mount("/sys/fs/cgroup/cpuacct-only", "cpuacct", mid=33),
                       v1_mount("/sys/fs/cgroup/cpuset", "cpuset", mid=34)],
        "5:cpuset:/user.slice\n3:cpuacct:/user.slice\n2:cpu,cpuacct:/user.slice\n",
        {**v1_files(f"{G}/cpu,cpuacct/user.slice", "250000"),
         **v1_files(f"{G}/cpuacct-only/user.slice", "10000"),
         **v1_files(f"{G}/cpuset/user.slice", "10000")},
        (1, 250000, 100000, "/sys/fs/cgroup/cpu,cpuacct/user.slice/cpu.cfs_quota_us")),
    "v1_no_cpu": (
        "cgroup v1 with cpuacct and cpuset but no cpu controller: their files are not read",
        BASE_MOUNTS + [TMPFS, v1_mount("/sys/fs/cgroup/cpuacct", "cpuacct", mid=33),
                       v1_mount("/sys/fs/cgroup/cpuset", "cpuset", mid=34)],
        "3:cpuacct:/x\n2:cpuset:/x\n",
        {**v1_files(f"{G}/cpuacct/x", "10000"), **v1_files(f"{G}/cpuset/x", "10000")},
        None),
    "hybrid": (
        "a hybrid host like the one this was written on: v1 cpu at /sys/fs/cgroup/cpu with "
        "1.5 CPUs, the v2 tree at /sys/fs/cgroup/unified without cpu.max; a cpuacct mount "
        "holding a lower (trap) quota; optional fields and a long overlay line in mountinfo",
        BASE_MOUNTS[:1] + [LONG_OVERLAY] + hybrid_mounts()[1:], hybrid_cgroup("/job.slice"),
        {**v1_files(f"{G}/cpu", "-1"), **v1_files(f"{G}/cpu/job.slice", "150000"),
         **v1_files(f"{G}/cpuacct/job.slice", "10000"),
         f"{G}/unified/job.slice/cgroup.procs": "1\n"},
        (1, 150000, 100000, "/sys/fs/cgroup/cpu/job.slice/cpu.cfs_quota_us")),
    "hybrid_v2_lower": (
        "hybrid, both hierarchies limit: v1 3 CPUs, v2 (unified) 1.2 CPUs; the lower wins",
        hybrid_mounts(), hybrid_cgroup("/job.slice"),
        {**v1_files(f"{G}/cpu/job.slice", "300000"),
         f"{G}/unified/job.slice/cpu.max": "120000 100000\n"},
        (2, 120000, 100000, "/sys/fs/cgroup/unified/job.slice/cpu.max")),
    "hybrid_v1_lower": (
        "hybrid, both hierarchies limit: v1 0.75 CPU (period 200000) on the parent, v2 2 CPUs; "
        "the lower wins",
        hybrid_mounts(), hybrid_cgroup("/a.slice/job.scope"),
        {**v1_files(f"{G}/cpu/a.slice", "150000", "200000"),
         **v1_files(f"{G}/cpu/a.slice/job.scope", "-1"),
         f"{G}/unified/a.slice/job.scope/cpu.max": "200000 100000\n"},
        (1, 150000, 200000, "/sys/fs/cgroup/cpu/a.slice/cpu.cfs_quota_us")),
    "container_ns": (
        "a container with its own cgroup namespace: its cgroup is \"/\", the mount's root "
        "\"/\", and cpu.max at the mount point is its own limit (2 CPUs)",
        V2_ONLY, "0::/\n",
        {f"{G}/cpu.max": "200000 100000\n"},
        (2, 200000, 100000, "/sys/fs/cgroup/cpu.max")),
    "mount_root": (
        "a container without a cgroup namespace (v2): the mount shows the subtree /docker/abc "
        "and the process is in /docker/abc/sub; /sys/fs/cgroup/docker/abc/sub holds a trap",
        BASE_MOUNTS + [v2_mount(root="/docker/abc")], "0::/docker/abc/sub\n",
        {f"{G}/cpu.max": "50000 100000\n", f"{G}/sub/cpu.max": "max 100000\n",
         f"{G}/docker/abc/sub/cpu.max": "10000 100000\n"},
        (2, 50000, 100000, "/sys/fs/cgroup/cpu.max")),
    "mount_root_equal": (
        "a container without a cgroup namespace (v1, \"cpuacct,cpu\"): the process's cgroup "
        "is the mount's root /docker/abc, read at the mount point",
        BASE_MOUNTS + [TMPFS, v1_mount("/sys/fs/cgroup/cpu,cpuacct", "cpuacct,cpu",
                                       root="/docker/abc")],
        "3:cpuacct,cpu:/docker/abc\n",
        {**v1_files(f"{G}/cpu,cpuacct", "400000"),
         **v1_files(f"{G}/cpu,cpuacct/docker/abc", "10000")},
        (1, 400000, 100000, "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us")),
    "escaped_mount_point": (
        "a v1 mount point with a space (mountinfo's \\040), decoded",
        BASE_MOUNTS + [TMPFS, v1_mount("/sys/fs/cgroup/cpu\\040quota", "cpu")], "2:cpu:/x\n",
        v1_files(f"{G}/cpu quota/x", "300000"),
        (1, 300000, 100000, "/sys/fs/cgroup/cpu quota/x/cpu.cfs_quota_us")),
    "missing_files": (
        "mountinfo names both hierarchies, but no cpu.max or cpu.cfs_* file exists anywhere",
        hybrid_mounts(), hybrid_cgroup("/job.slice"),
        {f"{G}/unified/job.slice/cgroup.procs": "1\n", f"{G}/cpu/job.slice/tasks": "1\n"},
        None),
    "unreadable_v2": (
        "a directory named cpu.max at the process's cgroup: skipped, the parent's 3 CPUs hold",
        V2_ONLY, "0::/a.slice/job.scope\n",
        {f"{G}/a.slice/cpu.max": "300000 100000\n",
         f"{G}/a.slice/job.scope/cpu.max/README": "a directory where cpu.max should be\n"},
        (2, 300000, 100000, "/sys/fs/cgroup/a.slice/cpu.max")),
    "unreadable_v1": (
        "directories named cpu.cfs_quota_us (the cgroup) and cpu.cfs_period_us (its parent, "
        "whose quota is 20000): no limit",
        V1_ONLY, "3:cpu:/a/b\n",
        {f"{G}/cpu/a/b/cpu.cfs_quota_us/README": "a directory where the file should be\n",
         f"{G}/cpu/a/b/cpu.cfs_period_us": "100000\n",
         f"{G}/cpu/a/cpu.cfs_quota_us": "20000\n",
         f"{G}/cpu/a/cpu.cfs_period_us/README": "a directory where the file should be\n"},
        None),
    "malformed_v2": (
        "cpu.max malformed at every level: \"abc\", \"100000\", \"0 100000\", \"-5 100000\", "
        "\"100000 0\": no limit",
        V2_ONLY, "0::/a/b/c/d\n",
        {f"{G}/cpu.max": "100000 0\n", f"{G}/a/cpu.max": "-5 100000\n",
         f"{G}/a/b/cpu.max": "0 100000\n", f"{G}/a/b/c/cpu.max": "100000\n",
         f"{G}/a/b/c/d/cpu.max": "abc\n"},
        None),
    "malformed_v1": (
        "cpu.cfs_quota_us/cpu.cfs_period_us malformed at every level: \"abc\", \"0\", \"-5\", "
        "\"50000 100000\", a period of 0 or \"x\": no limit",
        V1_ONLY, "3:cpu:/a/b/c/d/e\n",
        {**v1_files(f"{G}/cpu", "50000", "x"), **v1_files(f"{G}/cpu/a", "50000", "0"),
         **v1_files(f"{G}/cpu/a/b", "50000 100000"), **v1_files(f"{G}/cpu/a/b/c", "-5"),
         **v1_files(f"{G}/cpu/a/b/c/d", "0"), **v1_files(f"{G}/cpu/a/b/c/d/e", "abc")},
        None),
    "dotdot_path": (
        "a cgroup path outside the namespace (\"/../outside\"): not read, so the trap at "
        "sys/fs/outside/cpu.max is not reached",
        V2_ONLY, "0::/../outside\n",
        {"sys/fs/outside/cpu.max": "10000 100000\n"},
        None),
    "no_mountinfo": (
        "no proc/self/mountinfo (the old fixtures): cgroup v2 at /sys/fs/cgroup, the \"0::\" "
        "path, as testsuite/topology/fixtures/cgroup-quota",
        None, "4:memory:/rtslab.slice/job.scope\n0::/rtslab.slice/job.scope\n",
        {f"{G}/rtslab.slice/cpu.max": "250000 100000",
         f"{G}/rtslab.slice/job.scope/cpu.max": "max 100000"},
        (2, 250000, 100000, "/sys/fs/cgroup/rtslab.slice/cpu.max")),
}


def expected_stdout(expected):
    """test_cpu_quota's two lines for an expected result (C's %.2f of quota/period)."""
    if expected is None:
        return "none\nnone\n"
    version, quota, period, file = expected
    cpus = max(1, -(-quota // period))
    return (f"v{version} {quota}/{period} cpus {cpus} file {file}\n"
            f"{file}: {quota}/{period} = {quota / period:.2f} CPUs\n")


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_case(root, name):
    what, mountinfo, cgroup, files, _ = CASES[name]
    write(os.path.join(root, "README"), what + "\n")
    if mountinfo is not None:
        write(os.path.join(root, "proc/self/mountinfo"), "\n".join(mountinfo) + "\n")
    write(os.path.join(root, "proc/self/cgroup"), cgroup)
    for rel, text in files.items():
        write(os.path.join(root, rel), text)


def main(argv):
    if argv[:1] == ["--run"] and len(argv) >= 3:
        name, cmd = argv[1], argv[2:]
        if name not in CASES:
            sys.exit(f"make_fixtures.py: no case {name!r} (cases: {', '.join(CASES)})")
        with tempfile.TemporaryDirectory(prefix=f"cpu-quota-{name}.") as tmp:
            root = os.path.join(tmp, name)
            write_case(root, name)
            p = subprocess.run(cmd + [root], stdout=subprocess.PIPE, text=True)
        sys.stdout.write(p.stdout)
        if p.returncode:
            return p.returncode
        want = expected_stdout(CASES[name][4])
        if p.stdout != want:
            sys.stderr.write(f"make_fixtures.py: {name}: the output is not the expected\n"
                             f"expected:\n{want}got:\n{p.stdout}")
            return 1
        return 0
    if argv[:1] == ["--out"] and len(argv) == 2:
        if os.path.isdir(argv[1]):
            shutil.rmtree(argv[1])
        for name in CASES:
            write_case(os.path.join(argv[1], name), name)
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
