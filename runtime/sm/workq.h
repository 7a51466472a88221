/* A GC thread's queue of full to-space blocks waiting to be scanned (Note [To-space] in
 * gcthread.h). The owner pushes and pops; in stealing GCs other GC threads pop too. Both
 * ends are the same (LIFO: a thief takes the newest block), under one spinlock, which is the
 * baseline that the gen0-steal issue replaces with a work-stealing deque.
 * Locks: workq_push and workq_pop take q->lock; workq_size takes none. */
#ifndef RTS_SM_WORKQ_H
#define RTS_SM_WORKQ_H

#include <stddef.h>
#include "sm/block.h"
#include "sync/spinlock.h"

typedef struct WorkQueue {
    SpinLock lock;             /* guards items, n, cap */
    bdescr **items;
    size_t   n;                /* written under the lock, read without it (atomically) */
    size_t   cap;
} WorkQueue;

void    workq_init(WorkQueue *q, const char *lock_name);
void    workq_push(WorkQueue *q, bdescr *bd);
/* The newest block, or NULL when empty. */
bdescr *workq_pop(WorkQueue *q);
/* A snapshot of the number of blocks queued (a hint: it may change at once). */
static inline size_t workq_size(WorkQueue *q) { return __atomic_load_n(&q->n, __ATOMIC_ACQUIRE); }

#endif
