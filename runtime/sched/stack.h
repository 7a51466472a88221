/* Threads' stacks: the one interface through which the VM, C frames, backtraces and the
 * scheduler reach a thread's frames (Note [Stack interface]).
 *
 * Note [Stack interface]
 * A thread's frames live in T_STACK objects (Note [Stack layout] in rtslab_object.h); the
 * thread's TSO_STACK names the one holding its top frame, the "top stack". Code outside
 * this file may
 *   - read and write the top stack's slots below its sp, and move its sp within the frames
 *     it owns (the VM pushes and pops its own frames in place: vm_api.h);
 *   - call stack_reserve when a frame does not fit above sp: it makes room and may move the
 *     top frames to new storage -- it returns true when it did, and the caller then finds its
 *     frame again as the top frame of the (new) top stack;
 *   - walk every frame of a thread, from the top, with the frame iterator (StackIter);
 *   - name a frame's place by (stack object, offset) with stack_here, and later find that
 *     frame again (stack_find) and cut the stack back to it (stack_cut): an escape
 *     continuation's marker frame.
 * and nothing else: no code outside this file follows a frame below the top one by offset,
 * assumes one stack object per thread, or writes TSO_STACK.
 *
 * The baseline's stack is one contiguous T_STACK per thread, doubled and copied on overflow
 * (up to -K). A copy keeps every frame at its offset, so a place (stack, offset) taken before
 * a grow is found again at the same offset of the new stack (the stack object of the place
 * is not needed to find it); the frame's contents prove it is the same frame.
 *
 * Invariants: a stack object's frames tile its slots [0, sp) (the sanity checker checks it);
 * the running thread's top stack is dirty (Note [Dirty stacks] in thread.h), so writes to its
 * frames need no barrier.
 */
#ifndef RTS_SCHED_STACK_H
#define RTS_SCHED_STACK_H

#include "sched/thread.h"

#if RTS_PATCH_STACK_CHUNKS
/* Note [Stack chunks]
 * With stack chunks (GHC 7.2's stacks) a thread's stack is a chain of T_STACK
 * chunks. Its first chunk is -ki big; when a frame does not fit, stack_reserve links a new
 * chunk twice the size of the full one, at most -kc (bigger when one frame needs it: GHC
 * links -kc chunks at once, but then 100 000 threads just past -ki take 7 times the memory of
 * the baseline's doubling stacks, experiments/stack-chunks), whose bottom frame is an underflow frame
 * [older chunk, from, below], and moves the top frames, up to -kb bytes but at least the top
 * one, from the older chunk (its frames at [from, sp)) to just above that frame, so that a
 * loop calling and returning across the boundary stays in the new chunk. -K bounds the whole
 * chain (`below` counts the bytes under a chunk).
 * Returning into an underflow frame (the VM returns to C there: its code is not vm_run)
 * runs stack_underflow: the older chunk becomes the top one again and is marked dirty, and
 * the empty chunk goes to a per-capability free list that later links reuse.
 * Dirty bits: only the top chunk is written (frames are written only at the top), so
 * thread_dirty marks the TSO and the top chunk; a chunk becomes dirty again only when it
 * becomes the top (underflow, a cut by an escape). A clean chunk in the old generation is
 * in no remembered set, so a minor GC never visits it: a minor GC's stack work is the top
 * chunk, not the depth.
 * Places: a frame moved by a link is found again from its old place (stack, off): walking
 * down the chain to `stack`, then up through every chunk whose `from` is at or below off
 * (off becomes UF_TOP + off - from). stack_cut frees the chunks above the place's.
 */
#endif

/* Note [Stack overflow]
 * A thread's stack may take -K bytes. A reservation that would pass -K is a stack overflow.
 * With a handler (rts_set_stack_overflow_handler: the
 * Scheme layer raises an ordinary error object, so `guard` catches it and the REPL goes on,
 * as GHC's StackOverflow is an exception) the thread gets RTS_STACK_HEADROOM bytes above -K
 * (TSO_OVERFLOW is set), the reservation is made within them, and the handler raises the
 * exception there: raising runs the handlers on top of the deep stack, so they need that
 * room. The room is the thread's until an escape (stack_cut) takes its stack back to -K or
 * less; a second overflow while it is granted, a handler that cannot raise (outside the
 * VM) or no handler kills the thread, as before ("stack overflow: the limit is ...").
 * The limit is checked where the stack grows: stack_room, not the stack object's capacity,
 * is what the VM may fill, so a stack that grew into the headroom does not keep it once
 * the overflow is handled. */

/* The slots above slot 0 of the current thread's top stack that it may fill before it must
 * call stack_reserve: the capacity, within the limit in force (Note [Stack overflow]). */
