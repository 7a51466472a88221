/* The scheduler: each capability's OS thread runs its lightweight threads (schedule.c). */
#ifndef RTS_SCHED_SCHEDULE_H
#define RTS_SCHED_SCHEDULE_H

#include "sm/gc.h"

extern Value sched_main_thread;     /* a GC root */
extern int sched_main_finished;     /* atomic: the main thread has finished */
extern unsigned sched_sleeping;     /* threads on sleep queues (atomic) */
extern unsigned sched_runnable;     /* threads runnable or running (atomic) */
extern unsigned sched_blocked_io;   /* threads blocked in IO (atomic; Note [IO manager]) */

/* The GcClient of sm/gc.h (Note [GC roots from above]): a capability's roots, and the
 * running threads' TSO and stack marked dirty again after a GC (Note [Dirty stacks]). */
void sched_cap_roots(unsigned no, GcRootFn f, void *env);
void sched_after_gc(void);

/* Note [Interrupting the main thread] in schedule.c: records signal `sig` for the main thread
 * and makes capability 0 take it soon; false when one is still pending (a second ^C). Called
 * from the runtime's signal thread, which starts once the capabilities exist. */
bool sched_interrupt_main(int sig);
/* mvar.c: takes thread t off the queue of the MVar it waits on, if it is still there (no
 * waker took it first); true if it was. The caller then wakes it. */
bool mvar_cancel_wait(struct Capability *cap, Value mv, Value t);
/* Note [Sleepers]: puts thread t, to wake at `wake` (ns), on cap's sleep heap. */
void sleepers_push(struct Capability *cap, Value t, uint64_t wake);

#endif
