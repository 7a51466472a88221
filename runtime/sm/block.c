/* Block allocator: see Note [Block layout] in block.h.
 *
 * Not thread-safe: every entry point assumes its caller serialises (sm_lock); there is no
 * lock in here.
 *
 * Note [Block allocator structure]
 * - Megablocks come from mmap, over-mapped by one megablock and trimmed to MBLOCK_SIZE
 *   alignment. A megablock whose blocks are all free goes on the free-megablock list,
 *   sorted by address, and is reused whole (for a megablock group, when enough of them are
 *   contiguous) or split again, or returned to the OS (munmap) when the GC says it holds
 *   more than it needs (Note [Returning megablocks] in block.h).
 * - Every megablock we hold is recorded in an open-addressing hash set of base addresses
 *   (linear probing, load <= 1/2), so blk_is_heap_address is O(1). The low bit of an entry
 *   marks a megablock that continues a megablock group: its descriptor area is payload, so
 *   blk_check must not walk it.
 * - Free groups of 1..USABLE_BLOCKS_PER_MBLOCK-1 blocks are on NUM_CLASSES free lists,
 *   doubly linked through link/prev; a group of n blocks is on list floor(log2 n).
 *   Allocation takes the first group of the list ceil(log2 n) or above (any of them fits),
 *   then first-fit on list floor(log2 n), then a free megablock, then a new one; it keeps
 *   the front of the group and frees the rest.
 * - Descriptors of a group other than its head belong to the allocator: blocks = 0 and
 *   link = head, in allocated groups for all of them, in free groups for the tail (the
 *   interior of a free group is stale). So the group containing the block just before a
 *   freed group is found in O(1): its descriptor is either a head (blocks > 0) or points to
 *   one, and the head's BF_FREE says whether to coalesce.
 * - A megablock group of k megablocks has its head at the first usable block of the first
 *   megablock; only that megablock's descriptors exist. Freeing it turns it into k free
 *   megablocks.
 *
 * Note [Megablocks on NUMA nodes]
 * Every megablock belongs to one heap node (0..blk_nodes-1; one, node 0, unless --numa has
 * more in use: Note [NUMA-local heap] in os/numa.h). A megablock gets its node when it is
 * mapped (blk_alloc_group_on's node), and with it the node's memory policy (os/numa.c's
 * numa_bind_memory, before any of its pages is touched, so that the kernel places them on
 * that node); it keeps the node for life, as its pages stay where they are. The node is
 * written in the megablock's descriptor 0, which describes the descriptor area itself and
 * so never belongs to a group (FIRST_USABLE_BLOCK > 0); a megablock group's continuation
 * megablocks hold payload there, so their node is written again when the group is freed
 * (it is the group's: a group is mapped on, or made of free megablocks of, one node).
 * The free lists and the free-megablock list are per node, and a free group goes on the
 * lists of its megablock's node, so blk_alloc_group_on(n, node) takes only memory of that
 * node: from its lists, its free megablocks, or a new megablock mapped for it. Memory of one
 * node is never handed to another (GHC does the same): a node whose capabilities need less
 * keeps its free megablocks for later. Coalescing never crosses a megablock, so never a
 * node. With one node all this is the allocator of before, its lists indexed by node 0.
 */
#include "sm/block.h"

#include "os/numa.h"
#include "base/util.h"             /* RTS_ASSERT */
#include <stdlib.h>
#include <sys/mman.h>

#define NUM_CLASSES 8                 /* floor(log2 n) for n < USABLE_BLOCKS_PER_MBLOCK */
_Static_assert(((size_t)1 << NUM_CLASSES) > USABLE_BLOCKS_PER_MBLOCK,
               "size classes must cover a megablock's usable blocks");

#define MB_CONTINUATION ((uintptr_t)1)  /* hash entry tag: not the first of a megablock group */

static bdescr *free_lists[BLK_MAX_NODES][NUM_CLASSES];
static bdescr *free_mblocks[BLK_MAX_NODES];  /* each sorted by address, linked through the
                                                head's link/prev */
static unsigned blk_nodes = 1;        /* heap nodes: Note [Megablocks on NUMA nodes] */

