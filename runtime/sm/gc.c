/* GC driver: decides minor or major, and runs a GC phase by phase (collect): marks
 * from-space, starts the GC threads, which evacuate the roots and scavenge, joins to-space
 * to the old generation and frees from-space, remembers what points to aged objects, sizes
 * the old generation, records the GC; checks -M. */
#include <limits.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "sm/gc.h"
#include "sm/evac.h"
#include "sm/finalize.h"
#include "sm/sanity.h"
#include "base/util.h"
#include "sync/stw.h"
#include "trace/eventlog.h"
#include "os/numa.h"

static void (*done_hook)(const GcRecord *r);

void gc_on_done(void (*fn)(const GcRecord *r)) { done_hook = fn; }

static bool last_gc_major;

static void evac_root(Value *root, void *env)
{
    GCThread *gct = env;
    *root = gc_evacuate(gct, *root);
    gct->points_young = false;              /* a root is no object to remember */
}

/* A capability's roots: its remembered set (a minor GC scans the objects in it; a major
 * GC reaches everything from the roots anyway) and its root slots. What they reach goes to
 * the capability's to-space (Note [To-space by capability] in gcthread.h). */
static void evac_cap_roots(GCThread *gct, SmCap *c)
{
    gct->dest = c->no;
    if (!gct->major)
        for (size_t k = 0; k < c->remset_n; k++) {
            Value obj = c->remset[k];          /* old, so not moving: no race on the header */
            RTS_ASSERT(sm_remembered_ok(obj));  /* Invariants between GCs, storage.h */
            __atomic_fetch_and(obj_ptr(obj), ~OBJ_DIRTY, __ATOMIC_RELAXED);
            gc_scavenge_remembered(gct, obj);
        }
    c->remset_n = 0;
    gc_for_each_cap_root(c, evac_root, gct);
}

/* A GC thread's work in a GC: the roots given to it, the global ones too for the leader,
 * then scavenging until no GC thread has work. Left early when the OS refuses it memory
 * (Note [Out of memory in a GC] in gcthread.h). Locks held: none. */
static void gc_thread_work(GCThread *gct, bool leader)
{
    jmp_buf abort_point;
    gc_abort_point = &abort_point;
    if (setjmp(abort_point)) {
        gc_abort_point = NULL;
        return;
    }
    for (unsigned i = 0; i < sm_n_caps; i++)
        if (sm_caps[i]->gc_roots_by == gct->index)
            evac_cap_roots(gct, sm_caps[i]);
    if (leader) {
        gct->dest = GC_DEST_SHARED;
        gc_for_each_global_root(evac_root, gct);
    }
    gc_scavenge_loop(gct);
    gc_abort_point = NULL;
}

bool gc_follower_work(unsigned no)
{
    GCThread *gct = sm_caps[no]->gct;
    if (!__atomic_load_n(&gct->active, __ATOMIC_ACQUIRE))
        return false;
    RTS_ASSERT(gct->index < gc_n_threads && gc_threads[gct->index] == gct);
    gc_thread_work(gct, false);
    return true;
}

/* Outside a GC no block has BF_FROM (Invariants between GCs, storage.h). */
static void mark_from(bdescr *chain)
{
    for (bdescr *bd = chain; bd; bd = bd->link) {
        RTS_ASSERT(!(bd->flags & BF_FROM));
        bd->flags |= BF_FROM;
    }
}

/* Overwrites the objects of a from-space chain (Note [Poisoned from-space] in sanity.h). */
static void poison_chain(bdescr *chain)
{
    if (sanity_poisons())
        for (bdescr *bd = chain; bd; bd = bd->link)
            sanity_poison(bd->start, bd->free);
}

/* Large objects of a from-space chain: the evacuated ones join the old generation, the
 * others are freed. In a major GC every remembered set is emptied, so an old object's
 * OBJ_DIRTY is cleared; a minor GC's young large objects were never dirty before it, and one
 * that is dirty now was remembered by it (Note [Aging] in storage.h). Locks held: sm_lock. */
