/* Run-time statistics: counters kept by the storage manager and the scheduler, and the
 * -s/-S reports. */
#ifndef RTS_TRACE_STATS_H
#define RTS_TRACE_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "rtslab.h"

typedef struct GcRecord {
    bool     major;
    unsigned gc_threads;
    uint64_t copied_bytes;
    uint64_t max_thread_copied_bytes;   /* the most any one GC thread copied */
    uint64_t stw_ns;           /* from the leader's request to the last arrival */
    uint64_t live_bytes;       /* old generation after the GC */
    uint64_t pause_ns;
    uint64_t cpu_ns;
} GcRecord;

void stats_init(void);
void stats_gc_done(const GcRecord *r);
void stats_mutator_start(void);      /* after init: INIT ends, MUT begins */
void stats_report(void);             /* -s / -S summary at exit */
void stats_get(RtsStats *out);

#endif
