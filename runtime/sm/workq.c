/* The GC's block queue: see workq.h. */
#include <stdlib.h>
#include "sm/workq.h"
#include "base/util.h"

void workq_init(WorkQueue *q, const char *lock_name)
{
    *q = (WorkQueue){ .lock = SPINLOCK_INIT(lock_name) };
}

void workq_push(WorkQueue *q, bdescr *bd)
{
    spin_lock(&q->lock);
    if (q->n == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 64;
        q->items = realloc(q->items, q->cap * sizeof *q->items);
        if (!q->items) rts_fatal("out of memory (GC queue)");
    }
    q->items[q->n] = bd;
    __atomic_store_n(&q->n, q->n + 1, __ATOMIC_RELEASE);
    spin_unlock(&q->lock);
}

bdescr *workq_pop(WorkQueue *q)
{
    if (!workq_size(q))
        return NULL;
    bdescr *bd = NULL;
    spin_lock(&q->lock);
    if (q->n) {
        bd = q->items[q->n - 1];
        __atomic_store_n(&q->n, q->n - 1, __ATOMIC_RELEASE);
    }
    spin_unlock(&q->lock);
    return bd;
}
