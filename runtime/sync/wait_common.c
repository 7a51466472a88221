/* What the waits of every build share (sync/wait.h): their counters, the baseline's sleep
 * loop (Note [Baseline waiting]), and the names of the kinds of wait. The waits themselves,
 * sync_wait and sync_wake, are sync/wait.c's. */
#include <stddef.h>
#include <time.h>
#include "sync/wait.h"
#include "trace/eventlog.h"

SyncWaitStats sync_wait_counts[WAIT_NKINDS];

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

/* Every field of SyncWaitStats is a uint64_t counter that the waits add to with relaxed
 * atomics (wait.h), so it is read as an array of them, whatever fields a build has. */
_Static_assert(sizeof(SyncWaitStats) % sizeof(uint64_t) == 0, "SyncWaitStats: uint64_t only");

void sync_wait_stats(SyncWaitKind kind, SyncWaitStats *out)
{
    uint64_t *from = (uint64_t *)&sync_wait_counts[kind], *to = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        to[i] = __atomic_load_n(&from[i], __ATOMIC_RELAXED);
}

const char *sync_wait_kind_name(SyncWaitKind kind)
{
    static const char *names[WAIT_NKINDS] = {
        "enter barrier", "leader awaiting arrival", "leader awaiting GC threads",
        "leave barrier",
    };
    return names[kind];
}