static void sweep_large(bdescr *chain, bool major)
{
    bdescr *next;
    for (bdescr *bd = chain; bd; bd = next) {
        next = bd->link;
        if (bd->flags & BF_EVACUATED) {
            bd->flags = BF_LARGE;
            bd->gen = 1;
            bd->link = sm_old_gen.large;
            sm_old_gen.large = bd;
            sm_old_gen.n_large_blocks += bd->blocks;
            if (major)
                obj_ptr((Value)bd->start)[0] &= ~OBJ_DIRTY;   /* no remembered set holds it */
        } else {
            if (sanity_poisons())           /* Note [Poisoned from-space] in sanity.h */
                sanity_poison(bd->start, bd->free);
            blk_free_group(bd);
        }
    }
}

static size_t max_size(size_t a, size_t b) { return a > b ? a : b; }

/* How many GC threads this GC uses: -qg, -qg<gen> and -qn<n> (resolved: at most n_caps)
 * restrict it. */
static unsigned gc_thread_count(bool major)
{
    if (!base_cfg->par_gc || (major ? 1u : 0u) < base_cfg->par_gc_gen)
        return 1;
    return base_cfg->gc_threads;
}

/* Whether idle GC threads steal work in this GC: the baseline balances major GCs only
 * (GHC's -qb1); -qb alone turns balancing off. */
static bool gc_steals(bool major, unsigned threads)
{
    if (threads < 2 || !base_cfg->balance)
        return false;
#if RTS_PATCH_GEN0_STEAL
    /* -qb<gen> balances the GCs of generation <gen> and up: -qb0 minor GCs too. Without
     * -qb<gen>, 0 when -A is at least 32m, else 1, decided once by rts/patch_gen0_steal.c's
     * resolve (Note [Minor GC stealing] in gc.h). */
    return (major ? 1u : 0u) >= base_cfg->balance_gen;
#else
    return major && base_cfg->balance_gen <= 1;
#endif
}

/* Note [Memory returned after a major GC]
 * After a major GC the leader gives the block allocator's free megablocks back to the OS
 * beyond what the heap will need (Note [Returning megablocks] in block.h), as GHC does after
 * its major GCs. If the live data stays as it is, the old generation grows to its limit (-F
 * times the live data, at least -O) and the next major GC copies the live data out of it:
 * limit + live blocks, plus the nurseries and as much again for the aged blocks (at most
 * what a nursery held). That, in megablocks, is the full need.
 *  - A major GC that the old generation's growth did not cause (an explicit one, -M's, the
 *    descriptors' of Note [External resources] in finalize.h) says that the room for that
 *    growth went unused since the last one: the room (the limit) counted in the need is
 *    halved at each such GC in a row, so that a program that has gone quiet converges to
 *    its live data, as GHC's -Fd decay does; a major GC caused by growth counts it whole
 *    again. (Issue 45's goal: after a 240 MB live set is dropped and two major GCs run, the
 *    resident set is within 2x the live heap.)
 *  - The megablocks held are kept at the larger of this GC's need and the previous major
 *    GC's, so memory goes back at the second major GC in a row that does not need it: a
 *    program whose live data swings between consecutive major GCs does not unmap and map
 *    again each time.
 * Free blocks inside partly used megablocks are not returned (a megablock goes back whole);
 * fragmentation is why the need is a floor, not a target. -s reports what went back
 * (docs/stats.md). The leader's, with the world stopped.
 *  - The need leaves out --sync-defer's budget (Note [Deferred GC requests] in gc.h), on
 *    purpose. The budget bounds what a leader may take while the others stop; it is not what
 *    leaders take: on a quiet machine they stop within microseconds and a request takes a
 *    block or two, and -s's rtslab_stw_deferred_blocks_max says how many a program's took.
 *    Counted whole, the default 8m would stay mapped for every program, idle or not: one with
 *    1 MB live would keep 8 MB more than it needs, the opposite of what this Note is for. A
 *    request that finds no free block maps a megablock as any allocation does (one mmap per
 *    megablock, after a major GC gave some back), and the OS refusing it only ends the
 *    request early (extend_nursery: the GC runs at once). */
