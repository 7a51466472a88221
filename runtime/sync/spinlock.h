/* Spinlocks: test-and-test-and-set with a CPU pause in the spin (the baseline of seed 003:
 * never yields). Each lock counts its acquisitions and the spins it took, as GHC counts
 * gc_alloc_block_sync; -s prints them. Use for short critical sections only. */
#ifndef RTS_SYNC_SPINLOCK_H
#define RTS_SYNC_SPINLOCK_H

#include <stdbool.h>
#include <stdint.h>
#include "trace/eventlog.h"

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

typedef struct SpinLock {
    int      locked;
    uint64_t acquisitions;     /* updated while held */
    uint64_t spins;            /* updated while held */
    const char *name;
} SpinLock;

#define SPINLOCK_INIT(nm) { 0, 0, 0, nm }

static inline void spin_lock(SpinLock *l)
{
    uint64_t spins = 0;
    for (;;) {
        if (!__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
            break;
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
            cpu_relax();
            spins++;
        }
    }
    l->acquisitions++;
    l->spins += spins;
    if (__builtin_expect(spins && trace_on, 0))
        trace_spin(l->name, spins);
}

static inline void spin_unlock(SpinLock *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
