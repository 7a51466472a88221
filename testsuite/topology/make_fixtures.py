#!/usr/bin/env python3
"""Generate the topology fixture trees under testsuite/topology/fixtures/.

Each fixture is a directory laid out like the root of a Linux machine, holding only the files
runtime/os/topology.c reads (sys/devices/system/cpu/..., sys/devices/system/node/...,
proc/cpuinfo), with the contents a real kernel would show. The generated trees are committed,
so the unit test runs from the tree; this script documents how they were made and rebuilds
them:

    python3 testsuite/topology/make_fixtures.py      # rewrites every fixture below

Fixtures (expected results are checked by testsuite/unit/test_topology.c):
  desktop-4c8t     1 package, 4 cores, 8 threads; cpu i and i+4 are siblings (Intel desktop)
  vm-2s12c24t      2 sockets x 6 cores x 2 threads, 2 NUMA nodes; cpus 0-11 are the first
                   threads (0-5 socket 0, 6-11 socket 1), cpu i+12 is cpu i's sibling
  arm-160c         2 packages x 80 cores, no SMT, 2 NUMA nodes (Ampere Altra-like); no
                   cpuN/online files (as on a kernel without CPU hotplug)
  offline-cpus     8 logical CPUs on 4 cores (siblings i, i+4) with cpu5 and cpu6 offline:
                   online = 0-4,7, their cpuN/online say 0 and their topology dirs are gone
  cpuinfo-only     no sysfs at all; proc/cpuinfo of 2 packages x 2 cores x 2 threads, CPUs
                   numbered across packages (0: p0c0, 1: p1c0, 2: p0c1, ...), core ids 0 and 4
                   repeating in each package
  cpuinfo-arm      no sysfs; an arm64 proc/cpuinfo (no "physical id"/"core id"): flat
  present-only     no `online` file: `present` = 0-3, cpu3/online = 0
  dirs-only        neither `online` nor `present`: cpu0..cpu3 directories whose topology has
                   only core_id and physical_package_id (cores 0,0,1,1: SMT pairs 0-1, 2-3)
  sim-2c4t         SIMULATED, for experiments: 1 package, 2 cores x 2 threads,
                   cpu i and i+2 siblings; with RTSLAB_CPU_MASK=0-3 on a 2-core machine
                   without SMT it makes -N count 4 "logical CPUs" for 2 real cores
  hybrid-2p4e      a hybrid (Alder Lake-like) desktop: 2 P-cores with 2 threads each (cpus
                   0-1 and 2-3, siblings adjacent, core ids 0 and 4) and 4 E-cores without
                   SMT (cpus 4-7, core ids 8-11): SMT on some cores only
  numa-2n-interleaved  2 sockets x 4 cores, no SMT, 2 NUMA nodes, CPUs numbered round-robin
                   over the sockets (as some firmware does): even cpus socket/node 0, odd
                   cpus socket/node 1 (for --numa: -qa's cap i on cpu i is on node i % 2)
  numa-4n-2s32t    2 sockets, each split in 2 NUMA nodes (sub-NUMA clustering / NPS2), 4
                   cores x 2 threads per node: node k holds cpus 4k..4k+3 and their siblings
                   16+4k..16+4k+3, sockets are nodes 0-1 and 2-3; and a node 4 with memory
                   but no CPU (an HBM or CXL memory node), which --numa never uses
The "container-narrow" case is desktop-4c8t seen through the mask 2,3,6 (no tree of its own);
the "mixed-SMT mask" case is vm-2s12c24t through 0-2,6-8,12,18,19 (both threads of cores 0,
6 and 7, one of the others).
"""

import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
CPU = "sys/devices/system/cpu"
NODE = "sys/devices/system/node"


def cpulist(ids):
    """Kernel cpulist format: ascending runs joined, e.g. [0,1,2,3,8] -> "0-3,8"."""
    ids = sorted(set(ids))
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else "%d-%d" % (ids[i], ids[j]))
        i = j + 1
    return ",".join(out)