static size_t need_at_last_major;           /* megablocks */
static unsigned quiet_majors;               /* major GCs in a row not caused by growth */

/* Locks held: none; takes sm_lock around the block allocator. */
static void return_memory(size_t live_blocks, bool grown)
{
    size_t nursery = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        nursery += sm_caps[i]->nursery_blocks;
    quiet_majors = grown ? 0 : quiet_majors + 1;
    size_t room = quiet_majors < 8 * sizeof(size_t) ? sm_old_gen.limit_blocks >> quiet_majors : 0;
    size_t need_blocks = room + live_blocks + 2 * nursery;
    size_t need = (need_blocks + USABLE_BLOCKS_PER_MBLOCK - 1) / USABLE_BLOCKS_PER_MBLOCK;
    size_t keep = max_size(need, need_at_last_major);
    need_at_last_major = need;
    spin_lock(&sm_lock);
    blk_return_mblocks(keep);
    spin_unlock(&sm_lock);
}

/* Note [A GC by phases]
 * collect() is the leader's GC, with the world stopped: a sequence of phases, each a
 * function below whose comment says what holds when it starts. In order:
 *   gc_begin           the nurseries synced, -DS's check before;
 *   mark_from_space    from-space marked (BF_FROM) and taken off its lists (FromSpace);
 *   start_gc_threads   the GC threads chosen, reset and given the capabilities' roots;
 *   run_gc_threads     every GC thread evacuates its roots and scavenges; the leader waits
 *                      for the others, then finds the dead finalized objects;
 *   gather_to_space    each GC thread's to-space joins the old generation (or the aged
 *                      blocks), its counters the GC's record;
 *   free_from_space    the nurseries reset, from-space freed;
 *   remember_aged      old objects that point to aged ones remembered;
 *   size_old_gen       the old generation's limit, memory returned (a major GC);
 *   gc_end             the client's after_gc, -DS's check after;
 *   finish_record      the record of the GC (GcRecord) completed and handed to the eventlog
 *                      and to gc_on_done's hook (-s, -S, the patches' counters).
 * A patch hooks in at a phase's boundary rather than inside a phase: before gc_begin, in
 * collects_nursery (whose nurseries this GC takes), and in reset_counters and add_counters
 * (a GC thread's counters, summed into the record). */

/* From-space, as mark_from_space takes it off the heap's lists for free_from_space. */
typedef struct FromSpace {
    bdescr *young_large;        /* every capability's young large objects, one chain */
    bdescr *aged;               /* the aged blocks (Note [Aging] in storage.h) */
    bdescr *old, *old_large;    /* a major GC's old generation; NULL in a minor GC */
} FromSpace;

#if RTS_PATCH_IDLE_OPTOUT
/* Note [Idle opt-out] (sync/stw.h): a capability left out has allocated nothing since
 * the GC that emptied its nursery, so this GC leaves its nursery alone (marking and
 * resetting every block of 15 empty nurseries in each of 2000 GCs cost busy_one -N16
 * 18% more CPU than -N1). Entry: the world stopped, before gc_begin. */
static void mark_left_out(const StwTakingPart *part)
{
    for (unsigned i = 0; i < sm_n_caps; i++)
        sm_caps[i]->left_out = true;
    for (unsigned k = 0; k < part->n; k++)
        sm_caps[part->no[k]]->left_out = false;
}

#endif
/* Whether this GC collects capability c's nursery: every one's in the baseline. */
static inline bool collects_nursery(const SmCap *c)
{
#if RTS_PATCH_IDLE_OPTOUT
    return !c->left_out;                    /* mark_left_out */
#else
    (void)c;
    return true;
#endif
}

/* Phase 1. Entry: the world stopped, no GC thread active, sm_lock not held. Returns whether
 * the old generation had reached its limit (return_memory's `grown`). */
