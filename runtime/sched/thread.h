/* Lightweight threads (their stacks: sched/stack.h).
 *
 * A thread (T_THREAD, a PTRS object) holds its state in the fields TSO_*; its stack is held
 * in separate T_STACK objects (Note [Stack layout] in rtslab_object.h), so that growing the
 * stack never moves the thread; only sched/stack.c reaches them (Note [Stack interface]).
 *
 * Note [Dirty stacks]
 * A thread's TSO and top stack are marked dirty (remembered, when old) whenever the thread is
 * scheduled and again after each GC it lives through while running, so frame writes need no
 * barrier. At a minor GC a clean stack (its thread did not run since the last GC) is skipped;
 * a dirty one is scanned whole.
 */
#ifndef RTS_SCHED_THREAD_H
#define RTS_SCHED_THREAD_H

#include "sched/capability.h"
#include "sched/objlock.h"
#include "sched/schedule.h"

enum {
    TSO_STACK,        /* the T_STACK */
    TSO_LINK,         /* next thread on whatever queue this one is on; RTS_FALSE = none */
    TSO_RESULT,       /* the result register */
    TSO_ID,           /* fixnum */
    TSO_STATUS,       /* fixnum ThreadStatus */
    TSO_BLOCKED_ON,   /* the MVar or thread waited for, or RTS_FALSE */
    TSO_PUT_VALUE,    /* value of a blocked put */
    TSO_JOINERS,      /* threads waiting for this one to finish */
    TSO_CAP,          /* fixnum: the owning capability */
    TSO_HANDLERS,     /* the language layer's dynamic state: exception handlers... */
    TSO_WINDERS,      /* ...and dynamic-wind entries (runtime/scheme/); RTS_FALSE initially */
    TSO_OVERFLOW,     /* RTS_TRUE while the thread handles its stack overflow (stack.c) */
    TSO_LOCKED,       /* RTS_TRUE: never pushed to another capability (fork-on, the main thread) */
    TSO_NFIELDS
};

typedef enum {
    TS_NEW, TS_RUNNABLE, TS_RUNNING,
    TS_BLOCKED_TAKE, TS_BLOCKED_READ, TS_BLOCKED_PUT, TS_BLOCKED_JOIN, TS_SLEEPING,
    TS_FINISHED, TS_KILLED,
    TS_BLOCKED_IO     /* TSO_BLOCKED_ON: its RtsIoOp's address as a fixnum (Note [IO manager]) */
} ThreadStatus;


static inline Value   tso_get(Value t, int f)   { return obj_payload(t)[f]; }
/* The status is read by other capabilities (a joiner, under the thread's lock, looks for a
 * final status, written under that lock): atomic, and a fixnum needs no write barrier. */
static inline ThreadStatus tso_status(Value t)
{ return (ThreadStatus)rts_fixnum_val(__atomic_load_n(&obj_payload(t)[TSO_STATUS], __ATOMIC_RELAXED)); }
static inline Value   tso_stack(Value t)        { return tso_get(t, TSO_STACK); }

/* Write to a TSO field (with the write barrier). */
static inline void tso_set(Capability *cap, Value t, int f, Value v) { sm_set_field(cap, t, (size_t)f, v); }
static inline void tso_set_status(Capability *cap, Value t, ThreadStatus s)
{ (void)cap; __atomic_store_n(&obj_payload(t)[TSO_STATUS], rts_fixnum(s), __ATOMIC_RELAXED); }

/* Marks a thread about to run (or still running after a GC) dirty: its TSO and stack. */
void thread_dirty(Capability *cap, Value t);
/* The code of the top frame, or NULL when the stack is empty. */
RtsCode thread_top_code(Value t);
/* A frame's code word (Note [Stack layout]). */
static inline Value code_value(RtsCode code) { return rts_fixnum((intptr_t)(uintptr_t)code); }
/* Queues of threads linked through TSO_LINK. The run queue is cap's own (capability.h):
 * its OS thread's, and only for threads whose TSO_CAP is cap. Locks held: none. */
void  sched_runq_push(Capability *cap, Value t);
Value sched_runq_pop(Capability *cap);
/* Finds t on the TSO_LINK chain that starts at `head` (a queue whose head the caller holds:
 * an MVar's waiters, a thread's joiners, a sleep queue, all under the owner's lock or on the
 * owning capability). Locks held: the lock of the MVar or thread whose queue it is. If found, sets *prev to t's predecessor (RTS_FALSE when t is the head)
 * and *next to its successor, links the predecessor past t (with the write barrier), and
 * returns true; the caller stores *next in the head when *prev is RTS_FALSE, and fixes a tail
 * if its queue keeps one. t's own TSO_LINK is left as it was. */
bool  thread_unlink(Capability *cap, Value head, Value t, Value *prev, Value *next);
/* Makes a blocked (or sleeping) thread runnable on its own capability (through its inbox when
 * that is not cap). Locks held: none, or the lock of the queue it was taken off; takes the
 * owner's inbox_lock when the owner is not cap (cap_send_thread). */
void  thread_wake(Capability *cap, Value t);
/* Finishes the current thread: wakes its joiners. Locks held: none; takes t's lock. */
void  thread_finish(Capability *cap, Value t, ThreadStatus how);

#endif
