#include "rtslab_config.h"
#if RTS_PATCH_PHYS_CAPS
/* -N and -qa on physical cores: Note [Capabilities on physical cores]; os/affinity.c's
 * affinity_default_caps() and affinity_cpu_for_cap() ask here. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "os/affinity.h"
#include "os/topology.h"

/* Note [Capabilities on physical cores]
 * "Marrying Haskell and Hyper-Threading" (2018): GHC's -N counts logical CPUs, so on a
 * 4-core 8-thread machine it runs 8 capabilities, two per core; every stop-the-world GC then waits for the slowest of two
 * threads sharing a core, and a server fell from 4 500 to 200 requests per second until -N4
 * was given by hand. With this patch -N with no number counts the physical cores that have
 * at least one allowed CPU (topology.h's n_physical). An explicit -N<n> is never changed.
 * -qa pins capability i to affinity_pin_order()[i % n_logical]: one CPU per core first,
 * spread over packages and NUMA nodes (topology's physical_order), and only then the cores'
 * second hardware threads, in the same spread, so -N<n> above the core count still fills
 * every core before doubling up on any. */
static int *pin_order;                  /* topo_get()->n_logical entries */
static unsigned default_caps;
static pthread_once_t phys_once = PTHREAD_ONCE_INIT;

static void phys_init(void)
{
    const Topology *t = topo_get();
    pin_order = malloc((size_t)t->n_logical * sizeof *pin_order);
    if (pin_order == NULL) {
        fprintf(stderr, "rtslab: out of memory computing the -qa pin order\n");
        exit(1);
    }
    affinity_pin_order(t, pin_order);
    default_caps = affinity_default_caps_of(t);
}

unsigned affinity_phys_default_caps(void)
{
    pthread_once(&phys_once, phys_init);
    return default_caps;
}

int affinity_phys_cpu_for_cap(unsigned cap_no)
{
    const Topology *t = topo_get();
    pthread_once(&phys_once, phys_init);
    return pin_order[cap_no % (unsigned)t->n_logical];
}

void affinity_pin_order(const Topology *t, int *out)
{
    int n = 0;
    for (int rank = 0; rank < t->max_smt; rank++)
        for (int i = 0; i < t->n_physical; i++) {
            int core = topo_cpu(t, t->physical_order[i])->core;
            for (int k = 0; k < t->n_logical; k++)
                if (t->cpus[k].core == core && t->cpus[k].smt_rank == rank)
                    out[n++] = t->cpus[k].id;
        }
}

unsigned affinity_default_caps_of(const Topology *t)
{
    return t->n_physical < 1 ? 1 : (unsigned)t->n_physical;
}

char *affinity_explain_default(char *buf, size_t len)
{
    const Topology *t = topo_get();
    snprintf(buf, len, "%u (%d physical %s of %d logical %s)", affinity_default_caps(),
             t->n_physical, t->n_physical == 1 ? "core" : "cores", t->n_logical,
             t->n_logical == 1 ? "CPU" : "CPUs");
    return buf;
}

char *affinity_format_placement(char *buf, size_t len, unsigned n_caps)
{
    size_t used = 0;
    if (len > 0)
        buf[0] = '\0';
    for (unsigned i = 0; i < n_caps; i++) {
        int w = snprintf(buf + used, len - used, "%s%d", i ? "," : "", affinity_cpu_for_cap(i));
        if (w < 0 || (size_t)w >= len - used) {
            if (len >= 4)
                strcpy(buf + len - 4, "...");
            return buf;
        }
        used += (size_t)w;
    }
    return buf;
}
#endif
