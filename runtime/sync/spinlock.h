/* Spinlocks: test-and-test-and-set, waiting through spin_wait (sync/spinwait.h; the baseline
 * of seed 003 never yields). Each lock counts its acquisitions and the spins it took, as
 * GHC counts gc_alloc_block_sync; -s prints them. Use for short critical sections
 * only. */
#ifndef RTS_SYNC_SPINLOCK_H
#define RTS_SYNC_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "base/util.h"               /* RTS_ASSERT */
#include "sync/spinwait.h"
#include "trace/eventlog.h"

typedef struct SpinLock {
    int      locked;
    uint64_t acquisitions;     /* updated while held */
    uint64_t spins;            /* updated while held */
    const char *name;
#if RTS_PATCH_SPIN_YIELD
    uint64_t yields;           /* updated while held */
#endif
} SpinLock;

#define SPINLOCK_INIT(nm) { .name = nm }

/* Locks held: not l (a spinlock does not nest: its holder taking it again spins for ever);
 * takes l. */
static inline void spin_lock(SpinLock *l)
{
    SpinWait w = SPIN_WAIT_INIT;
    for (;;) {
        if (!__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
            break;
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            spin_wait(&w);
    }
    l->acquisitions++;
    l->spins += w.spins;
#if RTS_PATCH_SPIN_YIELD
    l->yields += w.yields;
#endif
    if (__builtin_expect(w.spins && trace_on, 0))
        trace_spin(l->name, w.spins);
}

/* Locks held: l; releases it. */
static inline void spin_unlock(SpinLock *l)
{
    RTS_ASSERT(__atomic_load_n(&l->locked, __ATOMIC_RELAXED));
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
