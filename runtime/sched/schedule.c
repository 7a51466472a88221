/* The scheduler: each capability's OS thread runs its lightweight threads.
 *
 * A thread runs by calling the code of its top frame until the code says otherwise
 * (RtsStep, rtslab.h). RTS_NEXT is a safe point: a stop-the-world sync in progress is joined
 * there, and when the timer has asked for a context switch and another thread is runnable,
 * the running one goes to the back of the queue.
 *
 * Note [Pushing work]
 * New threads start on the capability that forked them. Before running a thread, a
 * capability whose run queue still holds others gives them, one each, to idle capabilities
 * (through their inboxes, waking them), as GHC's schedulePushWork does. The main thread is
 * never pushed: it stays on capability 0, whose OS thread called rts_run_main. Nor is a
 * thread started on a chosen capability (rts_thread_start_on, the language's fork-on): like
 * a thread of GHC's forkOn (TSO_LOCKED), it stays where it was put. Both carry TSO_LOCKED,
 * and each run queue counts its threads that do not (run_movable). Without that, where a
 * program's fork-on threads ran depended on which capabilities happened to be idle at each
 * scheduling point: smp/threadring, whose ring is laid out over the capabilities, took 1.7 s
 * or 25-51 s a run at -N2 depending on how many hand-offs had become cross-capability.
 * A capability whose run queue still holds movable threads tries again after every GC: the
 * GC's leader sets CS_PUSH in its context_switch word (sched_after_gc), and the running
 * thread's next safe point comes back to run_thread, which pushes again and carries on with
 * the same thread (only the timer's CS_SWITCH switches threads). GHC's scheduler retries at
 * every return to it, which its threads make at every full nursery block; ours make one
 * only at a safe point, so without the flag a push that missed (its target not idle yet)
 * waited for the timer's tick, 20 ms later, while two workers forked together shared one
 * capability and their first data, promoted by its GC thread, lay side by side (Note
 * [To-space by capability] in sm/gcthread.h): issue 43's slow mode at -ki64k, 6 of 20
 * runs of alloc2. The retry after a GC often meets its target still on its way back to
 * idle, so a push can still wait for a tick (alloc2's second worker moved after 17-29 ms in
 * 5 of 10 runs at -ki64k, 2 of 8 at -ki1k, eventlog). Having a capability that goes idle
 * ask the others to push made it move within 2.7 ms in 20 of 20 runs, but smp/par-alloc
 * then ran at 1.5-1.7x its CPU in 2-4 of every 20-24 runs at -ki4k and -ki64k, three
 * interleaved series (without it, 0 of 68 in the same series), for a reason not found yet;
 * it is not in.
 *
 * Note [Idle capabilities and deadlock]
 * A capability with nothing to run sleeps in its IO back end's wait (never busy-waits;
 * idle_sleep, Note [Idle in the ring] in io/iomgr.h) until work arrives in its inbox, a
 * sleeper is due (the wait's deadline), one of its IO ops completes, or a leader wakes it
 * for a GC (cap_wake writes the back end's eventfd).
 * sched_live counts the threads that can run again without another thread's help: those
 * runnable or running anywhere, those asleep (a sleeper's time comes) and those blocked in IO
 * (a completion may still come, as GHC never calls a thread blocked on a socket deadlocked).
 * A thread moving between those states is counted in its new state before it is counted out
 * of the old one: a wake-up counts the thread in before it is queued and out of its sleep
 * or IO after; a thread that goes to sleep or blocks in IO is counted in there during its
 * step, and every thread is counted out as running only after its step has returned. So when a
 * capability finds nothing to run and sched_live is 0, no thread can ever run again: if the
 * main thread has not finished, it is deadlocked.
 * The check reads sched_live, then sched_main_finished: at the end, the main thread is
 * marked finished before it is counted out, so a check that saw 0 live sees it finished. At
 * the start, the main thread to be is counted in (a placeholder in sched_live) before
 * anything else, and the placeholder is counted out only once the main thread counts as
 * runnable, so a check never sees 0 live while the main thread is being made. (Before, an
 * idle capability that read 0 live just before the main thread was counted in, and
 * sched_main_finished just after it was cleared, declared the program deadlocked before
 * the prelude had run: "rtslab: thread blocked indefinitely in an MVar operation" at once,
 * about 1 run in 300 of real/solver at -N2 on a loaded machine, once for smp/sieve -N4
 * -ki64k; the main thread's creation collects when its -ki stack passes the nursery, and
 * the idle capabilities then run the check right after that GC.)
 * It is one counter, read once, on purpose. With three (runnable, sleeping, blocked in IO)
 * read one after the other, a thread whose IO completed between the two loads was in
 * neither count the reader saw (counted runnable after the first load, out of IO before the
 * second), and the main thread, waiting to join it, was declared deadlocked: io/reuse at
 * -N2 (epoll) failed so in about 1 run in 60. Which order to read them in cannot help, as
 * threads move both ways between the states.
 *
 * Note [Interrupting the main thread]
 * SIGINT and SIGTERM interrupt the main thread, as GHC's first ^C does (rts/rts.c takes the
 * signals on a thread of its own, with sigwait, and calls sched_interrupt_main). The signal
 * is kept in interrupt_pending and capability 0, where the main thread lives, is made to
 * reach a safe point (or woken when idle). There, with the main thread running, the
 * language layer's handler (rts_set_interrupt_handler) raises an exception in it; without
 * one the runtime exits 128 + the signal, orderly. A main thread that waits (on an MVar, a
 * join, a sleep, or an IO op, which is cancelled) is first taken off what it waits on and
 * made runnable, by capability 0
 * at its next scheduling point or tick, so the exception reaches it there. A main thread
 * inside a system call (reading stdin) takes it when the call returns; until then the
 * signal stays pending, and a second one kills the process (rts.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "sched/thread.h"
#include "sched/profile.h"
#include "io/iomgr.h"
#include "sync/stw.h"
#include "sm/gc.h"
#include "base/util.h"
#include "os/affinity.h"
#include "os/numa.h"
#include "trace/eventlog.h"

Value sched_main_thread = RTS_FALSE;
int sched_main_finished;
static int interrupt_pending;    /* atomic: the signal the main thread has yet to take, or 0 */
static void (*interrupt_handler)(Capability *cap, int sig);
unsigned sched_live;             /* schedule.h; Note [Idle capabilities and deadlock] */
unsigned sched_deadlock_check_pause_us;   /* schedule.h: tests only */