static uintptr_t *mb_table;           /* megablock bases (| MB_CONTINUATION); 0 = empty slot */
static size_t mb_table_cap;           /* a power of two */

static size_t n_mblocks;              /* megablocks obtained from the OS */
size_t blk_refused_bytes;
static size_t n_free_mblocks;
static size_t n_mbgroup_mblocks;      /* megablocks inside allocated megablock groups */
static size_t n_mbgroup_blocks;       /* MBGROUP_BLOCKS(k) summed over those groups */
static size_t n_blocks_in_use;        /* includes n_mbgroup_blocks */
static size_t n_blocks_free;          /* includes USABLE_BLOCKS_PER_MBLOCK per free megablock */
static size_t n_mblocks_peak;         /* the most megablocks held at once */
static uint64_t n_mblocks_returned;   /* megablocks given back to the OS, in all */

/* ---- descriptor arithmetic ---------------------------------------------------------- */

static inline uintptr_t mblock_base(const void *p) { return (uintptr_t)p & ~(uintptr_t)MBLOCK_MASK; }
static inline size_t block_index(const bdescr *bd) { return ((uintptr_t)bd & MBLOCK_MASK) >> BDESCR_SHIFT; }
static inline uint8_t *block_addr(const bdescr *bd)
{
    return (uint8_t *)(mblock_base(bd) + (block_index(bd) << BLOCK_SHIFT));
}
static inline bdescr *first_usable(uintptr_t base) { return (bdescr *)base + FIRST_USABLE_BLOCK; }
/* A megablock's heap node, in its descriptor 0 (Note [Megablocks on NUMA nodes]). */
static inline unsigned mb_node(uintptr_t base) { return ((bdescr *)base)->owner; }
static inline void mb_set_node(uintptr_t base, unsigned node) { ((bdescr *)base)->owner = node; }

static inline unsigned log2_floor(size_t n) { return 63u - (unsigned)__builtin_clzll((unsigned long long)n); }
static inline unsigned log2_ceil(size_t n) { return n <= 1 ? 0 : log2_floor(n - 1) + 1; }

static inline size_t mbgroup_mblocks(size_t n)     /* megablocks needed for n > USABLE blocks */
{
    return 1 + (n - USABLE_BLOCKS_PER_MBLOCK + BLOCKS_PER_MBLOCK - 1) / BLOCKS_PER_MBLOCK;
}

/* ---- megablock record ---------------------------------------------------------------- */

static inline size_t mb_hash(uintptr_t base)
{
    return (size_t)(((uint64_t)(base >> MBLOCK_SHIFT) * 0x9E3779B97F4A7C15ull) >> 32) & (mb_table_cap - 1);
}

static uintptr_t *mb_slot(uintptr_t base)   /* the slot holding base, or the empty one it would take */
{
    size_t i = mb_hash(base);
    while (mb_table[i] != 0 && (mb_table[i] & ~(uintptr_t)MBLOCK_MASK) != base)
        i = (i + 1) & (mb_table_cap - 1);
    return &mb_table[i];
}

static bool mb_table_resize(size_t cap)
{
    uintptr_t *old = mb_table;
    size_t old_cap = mb_table_cap;
    uintptr_t *t = calloc(cap, sizeof *t);
    if (!t) {
        blk_refused_bytes = cap * sizeof *t;
        return false;
    }
    mb_table = t;
    mb_table_cap = cap;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            *mb_slot(old[i] & ~(uintptr_t)MBLOCK_MASK) = old[i];
    free(old);
    return true;
}

static bool mb_record(uintptr_t base, size_t k)  /* k new megablocks from base */
{
    size_t cap = mb_table_cap;
    while ((n_mblocks + k) * 2 > cap)
        cap *= 2;
    if (cap != mb_table_cap && !mb_table_resize(cap))
        return false;
    for (size_t i = 0; i < k; i++)
        *mb_slot(base + i * MBLOCK_SIZE) = base + i * MBLOCK_SIZE;
    n_mblocks += k;
    if (n_mblocks > n_mblocks_peak)
        n_mblocks_peak = n_mblocks;
    return true;
}

