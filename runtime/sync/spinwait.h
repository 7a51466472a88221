/* The one spin-wait of the runtime: every loop that waits for another OS thread by spinning
 * (a SpinLock, an object's header lock bit, the parallel GC's look-for-work loop, a GC
 * thread waiting for another to finish copying an object) calls spin_wait once per turn of
 * its loop, and nothing else, so that what a spin costs and how it gives up the CPU is one
 * rule in one place (seed 003).
 *
 * A waiter keeps a SpinWait on its own stack (SPIN_WAIT_INIT), calls spin_wait while the
 * condition it waits for is false, and then adds w.spins to the counters of what it
 * waited for: a lock's own (updated while holding it), a capability's (the header
 * locks), or a SpinCount shared by the GC threads (spin_count_add, atomic).
 *
 * Note [Spin-wait baseline]
 * The baseline spins forever: a CPU pause (PAUSE on x86, YIELD on aarch64) per turn, never
 * a system call, on the assumption that whoever it waits for is running and will be done
 * soon. So it counts spins and nothing else: a waiter that gives up the CPU, and its
 * count of those, is a patch's. The stop-the-world barrier waits are not spins of this kind: they spin a bounded count and then sleep (sync/wait.h). */
#ifndef RTS_SYNC_SPINWAIT_H
#define RTS_SYNC_SPINWAIT_H

#include <stdint.h>
#include "rts_config.h"
#if RTS_PATCH_SPIN_YIELD
#include <sched.h>
#include "base/util.h"
#endif

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
#if RTS_PATCH_SPIN_YIELD
    uint64_t yields;           /* of those, the ones that gave up the CPU */
    unsigned since_yield;      /* turns since the last yield */
#endif
} SpinWait;

#define SPIN_WAIT_INIT { 0 }

#if RTS_PATCH_SPIN_YIELD
/* Note [Spin-wait yields]
 * The spin-yield patch (GHC 6.12.2's, "Yielding more improvements in parallel
 * performance"): every sync_spin_yield_every turns (-qy<n>; the default is configure's
 * --enable-spin-yield=N, 1000 as in GHC) the waiter calls sched_yield(). When the thread
 * it waits for (a lock's holder, a GC thread still copying, the GC threads that still have
 * work) has been descheduled, which is the rule when there
 * are more capabilities than cores or another process takes a core, spinning cannot make it
 * run sooner: it only burns the rest of the waiter's time slice. Yielding lets the kernel
 * run it. When every thread has a core of its own, the wait is usually over within a few
 * hundred turns and never reaches a yield, and a yield with nothing else to run returns at
 * once; so the rule costs nothing where the baseline was fine. One rule for every spin of
 * the runtime, GHC's ACQUIRE_SPIN_LOCK's (yieldThread() every 1000 spins), the GC's
 * look-for-work loop included. GHC's own look-for-work loop (any_work in rts/sm/GC.c)
 * differs: it yields after every failed poll. The count is per wait: a new wait starts
 * counting from 0. A spin before the options are parsed counts to the default.
 * Where another patch gives a wait a yield rule of its own, those turns are not spin_waits
 * and this rule adds no second yield to them: a patch that balances minor GCs makes the
 * GC's look-for-work loop yield on every failed poll, as GHC's any_work does (that patch's
 * Note, in its island of sm/evac.c, says so too); rtslab's tests of pairs run the two
 * together (testsuite/pairs/, look_for_work_yield_every_turn). */
/* -qy<n>, in base/util.c (set by its row in rts/patch_spin_yield.c while the options are
 * parsed; read-only after) */
extern unsigned sync_spin_yield_every;
static inline void spin_wait(SpinWait *w)
{
    cpu_relax();
    w->spins++;
    unsigned every = sync_spin_yield_every;
    if (__builtin_expect(++w->since_yield >= every, 0)) {
        w->since_yield = 0;
        w->yields++;
        sched_yield();
    }
}
#else
/* One turn of a spin loop. */
static inline void spin_wait(SpinWait *w)
{
    cpu_relax();
    w->spins++;
}
#endif

/* Counters of a wait that several GC threads share: updated once per wait, atomically. */
typedef struct SpinCount {
    uint64_t waits, spins;
#if RTS_PATCH_SPIN_YIELD
    uint64_t yields;
#endif
} SpinCount;

static inline void spin_count_add(SpinCount *c, const SpinWait *w)
{
    __atomic_fetch_add(&c->waits, 1, __ATOMIC_RELAXED);
    if (w->spins)
        __atomic_fetch_add(&c->spins, w->spins, __ATOMIC_RELAXED);
#if RTS_PATCH_SPIN_YIELD
    if (w->yields)
        __atomic_fetch_add(&c->yields, w->yields, __ATOMIC_RELAXED);
#endif
}

#endif