/* `stop`: the capability leaves its running thread, so a GC request of its own that waits
 * is finished now (Note [Deferred GC requests] in sm/gc.h). */
static inline void safe_point(Capability *cap, bool stop)
{
    RTS_ASSERT(!cap->defer_wakes);      /* no object lock across a safe point (objlock.h) */
    if (stw_pending())
        gc_safe_point(&cap->sm, stop);
}

void sched_cap_roots(unsigned no, GcRootFn f, void *env)
{
    Capability *c = &cap_array[no];
    f(&c->current, env);
    f(&c->run_hd, env);
    f(&c->run_tl, env);
    for (size_t k = 0; k < c->n_sleepers; k++)
        f(&c->sleepers[k].t, env);
    f(&c->inbox_hd, env);
    f(&c->inbox_tl, env);
    for (size_t k = 0; k < c->nlroots; k++)
        f(&c->lroots[k], env);
    for (unsigned k = 0; k < c->io_nwaiters; k++)
        if (c->io_waiters[k] != RTS_FALSE)
            f(&c->io_waiters[k], env);
}

unsigned sched_thread_cap(Value t)
{
    /* A fixnum, which no GC moves: readable while the GC scans the thread. */
    return (unsigned)rts_fixnum_val(tso_get(t, TSO_CAP));
}

void sched_after_gc(void)
{
    for (unsigned i = 0; i < cap_n_caps; i++) {
        Capability *c = &cap_array[i];
        if (c->current != RTS_FALSE)
            thread_dirty(c, c->current);
        if (c->run_movable)                 /* Note [Pushing work]: try again soon */
            __atomic_fetch_or(&c->context_switch, CS_PUSH, __ATOMIC_RELAXED);
    }
}

static void count_out(void)
{
    __atomic_fetch_sub(&sched_live, 1, __ATOMIC_SEQ_CST);
}

/* A thread asleep or blocked in IO, taken off its wait, is runnable again: counted in as
 * runnable (thread_wake) before it is counted out of its wait, so sched_live never passes
 * through 0 on the way (Note [Idle capabilities and deadlock]). */
