#include "rtslab_config.h"
#if RTS_PATCH_CPU_QUOTA
/* The cpu-quota patch's registration (Note [Patch registration] in rts/patch.h): the default
 * -N lowered to the cgroup CPU quota rounded up (Note [CPU quota of the cgroup] in
 * os/cpu_quota.h), shown in --info and -s. No RTS options: an explicit -N<n> is the way
 * round it, as with the JVM's -XX:ActiveProcessorCount. */
#include <stddef.h>
#include <stdio.h>
#include "rts/patch.h"
#include "sched/capability.h"
#include "os/affinity.h"
#include "os/cpu_quota.h"

/* Why the default -N is what it is, as far as the quota goes: "3 (the quota 2.50 CPUs
 * rounded up)", "2 (below the quota 2.50 CPUs)", "2 (no quota)". */
static char *explain(char *buf, size_t len)
{
    const CpuQuota *q = cpu_quota();
    unsigned n = affinity_default_caps(), cpus = cpu_quota_cpus(q);
    double c = cpus ? (double)q->quota / (double)q->period : 0.0;
    if (cpus == 0)
        snprintf(buf, len, "%u (no quota)", n);
    else if (cpus == n)
        snprintf(buf, len, "%u (the quota %.2f CPUs rounded up)", n, c);
    else
        snprintf(buf, len, "%u (below the quota %.2f CPUs)", n, c);
    return buf;
}

static void info(FILE *f, RtsInfoPut put)
{
    char buf[512], why[128];
    put(f, "CPU quota", cpu_quota_format(cpu_quota(), buf, sizeof buf));
    put(f, "Default capabilities under the quota (-N)", explain(why, sizeof why));
}

/* Statistics (Note [Patch statistics]): the quota, and what it made of -N. */
static double quota_cpus;

static void section_summarise(void)
{
    const CpuQuota *q = cpu_quota();
    quota_cpus = q->period > 0 ? (double)q->quota / (double)q->period : 0.0;
}

static void section_lines(FILE *f)
{
    const CpuQuota *q = cpu_quota();
    char why[128];
    if (q->period <= 0)
        fprintf(f, "  CPU quota: none\n");
    else if (base_cfg->n_caps_auto)
        fprintf(f, "  CPU quota: %s %.2f CPUs (cgroup v%d); -N, the default: %s\n", q->file,
                quota_cpus, q->version, explain(why, sizeof why));
    else if (base_cfg->n_caps_given)
        fprintf(f, "  CPU quota: %s %.2f CPUs (cgroup v%d); -N%u, given\n", q->file,
                quota_cpus, q->version, cap_n_caps);
    else        /* before: "-N1, given", with no -N given */
        fprintf(f, "  CPU quota: %s %.2f CPUs (cgroup v%d); %u capabilit%s, no -N given (the "
                "quota sets only what -N alone picks)\n", q->file, quota_cpus, q->version, cap_n_caps,
                cap_n_caps == 1 ? "y" : "ies");
}

static const RtsStatsKey section_keys[] = {
    { "rtslab_cpu_quota_cpus", NULL, &quota_cpus },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .summarise = section_summarise,
    .lines_after = "Idle capabilities woken",
    .lines = section_lines,
    .keys_after = "rtslab_threads_pushed",
    .keys = section_keys,
};

const RtsPatch patch_cpu_quota = {
    .info_after = "Sanitizer",
    .info = info,
    .stats = &stats,
    .name = "cpu-quota",
};
#endif
