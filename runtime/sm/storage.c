/* Storage manager: nurseries, allocation slow path, large objects, write barrier. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sm/gc.h"
#include "base/util.h"
#include "sync/stw.h"
#include "os/numa.h"

Generation sm_old_gen;
Generation sm_aged;
SmCap **sm_caps;
unsigned sm_n_caps;
SpinLock sm_lock = SPINLOCK_INIT("sm (block allocator)");
bool sm_gc_requested;                 /* atomic: storage.h */

/* RTSLAB_TEST_DROP_BARRIER=1, read only under -DS: the first time the write barrier would
 * remember an old box (T_BOX), it does nothing, as a missing barrier would; for the tests
 * that -DS still reports one (Note [Sanity checking cost] in sanity.c). */
static bool drop_box_barrier;

void sm_init(unsigned n_caps)
{
    blk_init();
    blk_set_nodes(numa_heap_nodes());
    memset(&sm_old_gen, 0, sizeof sm_old_gen);
    memset(&sm_aged, 0, sizeof sm_aged);
    sm_old_gen.limit_blocks = base_cfg->min_old_gen_blocks;
    const char *drop = base_cfg->sanity ? getenv("RTSLAB_TEST_DROP_BARRIER") : NULL;
    drop_box_barrier = drop && *drop;
    sm_caps = calloc(n_caps, sizeof *sm_caps);
    if (!sm_caps) base_fatal("out of memory (capabilities)");
    sm_n_caps = n_caps;
    gc_init(n_caps);
}

static void set_block(SmCap *cap, bdescr *bd)
{
    cap->cur_block = bd;
    cap->hp = (Value *)bd->start;
    cap->hplim_real = (Value *)(bd->start + BLOCK_SIZE);
    sm_restore_limit(cap);
}

void sm_cap_init(SmCap *cap, unsigned no)
{
    cap->no = no;
    sm_caps[no] = cap;
    size_t n = base_cfg->nursery_blocks;
    bdescr *hd = NULL;
    /* Its heap node (Note [NUMA-local heap] in os/numa.h) is looked up where a block is
     * allocated: numa_cap_node is a table lookup, as cheap as a field of SmCap would be. */
    unsigned node = numa_cap_node(no);
    for (size_t i = 0; i < n; i++) {
        bdescr *bd = blk_alloc_on(node);
        if (!bd) sm_out_of_memory(blk_refused_bytes);
        bd->flags = BF_NURSERY;
        bd->gen = 0;
        bd->owner = cap->no;
        bd->link = hd;
        hd = bd;
    }
    cap->nursery = hd;
    cap->nursery_blocks = n;
    cap->nursery_extra = 0;
    cap->gc_deferred = false;
    cap->deferred_blocks = 0;
    cap->deferred_blocks_max = 0;
    cap->deferred_extensions = 0;
    cap->large_young = NULL;
    cap->large_blocks_since_gc = 0;
    set_block(cap, hd);
    gc_thread_init(cap);
}

void sm_safe_point_passed(SmCap *cap)
{
    sm_restore_limit(cap);
}

void sm_sync_nursery(SmCap *cap)
{
    bdescr *bd = cap->cur_block;
    RTS_ASSERT((uint8_t *)cap->hp >= bd->start && (uint8_t *)cap->hp <= blk_group_end(bd));
    cap->bytes_allocated += (size_t)((uint8_t *)cap->hp - bd->free);
    bd->free = (uint8_t *)cap->hp;
}

/* Under -DG<n>, the blocks a GC found in use (cur_block and those before it) go
 * behind the unused ones, so that the poison the GC left in them lasts (Note [Poisoned
 * from-space] in sanity.h). */
static void rotate_nursery(SmCap *cap)
{
    bdescr *used_last = cap->cur_block, *unused = used_last->link;
    if (!unused)
        return;
    bdescr *last = unused;
    while (last->link)
        last = last->link;
    last->link = cap->nursery;
    used_last->link = NULL;
    cap->nursery = unused;
}

/* The blocks past nursery_blocks go back to the block allocator (the caller holds sm_lock):
 * the deferral that took them is over. */
static void trim_nursery(SmCap *cap)
{
    bdescr *last = cap->nursery;
    for (size_t i = 1; i < cap->nursery_blocks; i++)
        last = last->link;
    blk_free_chain(last->link);
    last->link = NULL;
    __atomic_store_n(&cap->nursery_extra, 0, __ATOMIC_RELAXED);
}

void sm_extend_nursery(SmCap *cap, bdescr *chain, size_t n)
{
    RTS_ASSERT(n > 0 && cap->cur_block->link == NULL);
    for (bdescr *bd = chain; bd; bd = bd->link) {      /* NULL-terminated */
        bd->flags = BF_NURSERY;
        bd->gen = 0;
        bd->owner = cap->no;
    }
    cap->cur_block->link = chain;
    size_t extra = cap->nursery_extra + n;
    __atomic_store_n(&cap->nursery_extra, extra, __ATOMIC_RELAXED);
    cap->deferred_blocks += n;
    cap->deferred_extensions++;
    if (extra > cap->deferred_blocks_max)
        cap->deferred_blocks_max = extra;
    set_block(cap, chain);
}