/* Forgets the megablock at base (it is being unmapped): linear probing's deletion, which
 * moves back every later entry of the cluster whose home slot does not lie cyclically in
 * (hole, its slot], so that no lookup stops early at the hole (Knuth's Algorithm R). */
static void mb_forget(uintptr_t base)
{
    size_t hole = (size_t)(mb_slot(base) - mb_table), mask = mb_table_cap - 1;
    RTS_ASSERT(mb_table[hole] != 0);
    mb_table[hole] = 0;
    for (size_t j = (hole + 1) & mask; mb_table[j] != 0; j = (j + 1) & mask) {
        size_t home = mb_hash(mb_table[j] & ~(uintptr_t)MBLOCK_MASK);
        bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
        if (!stays) {
            mb_table[hole] = mb_table[j];
            mb_table[j] = 0;
            hole = j;
        }
    }
    n_mblocks--;
}

static void mb_set_continuation(uintptr_t base, bool cont)
{
    uintptr_t *s = mb_slot(base);
    RTS_ASSERT(*s != 0);
    *s = base | (cont ? MB_CONTINUATION : 0);
}

/* RTSLAB_TEST_MAP_LIMIT=<bytes>: megablocks beyond that many bytes in all are refused, as
 * an OS out of memory would, but at a point that does not depend on the rest of the process
 * (ulimit -v counts thread stacks and sanitizers' shadow memory): for the tests of running
 * out of memory. */
static size_t map_limit(void)
{
    static size_t limit = SIZE_MAX - 1;
    if (limit == SIZE_MAX - 1) {
        const char *s = getenv("RTSLAB_TEST_MAP_LIMIT");
        limit = s && *s ? (size_t)strtoull(s, NULL, 10) : SIZE_MAX;
    }
    return limit;
}

/* k fresh contiguous megablocks of heap node `node` (its memory policy set), recorded; 0
 * when the OS (or malloc) refuses, with the size it refused in blk_refused_bytes. */
static uintptr_t mb_map(size_t k, unsigned node)
{
    size_t len = k * MBLOCK_SIZE;
    if ((n_mblocks + k) * MBLOCK_SIZE > map_limit()) {
        blk_refused_bytes = len + MBLOCK_SIZE;
        return 0;
    }
    uint8_t *raw = mmap(NULL, len + MBLOCK_SIZE, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        blk_refused_bytes = len + MBLOCK_SIZE;
        return 0;
    }
    uintptr_t base = ((uintptr_t)raw + MBLOCK_MASK) & ~(uintptr_t)MBLOCK_MASK;
    size_t head = base - (uintptr_t)raw;
    if (head)
        munmap(raw, head);
    if (MBLOCK_SIZE - head)
        munmap((uint8_t *)base + len, MBLOCK_SIZE - head);
    if (!mb_record(base, k)) {
        munmap((void *)base, len);
        return 0;
    }
    numa_bind_memory((void *)base, len, node);
    for (size_t i = 0; i < k; i++)
        mb_set_node(base + i * MBLOCK_SIZE, node);
    return base;
}

/* ---- free lists ---------------------------------------------------------------------- */

static inline void dlist_push(bdescr **list, bdescr *bd)
{
    bd->prev = NULL;
    bd->link = *list;
    if (*list)
        (*list)->prev = bd;
    *list = bd;
}

static inline void dlist_remove(bdescr **list, bdescr *bd)
{
    if (bd->prev)
        bd->prev->link = bd->link;
    else
        *list = bd->link;
    if (bd->link)
        bd->link->prev = bd->prev;
}

/* Marks bd as the head of a free group of n blocks (on no list yet). */
static void set_free_group(bdescr *bd, size_t n)
{
    bd->start = block_addr(bd);
    bd->free = bd->start;
    bd->blocks = (uint32_t)n;
    bd->flags = BF_FREE;
    bd->gen = 0;
    if (n > 1) {
        bdescr *tail = bd + n - 1;
        tail->blocks = 0;
        tail->link = bd;
        tail->flags = 0;
    }
}

static void free_list_insert(bdescr *bd)
{
    dlist_push(&free_lists[mb_node(mblock_base(bd))][log2_floor(bd->blocks)], bd);
}

