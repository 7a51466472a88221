/* NUMA-local heap: see Note [NUMA-local heap] in numa.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab_config.h"
#include "os/affinity.h"
#include "os/numa.h"
#include "os/topology.h"
#if HAVE_LIBNUMA
#include <numa.h>
#include <numaif.h>
#endif

#define MASK_BITS (8 * sizeof(unsigned long))
_Static_assert(TOPO_MAX_NODES % MASK_BITS == 0, "node masks are whole longs");

/* Set once by numa_init, before any other thread exists; read-only after (but the counts). */
static unsigned n_nodes = 1;
static int node_ids[TOPO_MAX_NODES];
static int bind_ids[TOPO_MAX_NODES];   /* the kernel node each heap node's policy names */
static bool binding, pinned_caps, for_test, real_machine;
static unsigned numa_n_caps;
static unsigned *cap_nodes;            /* numa_n_caps entries; NULL: all on node 0 */
static uint64_t bound_mblocks, bind_failures;   /* atomic */

/* The nodes in use and every capability's node (cap_node may be NULL); 0, or -1 with the
 * message numa_init gives. */
static int plan(const Topology *t, unsigned long long mask, bool pinned, unsigned n_caps,
                int *ids, int *n_ids, unsigned *cap_node, char *err, size_t errlen)
{
#if !HAVE_LIBNUMA
    (void)t; (void)mask; (void)pinned; (void)n_caps; (void)ids; (void)n_ids; (void)cap_node;
    snprintf(err, errlen, "--numa: NUMA support is not built in (configure found no libnuma, "
             "or was given --without-libnuma)");
    return -1;
#else
    if (numa_available() < 0) {
        snprintf(err, errlen, "--numa: the OS reports NUMA is not available");
        return -1;
    }
    int n = topo_numa_nodes(t, mask, ids);
    if (n == 0) {
        int all[TOPO_MAX_NODES];
        int m = topo_numa_nodes(t, ~0ull, all);
        char list[256];
        topo_format_cpulist(list, sizeof list, all, m);
        snprintf(err, errlen, "--numa=%llu: the mask names none of this machine's NUMA nodes "
                 "(%s)", mask, m ? list : "none below 64");
        return -1;
    }
    *n_ids = n;
    if (cap_node)
        for (unsigned i = 0; i < n_caps; i++)
            cap_node[i] = (unsigned)topo_numa_node_for_cap(
                t, ids, n, i, pinned ? affinity_cpu_for_cap(i) : -1);
    return 0;
#endif
}

int numa_init(bool on, unsigned long long mask, bool pinned, unsigned n_caps, char *err,
              size_t errlen)
{
    n_nodes = 1;
    node_ids[0] = 0;
    binding = false;
    if (!on)
        return 0;
    int ids[TOPO_MAX_NODES], n = 0;
    unsigned *caps = calloc(n_caps ? n_caps : 1, sizeof *caps);
    if (caps == NULL) {
        snprintf(err, errlen, "--numa: out of memory");
        return -1;
    }
    if (plan(topo_get(), mask, pinned, n_caps, ids, &n, caps, err, errlen) != 0) {
        free(caps);
        return -1;
    }
    const char *force = getenv("RTSLAB_TEST_NUMA_BIND");
    for_test = force && *force && strcmp(force, "0") != 0;
    node_ids[0] = ids[0];
    if (n == 1 && !for_test) {
        free(caps);                     /* one node: nothing to do */
        return 0;
    }
    n_nodes = (unsigned)n;
    memcpy(node_ids, ids, (size_t)n * sizeof *ids);
    /* Note [NUMA-local heap]: for a test, a fixture machine's nodes may not exist here. */
#if HAVE_LIBNUMA
    int kernel_nodes = numa_max_node() + 1;
#else
    int kernel_nodes = 1;                /* not reached: plan() fails without libnuma */
#endif
    for (int k = 0; k < n; k++)
        bind_ids[k] = for_test && kernel_nodes > 0 ? ids[k] % kernel_nodes : ids[k];
    real_machine = topo_get()->root[0] == '\0';
    binding = true;
    pinned_caps = pinned;
    free(cap_nodes);
    cap_nodes = caps;
    numa_n_caps = n_caps;
    return 0;
}

unsigned numa_heap_nodes(void) { return n_nodes; }
bool numa_binding(void) { return binding; }
int numa_node_id(unsigned k) { return k < n_nodes ? node_ids[k] : -1; }
int numa_bind_id(unsigned k) { return k < n_nodes ? bind_ids[k] : -1; }

unsigned numa_cap_node(unsigned cap_no)
{
    return cap_nodes && cap_no < numa_n_caps ? cap_nodes[cap_no] : 0;
}

