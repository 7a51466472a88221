/* Lightweight threads: creation, queues, finishing, joining (their stacks: stack.c). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "sched/stack.h"
#include "base/util.h"
#include "trace/eventlog.h"

static intptr_t next_thread_id = 1;


void thread_dirty(Capability *cap, Value t)
{
    /* Atomic loads: other capabilities lock the thread through its header. */
    if (!(__atomic_load_n(obj_ptr(t), __ATOMIC_RELAXED) & OBJ_DIRTY))
        sm_write_barrier_slow(cap, t);
    stack_dirty(cap, t);
}

Value rts_thread_new(Capability *cap, RtsCode code, size_t nslots)
{
    Value stack = stack_new_thread(cap, code, nslots);
    Value *p = sm_alloc_protect(&cap->sm, TSO_NFIELDS + 1, &stack, 1);
    p[0] = obj_make_header(T_THREAD, TSO_NFIELDS);
    for (int i = 0; i < TSO_NFIELDS; i++)
        p[1 + i] = RTS_FALSE;
    p[1 + TSO_STACK] = stack;
    p[1 + TSO_ID] = rts_fixnum(__atomic_fetch_add(&next_thread_id, 1, __ATOMIC_RELAXED));
    p[1 + TSO_STATUS] = rts_fixnum(TS_NEW);
    p[1 + TSO_CAP] = rts_fixnum(cap->sm.no);
    return (Value)p;
}

void rts_thread_start(Capability *cap, Value t)
{
    trace_thread(THREAD_EV_CREATE, (uint64_t)rts_thread_id(t), 0);
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);
    sched_runq_push(cap, t);
}

bool rts_thread_killed(Value t) { return tso_status(t) == TS_KILLED; }
void rts_thread_start_on(Capability *cap, Value t, unsigned no)
{
    no %= cap_n_caps;
    tso_set(cap, t, TSO_CAP, rts_fixnum(no));
    tso_set(cap, t, TSO_LOCKED, RTS_TRUE);      /* Note [Pushing work] in schedule.c */
    if (no == cap->sm.no) {
        rts_thread_start(cap, t);
        return;
    }
    trace_thread(THREAD_EV_CREATE, (uint64_t)rts_thread_id(t), 0);
    trace_thread(THREAD_EV_WAKEUP, (uint64_t)rts_thread_id(t), no);
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);
    tso_set_status(cap, t, TS_RUNNABLE);
    cap_send_thread(cap, &cap_array[no], t);
}

intptr_t rts_thread_id(Value t) { return rts_fixnum_val(tso_get(t, TSO_ID)); }
Value rts_current_thread(Capability *cap) { return cap->current; }

RtsCode thread_top_code(Value t) { return stack_top_code(t); }

Value rts_result(Capability *cap)               { return tso_get(cap->current, TSO_RESULT); }
void  rts_set_result(Capability *cap, Value v)  { tso_set(cap, cap->current, TSO_RESULT, v); }

void rts_thread_error(Capability *cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    if (cap->current == sched_main())
        fprintf(stderr, "rtslab: ");
    else
        fprintf(stderr, "rtslab: thread %ld: ", (long)rts_thread_id(cap->current));
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    longjmp(*cap->thread_exit, 1);
}

/* --- queues ------------------------------------------------------------------------------ */

void sched_runq_push(Capability *cap, Value t)
{
    /* capability.h: cap's own threads only; a thread is on one queue at a time */
    RTS_ASSERT(rts_fixnum_val(tso_get(t, TSO_CAP)) == (intptr_t)cap->sm.no && t != cap->run_tl);
    tso_set(cap, t, TSO_LINK, RTS_FALSE);
    tso_set_status(cap, t, TS_RUNNABLE);
    if (cap->run_tl == RTS_FALSE)
        cap->run_hd = t;
    else
        tso_set(cap, cap->run_tl, TSO_LINK, t);
    cap->run_tl = t;
    cap->run_len++;
    cap->run_movable += tso_get(t, TSO_LOCKED) != RTS_TRUE;
    RTS_ASSERT(cap->run_movable <= cap->run_len);
}

