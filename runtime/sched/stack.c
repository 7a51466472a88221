/* Threads' stacks (Note [Stack interface] in stack.h): the baseline's contiguous, doubling
 * stack, frames pushed from C, the frame iterator and places. */
#include <stdlib.h>
#include <string.h>
#include "sched/stack.h"
#include "base/util.h"
#if RTS_PATCH_STACK_CHUNKS
/* Here the stack is a chain of chunks (Note [Stack chunks] in stack.h). */
#endif

static inline RtsCode value_code(Value v)       { return (RtsCode)(uintptr_t)rts_fixnum_val(v); }
static inline Value   cur_stack(Capability *cap) { return tso_stack(cap->current); }

/* A stack object with room for `slots` slots, empty.
 *
 * Note [Stacks reserved lazily]
 * Only the slots below sp are ever read (by the GC, the sanity checker and the frame
 * iterator), and every slot is written before sp covers it (push_frame_on, the VM's calls),
 * so a new stack's slots are left as the allocator gives them. A stack of RTS_LARGE_OBJECT_BYTES
 * or more is a large object on blocks fresh from mmap, which the kernel backs with memory
 * only when touched: `+RTS -ki1g` costs what the program's frames use, not a gigabyte
 * (before, filling the slots touched every page). */
static Value new_stack(Capability *cap, size_t slots)
{
    Value *p = sm_alloc(sm_cap(cap), 1 + STACK_SLOTS + slots);
    p[0] = obj_make_header(T_STACK, STACK_SLOTS + slots);
    Value s = (Value)p;
    stack_set_sp(s, 0);
    return s;
}

static size_t stack_bytes(size_t slots) { return (slots + STACK_SLOTS + 1) * sizeof(Value); }

/* The error of a thread whose stack would pass -K: it names the limit and the option, as
 * GHC's "Stack space overflow: current size ... Use `+RTS -Ksize'" does. */
static __attribute__((noreturn)) void stack_overflow(Capability *cap)
{
    rts_thread_error(cap, "stack overflow: the limit is %zu bytes (+RTS -K%zu; -K<size> raises it)",
                     rts_opts.max_stack, rts_opts.max_stack);
}

/* --- the limit and its headroom (Note [Stack overflow] in stack.h) ------------------------- */

static bool (*overflow_handler)(Capability *cap);

void rts_set_stack_overflow_handler(bool (*handler)(Capability *cap)) { overflow_handler = handler; }

static inline bool overflowing(Capability *cap) { return tso_get(cap->current, TSO_OVERFLOW) == RTS_TRUE; }

/* The bytes the current thread's stack may take now. */
static size_t stack_limit(Capability *cap)
{
    return rts_opts.max_stack + (overflowing(cap) ? RTS_STACK_HEADROOM : 0);
}

/* A reservation would pass the limit: grants the headroom (the caller makes the reservation
 * within it, then calls raise_overflow), or kills the thread when it cannot be granted. */
static void enter_headroom(Capability *cap)
{
    if (!overflow_handler || overflowing(cap))
        stack_overflow(cap);
    tso_set(cap, cap->current, TSO_OVERFLOW, RTS_TRUE);
}

static __attribute__((noreturn)) void raise_overflow(Capability *cap)
{
    overflow_handler(cap);                     /* does not return when it raises */
    stack_overflow(cap);
}

/* After an escape that left `used` bytes: the headroom is given back once within -K. */
static void leave_headroom(Capability *cap, size_t used)
{
    if (used <= rts_opts.max_stack && overflowing(cap))
        tso_set(cap, cap->current, TSO_OVERFLOW, RTS_FALSE);
}

#if RTS_PATCH_STACK_CHUNKS
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
    if (!pools) rts_fatal("out of memory (stack chunk pools)");
    memset(pools, 0, n * sizeof *pools);
}

static size_t chunk_slots(void)
{
    size_t slots = rts_opts.stack_chunk / sizeof(Value);
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
    for (unsigned i = 0; i < cap_count; i++) {
        out->linked += pools[i].n.linked;
        out->allocated += pools[i].n.allocated;
        out->reused += pools[i].n.reused;
        out->underflows += pools[i].n.underflows;
        out->live += pools[i].n.live;
    }
}
#endif

/* Pushes a frame onto the stack `s` (which has room). */
static void push_frame_on(Value s, RtsCode code, size_t nslots)
{
    size_t sp = stack_sp(s);
    Value *sl = stack_slots(s) + sp;
    for (size_t i = 0; i < nslots; i++)
        sl[i] = RTS_FALSE;
    sl[nslots] = code_value(code);
    sl[nslots + 1] = rts_fixnum((intptr_t)nslots);
    stack_set_sp(s, sp + nslots + 2);
}