static void free_list_remove(bdescr *bd)
{
    dlist_remove(&free_lists[mb_node(mblock_base(bd))][log2_floor(bd->blocks)], bd);
}

/* Adds the free megablock at base to its node's sorted free-megablock list. */
static void free_mblock_insert(uintptr_t base)
{
    bdescr *bd = first_usable(base);
    bdescr **list = &free_mblocks[mb_node(base)];
    set_free_group(bd, USABLE_BLOCKS_PER_MBLOCK);
    bdescr *after = NULL, *next = *list;
    while (next && (uintptr_t)next < (uintptr_t)bd) {
        after = next;
        next = next->link;
    }
    bd->prev = after;
    bd->link = next;
    if (after)
        after->link = bd;
    else
        *list = bd;
    if (next)
        next->prev = bd;
    n_free_mblocks++;
}

/* ---- allocation ---------------------------------------------------------------------- */

static void init_alloc_group(bdescr *bd, size_t n, size_t described)
{
    bd->start = block_addr(bd);
    bd->free = bd->start;
    bd->scan = bd->start;
    bd->link = bd->prev = NULL;
    bd->blocks = (uint32_t)n;
    bd->gen = 0;
    bd->owner = 0;
    bd->dest = 0;
    bd->flags = n > USABLE_BLOCKS_PER_MBLOCK ? BF_MBGROUP : 0;
    for (size_t i = 1; i < described; i++) {
        bdescr *b = bd + i;
        b->start = b->free = b->scan = block_addr(b);
        b->link = bd;
        b->prev = NULL;
        b->blocks = 0;
        b->gen = 0;
        b->flags = 0;
        b->owner = 0;
    }
}

static bdescr *alloc_mbgroup(size_t n, unsigned node)
{
    size_t k = mbgroup_mblocks(n);
    uintptr_t base = 0;

    /* k address-contiguous free megablocks are k consecutive entries of the sorted list. */
    bdescr *run = NULL;
    size_t run_len = 0;
    for (bdescr *bd = free_mblocks[node]; bd; bd = bd->link) {
        if (run && mblock_base(bd) == mblock_base(run) + run_len * MBLOCK_SIZE) {
            run_len++;
        } else {
            run = bd;
            run_len = 1;
        }
        if (run_len == k) {
            base = mblock_base(run);
            bdescr *before = run->prev, *after = bd->link;
            if (before)
                before->link = after;
            else
                free_mblocks[node] = after;
            if (after)
                after->prev = before;
            n_free_mblocks -= k;
            n_blocks_free -= k * USABLE_BLOCKS_PER_MBLOCK;
            for (size_t i = 1; i < k; i++)
                mb_set_continuation(base + i * MBLOCK_SIZE, true);
            break;
        }
    }
    if (!base) {
        base = mb_map(k, node);
        if (!base)
            return NULL;
        for (size_t i = 1; i < k; i++)
            mb_set_continuation(base + i * MBLOCK_SIZE, true);
    }

    bdescr *bd = first_usable(base);
    init_alloc_group(bd, MBGROUP_BLOCKS(k), USABLE_BLOCKS_PER_MBLOCK);
    n_mbgroup_mblocks += k;
    n_mbgroup_blocks += MBGROUP_BLOCKS(k);
    n_blocks_in_use += MBGROUP_BLOCKS(k);
    return bd;
}

/* A free group of at least n blocks on `node`, taken off its list (or a whole free
 * megablock). */
static bdescr *take_free_group(size_t n, unsigned node)
{
    for (unsigned c = log2_ceil(n); c < NUM_CLASSES; c++) {
        bdescr *bd = free_lists[node][c];
        if (bd) {
            free_list_remove(bd);
            return bd;
        }
    }
    /* Groups on list floor(log2 n) may fit too (when n is not a power of two). */
    for (bdescr *bd = free_lists[node][log2_floor(n)]; bd; bd = bd->link) {
        if (bd->blocks >= n) {
            free_list_remove(bd);
            return bd;
        }
    }
    if (free_mblocks[node]) {
        bdescr *bd = free_mblocks[node];
        dlist_remove(&free_mblocks[node], bd);
        n_free_mblocks--;
        return bd;
    }
    uintptr_t base = mb_map(1, node);
    if (!base)
        return NULL;
    bdescr *bd = first_usable(base);
    set_free_group(bd, USABLE_BLOCKS_PER_MBLOCK);
    n_blocks_free += USABLE_BLOCKS_PER_MBLOCK;
    return bd;
}

