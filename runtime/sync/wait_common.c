/* What the waits of every build share (sync/wait.h): their counters, the baseline's sleep
 * loop (Note [Baseline waiting]), and the names of the kinds of wait. The waits themselves,
 * sync_wait and sync_wake, are sync/wait.c's. */
#include <stddef.h>
#include <time.h>
#include "sync/wait.h"
#include "trace/eventlog.h"

SyncWaitStats sync_wait_counts[WAIT_NKINDS];

#if RTS_PATCH_SPIN_YIELD
#include "sync/spinwait.h"
/* -qy<n> (Note [Spin-wait yields] in sync/spinwait.h): with the waits, below every spin-wait */
unsigned sync_spin_yield_every = RTS_SPIN_YIELD_SPINS;
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

/* The counters are written with relaxed atomics by the waits (wait.h): each is read so, by
 * its name. A field added to SyncWaitStats is read here too: the assertions count them. */
void sync_wait_stats(SyncWaitKind kind, SyncWaitStats *out)
{
    const SyncWaitStats *c = &sync_wait_counts[kind];
#define LOAD(field) (out->field = __atomic_load_n(&c->field, __ATOMIC_RELAXED))
    LOAD(waits);
    LOAD(spins);
    LOAD(sleeps);
    LOAD(wait_ns);
#if RTS_PATCH_FUTEX_BARRIER
    LOAD(announced);
    LOAD(futex_wakes);
    LOAD(quiet_wakes);
    LOAD(futex_errors);
    LOAD(polled);
    enum { N_READ = 9 };
#else
    enum { N_READ = 4 };
#endif
#undef LOAD
    _Static_assert(sizeof(SyncWaitStats) == N_READ * sizeof(uint64_t),
                   "a field of SyncWaitStats that sync_wait_stats does not read");
}

const char *sync_wait_kind_name(SyncWaitKind kind)
{
    static const char *names[WAIT_NKINDS] = {
        "enter barrier", "leader awaiting arrival", "leader awaiting GC threads",
        "leave barrier",
    };
    return names[kind];
}