static bool gc_begin(bool major)
{
    for (unsigned i = 0; i < sm_n_caps; i++)
        sm_sync_nursery(sm_caps[i]);
    sm_old_gen.n_large_blocks -= __atomic_exchange_n(&sm_large_blocks_released, 0, __ATOMIC_RELAXED);
    bool grown = sm_old_gen.n_blocks + sm_old_gen.n_large_blocks >= sm_old_gen.limit_blocks;
    if (base_cfg->sanity)
        sanity_check(SANITY_BEFORE_GC, major);
    return grown;
}

/* Each GC thread's last old to-space block of each slot (Note [To-space by capability] in
 * gcthread.h) stays its todo after a GC, part full, and a minor GC goes on filling it
 * (GHC's init_uncollected_gen does so with a block under 3/4 full): a minor GC that
 * promotes a few objects, as most do with aging (Note [Aging] in storage.h), would
 * otherwise take a new block per GC thread and slot each time and leave most of it
 * empty, and the old generation would grow by blocks for bytes. Their objects so far are
 * scanned (scan = free); a major GC's from-space holds them, so it starts afresh. */
static void keep_todo_blocks(bool major)
{
    for (unsigned i = 0; i < sm_n_caps; i++) {
        GCThread *g = sm_caps[i]->gct;
        for (unsigned d = 0; d < GC_TODO_SLOTS; d++) {
            if (major)
                g->todo[d] = NULL;
            else if (g->todo[d])
                g->todo[d]->scan = g->todo[d]->free;
        }
    }
}

/* Phase 2: from-space is the young generation, the aged blocks, and in a major GC the old
 * generation too; marked BF_FROM and taken off the heap's lists into *fs. Entry: gc_begin
 * done (the nurseries synced). */
static void mark_from_space(bool major, FromSpace *fs)
{
    fs->young_large = NULL;
    for (unsigned i = 0; i < sm_n_caps; i++) {
        SmCap *c = sm_caps[i];
        if (collects_nursery(c))
            mark_from(c->nursery);
        mark_from(c->large_young);
        bdescr *next;
        for (bdescr *bd = c->large_young; bd; bd = next) {
            next = bd->link;
            bd->link = fs->young_large;
            fs->young_large = bd;
        }
        c->large_young = NULL;
    }
    /* The aged blocks are from-space in every GC (Note [Aging] in storage.h). */
    mark_from(sm_aged.blocks);
    fs->aged = sm_aged.blocks;
    sm_aged.blocks = NULL;
    sm_aged.n_blocks = 0;
    keep_todo_blocks(major);
    fs->old = fs->old_large = NULL;
    if (major) {
        mark_from(sm_old_gen.blocks);
        mark_from(sm_old_gen.large);
        fs->old = sm_old_gen.blocks;
        fs->old_large = sm_old_gen.large;
        sm_old_gen.blocks = sm_old_gen.large = NULL;
        sm_old_gen.n_blocks = sm_old_gen.n_large_blocks = 0;
    }
}

/* A GC thread's counters, zeroed for each GC it takes part in (add_counters sums them). */
static void reset_counters(GCThread *g)
{
#if RTS_PATCH_STACK_CHUNKS
    g->stack_scans = 0;
#endif
    g->copied_words = 0;
#if RTS_PATCH_GEN0_STEAL
    g->steal_tries = g->steals = 0;
#endif
}

/* Phase 3: the GC threads are the leader and the first others that take part (a
 * capability that takes no part would never do the work); every capability's roots go to
 * one. Entry: from-space marked (mark_from_space); no GC thread active. On return every GC
 * thread is active (gc_follower_work may start). */