void sm_reset_nursery(SmCap *cap)
{
    RTS_ASSERT(sm_lock_held());
    if (cap->nursery_extra)
        trim_nursery(cap);
    if (base_cfg->gc_stress)
        rotate_nursery(cap);
    for (bdescr *bd = cap->nursery; bd; bd = bd->link)
        bd->free = bd->start;
    cap->large_blocks_since_gc = 0;
    set_block(cap, cap->nursery);
}

/* Blocks of young large objects, all capabilities together: mutators add to it, a GC
 * (with the world stopped) zeroes it. */
size_t sm_large_young_blocks;

uint64_t sm_bytes_allocated(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        n += sm_caps[i]->bytes_allocated
           + (uint64_t)((uint8_t *)sm_caps[i]->hp - sm_caps[i]->cur_block->free);
    return n;
}

/* The old generation changes only with the world stopped, so any capability may read it. */
size_t sm_heap_blocks(void)
{
    size_t n = sm_old_gen.n_blocks + sm_old_gen.n_large_blocks + sm_aged.n_blocks
             + __atomic_load_n(&sm_large_young_blocks, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < sm_n_caps; i++)
        n += sm_caps[i]->nursery_blocks
           + __atomic_load_n(&sm_caps[i]->nursery_extra, __ATOMIC_RELAXED);
    return n;
}

/* Both end in rts_exit, called by a mutator or by a GC's leader (the GC threads that are
 * not: Note [Out of memory in a GC] in gcthread.h). */
void sm_out_of_memory(size_t refused)
{
    fflush(stdout);
    fprintf(stderr, "rtslab: out of memory (the OS refused %zu bytes)\n", refused);
    rts_exit(251);
}

void sm_heap_overflow(SmCap *cap)
{
    (void)cap;
    fflush(stdout);
    fprintf(stderr, "rtslab: heap overflow\n");
    fprintf(stderr, "rtslab: use `+RTS -M<size>' to increase the maximum heap size\n");
    rts_exit(251);
}

static Value *alloc_large(SmCap *cap, size_t words)
{
    size_t bytes = words * sizeof(Value);
    size_t nblocks = (bytes + BLOCK_SIZE - 1) / BLOCK_SIZE;
    if (cap->large_blocks_since_gc + nblocks > cap->nursery_blocks)
        gc_collect(cap, false);
    if (base_cfg->max_heap && (sm_heap_blocks() + nblocks) * BLOCK_SIZE > base_cfg->max_heap) {
        gc_collect(cap, true);
        if ((sm_heap_blocks() + nblocks) * BLOCK_SIZE > base_cfg->max_heap)
            sm_heap_overflow(cap);
    }
    spin_lock(&sm_lock);
    bdescr *bd = blk_alloc_group_on(nblocks, numa_cap_node(cap->no));
    size_t refused = blk_refused_bytes;
    spin_unlock(&sm_lock);
    if (!bd) sm_out_of_memory(refused);
    bd->flags = BF_LARGE;
    bd->gen = 0;
    bd->owner = cap->no;
    bd->free = bd->start + bytes;
    bd->link = cap->large_young;
    cap->large_young = bd;
    cap->large_blocks_since_gc += bd->blocks;
    __atomic_fetch_add(&sm_large_young_blocks, bd->blocks, __ATOMIC_RELAXED);
    cap->bytes_allocated += bytes;
    return (Value *)bd->start;
}

/* Blocks that sm_shrink_large took from old large objects since the last GC, which the next
 * GC takes off sm_old_gen.n_large_blocks (the old generation changes only with the world
 * stopped). */
size_t sm_large_blocks_released;

