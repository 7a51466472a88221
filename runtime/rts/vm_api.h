/* The runtime's interface to a language VM: the one internal header that the language layer
 * (runtime/scheme/) includes besides the public headers of runtime/include/. It names what a
 * bytecode VM and its primitives need of the core and the public API does not offer: inline
 * bump allocation, the current thread's stack, the safe-point check, local roots, the
 * per-thread dynamic state a language keeps, a lock, fatal errors and the clock. The core
 * may change its internals behind these names. Everything is static inline (or a macro):
 * the VM's inner loop runs on these fast paths.
 *
 * A VM that pushes frames itself builds them as the core's Note [Stack layout]
 * (runtime/include/rtslab_object.h) says: a frame's n slots, then its code word (rtv_code_word) and n as a
 * fixnum; the stack's sp counts the slots in use.
 */
#ifndef RTS_VM_API_H
#define RTS_VM_API_H

#include "rtslab.h"
#include "base/util.h"
#include "sched/stack.h"
#include "sm/gc.h"
#include "sm/sanity.h"           /* sanity_check_value */
#include "sm/storage.h"
#include "sync/spinlock.h"

/* --- allocation (may GC: Note [GC safety in C code] in rtslab.h) ------------------------- */

/* `words` words (the header included) in the nursery. */
static inline Value *rtv_alloc(RtsCap *cap, size_t words) { return sm_alloc(&cap->sm, words); }

/* The bump alone: `words` words in *p, or false when the nursery block is full or a safe
 * point is due; the caller then saves what the GC must see and calls rtv_alloc_slow. Never
 * GCs. (Not a NULL result: that would cost the fast path a test.) */
static inline bool rtv_try_alloc(RtsCap *cap, size_t words, Value **p)
{ return sm_try_alloc(&cap->sm, words, p); }

/* The slow path of rtv_alloc: a safe point (it may join a GC or run one). */
static inline Value *rtv_alloc_slow(RtsCap *cap, size_t words) { return sm_alloc_slow(&cap->sm, words); }

/* --- the current thread ---------------------------------------------------------------- */

/* The thread running on cap. */
static inline Value rtv_current_thread(RtsCap *cap) { return cap->current; }

/* Its stack (Note [Stack interface] in sched/stack.h): the top stack's slot 0, valid until
 * a GC or rtv_stack_reserve moves the stack. */
static inline Value *rtv_stack_slots(RtsCap *cap) { return stack_slots(tso_stack(cap->current)); }
/* The slots in use (sp). */
static inline size_t rtv_stack_sp(RtsCap *cap) { return stack_sp(tso_stack(cap->current)); }
/* The slots it has room for. */
static inline size_t rtv_stack_capacity(RtsCap *cap) { return stack_room(cap); }
/* Sets sp of the stack whose slot 0 is at `slots` (after pushing or popping frames). */
static inline void rtv_stack_set_sp(Value *slots, size_t sp)
{ slots[STACK_SP - STACK_SLOTS] = rts_fixnum((intptr_t)sp); }
/* Makes room for `need` more slots above the top frame; may GC. True when the top frames
 * moved: the caller's frame is then the top frame of the new top stack. Beyond -K it calls
 * the stack overflow handler, or kills the thread with "stack overflow" (and does not
 * return: Note [Stack overflow] in sched/stack.h). */
static inline bool rtv_stack_reserve(RtsCap *cap, size_t need) { return stack_reserve(cap, need); }
/* The frames of the current thread, from the top (never allocates). */
typedef StackIter RtvFrames;
typedef StackFrame RtvFrame;
static inline void rtv_frames_init(RtsCap *cap, RtvFrames *it) { stack_iter_init(it, cap->current); }
static inline bool rtv_frames_next(RtvFrames *it, RtvFrame *f) { return stack_iter_next(it, f); }
/* A frame's place is (rtv_stack_here(cap), offset in the top stack); rtv_stack_find finds
 * the frame of nslots slots that was there (NULL when none), rtv_stack_cut drops the frames
 * above it. */