static void start_gc_threads(SmCap *leader, bool major, const StwTakingPart *part)
{
    unsigned n = gc_thread_count(major);
    if (n > part->n)
        n = part->n;
    bool steal = gc_steals(major, n);
    bool aging = !major && base_cfg->aging;
    gc_n_threads = 0;
    gc_threads[gc_n_threads++] = leader->gct;
    for (unsigned k = 1; k < part->n && gc_n_threads < n; k++)
        gc_threads[gc_n_threads++] = sm_caps[part->no[k]]->gct;
    for (unsigned i = 0; i < sm_n_caps; i++)
        sm_caps[i]->gc_roots_by = UINT_MAX;
    for (unsigned k = 0; k < gc_n_threads; k++) {
        GCThread *g = gc_threads[k];
        g->index = k;
        g->major = major;
        g->steal = steal;
        g->aging = aging;
        g->points_young = false;
        reset_counters(g);
        g->cap->gc_roots_by = k;
    }
    for (unsigned i = 0, k = 0; i < sm_n_caps; i++) {
        if (sm_caps[i]->gc_roots_by == UINT_MAX)
            sm_caps[i]->gc_roots_by = k++ % gc_n_threads;
        RTS_ASSERT(sm_caps[i]->gc_roots_by < gc_n_threads);   /* Note [GC threads] */
    }
    __atomic_store_n(&gc_busy, gc_n_threads, __ATOMIC_RELEASE);
    for (unsigned k = 0; k < gc_n_threads; k++)
        __atomic_store_n(&gc_threads[k]->active, true, __ATOMIC_RELEASE);
}

/* Phase 4: the leader's own GC work, then the wait for the other GC threads. Entry: the
 * GC threads started (start_gc_threads). On return no GC thread works any more; a GC the
 * OS refused memory does not return (Note [Out of memory in a GC] in gcthread.h). */
static void run_gc_threads(SmCap *leader, bool major)
{
    stw_start_gc(major);
    trace_begin(SPAN_GC_WORK, 0);
    gc_thread_work(leader->gct, true);
    trace_end(SPAN_GC_WORK);
    trace_begin(SPAN_AWAIT_GC_THREADS, 0);
    stw_await_gc_threads(gc_n_threads - 1);
    trace_end(SPAN_AWAIT_GC_THREADS);
    size_t refused = gc_refused_bytes();
    if (refused)
        sm_out_of_memory(refused);
    gc_find_dead_finalized(major);          /* Note [Finalizers] in finalize.h */
}

/* What one GC thread counted, into the GC's record. */
static void add_counters(GcRecord *r, const GCThread *g)
{
    uint64_t copied = g->copied_words * sizeof(Value);
#if RTS_PATCH_STACK_CHUNKS
    r->stack_scans += g->stack_scans;
#endif
    r->copied_bytes += copied;
    if (copied > r->max_thread_copied_bytes)
        r->max_thread_copied_bytes = copied;
#if RTS_PATCH_GEN0_STEAL
    r->steal_tries += g->steal_tries;
    r->steals += g->steals;
#endif
}

/* Phase 5: each GC thread's to-space joins the old generation (old blocks) or the aged
 * ones, its counters go into *r, and it is made inactive. Entry: run_gc_threads returned
 * (every GC thread has left gc_scavenge_loop). Locks held: sm_lock. */
static void gather_to_space(GcRecord *r)
{
    RTS_ASSERT(sm_lock_held());
    for (unsigned k = 0; k < gc_n_threads; k++) {
        GCThread *g = gc_threads[k];
        /* Note [To-space] in gcthread.h: every block and large object it copied is scanned;
         * Note [Aging] in storage.h: old to-space is generation 1, aged to-space 0, and
         * only a GC that ages has any. */
        RTS_ASSERT(g->large_pending == NULL && wsdeque_size(&g->deque) == 0);
        RTS_ASSERT(!g->blocks_hd || g->blocks_hd->gen == 1);
        RTS_ASSERT(!g->aged_hd || (g->aging && g->aged_hd->gen == 0));
        if (g->blocks_hd) {
            g->blocks_tl->link = sm_old_gen.blocks;
            sm_old_gen.blocks = g->blocks_hd;
            sm_old_gen.n_blocks += g->n_blocks;
        }
        g->blocks_hd = g->blocks_tl = g->scan_bd = NULL;    /* todo stays: keep_todo_blocks */
        g->n_blocks = 0;
        if (g->aged_hd) {
            g->aged_tl->link = sm_aged.blocks;
            sm_aged.blocks = g->aged_hd;
            sm_aged.n_blocks += g->n_aged;
        }
        g->aged_hd = g->aged_tl = NULL;
        memset(g->aged_todo, 0, GC_TODO_SLOTS * sizeof *g->aged_todo);
        g->n_aged = 0;
        wsdeque_quiesce(&g->deque);        /* every GC thread has left gc_scavenge_loop */
        __atomic_store_n(&g->active, false, __ATOMIC_RELAXED);
        add_counters(r, g);
    }
}

