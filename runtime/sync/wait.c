/* The baseline's waits (Note [Baseline waiting] in wait.h): spin, then sleep and poll; nobody
 * is woken. What every build's waits share is sync/wait_common.c's. */
#include "sync/wait.h"
#include "sync/spinlock.h"
#include "base/util.h"

static void add(uint64_t *p, uint64_t n) { __atomic_fetch_add(p, n, __ATOMIC_RELAXED); }

void sync_wait(uint32_t *word, bool (*ready)(void *arg), void *arg, SyncWaitKind kind)
{
    (void)word;
    if (ready(arg))
        return;
    uint64_t t0 = base_now_ns(), spins = 0, sleeps = 0;
    for (; spins < SYNC_SPINS; spins++) {
        cpu_relax();
        if (ready(arg))
            goto done;
    }
    sleeps = sync_sleep_until(ready, arg);
done:
    add(&sync_wait_counts[kind].waits, 1);
    add(&sync_wait_counts[kind].spins, spins);
    add(&sync_wait_counts[kind].sleeps, sleeps);
    add(&sync_wait_counts[kind].wait_ns, base_now_ns() - t0);
}

void sync_wake(uint32_t *word, SyncWaitKind kind)
{
    (void)word;                 /* baseline: sleepers poll */
    (void)kind;
}