void blk_init(void)
{
    if (mb_table)
        return;
    if (!mb_table_resize(64))
        abort();
}

void blk_set_nodes(unsigned n)
{
    RTS_ASSERT(n >= 1 && n <= BLK_MAX_NODES && n >= blk_nodes);
    blk_nodes = n;
}

unsigned blk_heap_nodes(void) { return blk_nodes; }

unsigned blk_node_of(const void *p) { return mb_node(mblock_base(p)); }

bdescr *blk_alloc_group_on(size_t n, unsigned node)
{
    RTS_ASSERT(mb_table && n >= 1 && node < blk_nodes);
    if (n > USABLE_BLOCKS_PER_MBLOCK)
        return alloc_mbgroup(n, node);

    bdescr *bd = take_free_group(n, node);
    if (!bd)
        return NULL;
    size_t rest = bd->blocks - n;
    if (rest) {
        /* The remainder follows a used group and precedes what followed a maximal free
         * group, so it has no free neighbour to coalesce with. */
        set_free_group(bd + n, rest);
        free_list_insert(bd + n);
    }
    init_alloc_group(bd, n, n);
    n_blocks_free -= n;
    n_blocks_in_use += n;
    return bd;
}

/* ---- freeing ------------------------------------------------------------------------- */

static void free_mbgroup(bdescr *bd)
{
    uintptr_t base = mblock_base(bd);
    unsigned node = mb_node(base);
    size_t k = mbgroup_mblocks(bd->blocks);
    n_mbgroup_mblocks -= k;
    n_mbgroup_blocks -= MBGROUP_BLOCKS(k);
    n_blocks_in_use -= MBGROUP_BLOCKS(k);
    for (size_t i = 0; i < k; i++) {
        if (i > 0) {
            mb_set_continuation(base + i * MBLOCK_SIZE, false);
            mb_set_node(base + i * MBLOCK_SIZE, node);   /* it held payload */
        }
        free_mblock_insert(base + i * MBLOCK_SIZE);
    }
    n_blocks_free += k * USABLE_BLOCKS_PER_MBLOCK;
}

void blk_free_group(bdescr *bd)
{
    RTS_ASSERT(bd->blocks > 0 && !(bd->flags & BF_FREE));
    if (bd->blocks > USABLE_BLOCKS_PER_MBLOCK) {
        free_mbgroup(bd);
        return;
    }
    size_t n = bd->blocks;
    n_blocks_in_use -= n;
    n_blocks_free += n;

    /* An absorbed head loses BF_FREE, so only genuine free heads ever carry it. */
    size_t end = block_index(bd) + n;
    if (end < BLOCKS_PER_MBLOCK) {
        bdescr *next = bd + n;
        if (next->flags & BF_FREE) {
            free_list_remove(next);
            next->flags = 0;
            n += next->blocks;
        }
    }
    if (block_index(bd) > FIRST_USABLE_BLOCK) {
        bdescr *before = bd - 1;
        bdescr *head = before->blocks ? before : before->link;
        if (head->flags & BF_FREE) {
            free_list_remove(head);
            bd->flags = 0;
            n += head->blocks;
            bd = head;
        }
    }
    if (n == USABLE_BLOCKS_PER_MBLOCK) {
        free_mblock_insert(mblock_base(bd));
    } else {
        set_free_group(bd, n);
        free_list_insert(bd);
    }
}

void blk_free_chain(bdescr *bd)
{
    while (bd) {
        bdescr *next = bd->link;
        blk_free_group(bd);
        bd = next;
    }
}

/* Shrinks the allocated group bd to its first n blocks (Note [Returning megablocks] in
 * block.h): the rest is freed as a group of its own would be. */
