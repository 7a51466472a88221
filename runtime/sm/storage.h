/* Storage manager: nurseries, the old generation, large objects, allocation, the write
 * barrier. The collector itself is in gc.c (driver), evac.c (evacuate/scavenge) and
 * sanity.c (the -DS checker).
 *
 * Generations: 0 is the young generation (the capabilities' nurseries, the large objects
 * allocated since the last GC, and the aged blocks, sm_aged); 1 is the old generation. A
 * minor GC copies live nursery objects into aged blocks and live aged objects into the old
 * generation (Note [Aging]); a major GC copies the whole heap into the old generation.
 *
 * Note [Aging]
 * An object is promoted to the old generation only once it has survived two minor GCs, as in
 * GHC, whose nursery survivors stay in generation 0 for one more GC ("objects age in the
 * nursery for one GC cycle before being promoted", rts/storage/GC.h). Without it, whatever
 * happens to be live at a minor GC is promoted however short its life: in the request
 * server, the state of the connections in flight (a thread, its stack, its port, the
 * request), about 29 kB per minor GC, which then fills the old generation until a major GC
 * (issue 33's soak: the server's RSS grew by 5 MB over its first 30k connections). Aged
 * objects are young: the write barrier ignores them, a minor GC collects them. So:
 *  - a minor GC's from-space is the nurseries, the young large objects and the aged blocks;
 *    a GC thread copies an object from a nursery block into an aged_todo block (gen 0, not
 *    BF_NURSERY) and one from an aged block into a todo block (gen 1), of the object's slot
 *    (Note [To-space by capability] in gcthread.h). Young large objects are
 *    promoted at their first GC (they are not copied; aging would only keep them young);
 *  - an object that will be old after the GC (a promoted copy, a promoted large object, a
 *    remembered old object) and points to an aged one after its scan must be remembered:
 *    gc_evacuate sets gct->points_young when the address it returns is aged, and the
 *    scanner then sets the object's OBJ_DIRTY and lists it (gct->remember_hd, in blocks:
 *    Note [The GC's remember list] in evac.c); the leader adds the lists to the
 *    remembered sets after the GC (GHC's failed_to_evac);
 *  - a major GC, and every GC under --aging=0, copies everything it keeps into the old
 *    generation, leaving no aged blocks.
 * The cost is a second copy of every object that lives past two minor GCs (docs/rts-options.md,
 * "Aging"). testsuite/unit/test_aging.c checks the mechanism; io/http_soak_* its purpose.
 *
 * Invariants between GCs:
 *  - old_gen.blocks is a chain of single blocks whose objects tile [start, free);
 *    old_gen.large and each capability's large_young are chains of BF_LARGE groups holding
 *    one object each at ->start;
 *  - no block outside a GC has BF_FROM or BF_EVACUATED;
 *  - an old object that points to a young one is dirty and remembered: every object in a
 *    remset is old (generation 1), mutable and has OBJ_DIRTY set; an old object with
 *    OBJ_DIRTY is in exactly one capability's remset.
 *
 * Per capability the storage manager keeps an SmCap, the first member of the scheduler's
 * Capability (sched/capability.h), so that this layer needs nothing from the one above: it
 * knows capabilities by their SmCap and by number.
 *  - hp lies in cur_block: cur_block->start <= hp <= hplim_real, and the nursery blocks
 *    before cur_block on the ->link chain are full (their ->free is final); cur_block->free
 *    is only brought up to date (= hp) at a GC or a block switch.
 *  - hplim is either hplim_real or NULL: another OS thread (the timer, a GC leader) stores
 *    NULL to make the next heap check fail and so reach a safe point (GHC's HpLim trick).
 *    Under -DG<n> (Note [GC stress]) it is hp instead of hplim_real.
 *
 * Note [GC stress]
 * +RTS -DG<n> collects every n allocations, as Lua's test mode collects at every one, so
 * that a value held across an allocation without protection is moved under its holder at
 * once. It keeps hplim at hp, so that every allocation, inline ones too, fails its heap
 * check and reaches sm_alloc_slow, which counts it.
 */
#ifndef RTS_SM_STORAGE_H
#define RTS_SM_STORAGE_H

#include "rts_config.h"
#include "rtslab.h"
#include "sm/block.h"
#include "sync/spinlock.h"
#include "base/util.h"

#define SM_SAVE_MAX 8

struct GCThread;

/* The storage manager's part of a capability: the mutator's allocation fast path first (the
 * owner writes hp at every allocation; others store NULL into hplim), then what only the
 * owner and, with the world stopped, the GC touch. */