static void wake_from_wait(Capability *cap, Value t)
{
    thread_wake(cap, t);
    count_out();
}

static uint64_t wake_sleepers(Capability *cap);
static void take_interrupt(Capability *cap);

/* Why a thread whose step returned RTS_BLOCK stopped, in GHC's terms, for the eventlog: what
 * it waits on (it may have been woken already: then only that it blocked). */
static TraceStop blocked_status(Value t)
{
    switch (tso_status(t)) {
    case TS_BLOCKED_TAKE: case TS_BLOCKED_READ: case TS_BLOCKED_PUT: case TS_BLOCKED_JOIN:
        return STOP_BLOCKED_ON_MVAR;
    case TS_SLEEPING:
        return STOP_BLOCKED_ON_DELAY;
    default:
        return STOP_THREAD_BLOCKED;
    }
}

static void push_work(Capability *cap);

/* Runs thread t until it blocks, yields, finishes, dies or is preempted. At a timer tick the
 * sleepers that are due join the run queue first (Note [Due sleepers]), so a thread that
 * never blocks cannot keep them asleep. */
static void run_thread(Capability *cap, Value t)
{
    /* a thread runs only on the capability its TSO_CAP names (capability.h) */
    RTS_ASSERT(sched_thread_cap(t) == cap->sm.no);
    jmp_buf exit_point;
    cap->current = t;
    tso_set_status(cap, t, TS_RUNNING);
    thread_dirty(cap, t);
    cap->thread_exit = &exit_point;
    if (__builtin_expect(prof_on, 0))
        prof_thread_starts(cap);
    trace_begin(SPAN_MUTATOR, (uint64_t)rts_thread_id(t));
    TraceStop why = STOP_THREAD_YIELDING;       /* 0: blocked, blocked_status says on what */
    if (setjmp(exit_point)) {                   /* rts_thread_error: the thread dies */
        trace_stop_thread(STOP_THREAD_FINISHED);
        cap->sm.nsave = 0;
        cap->nlroots = 0;
        if (__builtin_expect(prof_on, 0))
            prof_thread_stops(cap);
        if (cap->current == sched_main())
            rts_exit(1);
        tso_set(cap, cap->current, TSO_RESULT, RTS_FALSE);
        thread_finish(cap, cap->current, TS_KILLED);
        cap->current = RTS_FALSE;
        cap->thread_exit = NULL;
        count_out();
        return;
    }
    if (t == sched_main() && __atomic_load_n(&interrupt_pending, __ATOMIC_RELAXED))
        take_interrupt(cap);
    for (;;) {
        RtsCode code = thread_top_code(cap->current);
        if (!code) {                            /* returned from its last frame */
            why = STOP_THREAD_FINISHED;
            thread_finish(cap, cap->current, TS_FINISHED);
            count_out();
            break;
        }
        RtsStep step = code(cap);
        /* Note [Time profile] in profile.h: the ticks of the step go to the procedure on top
         * (not after RTS_BLOCK: another capability may run the thread already) */
        if (__builtin_expect(prof_on, 0) && step != RTS_BLOCK)
            prof_safe_point(cap);
        if (step == RTS_NEXT) {
            safe_point(cap, false);
            int cs = __atomic_exchange_n(&cap->context_switch, 0, __ATOMIC_RELAXED);
            if (cap->run_movable)               /* Note [Pushing work]: try again */
                push_work(cap);
            if (__atomic_load_n(&interrupt_pending, __ATOMIC_RELAXED) && cap->sm.no == 0)
                take_interrupt(cap);
            if (cs & CS_SWITCH) {
                if (cap->n_sleepers)
                    wake_sleepers(cap);
                if (cap->run_hd != RTS_FALSE || __atomic_load_n(&cap->inbox_n, __ATOMIC_ACQUIRE)) {
                    sched_runq_push(cap, cap->current);
                    break;
                }
            }
            continue;
        }
        if (step == RTS_YIELD) {
            sched_runq_push(cap, cap->current);
        } else {
            why = 0;
            if (step == RTS_FINISH) {
                why = STOP_THREAD_FINISHED;
                thread_finish(cap, cap->current, TS_FINISHED);
            }
            count_out();                        /* RTS_BLOCK: queued where it waits */
        }
        break;
    }
    if (__builtin_expect(trace_on, 0))
        trace_stop_thread_slow(why ? why : blocked_status(cap->current));
    if (__builtin_expect(prof_on, 0))
        prof_thread_stops(cap);
    cap->current = RTS_FALSE;
    cap->thread_exit = NULL;
}

