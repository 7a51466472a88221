/* Threads' stacks (Note [Stack interface] in stack.h): the baseline's contiguous, doubling
 * stack, frames pushed from C, the frame iterator and places. */
#include <stdlib.h>
#include <string.h>
#include "sched/stack.h"
#include "base/util.h"

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
                     base_cfg->max_stack, base_cfg->max_stack);
}

/* --- the limit and its headroom (Note [Stack overflow] in stack.h) ------------------------- */

static bool (*overflow_handler)(Capability *cap);

void rts_set_stack_overflow_handler(bool (*handler)(Capability *cap)) { overflow_handler = handler; }

static inline bool overflowing(Capability *cap) { return tso_get(cap->current, TSO_OVERFLOW) == RTS_TRUE; }

/* The bytes the current thread's stack may take now. */
static size_t stack_limit(Capability *cap)
{
    return base_cfg->max_stack + (overflowing(cap) ? RTS_STACK_HEADROOM : 0);
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
    if (used <= base_cfg->max_stack && overflowing(cap))
        tso_set(cap, cap->current, TSO_OVERFLOW, RTS_FALSE);
}

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
    size_t slots = base_cfg->initial_stack / sizeof(Value);
    slots = slots > STACK_SLOTS + 1 ? slots - STACK_SLOTS - 1 : 1;
    while (slots < nslots + 2)
        slots *= 2;
    if (stack_bytes(slots) > base_cfg->max_stack && cap->current != RTS_FALSE)
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
        sm_write_barrier_slow(cap, s);
}

#if RTS_PATCH_STACK_CHUNKS
/* stack_room and stack_reserve link chunks: sched/stack_chunks.c (Note [Stack chunks] in
 * stack.h), which uses the helpers above under these names (stack.h). */
Value  stk_new(Capability *cap, size_t slots)           { return new_stack(cap, slots); }
size_t stk_bytes(size_t slots)                          { return stack_bytes(slots); }
size_t stk_limit(Capability *cap)                       { return stack_limit(cap); }
void   stk_enter_headroom(Capability *cap)              { enter_headroom(cap); }
void   stk_raise_overflow(Capability *cap)              { raise_overflow(cap); }
void   stk_leave_headroom(Capability *cap, size_t used) { leave_headroom(cap, used); }
void   stk_overflow(Capability *cap)                    { stack_overflow(cap); }
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
#if RTS_PATCH_STACK_CHUNKS
    if (!stk_iter_older(it))                   /* on into the older chunk */
        return false;
#endif
    Value *sl = stack_slots(it->stack);
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
/* stack_find and stack_cut follow the chain: sched/stack_chunks.c. */
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

/* Note [Stack shrinking]
 * A stack only grows (stack_reserve doubles it), so after an escape out of a deep recursion,
 * a caught stack overflow above all (Note [Stack overflow] in stack.h: at -K200m, a 200 MB
 * stack holding a few frames), the thread kept the whole object, and the memory its frames
 * had touched, for life (issue 45). A cut that leaves a stack of a megablock or more at most
 * an eighth full shrinks it in place to the smallest doubling of -ki that is at least four
 * times the frames left (sm_shrink_large: its blocks beyond are freed, whole megablocks of
 * them go back to the OS after the next major GCs, Note [Returning megablocks] in
 * sm/block.h). In place, because a cut must not allocate (its caller holds the value being
 * thrown in a C variable); safe, because the slots above sp hold nothing (Note [Stacks
 * reserved lazily]) and every caller of stack_cut reloads the room after it (the VM's
 * RELOAD_TOP), which is the only time the room may change. Growing again is the doubling
 * of before, so a recursion that escapes from the depth it reaches each time pays one copy
 * per doubling, as its first descent did; the factor 8 against 4 keeps a stack that is used
 * to a depth from being shrunk at every cut. */
#define STACK_SHRINK_MIN_BYTES ((size_t)1 << 20)

static void shrink_after_cut(Capability *cap, Value s)
{
    size_t slots = stack_capacity(s), sp = stack_sp(s);
    if (stack_bytes(slots) < STACK_SHRINK_MIN_BYTES || 8 * sp > slots)
        return;
    size_t want = base_cfg->initial_stack / sizeof(Value);
    want = want > STACK_SLOTS + 1 ? want - STACK_SLOTS - 1 : 1;
    while (want < 4 * sp)
        want *= 2;
    if (want < slots)
        sm_shrink_large(sm_cap(cap), s, 1 + STACK_SLOTS + want);
}

void stack_cut(Capability *cap, StackPlace at, size_t nslots)
{
    stack_set_sp(at.stack, at.off + nslots + 2);
    leave_headroom(cap, stack_bytes(at.off + nslots + 2));
    shrink_after_cut(cap, at.stack);
}
#endif

/* --- frames pushed from C (rtslab.h) ---------------------------------------------------------- */

void rts_thread_set_slot(Capability *cap, Value t, size_t i, Value v)
{
    Value s = tso_stack(t);
    Value *sl = stack_slots(s);
    size_t sp = stack_sp(s);
    size_t n = (size_t)rts_fixnum_val(sl[sp - 1]);
    if (i >= n) base_fatal("rts_thread_set_slot: slot %zu of a %zu-slot frame", i, n);
    sm_set_field(cap, s, STACK_SLOTS + sp - 2 - n + i, v);
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
    RTS_ASSERT(stack_frame_base(s, sp) != (size_t)-1);    /* frames tile [0, sp) (stack.h) */
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
    if (i >= n) base_fatal("frame slot %zu of a %zu-slot frame", i, n);
#endif
    return &sl[sp - 2 - n + i];
}

Value rts_slot(Capability *cap, size_t i)                 { return *frame_slot(cap, i); }

/* Whether stack object s needs no write barrier: young, or old and already remembered. */
static inline bool stack_is_dirty(Value s)
{
    return bdescr_of(obj_ptr(s))->gen == 0
        || (__atomic_load_n(obj_ptr(s), __ATOMIC_RELAXED) & OBJ_DIRTY);
}

/* No barrier: a running thread's stack is always dirty (Note [Dirty stacks]). */
void rts_set_slot(Capability *cap, size_t i, Value v)
{
    RTS_ASSERT(stack_is_dirty(cur_stack(cap)));
    *frame_slot(cap, i) = v;
}

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