void blk_shrink_group(bdescr *bd, size_t n)
{
    RTS_ASSERT(n >= 1 && n <= bd->blocks && !(bd->flags & BF_FREE));
    if (bd->blocks > USABLE_BLOCKS_PER_MBLOCK) {
        /* A megablock group keeps whole megablocks: k' of its k, or its first megablock
         * alone as an ordinary group of all its usable blocks, whose descriptors the group's
         * allocation initialised (init_alloc_group); the others become free megablocks. */
        uintptr_t base = mblock_base(bd);
        unsigned node = mb_node(base);
        size_t k = mbgroup_mblocks(bd->blocks);
        size_t kept = n > USABLE_BLOCKS_PER_MBLOCK ? mbgroup_mblocks(n) : 1;
        if (kept == k)
            return;
        for (size_t i = kept; i < k; i++) {
            mb_set_continuation(base + i * MBLOCK_SIZE, false);
            mb_set_node(base + i * MBLOCK_SIZE, node);   /* it held payload */
            free_mblock_insert(base + i * MBLOCK_SIZE);
        }
        n_blocks_free += (k - kept) * USABLE_BLOCKS_PER_MBLOCK;
        n_blocks_in_use -= MBGROUP_BLOCKS(k) - MBGROUP_BLOCKS(kept);
        n_mbgroup_blocks -= MBGROUP_BLOCKS(k);
        n_mbgroup_mblocks -= k;
        if (kept > 1) {
            n_mbgroup_blocks += MBGROUP_BLOCKS(kept);
            n_mbgroup_mblocks += kept;
        } else {
            bd->flags &= (uint16_t)~BF_MBGROUP;
        }
        bd->blocks = (uint32_t)MBGROUP_BLOCKS(kept);
        if (kept > 1)
            return;
    }
    size_t rest = bd->blocks - n;
    if (!rest)
        return;
    bdescr *tail = bd + n;
    bd->blocks = (uint32_t)n;
    init_alloc_group(tail, rest, rest);
    blk_free_group(tail);                  /* coalesces with a free group after it */
}

/* Note [Returning megablocks] in block.h. */
static bool unmap_run(uintptr_t lo, size_t k)
{
    if (munmap((void *)lo, k * MBLOCK_SIZE) != 0)
        return false;
    for (size_t i = 0; i < k; i++)
        mb_forget(lo + i * MBLOCK_SIZE);
    n_free_mblocks -= k;
    n_blocks_free -= k * USABLE_BLOCKS_PER_MBLOCK;
    n_mblocks_returned += k;
    return true;
}

/* Gives back up to `want` free megablocks of node `node`, the highest addresses first,
 * contiguous ones in one munmap; returns how many. */
static size_t return_node(unsigned node, size_t want)
{
    bdescr *bd = free_mblocks[node];
    if (!bd || !want)
        return 0;
    while (bd->link)
        bd = bd->link;
    size_t done = 0;
    while (bd && done < want) {
        /* The run [lo, hi]: bd and the free megablocks just below it, as many as wanted. */
        bdescr *lo = bd;
        size_t k = 1;
        while (done + k < want && lo->prev
               && mblock_base(lo->prev) + MBLOCK_SIZE == mblock_base(lo)) {
            lo = lo->prev;
            k++;
        }
        bdescr *below = lo->prev, *above = bd->link;
        if (below)
            below->link = above;
        else
            free_mblocks[node] = above;
        if (above)
            above->prev = below;
        if (!unmap_run(mblock_base(lo), k)) {
            /* The kernel refused (too many mappings): keep them, and stop. */
            for (size_t i = 0; i < k; i++) {
                n_free_mblocks--;
                free_mblock_insert(mblock_base(lo) + i * MBLOCK_SIZE);
            }
            break;
        }
        done += k;
        bd = below;
    }
    return done;
}