size_t stack_room(Capability *cap);

/* A new thread's first stack holding one frame of `nslots` slots (RTS_FALSE) run by code;
 * may GC; beyond -K it kills the current thread. */
Value stack_new_thread(Capability *cap, RtsCode code, size_t nslots);

/* The code of thread t's top frame, or NULL when its stack is empty. */
RtsCode stack_top_code(Value t);

/* Marks the parts of t's stack that its running may write dirty (remembered when old). */
void stack_dirty(Capability *cap, Value t);

/* Makes room for `need` more slots above the current thread's top frame; may GC. Returns
 * true when the top frames moved to new storage (the caller re-reads the top stack and
 * finds its frame again as the top frame). Beyond -K it raises the overflow or kills the
 * thread (Note [Stack overflow]) and does not return. */
bool stack_reserve(Capability *cap, size_t need);

/* --- the frame iterator (from the top frame down) ---------------------------------------- */
typedef struct StackFrame {
    Value   stack;     /* the stack object holding it */
    Value  *slots;     /* its n slots (valid until the next allocation) */
    size_t  base;      /* the offset of slot 0 in `stack` */
    size_t  n;
    RtsCode code;
} StackFrame;
typedef struct StackIter { Value stack; size_t sp; } StackIter;
void stack_iter_init(StackIter *it, Value t);
/* The next frame down into *f; false when there is none. Never allocates. */
bool stack_iter_next(StackIter *it, StackFrame *f);

/* --- places: (stack object, offset) ---------------------------------------------------------- */
/* The current thread's top stack: with an offset, it names a frame's place there. */
static inline Value stack_here(Capability *cap) { return tso_stack(cap->current); }
typedef struct StackPlace { Value stack; size_t off; } StackPlace;
/* Finds the frame of `nslots` slots that was at (stack, off) on the current thread's stack:
 * its slots and where it is now in *now, or NULL when no live frame is there (the caller
 * checks the contents). Never allocates. */
Value *stack_find(Capability *cap, Value stack, size_t off, size_t nslots, StackPlace *now);
/* Drops every frame above the frame of `nslots` slots at `at` (from stack_find): it becomes
 * the top frame. */
void stack_cut(Capability *cap, StackPlace at, size_t nslots);

#if RTS_PATCH_STACK_CHUNKS
/* -kc<size> and -kb<size>: the full chunk, and what of a full chunk's top frames moves into
 * the next (set by their rows in rts/patch_stack_chunks.c while the options are parsed;
 * read-only after). */
#define STACK_CHUNK_DEFAULT ((size_t)32 << 10)      /* -kc32k */
#define STACK_CARRY_DEFAULT ((size_t)1 << 10)       /* -kb1k */
extern size_t stack_chunk_bytes, stack_chunk_carry;
/* A killed thread's chunks (all but its first) are freed. */
void stack_thread_done(Capability *cap, Value t);
/* Counters, summed over the capabilities (read with the world stopped, or approximately). */
typedef struct StackChunkCounts {
    uint64_t linked;      /* overflows: chunks linked above a full one */
    uint64_t allocated;   /* ...of which new chunk objects */
    uint64_t reused;      /* ...of which taken from a free list */
    uint64_t underflows;  /* returns into an older chunk */
    int64_t  live;        /* linked chunks still in a chain */
} StackChunkCounts;
void stack_chunk_counts(StackChunkCounts *out);
/* The capabilities' pools of free chunks and counters, for n capabilities (cap_init_all). */
void stack_pools_init(unsigned n);

/* sched/stack.c's helpers, for the chunks' code in sched/stack_chunks.c: */
/* A T_STACK object of `slots` slots, empty (Note [Stacks reserved lazily] in stack.c); may
 * GC. */
Value  stk_new(Capability *cap, size_t slots);
/* The bytes a stack object of `slots` slots takes. */
size_t stk_bytes(size_t slots);
/* Note [Stack overflow]: the bytes the current thread's stack may take now (-K, and the
 * headroom while it is granted); stk_enter_headroom grants the headroom or kills the thread,
 * stk_raise_overflow runs the handler after the reservation, stk_leave_headroom gives the
 * headroom back once an escape left `used` bytes, within -K; stk_overflow kills the thread. */
size_t stk_limit(Capability *cap);
void   stk_enter_headroom(Capability *cap);
__attribute__((noreturn)) void stk_raise_overflow(Capability *cap);
void   stk_leave_headroom(Capability *cap, size_t used);
__attribute__((noreturn)) void stk_overflow(Capability *cap);
/* stack_iter_next's step past underflow frames into older chunks; false when no frame is
 * left. */
bool   stk_iter_older(StackIter *it);
#endif

#endif