void sm_shrink_large(SmCap *cap, Value obj, size_t words)
{
    Value *p = obj_ptr(obj);
    bdescr *bd = bdescr_of(p);
    size_t bytes = words * sizeof(Value);
    Value h = __atomic_load_n(p, __ATOMIC_RELAXED), nh;
    do                                      /* the flag bits may be set meanwhile */
        nh = obj_make_header(hdr_type(h), words - 1) | (h & OBJ_FLAGS);
    while (!__atomic_compare_exchange_n(p, &h, nh, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    spin_lock(&sm_lock);
    size_t before = bd->blocks;
    blk_shrink_group(bd, (bytes + BLOCK_SIZE - 1) / BLOCK_SIZE);
    size_t released = before - bd->blocks;
    bd->free = bd->start + bytes;
    spin_unlock(&sm_lock);
    if (bd->gen != 0) {
        __atomic_fetch_add(&sm_large_blocks_released, released, __ATOMIC_RELAXED);
    } else {                                /* allocated since the last GC */
        __atomic_fetch_sub(&sm_large_young_blocks, released, __ATOMIC_RELAXED);
        if (bd->owner == cap->no)
            cap->large_blocks_since_gc -= released;
    }
}

Value *sm_alloc_slow(SmCap *cap, size_t words)
{
    if (__builtin_expect(__atomic_load_n(&sm_gc_requested, __ATOMIC_RELAXED), 0)
        && __atomic_exchange_n(&sm_gc_requested, false, __ATOMIC_RELAXED))
        gc_collect(cap, false);             /* Note [External resources] in finalize.h */
    if (__builtin_expect(base_cfg->gc_stress != 0, 0)
        && ++cap->stress_allocs >= base_cfg->gc_stress) {
        cap->stress_allocs = 0;
        gc_collect(cap, false);             /* Note [GC stress] */
    }
    if (words * sizeof(Value) >= RTS_LARGE_OBJECT_BYTES)
        return alloc_large(cap, words);
    for (;;) {
        if (stw_pending())
            gc_safe_point(cap, false);      /* join the sync in progress, or finish ours */
        if ((uintptr_t)(cap->hp + words) <= (uintptr_t)cap->hplim_real) {
            Value *p = cap->hp;
            cap->hp = p + words;
            /* A trapped heap check (the timer's NULL) only needs its limit back: the
             * context switch itself happens at the thread's next RTS_NEXT. */
            sm_restore_limit(cap);
            return p;
        }
        sm_sync_nursery(cap);
        if (cap->cur_block->link)
            set_block(cap, cap->cur_block->link);
        else
            gc_nursery_full(cap);
    }
}

Value *sm_alloc_protect_slow(SmCap *cap, size_t words, Value *vals, unsigned n)
{
    unsigned base = cap->nsave;
    if (base + n > SM_SAVE_MAX) base_fatal("too many protected values");
    memcpy(cap->save + base, vals, n * sizeof(Value));
    cap->nsave = base + n;
    Value *p = sm_alloc_slow(cap, words);
    memcpy(vals, cap->save + base, n * sizeof(Value));
    cap->nsave = base;
    return p;
}

/* The write barrier's slow path (Note [Write barrier] in storage.h). */
void sm_write_barrier_slow(RtsCap *cap, Value obj)
{
    if (bdescr_of(obj_ptr(obj))->gen == 0)
        return;
    if (__builtin_expect(drop_box_barrier, 0) && obj_type(obj) == T_BOX
        && __atomic_exchange_n(&drop_box_barrier, false, __ATOMIC_RELAXED))
        return;
    Value old = __atomic_fetch_or(obj_ptr(obj), OBJ_DIRTY, __ATOMIC_RELAXED);
    if (!(old & OBJ_DIRTY))
        sm_remember(sm_cap(cap), obj);
}

/* The public API's stores (rtslab.h): the barrier, out of line. */
void rts_set_field(RtsCap *cap, Value obj, size_t i, Value v) { sm_set_field(cap, obj, i, v); }
void rts_set_car(RtsCap *cap, Value p, Value v)               { sm_set_field(cap, p, 0, v); }
void rts_set_cdr(RtsCap *cap, Value p, Value v)               { sm_set_field(cap, p, 1, v); }

void sm_remember(SmCap *cap, Value obj)
{
    RTS_ASSERT(sm_remembered_ok(obj));
    if (cap->remset_n == cap->remset_cap) {
        cap->remset_cap = cap->remset_cap ? 2 * cap->remset_cap : 256;
        cap->remset = realloc(cap->remset, cap->remset_cap * sizeof(Value));
        if (!cap->remset) base_fatal("out of memory (remembered set)");
    }
    cap->remset[cap->remset_n++] = obj;
}

/* --- allocation API --------------------------------------------------------------------- */

Value rts_cons(RtsCap *cap, Value car, Value cdr)
{
    Value v[2] = { car, cdr };
    Value *p = sm_alloc_protect(sm_cap(cap), 3, v, 2);
    p[0] = obj_make_header(T_PAIR, 2);
    p[1] = v[0];
    p[2] = v[1];
    return (Value)p;
}

Value rts_make_object(RtsCap *cap, ObjType type, size_t n, Value fill)
{
    Value *p = sm_alloc_protect(sm_cap(cap), n + 1, &fill, 1);
    p[0] = obj_make_header(type, n);
    for (size_t i = 1; i <= n; i++)
        p[i] = fill;
    return (Value)p;
}

Value rts_make_vector(RtsCap *cap, size_t n, Value fill)
{
    return rts_make_object(cap, T_VECTOR, n, fill);
}

Value rts_make_box(RtsCap *cap, Value v)
{
    return rts_make_object(cap, T_BOX, 1, v);
}

Value rts_make_raw(RtsCap *cap, ObjType type, size_t nbytes)
{
    size_t n = raw_words(nbytes);
    Value *p = sm_alloc(sm_cap(cap), n + 1);
    p[0] = obj_make_header(type, n);
    memset(p + 1, 0, n * sizeof(Value));
    p[1] = (Value)nbytes;
    return (Value)p;
}

Value rts_make_flonum(RtsCap *cap, double d)
{
    Value v = rts_make_raw(cap, T_FLONUM, sizeof d);
    memcpy(raw_bytes(v), &d, sizeof d);
    return v;
}
