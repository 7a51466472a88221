#include <time.h>
#include "sync/wait.h"
#include "sync/spinlock.h"
#include "base/util.h"
#include "trace/eventlog.h"

#if RTS_PATCH_FUTEX_BARRIER
/* The waits are the futex-barrier patch's, in sync/wait_futex_barrier.c (Note [Futex
 * barrier]); they count in wait_stats (wait.h). */
SyncWaitStats wait_stats[WAIT_NKINDS];
#else
static SyncWaitStats wait_stats[WAIT_NKINDS];

static void add(uint64_t *p, uint64_t n) { __atomic_fetch_add(p, n, __ATOMIC_RELAXED); }

void sync_wait(uint32_t *word, bool (*ready)(void *arg), void *arg, SyncWaitKind kind)
{
    (void)word;
    if (ready(arg))
        return;
    uint64_t t0 = rts_now_ns(), spins = 0, sleeps = 0;
    for (; spins < SYNC_SPINS; spins++) {
        cpu_relax();
        if (ready(arg))
            goto done;
    }
    sleeps = sync_sleep_until(ready, arg);
done:
    add(&wait_stats[kind].waits, 1);
    add(&wait_stats[kind].spins, spins);
    add(&wait_stats[kind].sleeps, sleeps);
    add(&wait_stats[kind].wait_ns, rts_now_ns() - t0);
}

void sync_wake(uint32_t *word, SyncWaitKind kind)
{
    (void)word;                 /* baseline: sleepers poll */
    (void)kind;
}
#endif

uint64_t sync_sleep_until(bool (*ready)(void *arg), void *arg)
{
    uint64_t sleeps = 0;
    for (uint64_t ns = SYNC_SLEEP_MIN_NS; !ready(arg); ) {
        struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
        trace_begin(SPAN_SLEEP, 0);
        nanosleep(&ts, NULL);
        trace_end(SPAN_SLEEP);
        sleeps++;
        ns = ns + ns / 4;
        if (ns > SYNC_SLEEP_MAX_NS) ns = SYNC_SLEEP_MAX_NS;
    }
    return sleeps;
}

void sync_wait_stats(SyncWaitKind kind, SyncWaitStats *out)
{
    out->waits = __atomic_load_n(&wait_stats[kind].waits, __ATOMIC_RELAXED);
    out->spins = __atomic_load_n(&wait_stats[kind].spins, __ATOMIC_RELAXED);
    out->sleeps = __atomic_load_n(&wait_stats[kind].sleeps, __ATOMIC_RELAXED);
    out->wait_ns = __atomic_load_n(&wait_stats[kind].wait_ns, __ATOMIC_RELAXED);
#if RTS_PATCH_FUTEX_BARRIER
    out->announced = __atomic_load_n(&wait_stats[kind].announced, __ATOMIC_RELAXED);
    out->futex_wakes = __atomic_load_n(&wait_stats[kind].futex_wakes, __ATOMIC_RELAXED);
    out->quiet_wakes = __atomic_load_n(&wait_stats[kind].quiet_wakes, __ATOMIC_RELAXED);
    out->futex_errors = __atomic_load_n(&wait_stats[kind].futex_errors, __ATOMIC_RELAXED);
    out->polled = __atomic_load_n(&wait_stats[kind].polled, __ATOMIC_RELAXED);
#endif
}

const char *sync_wait_kind_name(SyncWaitKind kind)
{
    static const char *names[WAIT_NKINDS] = {
        "enter barrier", "leader awaiting arrival", "leader awaiting GC threads",
        "leave barrier",
    };
    return names[kind];
}