/* Moves the threads other capabilities sent here onto the run queue. Locks held: none;
 * takes cap's inbox_lock. */
static void drain_inbox(Capability *cap)
{
    if (!__atomic_load_n(&cap->inbox_n, __ATOMIC_ACQUIRE))
        return;
    spin_lock(&cap->inbox_lock);
    Value t = cap->inbox_hd;
    cap->inbox_hd = cap->inbox_tl = RTS_FALSE;
    __atomic_store_n(&cap->inbox_n, 0, __ATOMIC_RELEASE);
    spin_unlock(&cap->inbox_lock);
    while (t != RTS_FALSE) {
        Value next = tso_get(t, TSO_LINK);
        sched_runq_push(cap, t);
        t = next;
    }
}

/* Note [Sleepers]
 * A capability's sleeping threads are a binary min-heap (an array owned by its OS thread,
 * its threads GC roots: sched_cap_roots) on (wake time, sequence number): a sleep and a
 * wake-up cost O(log n), where the sorted list this replaces walked past every earlier
 * sleeper, so n threads going to sleep for the same time cost O(n^2) (20 000 threads that
 * sleep 0.3 s took 2.3 s). The sequence number, counted per capability, keeps sleepers with
 * equal wake times in the order they went to sleep. Cancelling a sleep (the main thread's
 * interrupt, unblock_main) finds the thread by a linear search: it is rare. */
static inline bool sleeps_before(const SleepEntry *a, const SleepEntry *b)
{
    return a->wake < b->wake || (a->wake == b->wake && a->seq < b->seq);
}

static void sift_up(SleepEntry *h, size_t i)
{
    SleepEntry e = h[i];
    while (i > 0 && sleeps_before(&e, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = e;
}

static void sift_down(SleepEntry *h, size_t n, size_t i)
{
    SleepEntry e = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && sleeps_before(&h[c + 1], &h[c]))
            c++;
        if (!sleeps_before(&h[c], &e))
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = e;
}

void sched_sleepers_push(Capability *cap, Value t, uint64_t wake)
{
    if (cap->n_sleepers == cap->max_sleepers) {
        size_t m = cap->max_sleepers ? 2 * cap->max_sleepers : 64;
        SleepEntry *h = realloc(cap->sleepers, m * sizeof *h);
        if (!h)
            base_fatal("out of memory (the sleep heap of %zu threads)", m);
        cap->sleepers = h;
        cap->max_sleepers = m;
    }
    size_t i = cap->n_sleepers++;
    cap->sleepers[i] = (SleepEntry){ wake, cap->sleep_seq++, t };
    sift_up(cap->sleepers, i);
}

/* Takes entry i off the heap; returns its thread. */
static Value sleepers_remove(Capability *cap, size_t i)
{
    SleepEntry *h = cap->sleepers;
    Value t = h[i].t;
    size_t n = --cap->n_sleepers;
    if (i < n) {
        h[i] = h[n];
        if (i > 0 && sleeps_before(&h[i], &h[(i - 1) / 2]))
            sift_up(h, i);
        else
            sift_down(h, n, i);
    }
    return t;
}

/* Note [Due sleepers]
 * A capability's sleepers are on its own sleep queue, and only its own OS thread wakes them:
 * at every scheduling point (each turn of schedule()), at every timer tick that reaches a
 * safe point of a running thread (run_thread), and, when idle, at the timed end of its idle
 * wait. The tick matters: a thread that never blocks or yields would otherwise keep the
 * capability forever, and its sleepers with it, as the run queue looked empty.
 *
 * Moves sleepers whose time has come to the run queue; returns the next wake-up (ns), 0 if
 * none is left sleeping. */
static uint64_t wake_sleepers(Capability *cap)
{
    uint64_t now = base_now_ns();
    while (cap->n_sleepers) {
        if (cap->sleepers[0].wake > now)
            return cap->sleepers[0].wake;
        wake_from_wait(cap, sleepers_remove(cap, 0));
    }
    return 0;
}

/* --- the IO manager (Note [IO manager] in io/iomgr.h) -------------------------------------- */

void rts_io_block(Capability *cap, RtsIoOp *op)
{
    if (!cap->io_nfree) {
        if (cap->io_nwaiters == cap->io_waiters_size) {
            unsigned n = cap->io_waiters_size ? 2 * cap->io_waiters_size : 64;
            Value *w = realloc(cap->io_waiters, n * sizeof *w);
            unsigned *fr = realloc(cap->io_free, n * sizeof *fr);
            if (!w || !fr) base_fatal("out of memory (IO waiters)");
            cap->io_waiters = w;      /* a GC cannot run here: nothing allocates */
            cap->io_free = fr;
            cap->io_waiters_size = n;
        }
        cap->io_waiters[cap->io_nwaiters] = RTS_FALSE;
        cap->io_free[cap->io_nfree++] = cap->io_nwaiters++;
    }
    unsigned slot = cap->io_free[--cap->io_nfree];
    Value me = cap->current;
    cap->io_waiters[slot] = me;
    tso_set_status(cap, me, TS_BLOCKED_IO);
    tso_set(cap, me, TSO_BLOCKED_ON, rts_fixnum((intptr_t)(uintptr_t)op));
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);    /* counted out by run_thread */
    op->cancelled = 0;
    io_submit(cap->io, op, (void *)(uintptr_t)(slot + 1));
}

