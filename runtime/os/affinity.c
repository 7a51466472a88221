#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include "os/affinity.h"
#include "os/topology.h"
#if RTS_PATCH_CPU_QUOTA
#include "os/cpu_quota.h"
#endif

unsigned affinity_default_caps(void)
{
#if RTS_PATCH_PHYS_CAPS
    unsigned n = affinity_phys_default_caps();  /* os/affinity_phys_caps.c */
#else
    unsigned n = (unsigned)topo_get()->n_logical;
#endif

#if RTS_PATCH_CPU_QUOTA
    n = cpu_quota_lower(n);         /* Note [CPU quota of the cgroup] in os/cpu_quota.h */
#endif
    return n;
}

int affinity_cpu_for_cap(unsigned cap_no)
{
#if RTS_PATCH_PHYS_CAPS
    return affinity_phys_cpu_for_cap(cap_no);   /* os/affinity_phys_caps.c */
#else
    const Topology *t = topo_get();
    return t->logical_order[cap_no % (unsigned)t->n_logical];
#endif
}

void affinity_pin_self(unsigned cap_no)
{
    int cpu = affinity_cpu_for_cap(cap_no);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0)
        fprintf(stderr, "rtslab: warning: -qa: cannot pin capability %u to CPU %d\n", cap_no, cpu);
}
