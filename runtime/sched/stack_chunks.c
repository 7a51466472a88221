#include "rtslab_config.h"
#if RTS_PATCH_STACK_CHUNKS
/* Threads' stacks as chains of chunks (Note [Stack chunks] in stack.h): the underflow frame,
 * the capabilities' free chunks and counters, linking (stack_reserve, stack_room), returning
 * into an older chunk, the frame iterator's step into it, and places across chunks
 * (stack_find, stack_cut). The rest of the stack code, and the helpers used here (stk_*:
 * the -K limit and its headroom, new stack objects), is sched/stack.c's. */
#include <stdlib.h>
#include <string.h>
#include "sched/stack.h"
#include "base/util.h"

/* As in stack.c. */
static inline Value cur_stack(Capability *cap) { return tso_stack(cap->current); }

/* The underflow frame at the bottom of every chunk but a thread's first:
 * [older chunk, from, below] where `from` is the older chunk's sp when this chunk was linked
 * (frames at [from, ..) of the older chunk moved here, Note [Stack chunks]) and `below` the
 * bytes of the chain below this chunk (for -K). */
enum { UF_OLDER, UF_FROM, UF_BELOW, UF_SLOTS };
#define UF_TOP ((size_t)UF_SLOTS + 2)   /* the first frame above it */

static RtsStep stack_underflow(Capability *cap);

static inline bool is_underflow(Value code_word) { return code_word == code_value(stack_underflow); }
/* Whether chunk s starts with an underflow frame (it is not a thread's first). */
static inline bool has_underflow(Value s)
{
    return stack_sp(s) >= UF_TOP && is_underflow(stack_slots(s)[UF_SLOTS]);
}

/* Per-capability free chunks (the last freed first) and counters, one cache line each. The
 * free chunks are GC roots, registered when a capability first frees one. */
#define POOL_MAX 4
typedef struct StackPool {
    Value    free[POOL_MAX];
    unsigned nfree;
    bool     rooted;
    StackChunkCounts n;
} __attribute__((aligned(RTS_CACHE_LINE))) StackPool;
static StackPool *pools;               /* one per capability (stack_pools_init) */

void stack_pools_init(unsigned n)
{
    pools = aligned_alloc(RTS_CACHE_LINE, n * sizeof *pools);
    if (!pools) base_fatal("out of memory (stack chunk pools)");
    memset(pools, 0, n * sizeof *pools);
}

size_t stack_chunk_bytes = STACK_CHUNK_DEFAULT, stack_chunk_carry = STACK_CARRY_DEFAULT;

static size_t chunk_slots(void)
{
    size_t slots = stack_chunk_bytes / sizeof(Value);
    return slots > STACK_SLOTS + 1 + UF_TOP + 2 ? slots - STACK_SLOTS - 1 : UF_TOP + 2;
}

/* Gives chunk s (no longer in any chain) back for reuse. */
static void chunk_free(Capability *cap, Value s)
{
    StackPool *p = &pools[cap->sm.no];
    stack_set_sp(s, 0);
    p->n.live--;
    if (p->nfree == POOL_MAX)
        return;
    if (!p->rooted) {
        for (unsigned i = 0; i < POOL_MAX; i++) {
            p->free[i] = RTS_FALSE;
            rts_add_root(&p->free[i]);
        }
        p->rooted = true;
    }
    p->free[p->nfree++] = s;
}

void stack_chunk_counts(StackChunkCounts *out)
{
    memset(out, 0, sizeof *out);
    for (unsigned i = 0; i < cap_n_caps; i++) {
        out->linked += pools[i].n.linked;
        out->allocated += pools[i].n.allocated;
        out->reused += pools[i].n.reused;
        out->underflows += pools[i].n.underflows;
        out->live += pools[i].n.live;
    }
}

/* Links a new chunk above the top one (Note [Stack chunks]): the top frames up to -kb bytes
 * (at least the top frame) move into it, above its underflow frame. */
bool stack_reserve(Capability *cap, size_t need)
{
    Value s = cur_stack(cap);
    size_t sp = stack_sp(s), bottom = has_underflow(s) ? UF_TOP : 0, from = sp;
    /* Chunks grow from the first (-ki) by doubling up to -kc: a thread just past its first
     * chunk does not take a whole -kc chunk (Note [Stack chunks]). */
    size_t want = chunk_slots(), twice = 2 * stk_bytes(stack_capacity(s)) / sizeof(Value);
    if (twice > STACK_SLOTS + 1 && twice - STACK_SLOTS - 1 < want)
        want = twice - STACK_SLOTS - 1;
    size_t kb = stack_chunk_carry / sizeof(Value);
    if (kb > want / 2)           /* a smaller, growing chunk keeps room to grow into (-kb is */
        kb = want / 2;           /* at most half of -kc, the full size: rts/patch_stack_chunks.c) */
    if (sp > bottom) {
        from = stack_frame_base(s, sp);
        while (from > bottom) {
            size_t nb = stack_frame_base(s, from);
            if (sp - nb > kb)
                break;
            from = nb;
        }
    }
    size_t moved = sp - from, slots = want;
    if (slots < UF_TOP + moved + need)
        slots = UF_TOP + moved + need;
    size_t below = stk_bytes(stack_capacity(s))
        + (bottom ? (size_t)rts_fixnum_val(stack_slots(s)[UF_BELOW]) : 0);
    bool raise = false;
    if (below + stk_bytes(slots) > stk_limit(cap)) {
        stk_enter_headroom(cap);
        raise = true;
        if (below + stk_bytes(slots) > stk_limit(cap))
            stk_overflow(cap);
    }
    StackPool *p = &pools[cap->sm.no];
    Value ns;
    if (p->nfree && stack_capacity(p->free[p->nfree - 1]) >= slots) {
        ns = p->free[--p->nfree];
        p->free[p->nfree] = RTS_FALSE;
        p->n.reused++;
    } else {
        ns = stk_new(cap, slots);              /* may GC: reload the old chunk after */
        s = cur_stack(cap);
        p->n.allocated++;
    }
    p->n.linked++;
    p->n.live++;
    /* ns is young, or old and made dirty below before any GC: no barrier for these writes */
    Value *nsl = stack_slots(ns);
    nsl[UF_OLDER] = s;
    nsl[UF_FROM] = rts_fixnum((intptr_t)from);
    nsl[UF_BELOW] = rts_fixnum((intptr_t)below);
    nsl[UF_SLOTS] = code_value(stack_underflow);
    nsl[UF_SLOTS + 1] = rts_fixnum(UF_SLOTS);
    memcpy(nsl + UF_TOP, stack_slots(s) + from, moved * sizeof(Value));
    stack_set_sp(ns, UF_TOP + moved);
    stack_set_sp(s, from);
    tso_set(cap, cap->current, TSO_STACK, ns);
    thread_dirty(cap, cap->current);
    if (raise)
        stk_raise_overflow(cap);
    return moved > 0;
}