class Tree:
    def __init__(self, name):
        self.root = os.path.join(FIXTURES, name)
        if os.path.isdir(self.root):
            shutil.rmtree(self.root)
        os.makedirs(self.root)

    @classmethod
    def reuse(cls, name):
        """The tree of an existing fixture, to add files to."""
        t = cls.__new__(cls)
        t.root = os.path.join(FIXTURES, name)
        return t

    def write(self, rel, text):
        path = os.path.join(self.root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text + "\n")


def sysfs_machine(name, n_cpus, package, core_id, siblings, nodes=None, offline=(),
                  online_files=True, online_file=True, present_file=True,
                  siblings_file=True, node_ids=None):
    """A sysfs tree. package(c), core_id(c), siblings(c) -> topology of cpu c; nodes: list of
    cpu lists, one per NUMA node (None: no node directory); node_ids: the kernel's id of
    each (default 0, 1, ...)."""
    t = Tree(name)
    on = [c for c in range(n_cpus) if c not in offline]
    if online_file:
        t.write(CPU + "/online", cpulist(on))
    if present_file:
        t.write(CPU + "/present", cpulist(range(n_cpus)))
    for c in range(n_cpus):
        d = "%s/cpu%d" % (CPU, c)
        if online_files and c != 0:           # cpu0 usually cannot go offline: no file
            t.write(d + "/online", "0" if c in offline else "1")
        if c in offline:                      # an offline CPU's topology dir is removed
            continue
        t.write(d + "/topology/core_id", str(core_id(c)))
        t.write(d + "/topology/physical_package_id", str(package(c)))
        if siblings_file:
            t.write(d + "/topology/thread_siblings_list",
                    cpulist(s for s in siblings(c) if s not in offline))
    for i, cpus in enumerate(nodes or []):
        t.write("%s/node%d/cpulist" % (NODE, node_ids[i] if node_ids else i),
                cpulist(c for c in cpus if c not in offline))


