/* Run-time statistics: counters kept by the storage manager and the scheduler, and the
 * -s/-S reports. */
#ifndef RTS_TRACE_STATS_H
#define RTS_TRACE_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include "rtslab.h"
#include "sm/gc.h"

void stats_init(void);
void stats_gc_done(const GcRecord *r);   /* registered with gc_on_done */
void stats_mutator_start(void);      /* after init: INIT ends, MUT begins */
/* The -s / -S summary at exit; false, after saying so on stderr, when the -s file could not
 * be written in full. */
bool stats_report(void);
void stats_get(RtsStats *out);

#endif
