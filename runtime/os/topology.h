/* CPU topology: logical CPUs, physical cores, packages and NUMA nodes, as the process may use
 * them (online CPUs in the affinity mask).
 *
 * Sources, in order of preference (everything below ROOT, see topo_load):
 *   which CPUs are online  ROOT/sys/devices/system/cpu/online (a cpulist); else `present`;
 *                          else the cpuN directories; else the "processor" lines of
 *                          ROOT/proc/cpuinfo; and, for the real root only, the affinity mask.
 *                          A CPU whose cpuN/online file reads 0 is offline whatever those say
 *                          (cpu0 usually has no such file; a missing file means online).
 *   cores and packages     cpuN/topology/{physical_package_id,core_id} for every online CPU,
 *                          with thread_siblings_list (or core_cpus_list); else the
 *                          "physical id" and "core id" lines of ROOT/proc/cpuinfo; else each
 *                          logical CPU is its own core, all in one package ("flat").
 *   NUMA nodes             ROOT/sys/devices/system/node/nodeN/cpulist; absent: one node
 *                          (id 0). An online CPU listed in no node goes to the lowest node.
 * libnuma is not used here (os/numa.c uses it to set memory policies).
 *
 * A physical core is identified by (package id, core id). core_id is not unique within a
 * package on every kernel (some arm64 kernels number cores per cluster), so when the sysfs
 * source gives a sibling list for every online CPU, a core is identified by (package id,
 * lowest CPU of its sibling list) instead; both agree wherever core_id is sane. With
 * /proc/cpuinfo, "core id" repeats in every package (seed 004's trap), hence the package.
 *
 * Invariants of a Topology filled by topo_load (or topo_get):
 *   - 1 <= n_logical <= n_online; n_logical = the online CPUs in the mask ("allowed").
 *   - 1 <= n_physical <= n_logical: physical cores with at least one allowed CPU.
 *   - 1 <= n_packages <= n_physical, 1 <= n_nodes <= n_logical: packages and NUMA nodes with
 *     at least one allowed CPU.
 *   - cpus[0..n_logical-1] are the allowed CPUs by ascending id; logical_order[i] ==
 *     cpus[i].id (the baseline pins capability i to logical_order[i % n_logical]).
 *   - cpus[k].core in [0, n_physical): dense, numbered in order of each core's lowest allowed
 *     CPU, so core c's lowest allowed CPU has a lower id than core c+1's.
 *     cpus[k].package in [0, n_packages) and cpus[k].node in [0, n_nodes): dense, in order of
 *     the kernel's ids (package_id, node_id hold those raw ids; core_id the raw core id, or -1
 *     when the source had none).
 *   - cpus[k].smt_rank: rank of the CPU among the allowed CPUs of its core by ascending id,
 *     so exactly n_physical CPUs have smt_rank 0.
 *   - physical_order[0..n_physical-1]: the smt_rank-0 CPU of every core, each once, ordered to
 *     spread over packages and NUMA nodes: each next core is the one whose package has had
 *     fewest picks so far, then whose node has had fewest, then the lowest core index (so
 *     node 0 core 0, node 1 core 0, node 0 core 1, ... on a two-node machine): one CPU
 *     per physical core, the first n_physical; the cores' further hardware threads follow
 *     in the same order of cores (os/affinity.h says who uses it).
 *   - CPU ids are < TOPO_MAX_CPUS (CPU_SETSIZE); higher-numbered CPUs are ignored.
 */
#ifndef RTS_OS_TOPOLOGY_H
#define RTS_OS_TOPOLOGY_H

/* cpu_set_t needs _GNU_SOURCE defined before the first system header of the including file;
 * defining it here helps only when this header comes first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stddef.h>
#include <stdio.h>

#define TOPO_MAX_CPUS CPU_SETSIZE

typedef struct TopoCpu {
    int id;          /* the kernel's logical CPU number */
    int core;        /* dense physical-core index, 0..n_physical-1 */
    int package;     /* dense package index, 0..n_packages-1 */
    int node;        /* dense NUMA node index, 0..n_nodes-1 */
    int smt_rank;    /* 0 for the lowest allowed CPU of its core, then 1, ... */
    int core_id;     /* raw ids as the source gives them (core_id -1: none) */
    int package_id;
    int node_id;
} TopoCpu;