/* A chunk's whole capacity: -K is checked when a chunk is linked. */
size_t stack_room(Capability *cap) { return stack_capacity(cur_stack(cap)); }

/* The code of an underflow frame: the frame above it returned; the older chunk becomes the
 * top one again (dirty: the thread will write it), this one is freed. The result register
 * carries the returned value through. */
static RtsStep stack_underflow(Capability *cap)
{
    Value s = cur_stack(cap);
    Value older = stack_slots(s)[UF_OLDER];
    tso_set(cap, cap->current, TSO_STACK, older);
    stack_dirty(cap, cap->current);
    pools[cap->sm.no].n.underflows++;
    chunk_free(cap, s);
    return RTS_NEXT;
}

/* A killed thread's chunks above its first are freed. */
void stack_thread_done(Capability *cap, Value t)
{
    Value s = tso_stack(t);
    while (has_underflow(s)) {
        Value older = stack_slots(s)[UF_OLDER];
        chunk_free(cap, s);
        s = older;
    }
    tso_set(cap, t, TSO_STACK, s);
}

/* The frame iterator's step down past underflow frames (stack_iter_next, in stack.c): on
 * into the older chunk while the top frame of it->stack is an underflow frame; false when
 * there is no frame left. */
bool stk_iter_older(StackIter *it)
{
    Value *sl = stack_slots(it->stack);
    while (is_underflow(sl[it->sp - 2])) {     /* on into the older chunk */
        it->stack = sl[UF_OLDER];
        it->sp = stack_sp(it->stack);
        if (it->sp == 0)
            return false;
        sl = stack_slots(it->stack);
    }
    return true;
}

/* Walks the chain down to `stack`, then back up through the chunks that frames of it moved
 * to (Note [Stack chunks]: a chunk's underflow frame says from where), to the chunk the
 * frame is in now. */
Value *stack_find(Capability *cap, Value stack, size_t off, size_t nslots, StackPlace *now)
{
    Value top = cur_stack(cap);
    Value small[64], *chain = small;
    size_t n = 0, cap_n = 64, i;
    Value *found = NULL;
    for (Value s = top;; s = stack_slots(s)[UF_OLDER]) {
        if (n == cap_n) {
            Value *bigger = malloc(2 * cap_n * sizeof *bigger);
            if (!bigger) base_fatal("out of memory (stack_find)");
            memcpy(bigger, chain, n * sizeof *chain);
            if (chain != small) free(chain);
            chain = bigger;
            cap_n *= 2;
        }
        chain[n++] = s;
        if (s == stack || !has_underflow(s))
            break;
    }
    i = n - 1;
    if (chain[i] == stack) {
        while (i > 0) {                        /* moved up into chain[i - 1]? */
            size_t from = (size_t)rts_fixnum_val(stack_slots(chain[i - 1])[UF_FROM]);
            if (off < from)
                break;
            off = UF_TOP + off - from;
            i--;
        }
        if (off + nslots + 2 <= stack_sp(chain[i])) {
            now->stack = chain[i];
            now->off = off;
            found = stack_slots(chain[i]) + off;
        }
    }
    if (chain != small)
        free(chain);
    return found;
}

/* The chunks above at.stack are freed; at.stack becomes the top one (dirty). */
void stack_cut(Capability *cap, StackPlace at, size_t nslots)
{
    Value s = cur_stack(cap);
    while (s != at.stack) {
        Value older = stack_slots(s)[UF_OLDER];
        chunk_free(cap, s);
        s = older;
    }
    stack_set_sp(s, at.off + nslots + 2);
    if (s != cur_stack(cap)) {
        tso_set(cap, cap->current, TSO_STACK, s);
        stack_dirty(cap, cap->current);
    }
    stk_leave_headroom(cap,
                       (has_underflow(s) ? (size_t)rts_fixnum_val(stack_slots(s)[UF_BELOW]) : 0)
                       + stk_bytes(at.off + nslots + 2));
}
#endif
