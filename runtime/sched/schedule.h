/* The scheduler: each capability's OS thread runs its lightweight threads (schedule.c). */
#ifndef RTS_SCHED_SCHEDULE_H
#define RTS_SCHED_SCHEDULE_H

#include "sm/gc.h"

extern Value sched_main_thread;     /* a GC root */
extern int sched_main_finished;     /* atomic: the main thread has finished */
extern unsigned sched_sleeping;     /* threads on sleep queues (atomic) */
extern unsigned sched_runnable;     /* threads runnable or running (atomic) */

/* The GcClient of sm/gc.h (Note [GC roots from above]): a capability's roots, and the
 * running threads' TSO and stack marked dirty again after a GC (Note [Dirty stacks]). */
void sched_cap_roots(unsigned no, GcRootFn f, void *env);
void sched_after_gc(void);

#endif