Value stack_new_thread(Capability *cap, RtsCode code, size_t nslots)
{
    size_t slots = rts_opts.initial_stack / sizeof(Value);
    slots = slots > STACK_SLOTS + 1 ? slots - STACK_SLOTS - 1 : 1;
    while (slots < nslots + 2)
        slots *= 2;
    if (stack_bytes(slots) > rts_opts.max_stack && cap->current != RTS_FALSE)
        stack_overflow(cap);
    Value stack = new_stack(cap, slots);
    push_frame_on(stack, code, nslots);
    return stack;
}

RtsCode stack_top_code(Value t)
{
    Value s = tso_stack(t);
    size_t sp = stack_sp(s);
    return sp ? value_code(stack_slots(s)[sp - 2]) : NULL;
}

void stack_dirty(Capability *cap, Value t)
{
    /* Atomic load: other capabilities lock the thread through its header. */
    Value s = tso_stack(t);
    if (!(__atomic_load_n(obj_ptr(s), __ATOMIC_RELAXED) & OBJ_DIRTY))
        rts_write_barrier_slow(cap, s);
}

#if RTS_PATCH_STACK_CHUNKS
/* Links a new chunk above the top one (Note [Stack chunks]): the top frames up to -kb bytes
 * (at least the top frame) move into it, above its underflow frame. */
