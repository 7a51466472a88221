#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include "os/affinity.h"
#include "os/topology.h"
#if RTS_PATCH_PHYS_CAPS
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Note [Capabilities on physical cores]
 * Seed 004: GHC's -N counts logical CPUs, so on a 4-core 8-thread machine it runs 8
 * capabilities, two per core; every stop-the-world GC then waits for the slowest of two
 * threads sharing a core, and a server fell from 4 500 to 200 requests per second until -N4
 * was given by hand. With this patch -N with no number counts the physical cores that have
 * at least one allowed CPU (topology.h's n_physical), and a cgroup v2 CPU quota (a container
 * given 2.5 CPUs of a 64-core host) lowers it to the quota rounded up: more capabilities
 * than the quota can run only get throttled in turn, and a throttled capability stalls
 * every GC. Neither GHC nor OCaml reads cpu.max. An explicit -N<n> is never changed.
 * -qa pins capability i to affinity_pin_order()[i % n_logical]: one CPU per core first,
 * spread over packages and NUMA nodes (topology's physical_order), and only then the cores'
 * second hardware threads, in the same spread, so -N<n> above the core count still fills
 * every core before doubling up on any.
 * The quota is not a CPU mask: it caps the count only, the pin order is the topology's. */
static int *pin_order;                  /* topo_get()->n_logical entries */
static unsigned default_caps;
static AffinityQuota the_quota;
static pthread_once_t phys_once = PTHREAD_ONCE_INIT;

static void phys_init(void)
{
    const Topology *t = topo_get();
    affinity_read_quota(NULL, &the_quota);
    pin_order = malloc((size_t)t->n_logical * sizeof *pin_order);
    if (pin_order == NULL) {
        fprintf(stderr, "rtslab: out of memory computing the -qa pin order\n");
        exit(1);
    }
    affinity_pin_order(t, pin_order);
    default_caps = affinity_default_caps_of(t, &the_quota);
}
#endif

unsigned affinity_default_caps(void)
{
#if RTS_PATCH_PHYS_CAPS
    pthread_once(&phys_once, phys_init);
    return default_caps;
#else
    return (unsigned)topo_get()->n_logical;
#endif
}

int affinity_cpu_for_cap(unsigned cap_no)
{
    const Topology *t = topo_get();
#if RTS_PATCH_PHYS_CAPS
    pthread_once(&phys_once, phys_init);
    return pin_order[cap_no % (unsigned)t->n_logical];
#else
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
#if RTS_PATCH_PHYS_CAPS

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

unsigned affinity_quota_cpus(const AffinityQuota *q)
{
    if (q->period <= 0)
        return 0;
    long long n = (q->quota + q->period - 1) / q->period;
    return n < 1 ? 1 : n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

unsigned affinity_default_caps_of(const Topology *t, const AffinityQuota *q)
{
    unsigned n = (unsigned)t->n_physical, limit = affinity_quota_cpus(q);
    if (limit > 0 && limit < n)
        n = limit;
    return n < 1 ? 1 : n;
}

/* "QUOTA PERIOD" with QUOTA a positive number of microseconds; "max PERIOD" (no limit) and
 * anything malformed give false. */
static bool parse_cpu_max(const char *s, long long *quota, long long *period)
{
    char *end;
    if (*s < '0' || *s > '9')
        return false;
    long long qv = strtoll(s, &end, 10);
    if (*end != ' ' || end[1] < '0' || end[1] > '9')
        return false;
    long long pv = strtoll(end + 1, &end, 10);
    while (*end == '\n' || *end == ' ')
        end++;
    if (*end != '\0' || qv <= 0 || pv <= 0)
        return false;
    *quota = qv;
    *period = pv;
    return true;
}

static bool read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return false;
    bool ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    return ok;
}

void affinity_read_quota(const char *root, AffinityQuota *q)
{
    memset(q, 0, sizeof *q);
    if (root == NULL)
        root = getenv("RTSLAB_SYSFS_ROOT");
    if (root == NULL)
        root = "";

    /* This process's cgroup v2 path: the "0::PATH" line of /proc/self/cgroup. */
    char cg[PATH_MAX] = "/", line[PATH_MAX], path[2 * PATH_MAX];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
        while (fgets(line, sizeof line, f) != NULL)
            if (strncmp(line, "0::/", 4) == 0) {
                line[strcspn(line, "\n")] = '\0';
                snprintf(cg, sizeof cg, "%s", line + 3);
                break;
            }
        fclose(f);
    }

    /* cpu.max at that directory and every parent up to the root of the hierarchy. */
    for (;;) {
        size_t n = strlen(cg);
        while (n > 1 && cg[n - 1] == '/')
            cg[--n] = '\0';
        char buf[128];
        long long qv, pv;
        if (snprintf(path, sizeof path, "%s/sys/fs/cgroup%s/cpu.max", root, n > 1 ? cg : "")
                < (int)sizeof path
            && read_line(path, buf, sizeof buf) && parse_cpu_max(buf, &qv, &pv)
            && (q->period == 0 || qv * q->period < q->quota * pv)) {
            q->quota = qv;
            q->period = pv;
            snprintf(q->file, sizeof q->file, "%s", path + strlen(root));
        }
        if (n <= 1)
            break;
        char *slash = strrchr(cg, '/');
        if (slash == cg)
            cg[1] = '\0';
        else
            *slash = '\0';
    }
}

const AffinityQuota *affinity_quota(void)
{
    pthread_once(&phys_once, phys_init);
    return &the_quota;
}

char *affinity_explain_default(char *buf, size_t len)
{
    const Topology *t = topo_get();
    const AffinityQuota *q = affinity_quota();
    int w = snprintf(buf, len, "%u (%d physical %s of %d logical %s", affinity_default_caps(),
                     t->n_physical, t->n_physical == 1 ? "core" : "cores", t->n_logical,
                     t->n_logical == 1 ? "CPU" : "CPUs");
    if (w >= 0 && (size_t)w < len && q->period > 0)
        w += snprintf(buf + w, len - (size_t)w, ", cgroup %s %.2f CPUs", q->file,
                      (double)q->quota / (double)q->period);
    if (w >= 0 && (size_t)w < len)
        snprintf(buf + w, len - (size_t)w, ")");
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
