/* Storage manager: nurseries, the old generation, large objects, allocation, the write
 * barrier. The collector itself is in gc.c (driver), evac.c (evacuate/scavenge) and
 * sanity.c (the -DS checker).
 *
 * Generations: 0 is the young generation (the capabilities' nurseries and the large objects
 * allocated since the last GC); 1 is the old generation. A minor GC copies every live young
 * object into the old generation (no ageing); a major GC copies the whole heap.
 *
 * Invariants between GCs:
 *  - old_gen.blocks is a chain of single blocks whose objects tile [start, free);
 *    old_gen.large and each capability's large_young are chains of BF_LARGE groups holding
 *    one object each at ->start;
 *  - no block outside a GC has BF_FROM or BF_EVACUATED;
 *  - an old object that points to a young one is dirty and remembered (see capability.h).
 */
#ifndef RTS_SM_STORAGE_H
#define RTS_SM_STORAGE_H

#include "rts_config.h"
#include "sched/capability.h"

typedef struct Generation {
    bdescr *blocks;          /* small objects */
    size_t  n_blocks;
    bdescr *large;           /* large objects, one group each */
    size_t  n_large_blocks;
    size_t  limit_blocks;    /* a major GC when blocks + large blocks exceed this */
    size_t  live_at_major;   /* blocks live after the last major GC */
} Generation;

extern Generation old_gen;

void   sm_init(void);
void   sm_cap_init(Capability *cap);
Value *sm_alloc_slow(Capability *cap, size_t words);

/* Allocates `words` words (header included) in the nursery; may GC. */
static inline Value *sm_alloc(Capability *cap, size_t words)
{
    Value *p = cap->hp;
    Value *lim = __atomic_load_n(&cap->hplim, __ATOMIC_RELAXED);
    if (__builtin_expect((uintptr_t)(p + words) <= (uintptr_t)lim, 1)) {
        cap->hp = p + words;
        return p;
    }
    return sm_alloc_slow(cap, words);
}

/* Allocation that protects `n` Values across a possible GC: vals[] is updated in place. */
Value *sm_alloc_protect_slow(Capability *cap, size_t words, Value *vals, unsigned n);
static inline Value *sm_alloc_protect(Capability *cap, size_t words, Value *vals, unsigned n)
{
    Value *p = cap->hp;
    Value *lim = __atomic_load_n(&cap->hplim, __ATOMIC_RELAXED);
    if (__builtin_expect((uintptr_t)(p + words) <= (uintptr_t)lim, 1)) {
        cap->hp = p + words;
        return p;
    }
    return sm_alloc_protect_slow(cap, words, vals, n);
}

extern size_t sm_large_young_blocks;
/* Blocks in use by the heap (nurseries, old generation, large objects). */
size_t sm_heap_blocks(void);
void   sm_heap_overflow(void) __attribute__((noreturn));
/* Brings cap->cur_block->free up to hp and counts the bytes it holds as allocated. */
void   sm_sync_nursery(Capability *cap);
void   sm_reset_nursery(Capability *cap);

#endif
