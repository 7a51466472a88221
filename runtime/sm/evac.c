/* Evacuation and scavenging: copying live objects into a GC thread's to-space and scanning
 * them (Cheney). See Note [To-space] in gcthread.h and Note [Racing for an object] in gc.h.
 * Entry points run on a GC thread with the world stopped. Locks: new_todo_block takes
 * sm_lock around the block allocator; a GC thread's deque takes none (wsdeque.h);
 * objects are claimed by CAS, large objects by an atomic flag. */
#include <stdlib.h>
#include <string.h>
#include "sm/evac.h"
#include "sm/roots.h"
#include "base/util.h"
#include "os/numa.h"
#include "trace/eventlog.h"
#if RTS_PATCH_GEN0_STEAL
#include <sched.h>
#endif

/* Note [Alignment of hot loops]
 * gc/deep-stack spends most of its GC time in one 18-byte loop: evac_range over a stack's
 * slots, inlined into gc_scavenge_object, skipping the non-pointers. Where that loop starts
 * within its 64-byte cache line decides the program's speed: over 8 seeded layouts of the
 * baseline (testsuite/bench.py --layouts 8, norm size, -N1) the two whose loop began at
 * byte 48 of a line, so that it straddled two lines, took 2.53 and 2.62 s; the six that
 * began at 0, 16 or 32 took 2.02-2.21 s. A patch's build with the same evac.o showed the
 * same two groups by the same rule. That is what the +40-75 % "regressions" of one binary
 * per build were (Note [Code layout as a factor] in tools/layout.py).
 * We do not align loops explicitly. -falign-loops=32 (every loop on a 32-byte boundary, so
 * a loop under 32 bytes never straddles a line) halved deep-stack's spread between layouts
 * (29.6 % -> 15.4 %, max/min of 8 layout means) but widened imaginary/nfib's (2.8 % ->
 * 17.3 %) and made it 5.3 % slower [+1.7, +9.7]; over six programs the geometric mean did
 * not move (-0.0 % [-1.8, +2.0]). Aligning one loop by hand would fix the one we know of
 * and leave the rest to chance. The answer is in the measurement: layouts as a random
 * factor, so that an effect of where code lands is noise with an interval, not a result.
 *
 * new_todo_block: NULL when the OS refuses memory, with *refused what it refused. Out of
 * line: a slow path, once per 4 KiB copied. (Inlining it was once seen to make deep-stack's
 * GC 35 % slower, on one binary per build: the loop above moving, most likely.) Not `cold`
 * too: that compiles it for size, with wsdeque_push inlined, and a work-stealing stress
 * test's steals fell below its floor (2 runs of 3). */
__attribute__((noinline))
static bdescr *new_todo_block(GCThread *gct, bool aged, unsigned slot, size_t *refused)
{
    spin_lock(&sm_lock);
    bdescr *bd = blk_alloc_on(numa_cap_node(gct->cap->no));
    *refused = blk_refused_bytes;
    spin_unlock(&sm_lock);
    if (!bd)
        return NULL;
    bd->gen = aged ? 0 : 1;                 /* Note [Aging] in storage.h */
    bd->flags = 0;
    bd->scan = bd->start;
    bd->owner = gct->index;
    bd->dest = slot / 2;
    bd->link = NULL;
    bdescr **todo;
    if (aged) {
        if (gct->aged_tl) gct->aged_tl->link = bd; else gct->aged_hd = bd;
        gct->aged_tl = bd;
        gct->n_aged++;
        todo = &gct->aged_todo[slot];
    } else {
        if (gct->blocks_tl) gct->blocks_tl->link = bd; else gct->blocks_hd = bd;
        gct->blocks_tl = bd;
        gct->n_blocks++;
        todo = &gct->todo[slot];
    }
    bdescr *full = *todo;
    if (full && full != gct->scan_bd && full->scan < full->free)
        wsdeque_push(&gct->deque, full);
    *todo = bd;
    return bd;
}

/* Room for `words` words in an aged or an old to-space block of todo slot `slot` (Note
 * [To-space by capability] in gcthread.h); NULL when the OS refuses memory, with *refused
 * what it refused. */
