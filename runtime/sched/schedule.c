/* The scheduler: runs the lightweight threads of a capability until the main thread ends.
 *
 * A thread runs by calling the code of its top frame until the code says otherwise
 * (RtsStep, rtslab.h). RTS_NEXT is a safe point: when the timer has asked for a context
 * switch and another thread is runnable, the running one goes to the back of the queue.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "sched/thread.h"
#include "sm/storage.h"
#include "rts/rts.h"

Capability *caps;
unsigned n_caps;

void cap_init(Capability *cap, unsigned no)
{
    memset(cap, 0, sizeof *cap);
    cap->no = no;
    cap->current = cap->run_hd = cap->run_tl = cap->sleep_q = RTS_FALSE;
    sm_cap_init(cap);
}

/* Runs thread t until it blocks, yields, finishes, dies or is preempted. */
static void run_thread(Capability *cap, Value t)
{
    jmp_buf exit_point;
    cap->current = t;
    tso_set_status(cap, t, TS_RUNNING);
    thread_dirty(cap, t);
    cap->thread_exit = &exit_point;
    if (setjmp(exit_point)) {                   /* rts_thread_error: the thread dies */
        cap->nsave = 0;
        if (cap->current == main_thread)
            rts_exit(1);
        tso_set(cap, cap->current, TSO_RESULT, RTS_FALSE);
        thread_finish(cap, cap->current, TS_KILLED);
        cap->current = RTS_FALSE;
        return;
    }
    for (;;) {
        RtsCode code = thread_top_code(cap->current);
        if (!code) {                            /* returned from its last frame */
            thread_finish(cap, cap->current, TS_FINISHED);
            break;
        }
        RtsStep step = code(cap);
        if (step == RTS_NEXT) {
            if (__atomic_load_n(&cap->context_switch, __ATOMIC_RELAXED)) {
                __atomic_store_n(&cap->context_switch, 0, __ATOMIC_RELAXED);
                if (cap->run_hd != RTS_FALSE) {
                    runq_push(cap, cap->current);
                    break;
                }
            }
            continue;
        }
        if (step == RTS_YIELD)
            runq_push(cap, cap->current);
        else if (step == RTS_FINISH)
            thread_finish(cap, cap->current, TS_FINISHED);
        break;                                  /* RTS_BLOCK: already queued where it waits */
    }
    cap->current = RTS_FALSE;
    cap->thread_exit = NULL;
}

/* Moves sleepers whose time has come to the run queue; returns the next wake-up (ns), 0 if
 * none is left sleeping. */
static uint64_t wake_sleepers(Capability *cap)
{
    uint64_t now = rts_now_ns();
    while (cap->sleep_q != RTS_FALSE) {
        Value t = cap->sleep_q;
        uint64_t wake = (uint64_t)rts_fixnum_val(tso_get(t, TSO_WAKE_TIME));
        if (wake > now)
            return wake;
        cap->sleep_q = tso_get(t, TSO_LINK);
        thread_wake(cap, t);
    }
    return 0;
}

static void sleep_until(uint64_t when_ns)
{
    struct timespec ts = { (time_t)(when_ns / 1000000000u), (long)(when_ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void schedule(Capability *cap)
{
    for (;;) {
        ThreadStatus ms = tso_status(main_thread);
        if (ms == TS_FINISHED)
            return;
        uint64_t next_wake = wake_sleepers(cap);
        Value t = runq_pop(cap);
        if (t != RTS_FALSE) {
            run_thread(cap, t);
            continue;
        }
        if (next_wake) {
            sleep_until(next_wake);
            continue;
        }
        /* Nothing runnable, nobody sleeping: every thread left waits for another. */
        fflush(stdout);
        fprintf(stderr, "rtslab: thread blocked indefinitely in an MVar operation\n");
        rts_exit(1);
    }
}

int rts_run_main(RtsCode code, size_t nslots)
{
    Capability *cap = &caps[0];
    main_thread = rts_thread_new(cap, code, nslots);
    rts_thread_start(cap, main_thread);
    schedule(cap);
    main_thread = RTS_FALSE;
    return 0;
}
