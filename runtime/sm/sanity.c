/* The sanity checker (-DS): before and after every GC it checks that every pointer it meets
 * lands on a valid object in a live block, that nothing points into from-space or freed
 * blocks, that every old-to-young pointer is remembered, that the remembered sets hold what
 * they should, and that the block accounting adds up: over the whole heap at major GCs and
 * whenever that stays cheap, else over what can have changed since the last check (Note
 * [Sanity checking cost]). A failure is a runtime bug: it reports and aborts.
 *
 * Note [Sanity checking cost]
 * Walking the whole heap before and after every GC costs (GCs x heap), and in a program
 * whose live data grows with its work both grow with it: N threads blocked on an MVar (a TSO
 * and a stack each, all live until joined; testsuite/gc/sanity_threads.scm) walked 33 words
 * per word allocated at N = 25 000 and 131 at N = 100 000, 1.35 s against 0.17 s without
 * -DS. So a check walks the whole heap (a "full" check) only
 *  - at a major GC, before and after: the cost is of the order of the GC's own (the GC
 *    copies the live data; the walks visit the old generation, about -F times the live data
 *    at most, and the live data). GHC's threaded RTS walks the heap only after a major GC
 *    (rts/sm/Sanity.c, checkGeneration: only then is there no slop) and its mutable lists
 *    after every GC;
 *  - while the old generation is under a floor: RTS_SANITY_FULL_FLOOR (4 MB, the least
 *    old generation that a major GC collects, RTS_MIN_OLD_GEN_LIMIT) plus the nurseries (what
 *    one minor GC can promote past it). An old generation with little live data stays under
 *    it, so small heaps, every -A4k stress test among them, are walked whole at every GC as
 *    before, which costs at most the floor per GC;
 *  - while the old-generation words walked by full checks so far, this one and the major
 *    GCs' included, stay within RTS_SANITY_FULL_BUDGET (K = 4) times the words allocated so
 *    far: a budget that buys full checks at minor GCs, spread over the run, for at most K
 *    words walked per word allocated (where the major GCs' walks have not used it up).
 * Any other check walks what can have changed since the check before it:
 *  - before a GC: the young generation (nurseries and young large objects: what was
 *    allocated since the last GC) and the objects in the remembered sets, the only old objects
 *    the mutator can have written since the last GC if its write barrier is right (Note
 *    [Write barrier] in storage.h; Note [Dirty stacks] in sched/thread.h);
 *  - after a minor GC: what it promoted (its to-space blocks, which it put at the head of the
 *    old generation's chain, and the large objects it moved there, at the head of the large
 *    list: the check before the GC keeps both heads and counts), the remembered sets as the
 *    GC left them (the running threads, dirty again), and the objects that were remembered
 *    before it and are no longer (the GC rewrote their fields in place); the nurseries must
 *    be empty;
 *  - both: the roots; every remembered-set entry (a valid object, old, dirty, in one set
 *    once); the young generation's blocks, plus the old generation's recorded counts,
 *    against the block allocator's blocks in use.
 * An object such a check walks was allocated, copied or written (remembered) since the check
 * before, so these checks cost a constant times the work of the mutator and of the GC: the
 * young generation at most the words allocated, what minor GCs promote at most that again,
 * and a remembered object is walked before and after each GC that scans it (a big one, a long
 * vector written between GCs or a deep running stack, costs the GC as much at each minor GC).
 * -s counts the work (docs/stats.md): the words walked are what the checker reads, headers,
 * pointer fields, stacks' slots in use, raw objects' lengths, and root slots. With 25 000
 * and 100 000 threads it walks about 3.5 words per word allocated
 * (testsuite/gc/sanity_cost.py).
 *
 * What is lost: old objects that nothing changed are checked by full checks only. So a
 * missing write barrier (an old object made to point to a young one without being
 * remembered) is reported at the next full check instead of at the GC just after the write;
 * by then the minor GCs in between may have left the old object pointing into a nursery that
 * was reset and refilled, which the full check reports as an unremembered old-to-young
 * pointer, a bad header or a pointer past its block's objects (testsuite/gc: the
 * drop_barrier tests, with RTSLAB_TEST_DROP_BARRIER in storage.c). A report names its GC
 * and whether its check was full: after a full check, the bug may be older than that GC.
 * Also left to full checks: an old object locked across a safe point, or dirty and in no
 * remembered set; the tiling of old blocks that no GC touched; the old generation's chains
 * against their recorded counts; and the block allocator's free lists (blk_check).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "sm/sanity.h"
#include "sm/gcthread.h"
#include "sm/roots.h"
#include "base/util.h"
#include "os/numa.h"

static const char *phase;        /* "before", "after" */
static bool whole_heap;           /* this check walks the whole heap */
static SanityCounts counts;
static uint64_t full_old_words;  /* old-generation words walked by full checks: the budget's */