uint64_t numa_bound_mblocks(void) { return __atomic_load_n(&bound_mblocks, __ATOMIC_RELAXED); }
uint64_t numa_bind_failures(void) { return __atomic_load_n(&bind_failures, __ATOMIC_RELAXED); }

void numa_bind_memory(void *addr, size_t len, unsigned k)
{
    if (!binding || k >= n_nodes)
        return;
#if HAVE_LIBNUMA
    unsigned long nodemask[TOPO_MAX_NODES / MASK_BITS] = {0};
    int id = bind_ids[k];
    nodemask[id / MASK_BITS] |= 1ul << (id % MASK_BITS);
    /* maxnode counts one more than the bits the kernel reads (mbind(2); libnuma does so). */
    if (mbind(addr, len, MPOL_PREFERRED, nodemask, TOPO_MAX_NODES + 1, 0) == 0) {
        __atomic_fetch_add(&bound_mblocks, len >> 20, __ATOMIC_RELAXED);
        return;
    }
    int e = errno;
    if (__atomic_fetch_add(&bind_failures, 1, __ATOMIC_RELAXED) == 0)
        fprintf(stderr, "rtslab: warning: --numa: cannot set the memory policy of the heap to "
                "node %d (%s); that memory goes where the kernel puts it\n", id, strerror(e));
#else
    (void)addr;
    (void)len;
#endif
}

void numa_bind_self(unsigned cap_no)
{
    if (!binding || pinned_caps || !real_machine)
        return;                          /* a fixture's CPU numbers are not this machine's */
    int id = node_ids[numa_cap_node(cap_no)];
    cpu_set_t set;
    if (topo_node_cpus(topo_get(), id, &set) == 0)
        return;
    int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    if (rc != 0)
        fprintf(stderr, "rtslab: warning: --numa: cannot bind capability %u to the CPUs of "
                "node %d (%s)\n", cap_no, id, strerror(rc));
}

int numa_policy_of(const void *addr, int *mode, int *node_id)
{
#if HAVE_LIBNUMA
    unsigned long nodemask[TOPO_MAX_NODES / MASK_BITS] = {0};
    int m = -1;
    if (get_mempolicy(&m, nodemask, TOPO_MAX_NODES + 1, (void *)addr, MPOL_F_ADDR) != 0)
        return -1;
    *mode = m;
    *node_id = -1;
    for (int id = 0; id < TOPO_MAX_NODES; id++)
        if (nodemask[id / MASK_BITS] >> (id % MASK_BITS) & 1) {
            *node_id = id;
            break;
        }
    return 0;
#else
    (void)addr;
    *mode = 0;
    *node_id = -1;
    errno = ENOSYS;
    return -1;
#endif
}

bool numa_policy_matches(const void *addr, unsigned k)
{
    if (!binding)
        return true;
#if HAVE_LIBNUMA
    int mode, id;
    return k < n_nodes && numa_policy_of(addr, &mode, &id) == 0 && mode == MPOL_PREFERRED
        && id == bind_ids[k];
#else
    (void)addr;
    (void)k;
    return false;
#endif
}

char *numa_explain(char *buf, size_t len, bool on, unsigned long long mask, bool pinned,
                   unsigned n_caps)
{
    if (!on) {
        snprintf(buf, len, "off (no --numa)%s", HAVE_LIBNUMA ? "" : "; not built in (no libnuma)");
        return buf;
    }
    int ids[TOPO_MAX_NODES], n = 0;
    unsigned *caps = calloc(n_caps ? n_caps : 1, sizeof *caps);
    if (caps == NULL) {
        snprintf(buf, len, "?");
        return buf;
    }
    if (plan(topo_get(), mask, pinned, n_caps, ids, &n, caps, buf, len) != 0) {
        free(caps);
        return buf;
    }
    char list[256];
    topo_format_cpulist(list, sizeof list, ids, n);
    if (n == 1 && !binding) {
        snprintf(buf, len, "1 node in use (node %d): nothing to do", ids[0]);
        free(caps);
        return buf;
    }
    int w = snprintf(buf, len, "%d %s in use (%s)%s; capability -> node:", n,
                     n == 1 ? "node" : "nodes", list, for_test ? ", bound for a test" : "");
    for (unsigned i = 0; i < n_caps && w >= 0 && (size_t)w < len; i++) {
        int m = snprintf(buf + w, len - (size_t)w, "%s%d", i ? "," : " ", ids[caps[i]]);
        if (m < 0 || (size_t)m >= len - (size_t)w) {
            if (len >= 4)
                strcpy(buf + len - 4, "...");
            break;
        }
        w += m;
    }
    free(caps);
    return buf;
}