typedef struct Topology {
    int n_logical;       /* allowed CPUs: online and in the mask */
    int n_physical;      /* physical cores with an allowed CPU */
    int n_packages;      /* packages with an allowed CPU */
    int n_nodes;         /* NUMA nodes with an allowed CPU */
    int n_online;        /* online CPUs, whatever the mask */
    int max_smt;         /* most allowed CPUs on one core (1: no SMT in use) */
    TopoCpu *cpus;       /* n_logical entries, by ascending id */
    int *logical_order;  /* n_logical CPU ids, ascending */
    int *physical_order; /* n_physical CPU ids, spread over packages/nodes */
    const char *source;      /* "sysfs", "cpuinfo", "flat" or "fallback" (topo_get only) */
    const char *numa_source; /* "sysfs" or "none" */
    const char *mask_source; /* "argument", "RTSLAB_CPU_MASK", "sched_getaffinity", "all" */
    char root[256];          /* the sysfs root used ("" = the real one), possibly truncated */
} Topology;

/* Fill *t. sysfs_root: a directory holding sys/devices/system/... and proc/cpuinfo as the real
 * root does; NULL means $RTSLAB_SYSFS_ROOT if set, else "" (the real /sys and /proc).
 * mask: the allowed CPUs; NULL means $RTSLAB_CPU_MASK (a cpulist, e.g. "0-3,8") if set, else
 * sched_getaffinity(0) when reading the real root, else (a fixture root describing another
 * machine, whose CPU numbers mean nothing here) every online CPU.
 * Returns 0, or -1 with a message in err (if err != NULL) and *t left empty (safe to
 * topo_free). Not thread-safe against setenv. */
int topo_load(Topology *t, const char *sysfs_root, const cpu_set_t *mask, char *err,
              size_t errlen);

/* Free what topo_load allocated and empty *t; idempotent. */
void topo_free(Topology *t);

/* The process's topology, loaded once (thread-safe) by topo_load(NULL, NULL). If that fails,
 * a warning goes to stderr and the result is one CPU (the lowest in the affinity mask, or 0)
 * so that the runtime always starts. Never NULL; never freed. */
const Topology *topo_get(void);

/* Print a human-readable summary (a few lines, each starting with "topology"/two spaces). */
void topo_describe(const Topology *t, FILE *out);

/* The entry for CPU id, or NULL if that CPU is not allowed. */
const TopoCpu *topo_cpu(const Topology *t, int id);

/* Parse a kernel cpulist ("0-3,8-11", "5", whitespace and a newline around it, one trailing
 * comma tolerated) into *set (cleared first). Returns the number of CPUs (0 for an empty or
 * blank list), or -1 for anything else: garbage, reversed ranges, empty items, ids >=
 * TOPO_MAX_CPUS. */
int topo_parse_cpulist(const char *s, cpu_set_t *set);

/* Note [NUMA placement]
 * --numa (os/numa.h) gives each capability a NUMA node, its heap's node: the nursery, the
 * GC's to-space blocks and the large objects it allocates come from megablocks of that node
 * (Note [Megablocks on NUMA nodes] in sm/block.c). Which node is decided here, from the
 * topology alone, so that --info and the tests can show it for any machine:
 *   - the nodes in use are those of t (nodes with an allowed CPU) whose kernel id is a bit of
 *     the --numa mask (all bits without one; ids of 64 and more cannot be named and are never
 *     used), by ascending kernel id: topo_numa_nodes;
 *   - a capability pinned by -qa to a CPU (os/affinity.h's affinity_cpu_for_cap) gets that
 *     CPU's node, if it is in use, so its memory is where it runs; any other capability (no
 *     -qa, or a CPU whose node the mask leaves out) gets the nodes in use round-robin, node
 *     cap_no % n, as GHC's --numa assigns them, and is then bound to the allowed CPUs of that
 *     node (topo_node_cpus) so that it runs where its memory is.
 * A machine, or a mask, with one node in use needs nothing of this: there is one place for
 * memory to be (os/numa.c then sets no policy and binds no thread).
 */
#define TOPO_MAX_NODES 64

/* The kernel ids of the nodes in use for `mask` (bit i: node id i), ascending, into
 * ids[0..TOPO_MAX_NODES-1]; returns how many (0: the mask names no node of t). */
int topo_numa_nodes(const Topology *t, unsigned long long mask, int *ids);
/* The node of capability cap_no, an index into ids[0..n-1] (n >= 1): pinned_cpu is the CPU
 * -qa pins it to, or -1 when it is not pinned. */
int topo_numa_node_for_cap(const Topology *t, const int *ids, int n, unsigned cap_no,
                           int pinned_cpu);
/* The allowed CPUs of the node whose kernel id is node_id into *set; returns how many. */
int topo_node_cpus(const Topology *t, int node_id, cpu_set_t *set);

/* Write ids[0..n-1] as a cpulist into buf, joining ascending runs ("0-3,8,6"); returns buf.
 * The output is truncated (ending in "...") if it does not fit. */
char *topo_format_cpulist(char *buf, size_t len, const int *ids, int n);

#endif