/* Phase 6: from-space is garbage now: the collected nurseries are reset, the dead large
 * objects and the from-space blocks freed. Entry: gather_to_space done. Locks held:
 * sm_lock. */
static void free_from_space(const FromSpace *fs, bool major)
{
    RTS_ASSERT(sm_lock_held());
    for (unsigned i = 0; i < sm_n_caps; i++) {
        if (!collects_nursery(sm_caps[i]))
            continue;
        for (bdescr *bd = sm_caps[i]->nursery; bd; bd = bd->link) {
            bd->flags &= (uint16_t)~BF_FROM;
            if (sanity_poisons())           /* Note [Poisoned from-space] in sanity.h */
                sanity_poison(bd->start, bd->free);
        }
        sm_reset_nursery(sm_caps[i]);
    }
    sweep_large(fs->young_large, major);
    __atomic_store_n(&sm_large_young_blocks, 0, __ATOMIC_RELAXED);
    poison_chain(fs->aged);
    blk_free_chain(fs->aged);
    if (major) {
        poison_chain(fs->old);
        blk_free_chain(fs->old);
        sweep_large(fs->old_large, true);
    }
}

/* Phase 7: old objects that point to aged ones now (Note [Aging] in storage.h) are
 * remembered, each in the set of the capability it was scanned for (Note [To-space by
 * capability]). Entry: free_from_space done. Locks held: none; takes sm_lock to free each
 * GC thread's remember list. */
static void remember_aged(void)
{
    for (unsigned k = 0; k < gc_n_threads; k++) {
        GCThread *g = gc_threads[k];
        if (!g->remember_hd)
            continue;
        for (bdescr *bd = g->remember_hd; bd; bd = bd->link)     /* Note [The GC's remember */
            for (struct GcRemember *r = (struct GcRemember *)bd->start;  /* list] in evac.c */
                 r < (struct GcRemember *)bd->free; r++)
                sm_remember(r->dest < sm_n_caps ? sm_caps[r->dest] : g->cap, r->obj);
        spin_lock(&sm_lock);
        blk_free_chain(g->remember_hd);
        spin_unlock(&sm_lock);
        g->remember_hd = g->remember_tl = NULL;
    }
}

/* Phase 8: after a major GC the old generation's limit is -F times what it holds now (at
 * least -O), and memory goes back (Note [Memory returned after a major GC]); the record
 * gets the live bytes. Entry: remember_aged done. Locks held: none. */
static void size_old_gen(bool major, bool grown, GcRecord *r)
{
    size_t old_blocks_now = sm_old_gen.n_blocks + sm_old_gen.n_large_blocks;
    if (major) {
        sm_old_gen.live_at_major = old_blocks_now;
        sm_old_gen.limit_blocks =
            max_size((size_t)(base_cfg->old_gen_factor * (double)old_blocks_now),
                     base_cfg->min_old_gen_blocks);
        return_memory(old_blocks_now, grown);
    }
    r->live_bytes = old_blocks_now * BLOCK_SIZE;
}

/* Phase 9: the heap is consistent again. Entry: size_old_gen done; the world still stopped. */
static void gc_end(bool major)
{
    gc_client_after_gc();
    if (base_cfg->sanity)
        sanity_check(SANITY_AFTER_GC, major);
}

