/* The one spin-wait of the runtime: every loop that waits for another OS thread by spinning
 * (a SpinLock, an object's header lock bit, the parallel GC's look-for-work loop, a GC
 * thread waiting for another to finish copying an object) calls spin_wait once per turn of
 * its loop, and nothing else, so that what a spin costs and how it gives up the CPU is one
 * rule in one place (seed 003).
 *
 * A waiter keeps a SpinWait on its own stack (SPIN_WAIT_INIT), calls spin_wait while the
 * condition it waits for is false, and then adds w.spins and w.yields to the counters of
 * what it waited for: a lock's own (updated while holding it), a capability's (the header
 * locks), or a SpinCount shared by the GC threads (spin_count_add, atomic).
 *
 * Note [Spin-wait baseline]
 * The baseline spins forever: a CPU pause (PAUSE on x86, YIELD on aarch64) per turn, never
 * a system call, on the assumption that whoever it waits for is running and will be done
 * soon. So `yields` is always 0 here. The stop-the-world barrier waits are not spins of
 * this kind: they spin a bounded count and then sleep (sync/wait.h). */
#ifndef RTS_SYNC_SPINWAIT_H
#define RTS_SYNC_SPINWAIT_H

#include <stdint.h>

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

typedef struct SpinWait {
    uint64_t spins;            /* turns of the waiter's loop */
    uint64_t yields;           /* of those, the ones that gave up the CPU */
} SpinWait;

#define SPIN_WAIT_INIT { 0 }

/* One turn of a spin loop. */
static inline void spin_wait(SpinWait *w)
{
    cpu_relax();
    w->spins++;
}

/* Counters of a wait that several GC threads share: updated once per wait, atomically. */
typedef struct SpinCount {
    uint64_t waits, spins, yields;
} SpinCount;

static inline void spin_count_add(SpinCount *c, const SpinWait *w)
{
    __atomic_fetch_add(&c->waits, 1, __ATOMIC_RELAXED);
    if (w->spins)
        __atomic_fetch_add(&c->spins, w->spins, __ATOMIC_RELAXED);
    if (w->yields)
        __atomic_fetch_add(&c->yields, w->yields, __ATOMIC_RELAXED);
}

#endif
