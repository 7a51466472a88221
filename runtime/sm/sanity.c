/* The sanity checker (-DS): walks the whole heap before and after every GC and checks that
 * every pointer lands on a valid object in a live block, that nothing points into
 * from-space or freed blocks, that every old-to-young pointer is remembered, and that the
 * block accounting adds up. A failure is a runtime bug: it reports and aborts. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "sm/gc.h"
#include "base/util.h"

static const char *phase;
static SanityCounts counts;
static Value *remembered;        /* every remset entry, sorted, for membership tests */
static size_t n_remembered;

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

/* Checks one object header at p; returns its size in words, header included. */
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
    if (obj_type_layout(t) == LAYOUT_STACK) {
        Value v = (Value)p;
        if (!rts_is_fixnum(obj_payload(v)[STACK_SP]) || stack_sp(v) > stack_capacity(v))
            insane("stack %p: bad sp", (void *)p);
        for (size_t sp = stack_sp(v); sp; ) {
            size_t base = stack_frame_base(v, sp);
            if (base == (size_t)-1)
                insane("stack %p: the slots below %zu are not a frame", (void *)p, sp);
            sp = base;
        }
    }
    if (obj_type_layout(t) == LAYOUT_RAW && raw_words(raw_len((Value)p)) > hdr_size(h))
        insane("object %p: raw length %zu exceeds size", (void *)p, raw_len((Value)p));
    return hdr_size(h) + 1;
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

static void check_object(Value obj)
{
    Value h = obj_header(obj);
    counts.words_walked += hdr_size(h) + 1;
    Value *pl = obj_payload(obj);
    size_t n = 0;
    switch (obj_type_layout(hdr_type(h))) {
    case LAYOUT_PTRS:  n = hdr_size(h); break;
    case LAYOUT_RAW:   return;
    case LAYOUT_STACK: pl += STACK_SLOTS; n = stack_sp(obj); break;
    }
    for (size_t i = 0; i < n; i++)
        check_pointer(obj, pl[i]);
    if ((h & OBJ_DIRTY) && bdescr_of(obj_ptr(obj))->gen != 0 && !is_remembered(obj))
        insane("object %#lx is dirty but in no remembered set", (unsigned long)obj);
}

/* Walks the objects tiling a chain of small-object blocks; returns the blocks counted. */
static size_t check_chain(bdescr *chain, uint16_t gen, bool nursery)
{
    size_t blocks = 0;
    for (bdescr *bd = chain; bd; bd = bd->link) {
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

static size_t check_large(bdescr *chain, uint16_t gen)
{
    size_t blocks = 0;
    for (bdescr *bd = chain; bd; bd = bd->link) {
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

static void check_root(Value *root, void *env)
{
    (void)env;
    counts.words_walked++;
    check_pointer(0, *root);
}

void sanity_check(SanityWhen when)
{
    phase = when == SANITY_BEFORE_GC ? "before GC" : "after GC";
    counts.checks++;
    counts.full_checks++;
    const char *blk_msg = blk_check();
    if (blk_msg)
        insane("block allocator: %s", blk_msg);

    n_remembered = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        n_remembered += sm_caps[i]->remset_n;
    remembered = malloc((n_remembered + 1) * sizeof(Value));
    if (!remembered) rts_fatal("out of memory (sanity)");
    n_remembered = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        for (size_t k = 0; k < sm_caps[i]->remset_n; k++)
            remembered[n_remembered++] = sm_caps[i]->remset[k];
    qsort(remembered, n_remembered, sizeof(Value), cmp_value);
    for (size_t k = 0; k < n_remembered; k++) {
        if (bdescr_of(obj_ptr(remembered[k]))->gen == 0)
            insane("remembered object %#lx is young", (unsigned long)remembered[k]);
        if (!(obj_header(remembered[k]) & OBJ_DIRTY))
            insane("remembered object %#lx is not dirty", (unsigned long)remembered[k]);
    }

    size_t blocks = check_chain(sm_old_gen.blocks, 1, false);
    if (blocks != sm_old_gen.n_blocks)
        insane("old generation: %zu blocks counted, %zu recorded", blocks, sm_old_gen.n_blocks);
    size_t large = check_large(sm_old_gen.large, 1);
    if (large != sm_old_gen.n_large_blocks)
        insane("old generation: %zu large blocks counted, %zu recorded", large, sm_old_gen.n_large_blocks);
    blocks += large;
    for (unsigned i = 0; i < sm_n_caps; i++) {
        SmCap *c = sm_caps[i];
        size_t nb = check_chain(c->nursery, 0, true);
        if (nb != c->nursery_blocks)
            insane("capability %u: nursery of %zu blocks, %zu recorded", i, nb, c->nursery_blocks);
        if (when == SANITY_AFTER_GC && c->nursery->free != c->nursery->start)
            insane("capability %u: nursery not empty after GC", i);
        blocks += nb + check_large(c->large_young, 0);
    }
    gc_for_each_root(check_root, NULL);
    if (blocks != blk_blocks_in_use())
        insane("heap holds %zu blocks but the block allocator has %zu in use",
               blocks, blk_blocks_in_use());
    free(remembered);
    remembered = NULL;
}

void sanity_counts(SanityCounts *out)
{
    *out = counts;
}

static void insane(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rtslab: sanity check failed (%s): ", phase);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}
