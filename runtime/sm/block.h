/* Block allocator: aligned megablocks split into blocks, one descriptor per block.
 *
 * Note [Block layout]
 * A megablock is MBLOCK_SIZE bytes aligned on MBLOCK_SIZE. Its first FIRST_USABLE_BLOCK
 * blocks hold the descriptors (bdescr) of all its blocks, so the descriptor of any address
 * inside the megablock is found by arithmetic alone (bdescr_of), in O(1), like GHC's Bdescr().
 * A block group is 1..n contiguous blocks; only the descriptor of its first block (the head)
 * is meaningful to users. A group larger than the usable blocks of one megablock is a
 * megablock group: k contiguous megablocks whose descriptor areas after the first are payload;
 * only addresses inside its first megablock can be looked up (objects start there).
 *
 * Invariants (checked by blk_check and the sanity checker):
 *  - every block of an allocated megablock is in exactly one group, allocated or free;
 *  - a free group is on exactly one free list (by size class), with BF_FREE set in its head
 *    and its tail descriptor pointing back to the head, so neighbours coalesce in O(1);
 *  - two free groups are never adjacent inside a megablock (they are coalesced on free);
 *  - a megablock whose blocks are all free is taken off the free lists and kept as a free
 *    megablock, ready for a megablock group or to be split again;
 *  - blk_blocks_in_use() + blk_blocks_free() == blk_mblocks() * USABLE_BLOCKS_PER_MBLOCK
 *    for megablocks not in megablock groups (megablock groups count all their blocks in use:
 *    a group of k megablocks counts MBGROUP_BLOCKS(k), as its head's blocks says);
 *  - the descriptors of a group other than its head belong to the allocator: in an
 *    allocated group each has blocks = 0 and link = head (within the first megablock of a
 *    megablock group): a descriptor with blocks == 0 leads to its head through link.
 *
 * A freed megablock group becomes k free megablocks, reused for later groups (whole, when k
 * of them are contiguous) or split; free megablocks beyond what the heap will need are
 * returned to the OS after a major GC (Note [Returning megablocks]).
 *
 * Heap nodes (Note [Megablocks on NUMA nodes] in block.c): every megablock belongs to one
 * node, 0..blk_heap_nodes()-1, for life; free groups and free megablocks are on their node's
 * lists, and blk_alloc_group_on(n, node) returns memory of that node only. The node enters
 * the heap there and nowhere else: the storage manager passes a capability's node
 * (os/numa.h's numa_cap_node) for its nursery, its GC thread's to-space and its large
 * objects; everything else allocates on node 0.
 *
 * Locking: not thread-safe. Callers serialise (the storage manager's lock, sm_lock).
 *
 * Note [Returning megablocks]
 * A program whose live data shrinks (a server after a burst, a caught deep recursion: Note
 * [Stack overflow] in sched/stack.h) would otherwise keep its peak of megablocks mapped and
 * resident for good (issue 45: 483 MB of RSS after 240 MB of live data was dropped).
 * blk_return_mblocks(keep) gives free megablocks back to the OS with munmap until `keep`
 * megablocks are held, or none is free: from each node in proportion to its free
 * megablocks, the highest addresses first (the free-megablock lists are sorted, so the low
 * ones stay together for megablock groups), an address-contiguous run in one call. Which
 * `keep` is the GC's business (Note [Memory returned after a major GC] in sm/gc.c).
 * Invariants:
 *  - only free megablocks are returned: the group, free list and count invariants above hold
 *    before and after, with blk_mblocks() and blk_blocks_free() smaller;
 *  - a returned megablock is not ours at all: it leaves its free-megablock list and the
 *    megablock record (its hash entry deleted, so blk_is_heap_address says no), and its
 *    descriptors went with its pages: nothing may touch it (the kernel faults any access,
 *    which unmapping, rather than madvise, makes sure of). A later blk_alloc maps afresh;
 *  - a megablock group never contains a returned megablock: its megablocks are allocated
 *    and never on a free list. A group shrunk by blk_shrink_group (a stack object cut back
 *    to a fraction of its size) frees whole megablocks past the ones it keeps, which become
 *    ordinary free megablocks of its node, and its last blocks as a free group;
 *  - if the kernel refuses an munmap (too many mappings), the run stays free and mapped.
 * Thread safety: like every entry point, under sm_lock; the GC calls it with the world
 * stopped, after from-space is freed, so no GC thread holds a block it could be returning.
 */
#ifndef RTS_SM_BLOCK_H
#define RTS_SM_BLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BLOCK_SHIFT  12
#define BLOCK_SIZE   ((size_t)1 << BLOCK_SHIFT)            /* 4 KiB */
#define MBLOCK_SHIFT 20
#define MBLOCK_SIZE  ((size_t)1 << MBLOCK_SHIFT)           /* 1 MiB */
#define MBLOCK_MASK  (MBLOCK_SIZE - 1)
#define BLOCKS_PER_MBLOCK (MBLOCK_SIZE / BLOCK_SIZE)       /* 256 */
#define BDESCR_SHIFT 6                                     /* sizeof(bdescr) == 64 */
#define FIRST_USABLE_BLOCK ((BLOCKS_PER_MBLOCK << BDESCR_SHIFT) / BLOCK_SIZE)   /* 4 */
#define USABLE_BLOCKS_PER_MBLOCK (BLOCKS_PER_MBLOCK - FIRST_USABLE_BLOCK)      /* 252 */