static inline Value *gct_alloc(GCThread *gct, size_t words, bool aged, unsigned slot,
                               size_t *refused)
{
    bdescr *bd = aged ? gct->aged_todo[slot] : gct->todo[slot];
    size_t bytes = words * sizeof(Value);
    if (!bd || bd->free + bytes > bd->start + BLOCK_SIZE)
        bd = new_todo_block(gct, aged, slot, refused);
    if (!bd)
        return NULL;
    Value *p = (Value *)bd->free;
    bd->free += bytes;
    return p;
}

#if RTS_PATCH_GEN0_STEAL
/* A minor GC that steals, which only the patch makes (Note [Minor GC stealing]): large
 * objects and chunks of big ones go on the deques in these GCs and no other. */
static inline bool steals_young(const GCThread *gct)
{
    return gct->steal && !gct->major;
}

/* A stealing GC of a run whose minor GCs steal (-qb0, or the default from -A32m): its idle
 * GC threads yield and count their steals (Note [Minor GC stealing]). Under -qb1 no GC is
 * one, so the look-for-work loop is the baseline's. (A minor GC steals only in such a run;
 * testing !major as well keeps one that stole by mistake counted, which the -qb1 tests
 * check.) Read once per gc_scavenge_loop. */
static bool steals_by_patch(const GCThread *gct)
{
    return gct->steal && (!gct->major || base_cfg->balance_gen == 0);
}

#endif
static void evacuate_large(GCThread *gct, bdescr *bd)
{
    uint16_t old = __atomic_fetch_or(&bd->flags, (uint16_t)BF_EVACUATED, __ATOMIC_ACQ_REL);
    if (old & BF_EVACUATED)
        return;
    bd->dest = gct->dest;                /* read by whoever scans it, after a deque's release */
#if RTS_PATCH_GEN0_STEAL
    if (steals_young(gct)) {             /* its scan work may be stolen (Note [Minor GC stealing]) */
        wsdeque_push(&gct->deque, bd);
        return;
    }
#endif
    bd->prev = gct->large_pending;
    gct->large_pending = bd;
}

SpinCount gc_copy_wait;

/* Objects whose destination is their own, not their finder's (Note [To-space by
 * capability]): a thread goes with its capability, a symbol (a global variable, read by
 * every thread) with the shared objects. A thread's TSO_CAP is a fixnum, which no GC
 * moves: readable while the thread is claimed. Out of line: both are rare. */
static __attribute__((noinline)) unsigned own_dest(Value obj, ObjType type, unsigned dest)
{
    if (type == T_SYMBOL)
        return GC_DEST_SHARED;
    unsigned owner = gc_thread_cap(obj);
    return owner < GC_DEST_SHARED ? owner : dest;
}

/* Another GC thread is copying the object at p (its header reads OBJ_BUSY): waits through
 * spin_wait for the header to change, and returns it. Out of line: it is rare. */
static __attribute__((noinline)) Value await_copy(Value *p)
{
    SpinWait w = SPIN_WAIT_INIT;
    Value h;
    while ((h = __atomic_load_n(p, __ATOMIC_ACQUIRE)) == OBJ_BUSY)
        spin_wait(&w);
    spin_count_add(&gc_copy_wait, &w);
    return h;
}