/* This check's remembered sets, sorted, for membership tests. */
static Value *remembered;
static size_t n_remembered;

/* What the check before a GC leaves for the check after it (Note [Sanity checking cost]):
 * the objects remembered then, and the heads and counts of the old generation's chains. */
static struct {
    bool    valid;
    Value  *remembered;
    size_t  n_remembered;
    bdescr *blocks, *large;
    size_t  n_blocks, n_large_blocks;
} before_gc;

__attribute__((noreturn, format(printf, 1, 2)))
static void insane(const char *fmt, ...);

static int cmp_value(const void *a, const void *b)
{
    Value x = *(const Value *)a, y = *(const Value *)b;
    return x < y ? -1 : x > y;
}

static bool is_remembered(Value obj)
{
    return bsearch(&obj, remembered, n_remembered, sizeof(Value), cmp_value) != NULL;
}

/* Checks one object header at p; returns its size in words, header included. Constant time:
 * it runs for every pointer checked. */
static size_t check_header(const Value *p)
{
    Value h = p[0];
    if (!hdr_is_header(h))
        insane("object %p: bad header %#lx (forwarded or garbage)", (void *)p, (unsigned long)h);
    if (h & OBJ_LOCKED)
        insane("object %p: locked across a safe point", (void *)p);
    ObjType t = hdr_type(h);
    if (t < T_PAIR || t >= T_NTYPES)
        insane("object %p: bad type %d", (void *)p, (int)t);
    if (obj_type_layout(t) == LAYOUT_STACK
        && (!rts_is_fixnum(p[1 + STACK_SP]) || stack_sp((Value)p) > stack_capacity((Value)p)))
        insane("stack %p: bad sp", (void *)p);
    if (obj_type_layout(t) == LAYOUT_RAW && raw_words(raw_len((Value)p)) > hdr_size(h))
        insane("object %p: raw length %zu exceeds size", (void *)p, raw_len((Value)p));
    return hdr_size(h) + 1;
}

/* A stack's frames tile its slots [0, sp): walked when the stack itself is checked, not at
 * every pointer to it. */
static void check_frames(Value s)
{
    for (size_t sp = stack_sp(s); sp; ) {
        size_t base = stack_frame_base(s, sp);
        if (base == (size_t)-1)
            insane("stack %#lx: the slots below %zu are not a frame", (unsigned long)s, sp);
        sp = base;
    }
}

static void check_pointer(Value owner, Value v)
{
    if (!rts_is_ptr(v))
        return;
    const Value *p = obj_ptr(v);
    if (!p || !blk_is_heap_address(p))
        insane("object %#lx: field %#lx points outside the heap", (unsigned long)owner, (unsigned long)v);
    bdescr *bd = bdescr_of(p);
    if (bd->flags & BF_FREE)
        insane("object %#lx: field %#lx points into a free block", (unsigned long)owner, (unsigned long)v);
    if (bd->flags & BF_FROM)
        insane("object %#lx: field %#lx points into from-space", (unsigned long)owner, (unsigned long)v);
    if ((const uint8_t *)p < bd->start || (const uint8_t *)p >= bd->free)
        insane("object %#lx: field %#lx points past its block's objects", (unsigned long)owner, (unsigned long)v);
    if ((bd->flags & BF_LARGE) && (const uint8_t *)p != bd->start)
        insane("object %#lx: field %#lx points inside a large object", (unsigned long)owner, (unsigned long)v);
    check_header(p);
    if (owner && bd->gen == 0 && bdescr_of(obj_ptr(owner))->gen != 0) {
        if (!(obj_header(owner) & OBJ_DIRTY) || !is_remembered(owner))
            insane("old object %#lx (type %d) points to young %#lx but is not remembered",
                   (unsigned long)owner, (int)obj_type(owner), (unsigned long)v);
    }
}

