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
 *
 * Note [To-space by capability]
 * A GC thread keeps a todo and an aged_todo block per destination, and copies an object
 * into the pair of gct->dest: the capability whose thread reached the object, or
 * GC_DEST_SHARED for what the global roots reach. So an object is never copied into a line
 * that holds another capability's thread's objects, nor next to the shared objects that
 * every thread reads (code constants, globals). Otherwise one capability's writes (a stack
 * frame, a pair's car) land in a line that another capability reads or writes at every
 * step, and both run at half speed or worse: issue 43's -N2 slow mode. Two workers, each
 * writing its own pair in a loop, used 1.7-2x their CPU time in exactly the runs where one
 * GC thread had copied both pairs into one line or two neighbouring ones (24 or 56 bytes
 * apart: 24 of 24 runs at -ki1k and -ki4k, addresses printed at each GC); and once that
 * was fixed, smp/par-alloc still ran at half speed in the runs where a worker's stack had
 * been copied, by the leader, into the line after a code constants vector (a global root)
 * that both workers read at every call. Which GC thread copied what was a race: the leader
 * reaches the workers' threads through globals or the main thread's stack, and the
 * workers' own GC threads through their run queues; whoever scans a thread copies its
 * stack and what the stack holds. OCaml 5 does not have this, as each domain promotes its
 * minor heap into pools of its own. The destination is:
 *   - a capability's roots and remembered set: that capability;
 *   - the global roots: GC_DEST_SHARED;
 *   - a thread object's fields (its stack first): the thread's capability, whoever scans it
 *     (GcClient.thread_cap), so a thread's data follows it wherever it is reached from;
 *   - a to-space block's objects: the block's bd->dest, so a thief scanning a stolen
 *     block copies into its own blocks of the same destination; an evacuated large
 *     object's: the dest of whoever evacuated it (set by the one that set BF_EVACUATED);
 *   - an old object found pointing to an aged one is remembered in the destination
 *     capability's remembered set (the GC thread's own for GC_DEST_SHARED).
 * An object reached from several destinations lands with the first that reaches it. The
 * cost is at most one partly filled block per GC thread and destination (old blocks stay
 * todo across minor GCs, Note [Aging] in storage.h); in practice a GC thread fills its own
 * capability's and a few others. testsuite/unit/test_to_space.c checks the placement;
 * smp/par-alloc measures it.
 */
#ifndef RTS_SM_GCTHREAD_H
#define RTS_SM_GCTHREAD_H

#include <stdbool.h>
#include <stddef.h>
#include "sm/storage.h"
#include "sm/wsdeque.h"

typedef struct GCThread {
    /* the owner's */
    _Alignas(RTS_CACHE_LINE) bdescr **todo;      /* by gc_todo_slot: the block it copies into (old) */
    bdescr **aged_todo;              /* by gc_todo_slot: nursery survivors' block (aging) */
    unsigned dest;                   /* whose objects it copies now (Note [To-space by capability]) */
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
    struct GcRemember { Value obj; unsigned dest; } *remember;  /* old objects it found */
    size_t   n_remember, cap_remember;  /* pointing to aged ones, to be remembered after the GC
                                           in dest's remembered set (Note [Aging]) */
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
/* The destinations a GC thread keeps to-space blocks for: one per capability (its number),
 * then GC_DEST_SHARED (Note [To-space by capability]). Each has two slots of todo blocks:
 * objects of a type that is written after it is made, and the others (read-only). */
extern unsigned gc_n_dests;
#define GC_DEST_SHARED (gc_n_dests - 1)
#define GC_TODO_SLOTS  (2 * gc_n_dests)

static inline bool gc_type_read_only(ObjType t)
{
    /* A closure's fields are set only as it is made (letrec's SETFREE): set! boxes. */
    return t == T_CLOSURE || t == T_FLONUM || t == T_CODE;
}

static inline unsigned gc_todo_slot(unsigned dest, ObjType t)
{
    return 2 * dest + gc_type_read_only(t);
}
/* Gives capability `cap` its GC thread state. */
void gc_thread_init(SmCap *cap);

#endif