typedef struct SmCap {
    Value   *hp;               /* next free word of the current nursery block */
    Value   *hplim;            /* end of it, or NULL when the heap check must trap */
    Value   *hplim_real;
    bdescr  *cur_block;
    bdescr  *nursery;          /* chain of nursery blocks (gen 0, BF_NURSERY) */
    size_t   nursery_blocks;
    size_t   nursery_extra;    /* blocks past nursery_blocks, taken while its GC request
                                * waited (Note [Deferred GC requests] in gc.h); atomic */
    size_t   large_blocks_since_gc;  /* young large objects count against the nursery */
    bdescr  *large_young;      /* young large objects allocated here */
    Value   *remset;           /* remembered set: old mutable objects written since a GC */
    size_t   remset_n, remset_cap;
    uint64_t bytes_allocated;  /* in nursery blocks already left behind, and large objects */
    struct GCThread *gct;      /* this capability's GC thread state (sm/gcthread.h) */
    unsigned gc_roots_by;      /* index of the GC thread that scans its roots this GC */
    unsigned no;               /* the capability's number */
    unsigned nsave;
    unsigned stress_allocs;    /* allocations since the last -DG GC */
    bool     gc_deferred;      /* it leads a GC sync and runs on (Note [Deferred GC requests]) */
    uint64_t deferred_blocks;  /* nursery blocks it took while its GC requests waited, */
    size_t   deferred_blocks_max;   /* the most in one request, */
    uint64_t deferred_extensions;   /* and in how many extensions (sm_lock's) (for -s) */
#if RTS_PATCH_IDLE_OPTOUT
    bool     left_out;         /* takes no part in this GC (Note [Idle opt-out], sync/stw.h) */
#endif
    Value    save[SM_SAVE_MAX];   /* values an allocating call protects across a GC */
} SmCap;

/* A Capability begins with its SmCap (static_assert in sched/capability.c), so the public
 * API's RtsCap is one. */
static inline SmCap *sm_cap(RtsCap *cap) { return (SmCap *)(void *)cap; }

/* Every capability's SmCap, by number; registered by sm_cap_init. */
extern SmCap **sm_caps;
extern unsigned sm_n_caps;
/* Guards the block allocator (outside initialisation). */
extern SpinLock sm_lock;
/* Whether some thread holds sm_lock: for RTS_ASSERT (Note [Assertions] in base/util.h) in
 * functions whose "Locks held:" says sm_lock. */
static inline bool sm_lock_held(void) { return __atomic_load_n(&sm_lock.locked, __ATOMIC_RELAXED) != 0; }

typedef struct Generation {
    bdescr *blocks;          /* small objects */
    size_t  n_blocks;
    bdescr *large;           /* large objects, one group each */
    size_t  n_large_blocks;
    size_t  limit_blocks;    /* a major GC when blocks + large blocks exceed this */
    size_t  live_at_major;   /* blocks live after the last major GC */
} Generation;

extern Generation sm_old_gen;
/* The aged blocks (Note [Aging]): the nursery survivors of the last minor GC; only blocks
 * and n_blocks are used. */
extern Generation sm_aged;

void   sm_init(unsigned n_caps);
/* Set when a GC is wanted at the next allocation's slow path, which collects: the finalizers'
 * external resources ask for one so (Note [External resources] in sm/finalize.h). Atomic. */
extern bool sm_gc_requested;
void   sm_cap_init(SmCap *cap, unsigned no);
/* The allocation slow path: a new nursery block, a large object or a GC. Locks held: none (a
 * safe point); takes sm_lock around the block allocator. */
Value *sm_alloc_slow(SmCap *cap, size_t words);

/* Gives the heap check its limit back after a trap (a safe point passed). */
static inline void sm_restore_limit(SmCap *cap)
{
    Value *lim = __builtin_expect(base_cfg->gc_stress != 0, 0) ? cap->hp : cap->hplim_real;
    __atomic_store_n(&cap->hplim, lim, __ATOMIC_RELAXED);
}

/* sm_restore_limit out of line, for code that has just passed a safe point (the VM's
 * suspend): a cold path, kept out of the VM's loop. (Inlined, it once made tak and
 * simple-alloc 5-7 % slower with identical instruction counts, on one binary per build:
 * less than their spread between layouts, Note [Alignment of hot loops] in evac.c.) */
void sm_safe_point_passed(SmCap *cap);

/* The bump alone: `words` words (header included) at *p, or false when the nursery block
 * is full or the heap check traps (a safe point is due). Never GCs. */
static inline bool sm_try_alloc(SmCap *cap, size_t words, Value **p)
{
    Value *hp = cap->hp;
    if (__builtin_expect((uintptr_t)(hp + words)
                         <= (uintptr_t)__atomic_load_n(&cap->hplim, __ATOMIC_RELAXED), 1)) {
        cap->hp = hp + words;
        *p = hp;
        return true;
    }
    return false;
}