size_t blk_return_mblocks(size_t keep)
{
    if (n_mblocks <= keep || !n_free_mblocks)
        return 0;
    size_t excess = n_mblocks - keep;
    if (excess > n_free_mblocks)
        excess = n_free_mblocks;
    /* Each node gives back its share of the excess, in proportion to its free megablocks
     * (all of it with one node); again while a refused munmap leaves some to go. */
    size_t returned = 0;
    while (returned < excess) {
        size_t want = excess - returned, free_now = n_free_mblocks, pass = 0;
        for (unsigned node = 0; node < blk_nodes && pass < want; node++) {
            size_t c = 0;
            for (bdescr *bd = free_mblocks[node]; bd; bd = bd->link)
                c++;
            size_t share = (want * c + free_now - 1) / free_now;
            pass += return_node(node, share < want - pass ? share : want - pass);
        }
        if (!pass)
            break;
        returned += pass;
    }
    return returned;
}

/* ---- queries ------------------------------------------------------------------------- */

size_t blk_blocks_in_use(void) { return n_blocks_in_use; }
size_t blk_blocks_free(void) { return n_blocks_free; }
size_t blk_mblocks(void) { return n_mblocks; }
size_t blk_free_mblocks(void) { return n_free_mblocks; }
size_t blk_mblocks_peak(void) { return n_mblocks_peak; }
uint64_t blk_mblocks_returned(void) { return n_mblocks_returned; }

bool blk_is_heap_address(const void *p)
{
    return mb_table && *mb_slot(mblock_base(p)) != 0;
}

/* ---- invariant checks ---------------------------------------------------------------- */

/* Is bd the head of a group in its (ordinary) megablock? */
static bool is_group_head(const bdescr *bd)
{
    if (!blk_is_heap_address(bd) || (*mb_slot(mblock_base(bd)) & MB_CONTINUATION))
        return false;
    const bdescr *b = first_usable(mblock_base(bd));
    if (b->blocks > USABLE_BLOCKS_PER_MBLOCK)
        return b == bd;
    while (b < bd && b->blocks > 0 && block_index(b) + b->blocks <= BLOCKS_PER_MBLOCK)
        b += b->blocks;
    return b == bd;
}

static const char *check_free_head(const bdescr *bd)
{
    if (!(bd->flags & BF_FREE))
        return "block: free-list entry without BF_FREE";
    if (!is_group_head(bd))
        return "block: free-list entry is not a group head";
    if (bd->blocks > 1 && (bd[bd->blocks - 1].blocks != 0 || bd[bd->blocks - 1].link != bd))
        return "block: free group's tail does not point back to its head";
    return NULL;
}