Value sched_runq_pop(Capability *cap)
{
    Value t = cap->run_hd;
    RTS_ASSERT((t == RTS_FALSE) == (cap->run_len == 0) && cap->run_movable <= cap->run_len);
    if (t == RTS_FALSE)
        return t;
    cap->run_hd = tso_get(t, TSO_LINK);
    if (cap->run_hd == RTS_FALSE)
        cap->run_tl = RTS_FALSE;
    cap->run_len--;
    cap->run_movable -= tso_get(t, TSO_LOCKED) != RTS_TRUE;
    tso_set(cap, t, TSO_LINK, RTS_FALSE);
    return t;
}

bool thread_unlink(Capability *cap, Value head, Value t, Value *prev, Value *next)
{
    Value p = RTS_FALSE, q = head;
    while (q != RTS_FALSE && q != t) {
        p = q;
        q = tso_get(q, TSO_LINK);
    }
    if (q != t)
        return false;
    *prev = p;
    *next = tso_get(t, TSO_LINK);
    if (p != RTS_FALSE)
        tso_set(cap, p, TSO_LINK, *next);
    return true;
}

/* Whether a thread in status st waits for another's help: an MVar, a join, a sleep, IO. */
static inline bool waiting(ThreadStatus st)
{
    return (st >= TS_BLOCKED_TAKE && st <= TS_SLEEPING) || st == TS_BLOCKED_IO;
}

/* The waker may be any capability; the thread runs on its own (TSO_CAP). */
void thread_wake(Capability *cap, Value t)
{
    RTS_ASSERT(waiting(tso_status(t)));
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);
    tso_set(cap, t, TSO_BLOCKED_ON, RTS_FALSE);
    unsigned owner = (unsigned)rts_fixnum_val(tso_get(t, TSO_CAP));
    if (owner == cap->sm.no) {
        trace_thread(THREAD_EV_RUNNABLE, (uint64_t)rts_thread_id(t), 0);
        sched_runq_push(cap, t);
    } else {
        trace_thread(THREAD_EV_WAKEUP, (uint64_t)rts_thread_id(t), owner);
        cap_send_thread(cap, &cap_array[owner], t);
    }
}

void thread_finish(Capability *cap, Value t, ThreadStatus how)
{
#if RTS_PATCH_STACK_CHUNKS
    if (how == TS_KILLED)
        stack_thread_done(cap, t);
#endif
    obj_lock(cap, t);
    tso_set_status(cap, t, how);
    Value result = tso_get(t, TSO_RESULT);
    Value j = tso_get(t, TSO_JOINERS);
    tso_set(cap, t, TSO_JOINERS, RTS_FALSE);
    obj_unlock(cap, t);
    if (t == sched_main())
        __atomic_store_n(&sched_main_finished, 1, __ATOMIC_SEQ_CST);
    while (j != RTS_FALSE) {
        Value next = tso_get(j, TSO_LINK);
        tso_set(cap, j, TSO_RESULT, result);
        thread_wake(cap, j);
        j = next;
    }
}

bool rts_thread_join(Capability *cap, Value t)
{
    obj_lock(cap, t);
    ThreadStatus st = tso_status(t);
    if (st == TS_FINISHED || st == TS_KILLED) {
        Value r = tso_get(t, TSO_RESULT);
        obj_unlock(cap, t);
        rts_set_result(cap, r);
        return true;
    }
    Value me = cap->current;
    tso_set_status(cap, me, TS_BLOCKED_JOIN);
    tso_set(cap, me, TSO_BLOCKED_ON, t);
    tso_set(cap, me, TSO_LINK, tso_get(t, TSO_JOINERS));
    tso_set(cap, t, TSO_JOINERS, me);
    obj_unlock(cap, t);
    return false;
}

void rts_sleep(Capability *cap, double secs)
{
    Value me = cap->current;
    /* Saturate at about 95 years, so that the wake-up time, nanoseconds in 64 bits, cannot
     * wrap round into the past (an infinite sleep sleeps until woken or the program ends).
     * The wake-up time is kept in the sleep heap's entry (Note [Sleepers]), not the TSO. */
    uint64_t wake = base_now_ns() + (uint64_t)(secs > 0 ? (secs < 3.0e9 ? secs * 1e9 : 3.0e18) : 0);
    tso_set_status(cap, me, TS_SLEEPING);
    tso_set(cap, me, TSO_LINK, RTS_FALSE);
    sched_sleepers_push(cap, me, wake);
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);    /* counted out by run_thread */
}