bool stack_reserve(Capability *cap, size_t need)
{
    Value s = cur_stack(cap);
    size_t sp = stack_sp(s), bottom = has_underflow(s) ? UF_TOP : 0, from = sp;
    /* Chunks grow from the first (-ki) by doubling up to -kc: a thread just past its first
     * chunk does not take a whole -kc chunk (Note [Stack chunks]). */
    size_t want = chunk_slots(), twice = 2 * stack_bytes(stack_capacity(s)) / sizeof(Value);
    if (twice > STACK_SLOTS + 1 && twice - STACK_SLOTS - 1 < want)
        want = twice - STACK_SLOTS - 1;
    size_t kb = rts_opts.stack_buffer / sizeof(Value);
    if (kb > want / 2)           /* a smaller, growing chunk keeps room to grow into (-kb is */
        kb = want / 2;           /* at most half of -kc, the full size: check_final, options.c) */
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
    size_t below = stack_bytes(stack_capacity(s))
        + (bottom ? (size_t)rts_fixnum_val(stack_slots(s)[UF_BELOW]) : 0);
    bool raise = false;
    if (below + stack_bytes(slots) > stack_limit(cap)) {
        enter_headroom(cap);
        raise = true;
        if (below + stack_bytes(slots) > stack_limit(cap))
            stack_overflow(cap);
    }
    StackPool *p = &pools[cap->sm.no];
    Value ns;
    if (p->nfree && stack_capacity(p->free[p->nfree - 1]) >= slots) {
        ns = p->free[--p->nfree];
        p->free[p->nfree] = RTS_FALSE;
        p->n.reused++;
    } else {
        ns = new_stack(cap, slots);            /* may GC: reload the old chunk after */
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
        raise_overflow(cap);
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
#else
/* The most slots a stack may have within the limit in force. */
static size_t most_slots(Capability *cap) { return stack_limit(cap) / sizeof(Value) - STACK_SLOTS - 1; }

size_t stack_room(Capability *cap)
{
    size_t c = stack_capacity(cur_stack(cap)), most = most_slots(cap);
    return c < most ? c : most;
}

/* Replaces the current thread's stack by one at least twice as big (at most the limit) with
 * room for `need` more slots: every frame moves (to the same offsets). A stack that grew
 * into the headroom and has room again only passes the limit (Note [Stack overflow]). */
bool stack_reserve(Capability *cap, size_t need)
{
    Value s = cur_stack(cap);
    size_t slots = stack_capacity(s);
    need += stack_sp(s);
    bool raise = false;
    if (stack_bytes(need) > stack_limit(cap)) {
        enter_headroom(cap);
        raise = true;
        if (stack_bytes(need) > stack_limit(cap))
            stack_overflow(cap);
    }
    if (slots < need) {
        while (slots < need)
            slots *= 2;
        if (slots > most_slots(cap))
            slots = most_slots(cap);
        Value ns = new_stack(cap, slots);      /* may GC: reload the old stack after */
        s = cur_stack(cap);
        size_t sp = stack_sp(s);
        memcpy(stack_slots(ns), stack_slots(s), sp * sizeof(Value));
        stack_set_sp(ns, sp);
        stack_set_sp(s, 0);                    /* the old copy holds nothing live */
        tso_set(cap, cap->current, TSO_STACK, ns);
        thread_dirty(cap, cap->current);
    }
    if (raise)
        raise_overflow(cap);
    return true;
}
#endif

/* --- the frame iterator ------------------------------------------------------------------- */

void stack_iter_init(StackIter *it, Value t)
{
    it->stack = tso_stack(t);
    it->sp = stack_sp(it->stack);
}

bool stack_iter_next(StackIter *it, StackFrame *f)
{
    if (it->sp == 0)
        return false;
    Value *sl = stack_slots(it->stack);
#if RTS_PATCH_STACK_CHUNKS
    while (is_underflow(sl[it->sp - 2])) {     /* on into the older chunk */
        it->stack = sl[UF_OLDER];
        it->sp = stack_sp(it->stack);
        if (it->sp == 0)
            return false;
        sl = stack_slots(it->stack);
    }
#endif
    f->n = (size_t)rts_fixnum_val(sl[it->sp - 1]);
    f->code = value_code(sl[it->sp - 2]);
    f->base = it->sp - 2 - f->n;
    f->stack = it->stack;
    f->slots = sl + f->base;
    it->sp = f->base;
    return true;
}

/* --- places --------------------------------------------------------------------------------- */

#if RTS_PATCH_STACK_CHUNKS
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
            if (!bigger) rts_fatal("out of memory (stack_find)");
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
    leave_headroom(cap, (has_underflow(s) ? (size_t)rts_fixnum_val(stack_slots(s)[UF_BELOW]) : 0)
                        + stack_bytes(at.off + nslots + 2));
}
#else
/* The contiguous stack keeps offsets across a grow: the offset alone finds the place. */
Value *stack_find(Capability *cap, Value stack, size_t off, size_t nslots, StackPlace *now)
{
    (void)stack;
    Value s = cur_stack(cap);
    if (off + nslots + 2 > stack_sp(s))
        return NULL;
    now->stack = s;
    now->off = off;
    return stack_slots(s) + off;
}

void stack_cut(Capability *cap, StackPlace at, size_t nslots)
{
    stack_set_sp(at.stack, at.off + nslots + 2);
    leave_headroom(cap, stack_bytes(at.off + nslots + 2));
}
#endif

/* --- frames pushed from C (rtslab.h) ---------------------------------------------------------- */

void rts_thread_set_slot(Capability *cap, Value t, size_t i, Value v)
{
    Value s = tso_stack(t);
    Value *sl = stack_slots(s);
    size_t sp = stack_sp(s);
    size_t n = (size_t)rts_fixnum_val(sl[sp - 1]);
    if (i >= n) rts_fatal("rts_thread_set_slot: slot %zu of a %zu-slot frame", i, n);
    rts_set_field(cap, s, STACK_SLOTS + sp - 2 - n + i, v);
}

void rts_push_frame(Capability *cap, RtsCode code, size_t nslots)
{
    Value s = cur_stack(cap);
    if (stack_sp(s) + nslots + 2 > stack_room(cap)) {
        stack_reserve(cap, nslots + 2);
        s = cur_stack(cap);
    }
    push_frame_on(s, code, nslots);
}

void rts_pop_frame(Capability *cap)
{
    Value s = cur_stack(cap);
    size_t sp = stack_sp(s);
    size_t n = (size_t)rts_fixnum_val(stack_slots(s)[sp - 1]);
    stack_set_sp(s, sp - n - 2);
}

static inline Value *frame_slot(Capability *cap, size_t i)
{
    Value s = cur_stack(cap);
    Value *sl = stack_slots(s);
    size_t sp = stack_sp(s);
    size_t n = (size_t)rts_fixnum_val(sl[sp - 1]);
#if RTS_DEBUG
    if (i >= n) rts_fatal("frame slot %zu of a %zu-slot frame", i, n);
#endif
    return &sl[sp - 2 - n + i];
}

Value rts_slot(Capability *cap, size_t i)                 { return *frame_slot(cap, i); }
/* No barrier: a running thread's stack is always dirty (Note [Dirty stacks]). */
void  rts_set_slot(Capability *cap, size_t i, Value v)    { *frame_slot(cap, i) = v; }

size_t rts_stack_depth(Capability *cap)
{
    StackIter it;
    StackFrame f;
    size_t depth = 0;
    stack_iter_init(&it, cap->current);
    while (stack_iter_next(&it, &f))
        depth++;
    return depth;
}
