/* The collector: driver (gc.c), per-GC-thread state and evacuation/scavenging (evac.c),
 * sanity checking (sanity.c).
 *
 * Note [GC threads]
 * A GC runs with the world stopped (sync/stw.h) on one GC thread per participating
 * capability: all of them by default, -qn<n> for fewer, -qg for one. The leader prepares
 * (from-space marking) and finishes (freeing from-space, sizing the old generation) alone;
 * in between every GC thread evacuates the roots of the capabilities assigned to it (its
 * own, and those of capabilities that take no part) and scavenges what it copied.
 * Work balance in the baseline: a minor GC shares no work (each GC thread scans only what
 * it copied); a major GC lets idle GC threads steal full to-space blocks (GHC's -qb1).
 *
 * Note [To-space]
 * A GC thread copies into blocks of its own: it bumps into `todo`; when todo fills, the full
 * block, if not yet scanned, goes on the thread's queue, from which the thread itself (and,
 * when stealing is on, idle GC threads) take blocks to scan (bdescr.scan is each block's
 * scan pointer). Blocks on a queue are full, so whoever scans one needs no lock on it.
 * Large objects are not copied: evacuating one sets BF_EVACUATED on its group and queues it
 * (on ->prev) to be scavenged in place by the GC thread that evacuated it.
 *
 * Note [Racing for an object]
 * Two GC threads may reach one object. The winner swaps its header for OBJ_BUSY with a CAS,
 * copies it, then publishes the forwarding address (release); a loser seeing OBJ_BUSY waits
 * for the address. So no object, mutable or not, is ever copied twice.
 */
#ifndef RTS_SM_GC_H
#define RTS_SM_GC_H

#include "sm/storage.h"

typedef struct GCThread {
    Capability *cap;
    unsigned index;                  /* in gc_threads[] during a GC */
    bool     active;                 /* takes part in the GC in progress */
    bool     major, steal;
    bdescr  *blocks_hd, *blocks_tl;  /* every to-space block it allocated (->link) */
    size_t   n_blocks;
    bdescr  *todo;                   /* the block it copies into */
    bdescr  *scan_bd;                /* the block it is scanning */
    SpinLock queue_lock;             /* guards queue and queue_n */
    bdescr **queue;                  /* full blocks not yet scanned */
    size_t   queue_n, queue_cap;
    bdescr  *large_pending;          /* evacuated large objects not yet scavenged (->prev) */
    size_t   copied_words;
} GCThread;

typedef enum { SANITY_BEFORE_GC, SANITY_AFTER_GC } SanityWhen;

/* Collects (leading the sync, or following another capability's); called by a mutator at
 * a safe point (an allocation or rts_gc). */
void  gc_collect(Capability *cap, bool force_major);
/* A follower's part of a GC: returns true when cap is one of its GC threads (and did it). */
bool  gc_follower_work(Capability *cap);
void  gc_thread_init(Capability *cap);
extern SpinLock sm_lock;             /* the block allocator, outside init */
Value gc_evacuate(GCThread *gct, Value v);
void  gc_scavenge_object(GCThread *gct, Value obj);
void  gc_scavenge_loop(GCThread *gct);
extern unsigned gc_busy;             /* GC threads holding work (stealing GCs) */
extern GCThread **gc_threads;
extern unsigned n_gc_threads;
void  gc_add_root(Value *root);
void  gc_for_each_root(void (*f)(Value *root, void *env), void *env);
void  sanity_check(SanityWhen when);

#endif