/* The op of tag `tag` has completed: its thread, if it still waits, is runnable again (it
 * is counted runnable before it stops counting as blocked in IO). */
static void io_complete(Capability *cap, uintptr_t tag)
{
    unsigned slot = (unsigned)(tag - 1);
    Value t = cap->io_waiters[slot];
    cap->io_waiters[slot] = RTS_FALSE;
    cap->io_free[cap->io_nfree++] = slot;
    if (t != RTS_FALSE)
        wake_from_wait(cap, t);
}

/* Takes what io_wait gives back by deadline_ns (0: what is there), as tags only: the
 * threads are woken later, by io_poll, when the capability is running. */
static void io_take(Capability *cap, uint64_t deadline_ns)
{
    void *tags[CAP_IO_DONE_MAX];
    int room = CAP_IO_DONE_MAX - (int)cap->io_ntags;
    if (room <= 0)
        return;
    int n = io_wait(cap->io, deadline_ns, tags, room);
    for (int i = 0; i < n; i++)
        cap->io_tags[cap->io_ntags++] = (uintptr_t)tags[i];
}

/* At a scheduling point: the completions there are, without blocking. */
static void io_poll(Capability *cap)
{
    for (;;) {
        if (io_inflight(cap->io))
            io_take(cap, 0);
        unsigned n = cap->io_ntags;
        cap->io_ntags = 0;
        for (unsigned i = 0; i < n; i++)
            io_complete(cap, cap->io_tags[i]);
        if (n < CAP_IO_DONE_MAX)
            return;
    }
}

/* Takes thread t (blocked in IO on this capability) off its op, which is cancelled; true if
 * it still waited there. The op stays busy until the back end gives it back. */
static bool io_cancel_wait(Capability *cap, Value t, Value on)
{
    RtsIoOp *op = (RtsIoOp *)(uintptr_t)rts_fixnum_val(on);
    unsigned slot = (unsigned)((uintptr_t)op->tag - 1);
    if (slot >= cap->io_nwaiters || cap->io_waiters[slot] != t)
        return false;
    cap->io_waiters[slot] = RTS_FALSE;
    op->cancelled = 1;
    io_cancel(cap->io, op);
    wake_from_wait(cap, t);
    return true;
}

/* --- Note [Interrupting the main thread] -------------------------------------------------- */

void rts_set_interrupt_handler(void (*handler)(Capability *cap, int sig))
{
    interrupt_handler = handler;
}

