#include "rtslab_config.h"
#if RTS_PATCH_CPU_QUOTA
/* Note [CPU quota of the cgroup]
 * A container given 2.5 CPUs of a 64-core host sees 64 CPUs; capabilities beyond the quota
 * can only be throttled in turn, and a throttled capability stalls every stop-the-world GC.
 * The cpu-quota patch lowers the default -N (the allowed logical CPUs, as GHC counts them, or
 * what another patch counts instead) to the cgroup's CPU bandwidth quota rounded up: GHC
 * and OCaml read no quota; the JVM (-XX:ActiveProcessorCount's default), .NET and Go with
 * uber-go/automaxprocs do. os/affinity.c's affinity_default_caps() applies it, last; the
 * patch's registration (rts/patch_cpu_quota.c) shows it in --info and -s.
 *
 * Both cgroup hierarchies are read, as the JVM's container support does (OpenJDK's cgroup
 * subsystem for Linux: it finds the controllers' mounts in /proc/self/mountinfo, the
 * process's place in each hierarchy in /proc/self/cgroup, and maps one onto the other; the
 * code here is our own):
 *   - cgroup v2 (the unified hierarchy, fstype cgroup2): the "0::PATH" line of
 *     /proc/self/cgroup, and cpu.max, "QUOTA PERIOD" in microseconds or "max PERIOD" (no
 *     limit at that level);
 *   - cgroup v1 (fstype cgroup, one mount per controller or group of controllers): the line
 *     "N:CONTROLLERS:PATH" whose controllers include "cpu" (often "cpu,cpuacct", mounted at
 *     /sys/fs/cgroup/cpu,cpuacct), and the mount whose super options include the word "cpu"
 *     (not cpuacct nor cpuset); cpu.cfs_quota_us (-1: no limit) over cpu.cfs_period_us.
 * A hierarchy's PATH is relative to the root of the hierarchy as this process's cgroup
 * namespace sees it, and a mount shows a subtree (mountinfo's 4th field, its root): with the
 * root "/" the directory is MOUNTPOINT/PATH; a container without a cgroup namespace whose
 * mount shows its own subtree /docker/ID sees PATH /docker/ID (the mount point itself) or
 * below it (the rest under the mount point); with a namespace it sees "/" and the root "/".
 * A PATH that neither maps nor stays inside the mount (a ".." component) is not read.
 *
 * Hosts mix them: a hybrid host (systemd's "hybrid" layout; the machine this was written on
 * is one) mounts each v1 controller under /sys/fs/cgroup/NAME, cpu included, and the v2
 * tree, with no controller enabled in it, at /sys/fs/cgroup/unified; its /proc/self/cgroup
 * has both a "1:cpu:/..." line and "0::/...". So both hierarchies are read wherever they are
 * mounted, and each level of each throttles everything below it: the lowest quota/period
 * ratio over the process's cgroup and every parent up to the mount point, in both, holds
 * (the first found on a tie: v2 before v1, the deeper level first). Without a readable
 * /proc/self/mountinfo (old fixtures, an odd /proc) the reader falls back to cgroup v2 at
 * /sys/fs/cgroup with the "0::" path. A missing, unreadable or malformed file is no limit at
 * its level; nothing is printed.
 *
 * The quota caps the count of capabilities only: it is not a CPU mask, and -qa's pin order
 * stays the topology's. An explicit -N<n> is never changed. */
#ifndef RTS_OS_CPU_QUOTA_H
#define RTS_OS_CPU_QUOTA_H

#include <stddef.h>

/* A cgroup CPU bandwidth limit (v2 cpu.max, v1 cpu.cfs_quota_us/cpu.cfs_period_us), in
 * microseconds per period. period == 0: no limit found. Where several levels (or both
 * hierarchies) set one, the lowest quota/period ratio holds. */
typedef struct CpuQuota {
    long long quota, period;   /* microseconds per period */
    int version;               /* the hierarchy whose file set it: 1 or 2; 0: none */
    char file[256];            /* the file that set it (v2 cpu.max, v1 cpu.cfs_quota_us),
                                  under the root (possibly truncated) */
} CpuQuota;

/* Reads the quota of this process's cgroups: ROOT/proc/self/mountinfo and
 * ROOT/proc/self/cgroup locate its cgroup in each hierarchy, whose files are read at that
 * directory and every parent up to the mount point (no mountinfo:
 * ROOT/sys/fs/cgroup/<the "0::" path, else "/">/cpu.max and its parents). root: as
 * topo_load's sysfs_root (NULL: $RTSLAB_SYSFS_ROOT, else the real one). An unreadable or
 * malformed file counts as no limit there; q->version and q->file say which file set it. */
void cpu_quota_read(const char *root, CpuQuota *q);
/* The process's quota, read once (thread-safe). */
const CpuQuota *cpu_quota(void);
/* The quota's CPU count rounded up, at least 1; 0 when there is no quota. */
unsigned cpu_quota_cpus(const CpuQuota *q);
/* n lowered to the process's quota (cpu_quota_cpus(cpu_quota())), when it has one. */
unsigned cpu_quota_lower(unsigned n);
/* The quota for people, "FILE: QUOTA/PERIOD = 2.50 CPUs" (--info), or "none"; returns buf. */
char *cpu_quota_format(const CpuQuota *q, char *buf, size_t len);

#endif
#endif