/* Checks the fields of an object whose header check_header has passed. */
static void check_object(Value obj)
{
    Value h = obj_header(obj);
    Value *pl = obj_payload(obj);
    size_t n = 0;
    switch (obj_type_layout(hdr_type(h))) {
    case LAYOUT_PTRS:  n = hdr_size(h); break;
    case LAYOUT_RAW:   counts.words_walked += 2; return;        /* header, length */
    case LAYOUT_STACK: pl += STACK_SLOTS; n = stack_sp(obj); check_frames(obj); break;
    }
    counts.words_walked += (size_t)(pl - obj_ptr(obj)) + n;
    for (size_t i = 0; i < n; i++)
        check_pointer(obj, pl[i]);
    if ((h & OBJ_DIRTY) && bdescr_of(obj_ptr(obj))->gen != 0 && !is_remembered(obj))
        insane("object %#lx is dirty but in no remembered set", (unsigned long)obj);
}

/* Walks the objects tiling the small-object blocks of a chain, up to `stop` (excluded; NULL:
 * the whole chain); returns the blocks counted. */
static size_t check_chain(bdescr *chain, const bdescr *stop, uint16_t gen, bool nursery)
{
    size_t blocks = 0;
    for (bdescr *bd = chain; bd != stop; bd = bd->link) {
        if (!bd)
            insane("generation %u: the blocks before this GC are no longer on its chain", gen);
        if (bd->flags & (BF_FREE | BF_FROM | BF_LARGE | BF_EVACUATED))
            insane("block %p: bad flags %#x", (void *)bd, bd->flags);
        if (bd->gen != gen || !!(bd->flags & BF_NURSERY) != nursery)
            insane("block %p: in the wrong generation", (void *)bd);
        if (bd->free < bd->start || bd->free > bd->start + BLOCK_SIZE)
            insane("block %p: free pointer out of range", (void *)bd);
        for (uint8_t *q = bd->start; q < bd->free; ) {
            size_t words = check_header((Value *)q);
            if (q + words * sizeof(Value) > bd->free)
                insane("object %p overruns its block", (void *)q);
            check_object((Value)q);
            q += words * sizeof(Value);
        }
        blocks += bd->blocks;
    }
    return blocks;
}

/* The same for a chain of large objects. */
static size_t check_large(bdescr *chain, const bdescr *stop, uint16_t gen)
{
    size_t blocks = 0;
    for (bdescr *bd = chain; bd != stop; bd = bd->link) {
        if (!bd)
            insane("generation %u: the large objects before this GC are no longer on its list", gen);
        if ((bd->flags & ~BF_MBGROUP) != BF_LARGE || bd->gen != gen)
            insane("large object block %p: bad flags %#x or generation", (void *)bd, bd->flags);
        size_t words = check_header((Value *)bd->start);
        if (bd->start + words * sizeof(Value) != bd->free || bd->free > blk_group_end(bd))
            insane("large object %p: size does not match its group", (void *)bd->start);
        check_object((Value)bd->start);
        blocks += bd->blocks;
    }
    return blocks;
}

/* Objects named by a remembered set (old ones, which no chain walk of this check reaches);
 * with `unless_remembered`, those not in this check's remembered sets (walked already). */
static void check_objects(const Value *objs, size_t n, bool unless_remembered)
{
    for (size_t k = 0; k < n; k++) {
        if (unless_remembered && is_remembered(objs[k]))
            continue;
        check_header(obj_ptr(objs[k]));
        check_object(objs[k]);
    }
}

static void check_root(Value *root, void *env)
{
    (void)env;
    counts.words_walked++;
    check_pointer(0, *root);
}

/* Gathers every capability's remembered set into `remembered`, sorted, and checks the
 * entries: each old, dirty, and in one set once. */
static void gather_remembered(void)
{
    n_remembered = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        n_remembered += sm_caps[i]->remset_n;
    remembered = malloc((n_remembered + 1) * sizeof(Value));
    if (!remembered) base_fatal("out of memory (sanity)");
    n_remembered = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        for (size_t k = 0; k < sm_caps[i]->remset_n; k++)
            remembered[n_remembered++] = sm_caps[i]->remset[k];
    qsort(remembered, n_remembered, sizeof(Value), cmp_value);
    for (size_t k = 0; k < n_remembered; k++) {
        Value obj = remembered[k];
        check_pointer(0, obj);
        if (bdescr_of(obj_ptr(obj))->gen == 0)
            insane("remembered object %#lx is young", (unsigned long)obj);
        if (!(obj_header(obj) & OBJ_DIRTY))
            insane("remembered object %#lx is not dirty", (unsigned long)obj);
        if (k > 0 && remembered[k - 1] == obj)
            insane("object %#lx is remembered twice", (unsigned long)obj);
    }
}

