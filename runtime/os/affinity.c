#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include "os/affinity.h"
#include "os/topology.h"

unsigned affinity_default_caps(void)
{
    return (unsigned)topo_get()->n_logical;
}

int affinity_cpu_for_cap(unsigned cap_no)
{
    const Topology *t = topo_get();
    return t->logical_order[cap_no % (unsigned)t->n_logical];
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
