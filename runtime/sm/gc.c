/* GC driver: decides minor or major, marks from-space, evacuates the roots, scavenges,
 * frees from-space, resets the nurseries, sizes the old generation, checks -M. */
#include <stdlib.h>
#include <string.h>
#include "sm/gc.h"
#include "sched/thread.h"
#include "rts/rts.h"
#include "trace/stats.h"

static Value **global_roots;
static size_t n_global_roots, cap_global_roots;

void gc_add_root(Value *root)
{
    if (n_global_roots == cap_global_roots) {
        cap_global_roots = cap_global_roots ? 2 * cap_global_roots : 64;
        global_roots = realloc(global_roots, cap_global_roots * sizeof *global_roots);
        if (!global_roots) rts_fatal("out of memory (roots)");
    }
    global_roots[n_global_roots++] = root;
}

void rts_add_root(Value *root) { gc_add_root(root); }

/* Every root slot outside the heap: capabilities' threads and queues and protected values,
 * the main thread, registered C globals. (Remembered sets are handled by the driver.) */
void gc_for_each_root(void (*f)(Value *root, void *env), void *env)
{
    for (unsigned i = 0; i < n_caps; i++) {
        Capability *cap = &caps[i];
        f(&cap->current, env);
        f(&cap->run_hd, env);
        f(&cap->run_tl, env);
        f(&cap->sleep_q, env);
        for (unsigned k = 0; k < cap->nsave; k++)
            f(&cap->save[k], env);
    }
    f(&main_thread, env);
    for (size_t i = 0; i < n_global_roots; i++)
        f(global_roots[i], env);
}

static void evac_root(Value *root, void *env)
{
    *root = gc_evacuate((GCThread *)env, *root);
}

static void mark_from(bdescr *chain)
{
    for (bdescr *bd = chain; bd; bd = bd->link)
        bd->flags |= BF_FROM;
}

/* Large objects of a from-space chain: the evacuated ones join the old generation, the
 * others are freed. */
static void sweep_large(bdescr *chain)
{
    bdescr *next;
    for (bdescr *bd = chain; bd; bd = next) {
        next = bd->link;
        if (bd->flags & BF_EVACUATED) {
            bd->flags = BF_LARGE;
            bd->gen = 1;
            bd->link = old_gen.large;
            old_gen.large = bd;
            old_gen.n_large_blocks += bd->blocks;
        } else {
            blk_free_group(bd);
        }
    }
}

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

void gc_collect(Capability *cap, bool force_major)
{
    uint64_t t0 = rts_now_ns(), c0 = rts_cpu_ns();
    bool major = force_major
        || old_gen.n_blocks + old_gen.n_large_blocks >= old_gen.limit_blocks;

    for (unsigned i = 0; i < n_caps; i++)
        sm_sync_nursery(&caps[i]);
    if (rts_opts.sanity)
        sanity_check(SANITY_BEFORE_GC);

    GCThread gct;
    memset(&gct, 0, sizeof gct);
    gct.major = major;

    /* From-space: the young generation, and in a major GC the old one too. */
    bdescr *young_large = NULL;
    for (unsigned i = 0; i < n_caps; i++) {
        mark_from(caps[i].nursery);
        mark_from(caps[i].large_young);
        bdescr *next;
        for (bdescr *bd = caps[i].large_young; bd; bd = next) {
            next = bd->link;
            bd->link = young_large;
            young_large = bd;
        }
        caps[i].large_young = NULL;
    }
    bdescr *old_blocks = old_gen.blocks, *old_large = NULL;
    if (major) {
        mark_from(old_gen.blocks);
        mark_from(old_gen.large);
        old_large = old_gen.large;
        old_gen.blocks = NULL;
        old_gen.n_blocks = 0;
        old_gen.large = NULL;
        old_gen.n_large_blocks = 0;
    }

    /* Roots. In a minor GC the remembered sets are roots too: every old object that may
     * point into the young generation. A major GC reaches everything from the roots. */
    for (unsigned i = 0; i < n_caps; i++) {
        Capability *c = &caps[i];
        for (size_t k = 0; k < c->remset_n; k++) {
            Value obj = c->remset[k];
            __atomic_fetch_and(obj_ptr(obj), ~OBJ_DIRTY, __ATOMIC_RELAXED);
            if (!major)
                gc_scavenge_object(&gct, obj);
        }
        c->remset_n = 0;
    }
    gc_for_each_root(evac_root, &gct);
    gc_scavenge_loop(&gct);

    /* From-space is garbage now. */
    for (unsigned i = 0; i < n_caps; i++) {
        for (bdescr *bd = caps[i].nursery; bd; bd = bd->link)
            bd->flags &= (uint16_t)~BF_FROM;
        sm_reset_nursery(&caps[i]);
    }
    sweep_large(young_large);
    if (major) {
        blk_free_chain(old_blocks);
        sweep_large(old_large);
    }
    if (gct.copied_hd) {
        gct.copied_tl->link = old_gen.blocks;
        old_gen.blocks = gct.copied_hd;
        old_gen.n_blocks += gct.n_copied_blocks;
    }
    size_t old_blocks_now = old_gen.n_blocks + old_gen.n_large_blocks;
    if (major) {
        old_gen.live_at_major = old_blocks_now;
        old_gen.limit_blocks = max_size((size_t)(rts_opts.old_gen_factor * (double)old_blocks_now),
                                        RTS_MIN_OLD_GEN_LIMIT / BLOCK_SIZE);
    }

    /* Running threads go on writing their stacks and TSOs, which may be old now. */
    for (unsigned i = 0; i < n_caps; i++)
        if (caps[i].current != RTS_FALSE)
            thread_dirty(&caps[i], caps[i].current);

    if (rts_opts.sanity)
        sanity_check(SANITY_AFTER_GC);

    GcRecord r = {
        .major = major,
        .copied_bytes = gct.copied_words * sizeof(Value),
        .live_bytes = old_blocks_now * BLOCK_SIZE,
        .pause_ns = rts_now_ns() - t0,
        .cpu_ns = rts_cpu_ns() - c0,
    };
    stats_gc_done(&r);

    if (rts_opts.max_heap && sm_heap_blocks() * BLOCK_SIZE > rts_opts.max_heap) {
        if (!major)
            gc_collect(cap, true);
        else
            sm_heap_overflow();
    }
}

void rts_gc(Capability *cap, bool major)
{
    gc_collect(cap, major);
}