bool sched_interrupt_main(int sig)
{
    int none = 0;
    if (!__atomic_compare_exchange_n(&interrupt_pending, &none, sig, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return false;
    Capability *c = &cap_array[0];
    __atomic_fetch_or(&c->context_switch, CS_SWITCH, __ATOMIC_RELAXED);
    __atomic_store_n(&c->sm.hplim, (Value *)NULL, __ATOMIC_RELAXED);
    cap_wake(c);               /* always: it may be just about to sleep */
    return true;
}

/* Takes t off the joiners of `target` if it is still there; true if it was. Locks held:
 * none; takes target's. */
static bool join_cancel_wait(Capability *cap, Value target, Value t)
{
    obj_lock(cap, target);
    Value prev, next;
    bool found = thread_unlink(cap, tso_get(target, TSO_JOINERS), t, &prev, &next);
    if (found && prev == RTS_FALSE)
        tso_set(cap, target, TSO_JOINERS, next);
    obj_unlock(cap, target);
    return found;
}

/* On capability 0, the main thread not running: makes it runnable if it waits. A waker on
 * another capability may be making it runnable at the same time; whoever takes it off the
 * queue it waits on (under that queue's lock) wakes it. Locks held: none; takes the lock of
 * the MVar or thread it waits on. */
static void unblock_main(Capability *cap)
{
    Value m = sched_main();
    if (m == RTS_FALSE)
        return;
    Value on = __atomic_load_n(&obj_payload(m)[TSO_BLOCKED_ON], __ATOMIC_ACQUIRE);
    switch (tso_status(m)) {
    case TS_SLEEPING: {          /* on this capability's own sleep heap */
        size_t i = 0;
        while (i < cap->n_sleepers && cap->sleepers[i].t != m)
            i++;
        if (i == cap->n_sleepers)
            return;
        sleepers_remove(cap, i);
        wake_from_wait(cap, m);
        return;
    }
    case TS_BLOCKED_TAKE: case TS_BLOCKED_READ: case TS_BLOCKED_PUT:
        if (on != RTS_FALSE && mvar_cancel_wait(cap, on, m))
            thread_wake(cap, m);
        return;
    case TS_BLOCKED_JOIN:
        if (on != RTS_FALSE && join_cancel_wait(cap, on, m))
            thread_wake(cap, m);
        return;
    case TS_BLOCKED_IO:          /* its op was submitted here: main never moves */
        if (on != RTS_FALSE)
            io_cancel_wait(cap, m, on);
        return;
    default:
        return;
    }
}

/* On capability 0 with the signal pending: the running main thread takes it; else a
 * waiting main thread is made runnable, to take it when it runs. */
static void take_interrupt(Capability *cap)
{
    if (cap->current != sched_main() || cap->current == RTS_FALSE) {
        unblock_main(cap);
        return;
    }
    int sig = __atomic_exchange_n(&interrupt_pending, 0, __ATOMIC_SEQ_CST);
    if (!sig)
        return;
    if (!interrupt_handler)
        rts_exit(128 + sig);
    interrupt_handler(cap, sig);
}

/* Note [Pushing work]: the first thread of the run queue that may go elsewhere (not
 * TSO_LOCKED), taken off the queue, or RTS_FALSE. run_movable says whether there is one, so
 * a queue of locked threads (a fork-on program's) is not walked at every scheduling point. */
static Value take_pushable(Capability *cap)
{
    if (!cap->run_movable)
        return RTS_FALSE;
    Value prev = RTS_FALSE;
    for (Value t = cap->run_hd; t != RTS_FALSE; prev = t, t = tso_get(t, TSO_LINK)) {
        if (tso_get(t, TSO_LOCKED) == RTS_TRUE)
            continue;
        Value next = tso_get(t, TSO_LINK);
        if (prev == RTS_FALSE)
            cap->run_hd = next;
        else
            tso_set(cap, prev, TSO_LINK, next);
        if (cap->run_tl == t)
            cap->run_tl = prev;
        RTS_ASSERT(cap->run_len > 0 && cap->run_movable > 0);
        cap->run_len--;
        cap->run_movable--;
        tso_set(cap, t, TSO_LINK, RTS_FALSE);
        return t;
    }
    return RTS_FALSE;
}

/* Locks held: none; takes the inbox_lock (and idle_mu) of each capability it gives a thread. */
static void push_work(Capability *cap)
{
    for (unsigned k = 1; k < cap_n_caps && cap->run_hd != RTS_FALSE; k++) {
        Capability *c = &cap_array[(cap->sm.no + k) % cap_n_caps];
        if (!stw_idle(c->sm.no))
            continue;
        Value t = take_pushable(cap);
        if (t == RTS_FALSE)
            return;
        /* Note [Pushing work]: never a TSO_LOCKED thread; only its owner moves it */
        RTS_ASSERT(tso_get(t, TSO_LOCKED) != RTS_TRUE && sched_thread_cap(t) == cap->sm.no);
        tso_set(cap, t, TSO_CAP, rts_fixnum(c->sm.no));
        cap->threads_pushed++;
        trace_thread(THREAD_EV_MIGRATE, (uint64_t)rts_thread_id(t), c->sm.no);
        cap_send_thread(cap, c, t);
    }
}

/* With a language layer's handler, the deadlock of the main thread is an exception raised in
 * it, as GHC's BlockedIndefinitelyOnMVar is (Note [Interrupting the main thread]): a REPL
 * reports it and goes on, an uncaught one is reported with a backtrace. This capability
 * then sleeps as any idle one; if the handler's exception is pending already, or a signal
 * is, that one reaches the main thread instead. Without a handler the process ends here. */
static void deadlock(void)
{
    if (interrupt_handler && sched_main() != RTS_FALSE) {
        sched_interrupt_main(RTS_DEADLOCK);
        return;
    }
    fflush(stdout);
    fprintf(stderr, "rtslab: thread blocked indefinitely in an MVar operation\n");
    rts_exit(1);
}

/* Note [Idle capabilities and deadlock]: one sleep of an idle capability, called and
 * returning with idle_mu held, which it drops while it sleeps in its IO back end's wait
 * (io_wait) until a completion, a wake-up (cap_wake: io_sleeping is set under idle_mu, so a
 * wake-up is either seen by the caller's test of wake_pending or written to the back end's
 * eventfd) or next_wake, the earliest sleeper's time (0: none; Note [Idle in the ring] in
 * io/iomgr.h). False, without sleeping, when next_wake has come. Completions are kept as
 * tags (io_ntags) and handled once running (io_poll): no heap is touched here. Locks held:
 * cap's idle_mu (dropped and taken again around the sleep). */
static bool idle_sleep(Capability *cap, uint64_t next_wake)
{
    if (next_wake && base_now_ns() >= next_wake)
        return false;
    cap->io_sleeping = 1;
    pthread_mutex_unlock(&cap->idle_mu);
    io_take(cap, next_wake ? next_wake : UINT64_MAX);
    pthread_mutex_lock(&cap->idle_mu);
    cap->io_sleeping = 0;
    return true;
}

/* Note [Idle capabilities and deadlock]. Locks held: none; takes cap's idle_mu, and holds it
 * while it sets the state to IDLE and back (Note [Capability states] in sync/stw.h). */
static void idle_wait(Capability *cap, uint64_t next_wake)
{
    if (!__atomic_load_n(&sched_live, __ATOMIC_SEQ_CST) && !stw_pending()
        && (!sched_deadlock_check_pause_us || (usleep(sched_deadlock_check_pause_us), true))
        && !__atomic_load_n(&sched_main_finished, __ATOMIC_SEQ_CST))
        deadlock();

    trace_begin(SPAN_IDLE, 0);
    pthread_mutex_lock(&cap->idle_mu);
    stw_set_state(cap->sm.no, STW_IDLE);
#if RTS_PATCH_IDLE_OPTOUT
    /* Note [Idle opt-out] in sync/stw.h: a sync that counts on it is followed here, still
     * idle; after -qi<n> of them it opts out, and a sync no longer wakes it. Woken while
     * opted out, it waits out the GC that left it out, if any, before it leaves. */
    unsigned me = cap->sm.no, gcs = 0;
    for (;;) {
        bool out = STW_STATE(stw_state(me)) == STW_OPTED_OUT;
        if (__atomic_load_n(&cap->inbox_n, __ATOMIC_ACQUIRE))
            break;
        if (!out && stw_pending()) {
            if (!stw_idle_optout_gcs)
                break;                          /* -qi0: follow it as the baseline does */
            pthread_mutex_unlock(&cap->idle_mu);
            trace_end(SPAN_IDLE);
            trace_wake(WAKE_FOR_GC);
            stw_follow_idle(me, ++gcs >= stw_idle_optout_gcs);
            trace_begin(SPAN_IDLE, 0);
            pthread_mutex_lock(&cap->idle_mu);
            /* forget that sync's interrupt, however late it came (work shows in the inbox),
             * but not an exit's, which counts on it even when opted out */
            if (stw_pending_kind() != SYNC_EXIT)
                cap->wake_pending = 0;
            continue;
        }
        if (cap->wake_pending || cap->io_ntags)
            break;
        if (!idle_sleep(cap, next_wake))
            break;
    }
    cap->wake_pending = 0;
    bool rejoin = STW_STATE(stw_state(me)) == STW_OPTED_OUT;
    if (!rejoin)
        stw_set_state(me, STW_RUNNING);
    pthread_mutex_unlock(&cap->idle_mu);
    if (rejoin)
        stw_rejoin(me);
#else
    while (!cap->wake_pending && !stw_pending() && !__atomic_load_n(&cap->inbox_n, __ATOMIC_ACQUIRE)
           && !cap->io_ntags) {
        if (!idle_sleep(cap, next_wake))
            break;
    }
    cap->wake_pending = 0;
    stw_set_state(cap->sm.no, STW_RUNNING);
    pthread_mutex_unlock(&cap->idle_mu);
#endif
    trace_end(SPAN_IDLE);
    trace_wake(stw_pending() ? WAKE_FOR_GC : WAKE_FOR_WORK);
}

/* Runs the capability's threads; on capability 0, until the main thread has finished. */
static void schedule(Capability *cap)
{
    for (;;) {
        safe_point(cap, true);
        if (cap->sm.no == 0 && __atomic_load_n(&sched_main_finished, __ATOMIC_ACQUIRE))
            return;
        drain_inbox(cap);
        if (cap->io_ntags || io_inflight(cap->io))
            io_poll(cap);
        uint64_t next_wake = wake_sleepers(cap);
        if (cap->sm.no == 0 && __atomic_load_n(&interrupt_pending, __ATOMIC_RELAXED))
            unblock_main(cap);
        Value t = sched_runq_pop(cap);
        if (t != RTS_FALSE) {
            push_work(cap);
            run_thread(cap, t);
            continue;
        }
        idle_wait(cap, next_wake);
    }
}

static void *worker_main(void *arg)
{
    Capability *cap = arg;
    cap_attach(cap);
    if (base_cfg->pin_caps)
        affinity_pin_self(cap->sm.no);
    numa_bind_self(cap->sm.no);         /* without -qa: its node's CPUs (os/numa.h) */
    schedule(cap);
    return NULL;
}

static void sched_start_workers(void)
{
    for (unsigned i = 1; i < cap_n_caps; i++)
        if (pthread_create(&cap_array[i].os_thread, NULL, worker_main, &cap_array[i]) != 0)
            base_fatal("cannot start the worker thread of capability %u", i);
}

/* May be called again once it has returned (the fuzzing harness runs one main thread per
 * input): the workers are started by the first call only, before the main thread is made.
 * The main thread to be is counted live (a placeholder) from the start until it is counted
 * runnable, so no idle capability sees a deadlock meanwhile (Note [Idle capabilities and
 * deadlock]); sched_main_finished is cleared only after that. */
static void (*before_first_run)(void);
void sched_set_before_first_run(void (*fn)(void)) { before_first_run = fn; }

int rts_run_main(RtsCode code, size_t nslots)
{
    static bool workers_started;
    if (!workers_started && before_first_run)
        before_first_run();
    Capability *cap = &cap_array[0];
    __atomic_fetch_add(&sched_live, 1, __ATOMIC_SEQ_CST);    /* the placeholder */
    cap_attach(cap);
    if (base_cfg->pin_caps)
        affinity_pin_self(0);
    numa_bind_self(0);
    if (!workers_started) {
        /* Before the main thread is made: making it may collect (a -ki stack of more than
         * the nursery does), and a collection stops every capability, so every worker must
         * be there to stop (before, `-ki256m -N2` hung here). */
        __atomic_store_n(&sched_main_finished, 1, __ATOMIC_SEQ_CST);
        sched_start_workers();
        workers_started = true;
    }
    Value m = rts_thread_new(cap, code, nslots);
    tso_set(cap, m, TSO_LOCKED, RTS_TRUE);    /* Note [Pushing work] */
    __atomic_store_n(&sched_main_thread, m, __ATOMIC_RELEASE);
    rts_thread_start(cap, m);
    __atomic_store_n(&sched_main_finished, 0, __ATOMIC_SEQ_CST);
    __atomic_fetch_sub(&sched_live, 1, __ATOMIC_SEQ_CST);    /* the placeholder out */
    schedule(cap);
    __atomic_store_n(&sched_main_thread, RTS_FALSE, __ATOMIC_RELEASE);
    return 0;
}