/* GHC's balanced copied bytes (its Note [Work Balance]): with C copied in all by n threads,
 * (sum over the threads of min(n * copied, C) - C) / (n - 1), which is C when every thread
 * copied C / n and 0 when one copied everything; 0 when serial. Entry: the GC threads'
 * counters still this GC's. */
static uint64_t balanced_copied_bytes(uint64_t copied)
{
    if (gc_n_threads < 2)
        return 0;
    uint64_t sum = 0;
    for (unsigned k = 0; k < gc_n_threads; k++) {
        uint64_t c = gc_threads[k]->copied_words * sizeof(Value) * gc_n_threads;
        sum += c < copied ? c : copied;
    }
    return (sum - copied) / (gc_n_threads - 1);
}

/* Phase 10: the GC's record completed (its counters are in already: gather_to_space,
 * size_old_gen) and handed to the eventlog and the gc_on_done hook. Every field is filled
 * for every GC, whoever reads it (GcRecord in trace/eventlog.h): the balanced bytes and the
 * allocation are a few sums over the GC threads and the capabilities. Entry: gc_end done;
 * the GC threads' counters still this GC's. */
static void finish_record(GcRecord *r, uint64_t t0, uint64_t c0)
{
    r->gc_threads = gc_n_threads;
    r->pause_ns = base_now_ns() - t0 + r->stw_ns;
    r->cpu_ns = base_cpu_ns() - c0;
    r->heap_bytes = (uint64_t)sm_heap_blocks() * BLOCK_SIZE;
    r->balanced_copied_bytes = balanced_copied_bytes(r->copied_bytes);
    r->allocated_bytes = sm_bytes_allocated();
    trace_gc_stats(r);
    if (done_hook)
        done_hook(r);
}

/* The leader's GC, with the world stopped; `part` are the capabilities that take part
 * (stw_stop_all), the leader first (Note [A GC by phases]). Locks held: none. */
static void collect(SmCap *leader, bool major, uint64_t stw_ns, const StwTakingPart *part)
{
    uint64_t t0 = base_now_ns(), c0 = base_cpu_ns();
    GcRecord r = { .major = major, .stw_ns = stw_ns };
    FromSpace fs;

#if RTS_PATCH_IDLE_OPTOUT
    mark_left_out(part);
#endif
    bool grown = gc_begin(major);
    mark_from_space(major, &fs);
    start_gc_threads(leader, major, part);
    run_gc_threads(leader, major);
    spin_lock(&sm_lock);
    gather_to_space(&r);
    free_from_space(&fs, major);
    spin_unlock(&sm_lock);
    remember_aged();
    size_old_gen(major, grown, &r);
    gc_end(major);
    finish_record(&r, t0, c0);
    last_gc_major = major;
}

/* The members of the sync this capability leads (Note [Deferred GC requests] in gc.h): set
 * by stw_interrupt_all, read when its GC starts; only the leader touches it. */
static StwTakingPart lead_part;

/* Leads a GC whose members stw_interrupt_all has interrupted (into lead_part): waits for
 * them to arrive, collects, releases them, runs the finalizers. */
static void lead_gc(SmCap *cap, bool force_major, bool interrupt)
{
    uint64_t thread = 0;
    bool in_mutator = trace_suspend_mutator(&thread);
    trace_begin(SPAN_STW_REQUEST, 0);
    if (interrupt)
        stw_interrupt_all(cap->no, &lead_part);
    cap->gc_deferred = false;
    uint64_t stw_ns = stw_await_arrivals();
    trace_end(SPAN_STW_REQUEST);
    bool major = force_major
        || sm_old_gen.n_blocks + sm_old_gen.n_large_blocks >= sm_old_gen.limit_blocks
        || gc_external_wants_major();       /* Note [External resources] in finalize.h */
    trace_begin(major ? SPAN_MAJOR_GC : SPAN_MINOR_GC, 0);
    collect(cap, major, stw_ns, &lead_part);
    bool over = base_cfg->max_heap && sm_heap_blocks() * BLOCK_SIZE > base_cfg->max_heap;
    if (over && major)
        sm_heap_overflow(cap);              /* exits with the world still stopped */
    trace_end(major ? SPAN_MAJOR_GC : SPAN_MINOR_GC);
    stw_release();
    gc_run_finalizers();                    /* Note [Finalizers] in finalize.h */
    if (in_mutator)
        trace_begin(SPAN_MUTATOR, thread);
    if (over)
        gc_collect(cap, true);
}

