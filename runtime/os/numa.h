/* NUMA-local heap: the process's --numa plan and the libnuma calls that carry it out.
 *
 * Note [NUMA-local heap]
 * On a machine with several NUMA nodes, memory on a capability's own node is faster to
 * reach than memory on another, and the nursery is the memory a capability touches most.
 * With +RTS --numa (as GHC's: --numa alone uses every node, --numa=<mask> the nodes whose
 * bits are set, bit i for node i, the mask in decimal as GHC reads it, or 0x-prefixed hex):
 *   - each capability gets a node (Note [NUMA placement] in os/topology.h: the node of the
 *     CPU -qa pins it to, else the nodes round-robin, the thread then bound to the node's
 *     CPUs by numa_bind_self);
 *   - the block allocator keeps free lists per node and gives every megablock it maps a
 *     node, whose memory policy numa_bind_memory sets (MPOL_PREFERRED: the kernel takes the
 *     pages from that node while it has free memory, from another after, where MPOL_BIND
 *     would have the process killed when one node fills; GHC binds);
 *   - a capability's nursery, its GC thread's to-space blocks and its large objects come
 *     from its node (Note [Megablocks on NUMA nodes] in sm/block.c).
 * With one node in use (a one-node machine, or a mask naming one node) there is one place
 * for memory to be: no policy is set, no thread is bound, the allocator has one node, and
 * --info and -s say so. RTSLAB_TEST_NUMA_BIND=1 (for the tests on one-node machines) sets
 * the policy there anyway, so that get_mempolicy can show it on a nursery block
 * (numa_policy_of); and on a fixture machine (RTSLAB_SYSFS_ROOT) whose nodes this machine
 * lacks, it binds each heap node to kernel node id % (the kernel's nodes), so the whole
 * heap runs with the fixture's nodes, per-node lists and -DS checks included. Threads are
 * bound to their node's CPUs on the real machine only (a fixture's CPU numbers mean
 * nothing here).
 * Without libnuma (configure's --without-libnuma, or none installed) --numa is an error at
 * option parsing that says NUMA support is not built in; where the OS has no NUMA support
 * (numa_available() < 0), the error comes at start-up, as GHC's "OS reports NUMA is not
 * available".
 * Heap nodes are dense indices 0..numa_heap_nodes()-1 (the allocator's); numa_node_id gives
 * the kernel's id of one.
 */
#ifndef RTS_OS_NUMA_H
#define RTS_OS_NUMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Sets up the plan for n_caps capabilities (pinned: -qa): 0, or -1 with a message in err
 * (the OS has no NUMA support, the mask names no node of this machine). Without --numa
 * (on false) one node, nothing bound. Called once, before the heap is made. */
int numa_init(bool on, unsigned long long mask, bool pinned, unsigned n_caps, char *err,
              size_t errlen);
/* Heap nodes in use: 1 without --numa or with one node. */
unsigned numa_heap_nodes(void);
/* The heap node of capability cap_no (0 when there is one). */
unsigned numa_cap_node(unsigned cap_no);
/* The kernel id of heap node k, and the node its memory policy names (the same but for the
 * test knob on a fixture machine). */
int  numa_node_id(unsigned k);
int  numa_bind_id(unsigned k);
/* Whether megablocks get a memory policy (more than one node in use, or the test knob). */
bool numa_binding(void);
/* Sets the memory policy of [addr, addr+len) (page aligned, not yet touched) to heap node
 * k's, when numa_binding(); a failure is counted and warned about once, never fatal. */
void numa_bind_memory(void *addr, size_t len, unsigned k);
/* Binds the calling OS thread, capability cap_no's, to the CPUs of its node, when binding
 * and the capability is not pinned by -qa (which has put it on a CPU of its node). */
void numa_bind_self(unsigned cap_no);
/* The memory policy of the page holding addr (get_mempolicy with MPOL_F_ADDR): its mode
 * (MPOL_DEFAULT, MPOL_PREFERRED, ...) and the lowest node of its node mask (-1: none).
 * Returns 0, or -1 (errno set; ENOSYS without libnuma). */
int  numa_policy_of(const void *addr, int *mode, int *node_id);
/* Whether the page holding addr has heap node k's policy (MPOL_PREFERRED, k's kernel id);
 * true when not binding (no policy to have). For the sanity checker. */
bool numa_policy_matches(const void *addr, unsigned k);
/* Megablocks given a policy, and the times setting one failed. */
uint64_t numa_bound_mblocks(void);
uint64_t numa_bind_failures(void);

/* One line for --info and -s on what --numa does here, for the given options (--info calls
 * it before numa_init): "off (no --numa)", "1 node in use (node 0): nothing to do", "2 nodes
 * in use (0,1); capability -> node: 0,1,0,1", or the error numa_init would give. */
char *numa_explain(char *buf, size_t len, bool on, unsigned long long mask, bool pinned,
                   unsigned n_caps);

#endif