static uint64_t words_allocated(void)
{
    uint64_t bytes = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        bytes += sm_caps[i]->bytes_allocated;
    return bytes / sizeof(Value);
}

/* Whether this check walks the whole heap (Note [Sanity checking cost]). */
static bool check_whole_heap(SanityWhen when, bool major, size_t old_blocks)
{
    if (major || (when == SANITY_AFTER_GC && !before_gc.valid))
        return true;
    size_t floor_blocks = RTS_SANITY_FULL_FLOOR / BLOCK_SIZE;
    for (unsigned i = 0; i < sm_n_caps; i++)
        floor_blocks += sm_caps[i]->nursery_blocks;
    if (old_blocks < floor_blocks)
        return true;
    uint64_t old_words = old_blocks * (BLOCK_SIZE / sizeof(Value));
    return full_old_words + old_words <= RTS_SANITY_FULL_BUDGET * words_allocated();
}

/* The old generation, whole; returns its blocks. */
static size_t check_old_generation(void)
{
    const char *blk_msg = blk_check();
    if (blk_msg)
        insane("block allocator: %s", blk_msg);
    uint64_t w0 = counts.words_walked;
    size_t blocks = check_chain(sm_old_gen.blocks, NULL, 1, false);
    if (blocks != sm_old_gen.n_blocks)
        insane("old generation: %zu blocks counted, %zu recorded", blocks, sm_old_gen.n_blocks);
    size_t large = check_large(sm_old_gen.large, NULL, 1);
    if (large != sm_old_gen.n_large_blocks)
        insane("old generation: %zu large blocks counted, %zu recorded", large, sm_old_gen.n_large_blocks);
    full_old_words += counts.words_walked - w0;
    return blocks + large;
}

/* What a minor GC changed in the old generation: what it promoted, and the objects that were
 * remembered before it. */
static void check_promoted(void)
{
    size_t blocks = check_chain(sm_old_gen.blocks, before_gc.blocks, 1, false);
    if (blocks != sm_old_gen.n_blocks - before_gc.n_blocks)
        insane("old generation: %zu blocks promoted, %zu recorded",
               blocks, sm_old_gen.n_blocks - before_gc.n_blocks);
    size_t large = check_large(sm_old_gen.large, before_gc.large, 1);
    if (large != sm_old_gen.n_large_blocks - before_gc.n_large_blocks)
        insane("old generation: %zu large blocks promoted, %zu recorded",
               large, sm_old_gen.n_large_blocks - before_gc.n_large_blocks);
    check_objects(before_gc.remembered, before_gc.n_remembered, true);
    /* A GC thread's last old block of each slot, which a minor GC goes on filling (gc.c):
     * its objects promoted by this GC lie beyond the chain walked above when the block is
     * older. */
    for (unsigned i = 0; i < sm_n_caps; i++)
        for (unsigned d = 0; d < GC_TODO_SLOTS; d++) {
            bdescr *bd = sm_caps[i]->gct->todo[d];
            if (bd)
                check_chain(bd, bd->link, 1, false);
        }
}

/* The to-space blocks of a chain up to `stop` (excluded): each on its GC thread's node. */
static void check_to_space_nodes(const bdescr *chain, const bdescr *stop)
{
    for (const bdescr *bd = chain; bd && bd != stop; bd = bd->link) {
        if (bd->owner >= gc_n_threads)
            insane("to-space block %p: owner %u is no GC thread", (void *)bd->start, bd->owner);
        unsigned want = numa_cap_node(gc_threads[bd->owner]->cap->no);
        if (blk_node_of(bd->start) != want)
            insane("to-space block %p of GC thread %u on heap node %u, not %u",
                   (void *)bd->start, bd->owner, blk_node_of(bd->start), want);
    }
}

/* Note [NUMA-local heap] in os/numa.h: each capability's nursery and young large objects
 * are on its heap node, and its nursery has that node's memory policy; after a GC, the
 * to-space blocks each GC thread allocated (bd->owner: its index in gc_threads[], still
 * this GC's) are on its capability's node. With one node all of it holds trivially. */