/* Whether capability cap leads a GC sync now (stw_try_lead); when another capability's
 * sync is in progress, cap takes part in it (stw_follow) and it is false. */
static bool lead_or_follow(SmCap *cap)
{
    if (stw_try_lead(cap->no, SYNC_GC))
        return true;
    stw_follow(cap->no);                    /* another capability's sync: take part */
    return false;
}

void gc_collect(SmCap *cap, bool force_major)
{
    if (cap->gc_deferred) {                 /* its own request first */
        lead_gc(cap, false, false);
        if (!force_major || last_gc_major)
            return;
    }
    while (!lead_or_follow(cap))
        if (!force_major || last_gc_major)
            return;
    lead_gc(cap, force_major, true);
}

/* More nursery for a capability whose GC request waits (Note [Deferred GC requests] in
 * gc.h), if --sync-defer, -M and the OS allow it: one extension, as many blocks as this
 * request has taken so far (two the first time), taken under one sm_lock. A request that
 * runs on for B blocks so takes the lock about log2(B) times, not B times, and holds at
 * most about twice the blocks it fills. Returns whether it got any. Locks held: none; takes
 * sm_lock around the block allocator. */
static bool extend_nursery(SmCap *cap)
{
    size_t extra = __atomic_load_n(&cap->nursery_extra, __ATOMIC_RELAXED);
    size_t budget = base_cfg->sync_defer / BLOCK_SIZE;
    size_t n = extra ? extra : 2;
    size_t room = budget > extra ? budget - extra : 0;
    if (base_cfg->max_heap) {
        size_t heap = sm_heap_blocks(), max = base_cfg->max_heap / BLOCK_SIZE;
        size_t heap_room = max > heap ? max - heap : 0;
        room = heap_room < room ? heap_room : room;
    }
    if (n > room)
        n = room;
    if (!n)
        return false;
    bdescr *chain = NULL;
    size_t got = 0;
    spin_lock(&sm_lock);
    for (; got < n; got++) {
        bdescr *bd = blk_alloc_on(numa_cap_node(cap->no));
        if (!bd)
            break;                          /* the OS refused: what it gave, then collect */
        bd->link = chain;
        chain = bd;
    }
    spin_unlock(&sm_lock);
    if (!got)
        return false;                       /* the GC will free some: collect now */
    sm_extend_nursery(cap, chain, got);
    return true;
}

void gc_nursery_full(SmCap *cap)
{
    if (cap->gc_deferred) {
        if (stw_all_arrived() || !extend_nursery(cap))
            lead_gc(cap, false, false);
        return;
    }
    if (!base_cfg->sync_defer || base_cfg->gc_stress) {
        gc_collect(cap, false);
        return;
    }
    if (!lead_or_follow(cap))
        return;
    stw_interrupt_all(cap->no, &lead_part);
    if (!stw_all_arrived()) {
        stw_defer();                        /* then look again: stw_defer's fence */
        if (!stw_all_arrived() && extend_nursery(cap)) {
            cap->gc_deferred = true;
            return;
        }
    }
    lead_gc(cap, false, false);
}

void gc_safe_point(SmCap *cap, bool stop)
{
    if (cap->gc_deferred) {
        if (stop || stw_all_arrived())
            lead_gc(cap, false, false);
    } else if (stw_pending()) {
        stw_follow(cap->no);
    }
}

void gc_stop_deferred(SmCap *cap)
{
    if (cap->gc_deferred) {
        cap->gc_deferred = false;
        stw_await_arrivals();
    }
}

void rts_gc(RtsCap *cap, bool major)
{
    gc_collect(sm_cap(cap), major);
}
