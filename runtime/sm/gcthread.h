/* Per-GC-thread state: one GCThread per capability, taking part in a GC as one of its GC
 * threads (Note [GC threads] in gc.h).
 *
 * Note [To-space]
 * A GC thread copies into blocks of its own: it bumps into `todo`; when todo fills, the full
 * block, if not yet scanned, goes on the thread's queue (workq.h), from which the thread
 * itself (and, when stealing is on, idle GC threads) take blocks to scan (bdescr.scan is
 * each block's scan pointer). Blocks on a queue are full, so whoever scans one needs no lock
 * on it. Large objects are not copied: evacuating one sets BF_EVACUATED on its group and
 * queues it (on ->prev) to be scavenged in place by the GC thread that evacuated it.
 *
 * Layout (Note [Cache lines] in sched/capability.h): the fields only the owner writes during
 * a GC are on the first line(s); what the leader and other GC threads read or write (the
 * active flag, the queue that thieves poll and lock) starts a line of its own.
 */
#ifndef RTS_SM_GCTHREAD_H
#define RTS_SM_GCTHREAD_H

#include <stdbool.h>
#include "sm/storage.h"
#include "sm/workq.h"

typedef struct GCThread {
    /* the owner's */
    _Alignas(RTS_CACHE_LINE) bdescr *todo;       /* the block it copies into */
    bdescr  *scan_bd;                /* the block it is scanning */
    size_t   copied_words;
    bdescr  *large_pending;          /* evacuated large objects not yet scavenged (->prev) */
    bdescr  *blocks_hd, *blocks_tl;  /* every to-space block it allocated (->link) */
    size_t   n_blocks;
    SmCap   *cap;
    unsigned index;                  /* in gc_threads[] during a GC */
    bool     major, steal;
    /* shared with the leader and the other GC threads */
    _Alignas(RTS_CACHE_LINE) bool active;        /* takes part in the GC in progress */
    WorkQueue queue;                 /* full blocks not yet scanned */
} GCThread;

/* The GC threads of the GC in progress, by index (set up by the leader before `go`). */
extern GCThread **gc_threads;
extern unsigned n_gc_threads;
/* GC threads holding work, in stealing GCs (gc_scavenge_loop). */
extern unsigned gc_busy;

/* Allocates the array of GC threads for n capabilities. */
void gc_init(unsigned n_caps);
/* Gives capability `cap` its GC thread state. */
void gc_thread_init(SmCap *cap);

#endif