const char *blk_check(void)
{
    const char *err;
    size_t list_groups[NUM_CLASSES] = {0};
    size_t list_mblocks = 0;

    /* Free lists: consistent back links (so no entry repeats), right class and node, genuine
     * heads. */
    for (unsigned node = 0; node < BLK_MAX_NODES; node++)
    for (unsigned c = 0; c < NUM_CLASSES; c++) {
        const bdescr *prev = NULL;
        for (const bdescr *bd = free_lists[node][c]; bd; prev = bd, bd = bd->link) {
            if (bd->prev != prev)
                return "block: free list back link broken";
            if ((err = check_free_head(bd)))
                return err;
            if (bd->blocks == 0 || bd->blocks >= USABLE_BLOCKS_PER_MBLOCK || log2_floor(bd->blocks) != c)
                return "block: free group on the wrong size-class list";
            if (mb_node(mblock_base(bd)) != node)
                return "block: free group on another node's list";
            list_groups[c]++;
        }
    }
    for (unsigned node = 0; node < BLK_MAX_NODES; node++) {
        const bdescr *prev = NULL;
        for (const bdescr *bd = free_mblocks[node]; bd; prev = bd, bd = bd->link) {
            if (bd->prev != prev)
                return "block: free-megablock list back link broken";
            if (prev && (uintptr_t)prev >= (uintptr_t)bd)
                return "block: free-megablock list not sorted";
            if (bd != first_usable(mblock_base(bd)) || bd->blocks != USABLE_BLOCKS_PER_MBLOCK)
                return "block: free-megablock entry is not a whole megablock";
            if (mb_node(mblock_base(bd)) != node)
                return "block: free megablock on another node's list";
            if ((err = check_free_head(bd)))
                return err;
            list_mblocks++;
        }
    }
    if (list_mblocks != n_free_mblocks)
        return "block: free-megablock count wrong";

    /* Every megablock: groups tile it; free groups are maximal and counted. */
    size_t walk_groups[NUM_CLASSES] = {0};
    size_t walk_free_mblocks = 0, walk_mbgroups = 0, walk_mbgroup_mblocks = 0, walk_mbgroup_blocks = 0;
    size_t walk_in_use = 0, walk_free = 0, recorded = 0, continuations = 0;
    for (size_t s = 0; s < mb_table_cap; s++) {
        uintptr_t e = mb_table[s];
        if (!e)
            continue;
        recorded++;
        if (e & MB_CONTINUATION) {
            continuations++;
            continue;
        }
        uintptr_t base = e & ~(uintptr_t)MBLOCK_MASK;
        bdescr *bd = first_usable(base);
        if (mb_node(base) >= blk_nodes)
            return "block: megablock on no heap node";
        if (bd->blocks > USABLE_BLOCKS_PER_MBLOCK) {
            if (bd->flags & BF_FREE)
                return "block: free megablock group";
            size_t k = mbgroup_mblocks(bd->blocks);
            for (size_t i = 1; i < k; i++) {
                uintptr_t *slot = mb_slot(base + i * MBLOCK_SIZE);
                if (!(*slot & MB_CONTINUATION))
                    return "block: megablock group's megablocks not recorded";
            }
            if (bd->start != block_addr(bd))
                return "block: megablock group head's start wrong";
            walk_mbgroups++;
            walk_mbgroup_mblocks += k;
            walk_mbgroup_blocks += MBGROUP_BLOCKS(k);
            walk_in_use += MBGROUP_BLOCKS(k);
            continue;
        }
        bool prev_free = false;
        size_t i = FIRST_USABLE_BLOCK;
        while (i < BLOCKS_PER_MBLOCK) {
            bd = (bdescr *)base + i;
            if (bd->blocks == 0 || i + bd->blocks > BLOCKS_PER_MBLOCK)
                return "block: groups do not tile the megablock";
            if (bd->start != block_addr(bd))
                return "block: group head's start wrong";
            bool is_free = bd->flags & BF_FREE;
            if (is_free) {
                if (prev_free)
                    return "block: adjacent free groups";
                if (bd->blocks > 1 && (bd[bd->blocks - 1].blocks != 0 || bd[bd->blocks - 1].link != bd))
                    return "block: free group's tail does not point back to its head";
                if (bd->blocks == USABLE_BLOCKS_PER_MBLOCK)
                    walk_free_mblocks++;
                else
                    walk_groups[log2_floor(bd->blocks)]++;
                walk_free += bd->blocks;
            } else {
                for (size_t j = 1; j < bd->blocks; j++)
                    if (bd[j].blocks != 0 || bd[j].link != bd)
                        return "block: allocated group's descriptor does not point to its head";
                walk_in_use += bd->blocks;
            }
            prev_free = is_free;
            i += bd->blocks;
        }
    }

    /* Counting free heads both ways makes list membership a bijection. */
    for (unsigned c = 0; c < NUM_CLASSES; c++)
        if (walk_groups[c] != list_groups[c])
            return "block: a free group is not on its free list";
    if (walk_free_mblocks != n_free_mblocks)
        return "block: a free megablock is not on the free-megablock list";
    if (recorded != n_mblocks)
        return "block: megablock count wrong";
    if (walk_mbgroup_mblocks != n_mbgroup_mblocks || continuations != walk_mbgroup_mblocks - walk_mbgroups)
        return "block: megablock group count wrong";
    if (walk_mbgroup_blocks != n_mbgroup_blocks)
        return "block: megablock group block count wrong";
    if (walk_in_use != n_blocks_in_use)
        return "block: blocks-in-use count wrong";
    if (walk_free != n_blocks_free)
        return "block: free-block count wrong";
    if ((n_blocks_in_use - n_mbgroup_blocks) + n_blocks_free
        != (n_mblocks - n_mbgroup_mblocks) * USABLE_BLOCKS_PER_MBLOCK)
        return "block: blocks do not add up to the megablocks";
    return NULL;
}