typedef StackPlace RtvPlace;
static inline Value rtv_stack_here(RtsCap *cap) { return stack_here(cap); }
static inline Value *rtv_stack_find(RtsCap *cap, Value stack, size_t off, size_t nslots, RtvPlace *now)
{ return stack_find(cap, stack, off, nslots, now); }
static inline void rtv_stack_cut(RtsCap *cap, RtvPlace at, size_t nslots) { stack_cut(cap, at, nslots); }
/* The code word that follows the slots of a frame run by `code`. */
static inline Value rtv_code_word(RtsCode code) { return code_value(code); }

/* The language's per-thread dynamic state: fields of the thread that the core keeps (and
 * the GC scans) for it; RTS_FALSE in a new thread. */
typedef enum { RTV_HANDLERS = TSO_HANDLERS, RTV_WINDERS = TSO_WINDERS } RtvDynamic;
static inline Value rtv_dynamic(RtsCap *cap, RtvDynamic which) { return tso_get(cap->current, which); }
static inline void rtv_set_dynamic(RtsCap *cap, RtvDynamic which, Value v)
{ tso_set(cap, cap->current, which, v); }

/* --- safe points (Note [VM safe points] in scheme/vm.h) --------------------------------- */

/* Whether a GC leader or the timer waits for the running thread to reach a safe point. */
static inline bool rtv_safe_point_due(RtsCap *cap)
{
    return __atomic_load_n(&cap->sm.hplim, __ATOMIC_RELAXED) == NULL
        || __atomic_load_n(&cap->context_switch, __ATOMIC_RELAXED);
}
/* Before returning RTS_NEXT from a due safe point: gives back the heap limit that was
 * cleared to trap; the scheduler then joins the GC or switches threads. */
static inline void rtv_safe_point_taken(RtsCap *cap)
{ sm_safe_point_passed(&cap->sm); }

/* --- local roots: Values C code keeps across allocations -------------------------------- *
 * A stack per capability that the GC updates in place; it never moves, so a pointer into
 * it stays valid until the roots are released below it. A thread killed by an error has
 * its capability's roots released by the scheduler. */

static inline size_t rtv_lroots_mark(RtsCap *cap) { return cap_lroots_mark(cap); }
/* Pushes v; returns its root. */
static inline Value *rtv_lroot(RtsCap *cap, Value v) { return cap_lroot(cap, v); }
/* Where the next rtv_lroot goes: roots pushed one after another form an array. */
static inline Value *rtv_lroots_next(RtsCap *cap) { return cap->lroots + cap->nlroots; }
/* Pops back to a mark. */
static inline void rtv_lroots_release(RtsCap *cap, size_t mark) { cap_lroots_release(cap, mark); }
/* How many more roots fit (pushing past CAP_LROOTS_MAX kills the thread: a caller that
 * pushes a number the program chose checks this first and raises an error instead). */
static inline size_t rtv_lroots_room(RtsCap *cap) { return CAP_LROOTS_MAX - cap->nlroots; }
/* Under -DS, aborts with a report if v is a stale pointer, one a GC has moved or freed the
 * object of (Note [Poisoned from-space] in sm/sanity.h): error paths check what they report. */
static inline void rtv_check_not_stale(Value v, const char *where) { sanity_check_value(v, where); }

/* --- the rest ------------------------------------------------------------------------- */

/* A lock for the language's tables that all capabilities share (a counted spinlock): held
 * briefly, never across an allocation or a safe point. */
typedef SpinLock RtvLock;
#define RTV_LOCK_INIT(name) SPINLOCK_INIT(name)
static inline void rtv_lock(RtvLock *l) { spin_lock(l); }
static inline void rtv_unlock(RtvLock *l) { spin_unlock(l); }

/* The capability this OS thread runs (NULL off the runtime's threads): for code that is not
 * handed one. */
static inline RtsCap *rtv_my_cap(void) { return cap_self; }

/* An internal error: prints "rtslab: fatal: <msg>" and aborts. */
#define rtv_fatal(...) base_fatal(__VA_ARGS__)

/* The heap's limit in bytes (+RTS -M), 0 when there is none: a C buffer that will become one
 * heap object (a line being read) is held to it. */
static inline size_t rtv_max_heap(void) { return base_cfg->max_heap; }

/* The monotonic clock, in nanoseconds. */
static inline uint64_t rtv_now_ns(void) { return base_now_ns(); }

#endif