/* Allocates `words` words (header included) in the nursery; may GC. */
static inline Value *sm_alloc(SmCap *cap, size_t words)
{
    Value *p;
    return sm_try_alloc(cap, words, &p) ? p : sm_alloc_slow(cap, words);
}

/* Allocation that protects `n` Values across a possible GC: vals[] is updated in place.
 * Locks held: none (a safe point); the slow path takes sm_lock. */
Value *sm_alloc_protect_slow(SmCap *cap, size_t words, Value *vals, unsigned n);
static inline Value *sm_alloc_protect(SmCap *cap, size_t words, Value *vals, unsigned n)
{
    Value *p;
    return sm_try_alloc(cap, words, &p) ? p : sm_alloc_protect_slow(cap, words, vals, n);
}

extern size_t sm_large_young_blocks;
/* Shrinks the large object obj, which only cap's mutator uses, to its first `words` words
 * (header included; its header says so after), freeing the blocks beyond (Note [Returning
 * megablocks] in block.h): a thread's stack cut back far below its size (Note [Stack
 * shrinking] in sched/stack.c). Never GCs. Locks held: none; takes sm_lock. */
void   sm_shrink_large(SmCap *cap, Value obj, size_t words);
extern size_t sm_large_blocks_released;
/* Blocks in use by the heap (nurseries, old generation, large objects). */
size_t sm_heap_blocks(void);
/* Bytes the mutators have allocated since the start: each capability's left-behind blocks
 * and large objects, plus its current block up to hp. Exact with the world stopped (a GC's
 * record, -s at exit); a running capability's share may be a moment old. */
uint64_t sm_bytes_allocated(void);
/* Prints "heap overflow" (the heap is over -M) and exits 251; cap is the capability whose
 * allocation failed. */
void   sm_heap_overflow(SmCap *cap) __attribute__((noreturn));
/* Prints "out of memory (the OS refused N bytes)" and exits 251. */
void   sm_out_of_memory(size_t refused) __attribute__((noreturn));
/* Brings cap->cur_block->free up to hp and counts the bytes it holds as allocated. */
void   sm_sync_nursery(SmCap *cap);
/* Empties cap's nursery after a GC (its extra blocks freed: Note [Deferred GC requests] in
 * gc.h). The leader, the world stopped. Locks held: sm_lock. */
void   sm_reset_nursery(SmCap *cap);
/* Chains the n free blocks of `chain` (linked by bd->link) to cap's nursery, past
 * nursery_blocks, the first its current block (Note [Deferred GC requests] in gc.h): one
 * extension; sm_reset_nursery frees such blocks. Locks held: none (they were taken under
 * sm_lock). */
void   sm_extend_nursery(SmCap *cap, bdescr *chain, size_t n);
/* Note [Write barrier]
 * A store of a pointer into a mutable object goes through sm_set_field: it stores, then, if
 * the object is not yet dirty, calls sm_write_barrier_slow, which marks an old object dirty
 * and pushes it on the capability's remembered set (sm_remember), so that the next minor GC
 * scans it as a root. Young objects need nothing: a minor GC copies them anyway. The dirty
 * bit is set with an atomic OR, and read with an atomic load, because other capabilities
 * may set it on the same object (and lock threads and MVars through their headers). The
 * public API's sm_set_field (rtslab.h) is this, out of line. Only the mutator of cap.
 * Locks held: none. */
void sm_write_barrier_slow(RtsCap *cap, Value obj);
static inline void sm_set_field(RtsCap *cap, Value obj, size_t i, Value v)
{
    obj_payload(obj)[i] = v;
    if (!(__atomic_load_n(obj_ptr(obj), __ATOMIC_RELAXED) & OBJ_DIRTY))
        sm_write_barrier_slow(cap, obj);
}
static inline void sm_set_car(RtsCap *cap, Value p, Value v) { sm_set_field(cap, p, 0, v); }
static inline void sm_set_cdr(RtsCap *cap, Value p, Value v) { sm_set_field(cap, p, 1, v); }

/* Adds the old, dirty object obj to cap's remembered set: the write barrier's slow path
 * (which has marked it dirty), or the GC's leader for what points to aged objects. Only cap's
 * mutator, or the leader with the world stopped. Locks held: none. */
void   sm_remember(SmCap *cap, Value obj);
/* What the Invariants between GCs above say of a remembered object: old, and dirty (for
 * RTS_ASSERT: Note [Assertions] in base/util.h). */
static inline bool sm_remembered_ok(Value obj)
{
    return bdescr_of(obj_ptr(obj))->gen == 1
        && (__atomic_load_n(obj_ptr(obj), __ATOMIC_RELAXED) & OBJ_DIRTY);
}

#endif