def cpuinfo_intel(name, procs):
    """procs: list of (physical id, core id) per processor number."""
    t = Tree(name)
    per_pkg = {}
    for p, _ in procs:
        per_pkg[p] = per_pkg.get(p, 0) + 1
    blocks = []
    for i, (p, core) in enumerate(procs):
        cores = len({c for q, c in procs if q == p})
        blocks.append("\n".join([
            "processor\t: %d" % i,
            "vendor_id\t: GenuineIntel",
            "model name\t: Intel(R) Xeon(R) CPU E5-2620 v4 @ 2.10GHz",
            "physical id\t: %d" % p,
            "siblings\t: %d" % per_pkg[p],
            "core id\t\t: %d" % core,
            "cpu cores\t: %d" % cores,
            "apicid\t\t: %d" % (p * 16 + core * 2 + (i >= len(procs) // 2)),
            ""]))
    t.write("proc/cpuinfo", "\n".join(blocks).rstrip("\n") + "\n")


def cpuinfo_arm(name, n):
    t = Tree(name)
    blocks = []
    for i in range(n):
        blocks.append("\n".join([
            "processor\t: %d" % i,
            "BogoMIPS\t: 50.00",
            "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid",
            "CPU implementer\t: 0x41",
            "CPU architecture: 8",
            "CPU variant\t: 0x3",
            "CPU part\t: 0xd0c",
            "CPU revision\t: 1",
            ""]))
    t.write("proc/cpuinfo", "\n".join(blocks).rstrip("\n") + "\n")


def numa_fixtures():
    """The --numa fixtures (Note [NUMA placement] in runtime/os/topology.h)."""
    sysfs_machine("numa-2n-interleaved", 8, package=lambda c: c % 2,
                  core_id=lambda c: c // 2, siblings=lambda c: [c],
                  nodes=[range(0, 8, 2), range(1, 8, 2)])

    def first(c):                             # the first-thread CPU of c's core
        return c % 16
    sysfs_machine("numa-4n-2s32t", 32, package=lambda c: first(c) // 8,
                  core_id=lambda c: first(c) % 8,
                  siblings=lambda c: [first(c), first(c) + 16],
                  nodes=[list(range(4 * k, 4 * k + 4)) + list(range(16 + 4 * k, 20 + 4 * k))
                         for k in range(4)] + [[]])


def main():
    sysfs_machine("desktop-4c8t", 8, package=lambda c: 0, core_id=lambda c: c % 4,
                  siblings=lambda c: [c % 4, c % 4 + 4], nodes=[range(8)])

    def vm_first(c):                          # the first-thread CPU of c's core
        return c % 12
    sysfs_machine("vm-2s12c24t", 24, package=lambda c: vm_first(c) // 6,
                  core_id=lambda c: vm_first(c) % 6,
                  siblings=lambda c: [vm_first(c), vm_first(c) + 12],
                  nodes=[list(range(0, 6)) + list(range(12, 18)),
                         list(range(6, 12)) + list(range(18, 24))])

    sysfs_machine("arm-160c", 160, package=lambda c: c // 80, core_id=lambda c: c % 80,
                  siblings=lambda c: [c], nodes=[range(0, 80), range(80, 160)],
                  online_files=False)

    sysfs_machine("offline-cpus", 8, package=lambda c: 0, core_id=lambda c: c % 4,
                  siblings=lambda c: [c % 4, c % 4 + 4], nodes=[range(8)], offline=(5, 6))

    # cpu i: package i % 2; cores 0 and 4 of each package (Intel core ids are often sparse);
    # cpus 0-3 first threads, 4-7 their siblings.
    cpuinfo_intel("cpuinfo-only", [(i % 2, 4 * ((i // 2) % 2)) for i in range(8)])

    cpuinfo_arm("cpuinfo-arm", 4)

    # present-only: cpu3 offline per its own online file (no `online` list to say so).
    t = Tree("present-only")
    t.write(CPU + "/present", "0-3")
    for c in range(4):
        if c:
            t.write("%s/cpu%d/online" % (CPU, c), "0" if c == 3 else "1")
        if c != 3:
            t.write("%s/cpu%d/topology/core_id" % (CPU, c), str(c))
            t.write("%s/cpu%d/topology/physical_package_id" % (CPU, c), "0")
            t.write("%s/cpu%d/topology/thread_siblings_list" % (CPU, c), str(c))

    sysfs_machine("dirs-only", 4, package=lambda c: 0, core_id=lambda c: c // 2,
                  siblings=None, online_files=False, online_file=False,
                  present_file=False, siblings_file=False)

    sysfs_machine("sim-2c4t", 4, package=lambda c: 0, core_id=lambda c: c % 2,
                  siblings=lambda c: [c % 2, c % 2 + 2], nodes=[range(4)])

    sysfs_machine("hybrid-2p4e", 8, package=lambda c: 0,
                  core_id=lambda c: 4 * (c // 2) if c < 4 else c + 4,
                  siblings=lambda c: [c - c % 2, c - c % 2 + 1] if c < 4 else [c],
                  nodes=[range(8)])
    numa_fixtures()

    # {{patch:cpu-quota
    # cgroup-quota: desktop-4c8t in a cgroup v2 hierarchy whose parent slice allows 2.5 CPUs
    # (cpu.max "250000 100000") and whose own cgroup sets no limit ("max 100000"); the
    # process's cgroup comes from the "0::" line of proc/self/cgroup (a v1 line before it).
    sysfs_machine("cgroup-quota", 8, package=lambda c: 0, core_id=lambda c: c % 4,
                  siblings=lambda c: [c % 4, c % 4 + 4], nodes=[range(8)])
    t = Tree.reuse("cgroup-quota")
    t.write("proc/self/cgroup", "4:memory:/rtslab.slice/job.scope\n0::/rtslab.slice/job.scope")
    t.write("sys/fs/cgroup/rtslab.slice/cpu.max", "250000 100000")
    t.write("sys/fs/cgroup/rtslab.slice/job.scope/cpu.max", "max 100000")
    # }}patch:cpu-quota


if __name__ == "__main__":
    main()