Value gc_evacuate(GCThread *gct, Value v)
{
    if (!rts_is_ptr(v))
        return v;
    Value *p = obj_ptr(v);
    bdescr *bd = bdescr_of(p);
    /* Atomic: GC threads set BF_EVACUATED on large objects' groups concurrently. */
    uint16_t flags = __atomic_load_n(&bd->flags, __ATOMIC_RELAXED);
    if (!(flags & BF_FROM))
        return v;
    if (flags & BF_LARGE) {
        evacuate_large(gct, bd);
        return v;
    }
    /* A nursery object's copy is aged, an aged object's old (Note [Aging] in storage.h). */
    bool aged = gct->aging && (flags & BF_NURSERY);
    if (aged)
        gct->points_young = true;
    Value h = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    for (;;) {
        if (!hdr_is_header(h)) {
            if (h != OBJ_BUSY)
                return h;                       /* already forwarded */
            h = await_copy(p);
            continue;
        }
        if (__atomic_compare_exchange_n(p, &h, OBJ_BUSY, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    }
    size_t words = hdr_size(h) + 1;
    size_t refused = 0;
    ObjType type = hdr_type(h);
    unsigned cls = gc_type_class[type], dest = gct->dest;
    if (__builtin_expect(cls & GC_OWN_DEST, 0))
        dest = own_dest(v, type, dest);
    Value *to = gct_alloc(gct, words, aged, gc_todo_slot(dest, cls), &refused);
    if (!to) {
        __atomic_store_n(p, h, __ATOMIC_RELEASE);   /* unclaimed: no other thread waits on it */
        gc_out_of_memory(gct, refused);
    }
    to[0] = h & ~OBJ_DIRTY;
    memcpy(to + 1, p + 1, (words - 1) * sizeof(Value));
    gct->copied_words += words;
    __atomic_store_n(p, (Value)to, __ATOMIC_RELEASE);
    return (Value)to;
}

static inline void evac_range(GCThread *gct, Value *from, Value *to)
{
    for (Value *q = from; q < to; q++)
        if (rts_is_ptr(*q))
            *q = gc_evacuate(gct, *q);
}

/* A thread's fields go to its capability's to-space, a symbol's (a global variable's value)
 * to the shared one, whoever scans them (Note [To-space by capability]). Out of line: both
 * are rare. */
static __attribute__((noinline)) void scavenge_owned(GCThread *gct, Value obj, ObjType type,
                                                    Value *pl, size_t n)
{
    unsigned dest = gct->dest;
    gct->dest = own_dest(obj, type, dest);
    evac_range(gct, pl, pl + n);
    gct->dest = dest;
}

void gc_scavenge_object(GCThread *gct, Value obj)
{
    Value h = obj_header(obj);
    Value *pl = obj_payload(obj);
    switch (obj_type_layout(hdr_type(h))) {
    case LAYOUT_PTRS:
        if (__builtin_expect(gc_type_class[hdr_type(h)] & GC_OWN_DEST, 0))
            scavenge_owned(gct, obj, hdr_type(h), pl, hdr_size(h));
        else
            evac_range(gct, pl, pl + hdr_size(h));
        break;
    case LAYOUT_RAW:
        break;
    case LAYOUT_STACK:
        evac_range(gct, pl + STACK_SLOTS, pl + STACK_SLOTS + stack_sp(obj));
#if RTS_PATCH_STACK_CHUNKS
        gct->stack_scans++;              /* summed into the GcRecord (gc.c) */
#endif
        break;
    }
}

/* Note [The GC's remember list]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * The old objects a GC thread finds pointing to aged ones (Note [Aging] in storage.h) are
 * listed in blocks of the block allocator, as its to-space is, not in C memory: a GC
 * thread allocates no C memory, so that a refusal goes the GC's one way (Note [Out of
 * memory in a GC] in gcthread.h: exit 251, statistics written) instead of a realloc that leaked
 * the list on failure and died by base_fatal. A list is a chain of single blocks
 * (remember_hd .. remember_tl, ->link), each holding struct GcRemember entries in
 * [start, free); the blocks are not heap (no generation holds them, nothing scans them).
 * The leader adds the entries to the remembered sets after the GC and frees the blocks
 * (gc.c); 256 entries a block, so a GC that remembers n objects takes the block
 * allocator's lock n/256 times. (The remembered sets themselves are C arrays, grown by
 * sm_remember in the write barrier; the leader's sm_remember after the GC threads are done
 * grows one only past the most it ever held.) testsuite/unit/test_remember.c checks that a
 * GC that remembers many objects calls neither malloc nor realloc. */

/* An object that will be old after this GC has been scanned (a promoted copy, a promoted
 * large object, a remembered object): if a field of it now points to an aged object, the
 * object is dirtied and listed, for the leader to add to a remembered set after the GC
 * (Note [Aging] in storage.h). An object scanned in chunks by several GC threads is listed
 * once, by the thread whose OR set OBJ_DIRTY. Out of line: aging makes it rare. */
static __attribute__((noinline)) void remember_old(GCThread *gct, Value obj)
{
    if (__atomic_fetch_or(obj_ptr(obj), OBJ_DIRTY, __ATOMIC_RELAXED) & OBJ_DIRTY)
        return;
    bdescr *bd = gct->remember_tl;
    if (!bd || bd->free + sizeof(struct GcRemember) > bd->start + BLOCK_SIZE) {
        spin_lock(&sm_lock);
        bdescr *nb = blk_alloc_on(numa_cap_node(gct->cap->no));
        size_t refused = blk_refused_bytes;
        spin_unlock(&sm_lock);
        if (!nb)
            gc_out_of_memory(gct, refused);     /* Note [Out of memory in a GC] in gcthread.h */
        nb->owner = gct->index;
        if (bd) bd->link = nb; else gct->remember_hd = nb;
        gct->remember_tl = bd = nb;
    }
    struct GcRemember *r = (struct GcRemember *)bd->free;
    *r = (struct GcRemember){ obj, gct->dest };
    bd->free += sizeof *r;
}

/* After scanning obj (or a chunk of it): whether it points to an aged object now, and if it
 * will be old, remembered. */
static inline void scanned(GCThread *gct, Value obj, bool old)
{
    if (gct->points_young) {
        gct->points_young = false;
        if (old)
            remember_old(gct, obj);
    }
}

void gc_scavenge_remembered(GCThread *gct, Value obj)
{
#if RTS_PATCH_GEN0_STEAL
    if (steals_young(gct))
        gc_scavenge_shared(gct, obj);
    else
#endif
    gc_scavenge_object(gct, obj);
    scanned(gct, obj, true);
}

#if RTS_PATCH_GEN0_STEAL
/* Part of a big pointer object's fields, on a deque as one word (Note [Minor GC stealing]):
 * the object's address with the chunk's number k in bits 1-11 and bit 0 set. Such an object
 * is a large object (more than 2 x 512 fields is more than a block), so it starts a block
 * group and its low 12 bits are free; a bdescr on a deque has bit 0 clear. Chunk k covers
 * fields [k c, (k + 1) c) of n, c = chunk_fields(n): 512, or as many as keep the chunks
 * within 2048 (objects of more than a million fields). Nothing is allocated: the scanner
 * needs only the word and the object's header. */
enum { SCAN_CHUNK_FIELDS = 512, SCAN_CHUNKS_MAX = 2048 };

#define CHUNK_TAG ((uintptr_t)1)

static inline size_t chunk_fields(size_t n)
{
    size_t c = (n + SCAN_CHUNKS_MAX - 1) / SCAN_CHUNKS_MAX;
    return c > SCAN_CHUNK_FIELDS ? c : SCAN_CHUNK_FIELDS;
}

void gc_scavenge_shared(GCThread *gct, Value obj)
{
    Value h = obj_header(obj);
    size_t n = hdr_size(h);
    if (obj_type_layout(hdr_type(h)) != LAYOUT_PTRS || n <= 2 * SCAN_CHUNK_FIELDS) {
        gc_scavenge_object(gct, obj);
        return;
    }
    uintptr_t base = (uintptr_t)obj_ptr(obj);
    if (base % BLOCK_SIZE)                  /* a large object starts its group (storage.c) */
        base_fatal("GC: an object of %zu fields is not a large object", n);
    size_t c = chunk_fields(n);
    bdescr_of(obj_ptr(obj))->dest = gct->dest;  /* for the chunks' scanners, after the push */
    for (uintptr_t k = 1; k * c < n; k++)
        wsdeque_push(&gct->deque, (bdescr *)(base | (k << 1) | CHUNK_TAG));
    Value *pl = obj_payload(obj);
    evac_range(gct, pl, pl + c);
}

/* An item taken from a deque that is not a to-space block: a chunk of fields, or a large
 * object's group, which it scavenges in place (returning true). False for a to-space block.
 * (BF_LARGE is set before a group is ever pushed; others may be setting BF_EVACUATED
 * meanwhile, hence the atomic load.) */
static bool take_large(GCThread *gct, bdescr *bd)
{
    if ((uintptr_t)bd & CHUNK_TAG) {
        uintptr_t w = (uintptr_t)bd;
        Value obj = (Value)(w & ~(uintptr_t)(BLOCK_SIZE - 1));
        /* Atomic: the thread scanning another chunk may be setting OBJ_DIRTY (remember_old) */
        size_t n = hdr_size(__atomic_load_n(obj_ptr(obj), __ATOMIC_RELAXED)), c = chunk_fields(n);
        size_t from = ((w & (BLOCK_SIZE - 1)) >> 1) * c;
        Value *pl = obj_payload(obj);
        gct->dest = bdescr_of(obj_ptr(obj))->dest;
        evac_range(gct, pl + from, pl + (from + c < n ? from + c : n));
        scanned(gct, obj, true);            /* a large object: old after the GC */
        return true;
    }
    if (!(__atomic_load_n(&bd->flags, __ATOMIC_RELAXED) & BF_LARGE))
        return false;
    gct->dest = bd->dest;
    gc_scavenge_shared(gct, (Value)bd->start);
    scanned(gct, (Value)bd->start, true);
    return true;
}

#endif
/* A todo block (old ones first) with objects not yet scanned, or NULL. */
static bdescr *todo_unscanned(GCThread *gct)
{
    for (unsigned d = 0; d < GC_TODO_SLOTS; d++) {
        bdescr *bd = gct->todo[d];
        if (bd && bd->scan < bd->free)
            return bd;
    }
    for (unsigned d = 0; d < GC_TODO_SLOTS; d++) {
        bdescr *bd = gct->aged_todo[d];
        if (bd && bd->scan < bd->free)
            return bd;
    }
    return NULL;
}

/* Scans what this GC thread has to scan: the block in hand, its deque, its todo blocks,
 * its large objects, each with its destination (Note [To-space by capability] in
 * gcthread.h). Returns when none is left. */
#if RTS_PATCH_GEN0_STEAL
/* Compiled twice, as GHC compiles its scavenging code for one GC thread and for several
 * (rts/sm/Scav_thr.c): with young false, in every GC but a stealing minor one, it is the
 * baseline's scavenge_local, without a test for a large object per block. Young: a stealing
 * minor GC, where large objects and chunks are on the deques. */
static inline __attribute__((always_inline)) void scavenge_local_as(GCThread *gct, bool young)
#else
static void scavenge_local(GCThread *gct)
#endif
{
    for (;;) {
        bdescr *bd = gct->scan_bd;
        if (bd) {
#if RTS_PATCH_GEN0_STEAL
            if (young && take_large(gct, bd)) {     /* popped or stolen from a deque */
                gct->scan_bd = NULL;
                continue;
            }
#endif
            bool old = bd->gen != 0;           /* not an aged block (Note [Aging]) */
            gct->dest = bd->dest;
            while (bd->scan < bd->free) {          /* bd->free moves on if bd is todo */
                Value obj = (Value)bd->scan;
                bd->scan += (hdr_size(obj_header(obj)) + 1) * sizeof(Value);
                gc_scavenge_object(gct, obj);
                scanned(gct, obj, old);
            }
            gct->scan_bd = NULL;
            continue;
        }
        if ((bd = wsdeque_pop(&gct->deque))) {
            gct->scan_bd = bd;
            continue;
        }
        if ((bd = todo_unscanned(gct))) {
            gct->scan_bd = bd;
            continue;
        }
        if (gct->large_pending) {
            bd = gct->large_pending;
            gct->large_pending = bd->prev;
            bd->prev = NULL;
            gct->dest = bd->dest;
            gc_scavenge_object(gct, (Value)bd->start);
            scanned(gct, (Value)bd->start, true);   /* a large object: old after the GC */
            continue;
        }
        return;
    }
}

#if RTS_PATCH_GEN0_STEAL
static __attribute__((noinline)) void scavenge_local_young(GCThread *gct)
{
    scavenge_local_as(gct, true);
}

static void scavenge_local(GCThread *gct)
{
    if (steals_young(gct))
        scavenge_local_young(gct);
    else
        scavenge_local_as(gct, false);
}

#endif

static bdescr *steal(GCThread *gct)
{
    for (unsigned k = 1; k < gc_n_threads; k++) {
        GCThread *victim = gc_threads[(gct->index + k) % gc_n_threads];
        bdescr *bd;
        do bd = wsdeque_steal(&victim->deque);
        while (bd == WSDEQUE_ABORT);             /* lost a race: it may hold more */
        if (bd)
            return bd;
    }
    return NULL;
}

static bool any_work(GCThread *gct)
{
    for (unsigned k = 1; k < gc_n_threads; k++)
        if (wsdeque_size(&gc_threads[(gct->index + k) % gc_n_threads]->deque))
            return true;
    return false;
}

SpinCount gc_work_wait;
#if RTS_PATCH_GEN0_STEAL
/* Note [Yielding look for work]
 * In a GC that steals_by_patch (minor and major GCs of a run whose minor GCs steal), a turn
 * of the look-for-work loop that finds no work gives up the CPU (sched_yield), as GHC's
 * any_work does after every failed poll (yieldThread): with more GC threads than free cores
 * (-N4 on 2 cores, or a busy machine) the thread holding the work is often the one without
 * a CPU, and a thief that spins keeps it from running. Such a turn counts in the wait's
 * spins, as a spin_wait turn does, but it is not a spin_wait: the yield is the turn's whole
 * wait. So a spin_wait that yields by a rule of its own (a patch may give it one, every n
 * turns) never adds a second yield to these turns, and the loop reads nothing of a SpinWait
 * but its spins. rtslab's tests of pairs run the two together (testsuite/pairs/,
 * look_for_work_yield_every_turn: where every spin_wait yields, the look-for-work waits
 * turn, and spin_wait yields in none of them). The yields are counted here, per GC kind (0 minor,
 * 1 major), added once per wait; -s reports them. Under -qb1 no GC is the patch's, and the
 * loop spins through spin_wait as the baseline's does. */
uint64_t gc_work_yields[2];
#endif

/* Scavenges until no GC thread has work. Without stealing each thread scans only what it
 * copied. With stealing, a thread out of work looks for full blocks on the others' queues;
 * gc_busy counts the threads holding work, and all are done when it is 0 (work is only
 * created by busy threads, and a thread counts itself busy before it steals). The
 * look-for-work loop waits through spin_wait (sync/spinwait.h), counted in gc_work_wait. */
void gc_scavenge_loop(GCThread *gct)
{
    scavenge_local(gct);
    if (!gct->steal)
        return;
#if RTS_PATCH_GEN0_STEAL
    const bool mine = steals_by_patch(gct);
    uint64_t yields = 0;
#endif
    __atomic_fetch_sub(&gc_busy, 1, __ATOMIC_ACQ_REL);
    trace_gc_idle(true);                    /* GHC's GC_IDLE ... GC_WORK ... GC_DONE */
    SpinWait w = SPIN_WAIT_INIT;
    for (;;) {
        if (any_work(gct)) {
            __atomic_fetch_add(&gc_busy, 1, __ATOMIC_ACQ_REL);
            bdescr *bd = steal(gct);
#if RTS_PATCH_GEN0_STEAL
            if (mine) {
                gct->steal_tries++;
                gct->steals += bd != NULL;
            }
#endif
            if (bd) {
                trace_gc_idle(false);
                gct->scan_bd = bd;
                scavenge_local(gct);
                trace_gc_idle(true);
            }
            __atomic_fetch_sub(&gc_busy, 1, __ATOMIC_ACQ_REL);
            continue;
        }
        if (__atomic_load_n(&gc_busy, __ATOMIC_ACQUIRE) == 0) {
            spin_count_add(&gc_work_wait, &w);
#if RTS_PATCH_GEN0_STEAL
            if (yields)
                __atomic_fetch_add(&gc_work_yields[gct->major], yields, __ATOMIC_RELAXED);
#endif
            return;
        }
#if RTS_PATCH_GEN0_STEAL
        /* Note [Yielding look for work]: a turn that found no work gives up the CPU, and is
         * not a spin_wait. */
        if (mine) {
            w.spins++;
            yields++;
            sched_yield();
            continue;
        }
#endif
        spin_wait(&w);
    }
}
