/* Per-GC-thread state: one GCThread per capability, taking part in a GC as one of its GC
 * threads (Note [GC threads] in gc.h).
 *
 * Note [To-space]
 * A GC thread copies into blocks of its own: it bumps into `todo` (objects promoted to the old
 * generation) or `aged_todo` (nursery survivors of a minor GC, Note [Aging] in storage.h);
 * when either fills, the full block, if not yet scanned, goes on the bottom of the thread's
 * deque (wsdeque.h), from which the thread itself takes the newest blocks to scan and, when
 * stealing is on, idle GC threads steal the oldest (bdescr.scan is each block's scan
 * pointer; a block's gen says whether its objects are old or aged). Blocks on a deque are full, so
 * whoever scans one needs no lock on it. Large objects are not copied: evacuating one sets
 * BF_EVACUATED on its group and queues it (on ->prev) to be scavenged in place by the GC
 * thread that evacuated it.
 *
 * Layout (Note [Cache lines] in sched/capability.h), aligned to a cache line and split by who
 * touches each line during a GC:
 *   1. the owner's hot fields (todo, scan_bd, copied_words, ...): only the owner;
 *   2. the deque's owner line (bottom, the owner's copy of the array): written by the owner
 *      on every push and pop, read by a thief only when it polls or steals from this thread;
 *   3. the deque's thieves' line (top, the published array): read by every poll, CASed by
 *      every steal (and by the owner taking its last block);
 *   4. what the leader writes and the GC thread reads (the active flag).
 * So thieves polling for work never pull the owner's lines 1 and 2 away from it, and the
 * static_asserts below keep it that way.
 */
#ifndef RTS_SM_GCTHREAD_H
#define RTS_SM_GCTHREAD_H

#include <stdbool.h>
#include <stddef.h>
#include "sm/storage.h"
#include "sm/wsdeque.h"

typedef struct GCThread {
    /* the owner's */
    _Alignas(RTS_CACHE_LINE) bdescr *todo;       /* the block it copies into (old) */
    bdescr  *aged_todo;              /* the block it copies nursery survivors into (aging) */
    bdescr  *scan_bd;                /* the block it is scanning */
    size_t   copied_words;
    bool     points_young;           /* the object being scanned points into aged blocks */
#if RTS_PATCH_STACK_CHUNKS
    uint64_t stack_scans;            /* this GC: stack objects (chunks) it scanned */
#endif
    bdescr  *large_pending;          /* evacuated large objects not yet scavenged (->prev) */
    bdescr  *blocks_hd, *blocks_tl;  /* every old to-space block it allocated (->link) */
    size_t   n_blocks;
    bdescr  *aged_hd, *aged_tl;      /* every aged to-space block it allocated (->link) */
    size_t   n_aged;
    Value   *remember;               /* old objects it found pointing to aged ones, to be */
    size_t   n_remember, cap_remember;  /* remembered after the GC (Note [Aging]) */
    SmCap   *cap;
    unsigned index;                  /* in gc_threads[] during a GC */
    bool     major, steal;
    bool     aging;                 /* this GC copies nursery survivors to aged blocks */
#if RTS_PATCH_GEN0_STEAL
    uint64_t steal_tries, steals;    /* this GC: looks for work on the others, blocks got */
#endif
    /* full blocks not yet scanned: the owner's line, then the thieves' (wsdeque.h) */
    WSDeque  deque;
    /* written by the leader */
    _Alignas(RTS_CACHE_LINE) bool active;        /* takes part in the GC in progress */
} GCThread;

_Static_assert(offsetof(GCThread, deque) % RTS_CACHE_LINE == 0
               && offsetof(GCThread, deque) >= offsetof(GCThread, aging) + sizeof(bool),
               "a GC thread's deque starts after its owner's line(s)");
_Static_assert(offsetof(GCThread, deque.top) / RTS_CACHE_LINE
               > offsetof(GCThread, deque.own_array) / RTS_CACHE_LINE,
               "the deque's top is not on a line with the owner's fields");
_Static_assert(offsetof(GCThread, active) % RTS_CACHE_LINE == 0
               && offsetof(GCThread, active) >= offsetof(GCThread, deque) + sizeof(WSDeque),
               "the leader's flag is on a line of its own");

/* The GC threads of the GC in progress, by index (set up by the leader before `go`). */
extern GCThread **gc_threads;
extern unsigned n_gc_threads;
/* GC threads holding work, in stealing GCs (gc_scavenge_loop): every idle GC thread polls
 * it, so it has a cache line of its own. */
extern struct GcBusyLine { _Alignas(RTS_CACHE_LINE) unsigned n; } gc_busy_line;
#define gc_busy (gc_busy_line.n)

/* Allocates the array of GC threads for n capabilities. */
void gc_init(unsigned n_caps);
/* Gives capability `cap` its GC thread state. */
void gc_thread_init(SmCap *cap);

#endif