static void check_nodes(SanityWhen when, bool major)
{
    for (unsigned i = 0; i < sm_n_caps; i++) {
        SmCap *c = sm_caps[i];
        unsigned node = numa_cap_node(c->no);
        for (bdescr *bd = c->nursery; bd; bd = bd->link)
            if (blk_node_of(bd->start) != node)
                insane("capability %u: nursery block %p on heap node %u, not %u", i,
                       (void *)bd->start, blk_node_of(bd->start), node);
        for (bdescr *bd = c->large_young; bd; bd = bd->link)
            if (blk_node_of(bd->start) != node)
                insane("capability %u: large object %p on heap node %u, not %u", i,
                       (void *)bd->start, blk_node_of(bd->start), node);
        if (!numa_policy_matches(c->nursery->start, node))
            insane("capability %u: nursery block %p lacks the memory policy of node %d", i,
                   (void *)c->nursery->start, numa_bind_id(node));
    }
    if (when != SANITY_AFTER_GC || !(major || before_gc.valid))
        return;
    check_to_space_nodes(sm_old_gen.blocks, major ? NULL : before_gc.blocks);
    check_to_space_nodes(sm_aged.blocks, NULL);    /* every aged block is this GC's to-space */
}

void sanity_check(SanityWhen when, bool major)
{
    phase = when == SANITY_BEFORE_GC ? "before" : "after";
    counts.checks++;
    size_t blocks = sm_old_gen.n_blocks + sm_old_gen.n_large_blocks;
    whole_heap = check_whole_heap(when, major, blocks);
    gather_remembered();

    if (whole_heap) {
        counts.full_checks++;
        blocks = check_old_generation();
    } else {
        check_objects(remembered, n_remembered, false);
        if (when == SANITY_AFTER_GC)
            check_promoted();
    }
    for (unsigned i = 0; i < sm_n_caps; i++) {
        SmCap *c = sm_caps[i];
        size_t nb = check_chain(c->nursery, NULL, 0, true);
        if (nb != c->nursery_blocks + c->nursery_extra)
            insane("capability %u: nursery of %zu blocks, %zu + %zu recorded", i, nb,
                   c->nursery_blocks, c->nursery_extra);
        if (when == SANITY_AFTER_GC && c->nursery->free != c->nursery->start)
            insane("capability %u: nursery not empty after GC", i);
        blocks += nb + check_large(c->large_young, NULL, 0);
    }
    /* The aged blocks, young like the nurseries: walked whole at every check. */
    size_t aged = check_chain(sm_aged.blocks, NULL, 0, false);
    if (aged != sm_aged.n_blocks)
        insane("aged blocks: %zu counted, %zu recorded", aged, sm_aged.n_blocks);
    if (major && when == SANITY_AFTER_GC && aged)
        insane("%zu aged blocks after a major GC", aged);
    blocks += aged;
    check_nodes(when, major);
    gc_for_each_root(check_root, NULL);
    if (blocks != blk_blocks_in_use())
        insane("heap holds %zu blocks but the block allocator has %zu in use",
               blocks, blk_blocks_in_use());

    free(before_gc.remembered);
    before_gc.remembered = NULL;
    before_gc.valid = when == SANITY_BEFORE_GC;
    if (before_gc.valid) {
        before_gc.remembered = remembered;
        before_gc.n_remembered = n_remembered;
        before_gc.blocks = sm_old_gen.blocks;
        before_gc.large = sm_old_gen.large;
        before_gc.n_blocks = sm_old_gen.n_blocks;
        before_gc.n_large_blocks = sm_old_gen.n_large_blocks;
    } else {
        free(remembered);
    }
    remembered = NULL;
}

void sanity_poison(void *start, void *end)
{
    for (Value *p = start; p < (Value *)end; p++)
        *p = SANITY_POISON;
}

void sanity_check_value(Value v, const char *where)
{
    if (!sanity_poisons() || !rts_is_ptr(v) || !v)
        return;
    spin_lock(&sm_lock);                /* the block allocator's table of megablocks */
    bool heap = blk_is_heap_address(obj_ptr(v));
    spin_unlock(&sm_lock);
    if (heap && obj_header(v) == SANITY_POISON) {
        fflush(stdout);
        fprintf(stderr, "rtslab: sanity check failed (%s): %#lx is a stale pointer: a GC moved "
                "or freed its object while C code held it across an allocation without a "
                "root (Note [Poisoned from-space])\n", where, (unsigned long)v);
        abort();
    }
}

void sanity_counts(SanityCounts *out)
{
    *out = counts;
}

static void insane(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rtslab: sanity check failed (%s GC %llu, %s): ", phase,
            (unsigned long long)(counts.checks + 1) / 2, whole_heap ? "whole heap" : "what changed");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