/* Block flags (bdescr.flags). */
enum {
    BF_FREE    = 1u << 0,  /* on a free list */
    BF_LARGE   = 1u << 1,  /* holds one large object; linked, never copied */
    BF_FROM    = 1u << 2,  /* GC: belongs to a generation being collected (from-space) */
    BF_NURSERY = 1u << 3,  /* a nursery block */
    BF_EVACUATED = 1u << 4,/* GC: a large object already moved to to-space */
    BF_MBGROUP = 1u << 5,  /* head of a megablock group */
};

typedef struct bdescr {
    uint8_t *start;          /* first byte of the group */
    uint8_t *free;           /* first free byte: objects lie in [start, free) */
    struct bdescr *link;     /* list link (free list, generation, nursery, GC lists) */
    struct bdescr *prev;     /* free list back link; users may use it while allocated */
    uint8_t *scan;           /* GC: scan pointer of a to-space block */
    uint32_t blocks;         /* blocks in the group (head only); 0 in a free group's tail */
    uint16_t gen;            /* generation: 0 nursery/young, 1 old */
    uint16_t flags;          /* BF_* */
    uint32_t owner;          /* capability or GC thread that owns it, for statistics */
    uint32_t dest;           /* GC: whose objects a to-space block or an evacuated large object
                                holds (Note [To-space by capability] in sm/gcthread.h) */
    uint64_t _pad1;
} bdescr;

_Static_assert(sizeof(bdescr) == (1u << BDESCR_SHIFT), "bdescr must be 64 bytes");

static inline bdescr *bdescr_of(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return (bdescr *)((a & ~(uintptr_t)MBLOCK_MASK)
                      | (((a & MBLOCK_MASK) >> BLOCK_SHIFT) << BDESCR_SHIFT));
}

static inline size_t blk_group_bytes(const bdescr *bd) { return (size_t)bd->blocks * BLOCK_SIZE; }
static inline uint8_t *blk_group_end(const bdescr *bd) { return bd->start + blk_group_bytes(bd); }

/* Blocks in a group of k megablocks. */
#define MBGROUP_BLOCKS(k) (USABLE_BLOCKS_PER_MBLOCK + ((size_t)(k) - 1) * BLOCKS_PER_MBLOCK)

#define BLK_MAX_NODES 64                     /* heap nodes: os/topology.h's TOPO_MAX_NODES */

/* Locks held: every function below expects sm_lock (sm/storage.h), which the block
 * allocator does not know of, held by its caller, except at start-up (blk_init, blk_set_nodes
 * from sm_init) and in tests that use the allocator alone (testsuite/unit/test_block.c). */
void    blk_init(void);
/* Heap nodes 0..n-1 (1 <= n <= BLK_MAX_NODES; never fewer than before); 1 after blk_init.
 * Locks held: none (start-up). */
void    blk_set_nodes(unsigned n);
unsigned blk_heap_nodes(void);
/* A group of n >= 1 blocks on heap node `node` (< blk_heap_nodes()), its head descriptor
 * initialised: start, free = start, blocks = n (MBGROUP_BLOCKS(k) for a megablock group of
 * k megablocks, the least that holds n), link = prev = NULL, gen = 0, flags = 0 (BF_MBGROUP
 * when n > USABLE_BLOCKS_PER_MBLOCK). Returns NULL only when the OS refuses memory.
 * Locks held: sm_lock. */
bdescr *blk_alloc_group_on(size_t n, unsigned node);
static inline bdescr *blk_alloc_group(size_t n) { return blk_alloc_group_on(n, 0); }
extern size_t blk_refused_bytes;             /* the request the OS refused last */
static inline bdescr *blk_alloc(void) { return blk_alloc_group_on(1, 0); }
static inline bdescr *blk_alloc_on(unsigned node) { return blk_alloc_group_on(1, node); }
/* The heap node of the megablock holding p (inside the first megablock of a group). */
unsigned blk_node_of(const void *p);
/* Frees an allocated group (a group freed twice is an RTS_ASSERT in a debug build).
 * Locks held: sm_lock. */
void    blk_free_group(bdescr *bd);
void    blk_free_chain(bdescr *bd);          /* frees every group on a ->link chain; sm_lock */

size_t  blk_blocks_in_use(void);             /* blocks in allocated groups */
size_t  blk_blocks_free(void);               /* blocks in free groups (incl. free megablocks) */
size_t  blk_mblocks(void);                   /* megablocks held now (mapped, not returned) */
size_t  blk_free_mblocks(void);              /* of which free (Note [Returning megablocks]) */
size_t  blk_mblocks_peak(void);              /* the most held at once */
uint64_t blk_mblocks_returned(void);         /* returned to the OS, in all */
/* Returns free megablocks to the OS until `keep` are held or none is free; returns how many
 * (Note [Returning megablocks]). Locks held: sm_lock. */
size_t  blk_return_mblocks(size_t keep);
/* Shrinks the allocated group bd (a single object's, the GC not running) to its first n
 * blocks (n >= 1): the rest is freed. A megablock group keeps whole megablocks, so its
 * blocks may stay above n (bd->blocks says what it kept). Locks held: sm_lock. */
void    blk_shrink_group(bdescr *bd, size_t n);
bool    blk_is_heap_address(const void *p);  /* inside a megablock of ours (for sanity checks) */
/* Checks the invariants above; returns NULL when they hold, else a static message.
 * Locks held: sm_lock (the sanity checker's, with the world stopped). */
const char *blk_check(void);

#endif
