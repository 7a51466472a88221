#include "rtslab_config.h"
#if RTS_PATCH_PHYS_CAPS
/* Note [CPU quota of the cgroup]
 * A container given 2.5 CPUs of a 64-core host sees 64 CPUs; capabilities beyond the quota
 * can only be throttled in turn, and a throttled capability stalls every stop-the-world GC.
 * phys-caps lowers the default -N to the cgroup v2 cpu.max quota rounded up (GHC and OCaml
 * read no quota; .NET and the JVM do). It is a second idea carried inside phys-caps, kept in
 * these two files so that it can become a patch of its own by changing their guard and the
 * three calls that name it (os/affinity.c: phys_init and affinity_explain_default;
 * rts/options.c: --info's "CPU quota"), issue 32, section 4.
 *
 * The quota caps the count of capabilities only: it is not a CPU mask, and -qa's pin order
 * stays the topology's. An explicit -N<n> is never changed. */
#ifndef RTS_OS_CPU_QUOTA_H
#define RTS_OS_CPU_QUOTA_H

#include <stddef.h>

/* A cgroup v2 CPU bandwidth limit (cpu.max: "QUOTA PERIOD" in microseconds, or "max ...").
 * period == 0: no limit found. Where several levels of the cgroup hierarchy set one, the
 * lowest quota/period ratio holds (each level throttles everything below it). */
typedef struct CpuQuota {
    long long quota, period;   /* microseconds per period */
    char file[256];            /* the cpu.max that set it, under the root (possibly truncated) */
} CpuQuota;

/* Reads the quota of this process's cgroup: ROOT/proc/self/cgroup (its "0::" line; absent:
 * "/") and ROOT/sys/fs/cgroup/<path>/cpu.max at that directory and every parent. root: as
 * topo_load's sysfs_root (NULL: $RTSLAB_SYSFS_ROOT, else the real one). An unreadable or
 * malformed file counts as no limit there. */
void cpu_quota_read(const char *root, CpuQuota *q);
/* The process's quota, read once (thread-safe). */
const CpuQuota *cpu_quota(void);
/* The quota's CPU count rounded up, at least 1; 0 when there is no quota. */
unsigned cpu_quota_cpus(const CpuQuota *q);
/* The quota for people, "FILE: QUOTA/PERIOD = 2.50 CPUs" (--info), or "none"; returns buf. */
char *cpu_quota_format(const CpuQuota *q, char *buf, size_t len);

#endif
#endif
