/* The scheduler: each capability's OS thread runs its lightweight threads (schedule.c). */
#ifndef RTS_SCHED_SCHEDULE_H
#define RTS_SCHED_SCHEDULE_H

#include "sm/gc.h"

/* The program's main thread, or RTS_FALSE (a GC root). Threads it forked may still run on
 * other capabilities when rts_run_main sets and clears it (they live until the process
 * exits), so it is written atomically and read with sched_main(); the GC updates it in place
 * with the world stopped. (Before: plain reads against the main thread's clearing it at the
 * end of a run, a data race TSan reported at exit.) */
extern Value sched_main_thread;
static inline Value sched_main(void)
{ return __atomic_load_n(&sched_main_thread, __ATOMIC_ACQUIRE); }
extern int sched_main_finished;     /* atomic: the main thread has finished */
/* Threads that can run again without another thread's help: runnable, running, sleeping or
 * blocked in IO (atomic). A thread moving between those states is counted in its new state
 * before it is counted out of the old one, so the count is 0 only when none is in any of
 * them (Note [Idle capabilities and deadlock] in schedule.c). */
extern unsigned sched_live;
/* Tests only (unit/test_sched_start): microseconds an idle capability pauses between its
 * deadlock check's reads of sched_live and sched_main_finished, to hold open the window that
 * the main thread's start must not fall into (Note [Idle capabilities and deadlock]). 0. */
extern unsigned sched_deadlock_check_pause_us;

/* The GcClient of sm/roots.h (Note [GC roots from above]): a capability's roots, the running
 * threads' TSO and stack marked dirty again after a GC (Note [Dirty stacks]), and the
 * capability a thread belongs to (Note [To-space by capability] in sm/gcthread.h). */
void sched_cap_roots(unsigned no, GcRootFn f, void *env);
void sched_after_gc(void);
unsigned sched_thread_cap(Value t);

/* Note [Interrupting the main thread] in schedule.c: records signal `sig` for the main thread
 * and makes capability 0 take it soon; false when one is still pending (a second ^C). Called
 * from the runtime's signal thread, which starts once the capabilities exist. Locks held:
 * none; takes capability 0's idle_mu (cap_wake). */
bool sched_interrupt_main(int sig);
/* A function of the start-up layer that the first rts_run_main calls before anything runs
 * (rts/rts.c opens the output files there: Note [Output files]). */
void sched_set_before_first_run(void (*fn)(void));
/* mvar.c: takes thread t off the queue of the MVar it waits on, if it is still there (no
 * waker took it first); true if it was. The caller then wakes it. Locks held: none; takes
 * mv's. */
bool mvar_cancel_wait(struct Capability *cap, Value mv, Value t);
/* Note [Sleepers]: puts thread t, to wake at `wake` (ns), on cap's sleep heap. */
void sched_sleepers_push(struct Capability *cap, Value t, uint64_t wake);

#endif
