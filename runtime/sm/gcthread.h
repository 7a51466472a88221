/* Per-GC-thread state: one GCThread per capability, taking part in a GC as one of its GC
 * threads (Note [GC threads] in gc.h).
 *
 * Note [To-space]
 * A GC thread copies into blocks of its own: it bumps into a `todo` block (objects promoted
 * to the old generation) or an `aged_todo` one (nursery survivors of a minor GC, Note
 * [Aging] in storage.h), one of each per slot (Note [To-space by capability] below); when
 * one fills, the full block, if not yet scanned, goes on the bottom of the thread's
 * deque (wsdeque.h), from which the thread itself takes the newest blocks to scan and, when
 * stealing is on, idle GC threads steal the oldest (bdescr.scan is each block's scan
 * pointer; a block's gen says whether its objects are old or aged). Blocks on a deque are full, so
 * whoever scans one needs no lock on it. Large objects are not copied: evacuating one sets
 * BF_EVACUATED on its group and queues it (on ->prev) to be scavenged in place by the GC
 * thread that evacuated it.
 *
 * Layout (Note [Cache lines] in sched/capability.h), aligned to a cache line and split by who
 * touches each line during a GC:
 *   1. the owner's hot fields (todo, scan_bd, copied_words, ...; the todo arrays are lines
 *      of their own, gcthread.c): only the owner;
 *   2. the deque's owner line (bottom, the owner's copy of the array): written by the owner
 *      on every push and pop, read by a thief only when it polls or steals from this thread;
 *   3. the deque's thieves' line (top, the published array): read by every poll, CASed by
 *      every steal (and by the owner taking its last block);
 *   4. what the leader writes and the GC thread reads (the active flag).
 * So thieves polling for work never pull the owner's lines 1 and 2 away from it, and the
 * static_asserts below keep it that way.
 *
 * Note [To-space by capability]
 * Rule: a cache line holds objects of one capability's threads only, and never an object
 * that one thread writes beside one that other threads read. So a GC thread keeps todo
 * blocks per destination (each capability, then GC_DEST_SHARED) and per kind (objects
 * written after they are made, and read-mostly ones: gc_todo_slot), and copies an object
 * into the block of gct->dest and its type's kind. Without it, issue 43's -N2 slow mode:
 * two workers that share nothing ran at 1.7-2x their CPU time in some runs and not in
 * others, by where the GC had put things. Shown by printing, at a GC, each worker's hot
 * objects and their neighbours, in slow and fast runs of the same program:
 *  - alloc2 (each worker writes its own pair in a loop): in every slow run, and in no fast
 *    one, the two pairs were 24 or 56 bytes apart (24 of 24 runs at -ki1k and -ki4k), one
 *    GC thread having copied both: the leader reaches the workers' threads through globals
 *    or the main thread's stack, a worker's own GC thread through its run queue, and
 *    whoever scans a thread copies its stack and what the stack holds;
 *  - smp/par-alloc (the same, plus a call of the global procedure + at each step), with
 *    the pairs kept apart: in every slow run the procedure object of + lay in the line of
 *    one worker's written vector, copied there from that worker's frame, so the other
 *    worker's read of it at every call met the first one's writes (2 of 16 runs; with the
 *    call replaced by two inlined adds, 24 of 24 runs were fast).
 * OCaml 5 keeps domains apart the same way, each promoting its minor heap into pools of
 * its own. The destination is:
 *   - a capability's roots and remembered set: that capability;
 *   - the global roots, a symbol wherever it is found (a global variable is read by every
 *     thread) and what a symbol holds, whoever scans it: GC_DEST_SHARED;
 *   - a thread object, and its fields (its stack first), whoever finds or scans it: the
 *     thread's capability (GcClient.thread_cap), so a thread's data follows the thread;
 *   - a to-space block's objects: the block's bd->dest, so a thief scanning a stolen
 *     block copies into its own blocks of the same destination; an evacuated large
 *     object's: the dest of whoever evacuated it (set by the one that set BF_EVACUATED);
 *   - an old object found pointing to an aged one is remembered in the destination
 *     capability's remembered set (the GC thread's own for GC_DEST_SHARED).
 * An object reached from several destinations lands with the first to reach it; the
 * read-mostly kind makes that harmless for procedures and symbols, which all threads read
 * and none writes often (quoted pairs, vectors and strings are of the written kind). What
 * stays possible:
 *   - a mutable object that several threads use (a shared vector), beside one thread's data;
 *   - a thread that moves: an old object stays in the remembered set of the capability that
 *     first wrote it while it points to young data, and is scanned for that capability. A
 *     thread's stack is such an object: once a thread has run, been promoted and moved, its
 *     frames' young data goes to the blocks of the capability it left, until a major GC or
 *     until the stack points to no young object after a GC. A stack that named its thread's
 *     capability would fix it; stacks do not (yet). Threads move seldom: a push at fork time,
 *     prompt now (Note [Pushing work] in sched/schedule.c), is the usual case.
 * Cost: at most 2(N+1) slots of partly filled blocks per GC thread, old blocks kept across
 * minor GCs (gc.c, before the GC threads start), so N 2(N+1) 4 KiB in all at worst: 33 MiB at
 * -N64, counted as heap. In minor GCs without stealing a GC thread fills its own
 * capability's slots, the shared ones and those of threads it reaches through globals or
 * other threads' data; a stealing GC spreads wider. The blocks are on the copying GC
 * thread's heap node (numa_cap_node of its capability, checked by sanity.c), not the
 * destination's: a capability's data copied by another GC thread lies on that thread's node.
 * test_to_space.c checks the placement; smp/par-alloc measures it; experiments/slow-mode/
 * says how each rule was shown.
 */
#ifndef RTS_SM_GCTHREAD_H
#define RTS_SM_GCTHREAD_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include "sm/storage.h"
#include "sm/wsdeque.h"

/* An entry of a GC thread's remember list. */
struct GcRemember { Value obj; unsigned dest; };

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
    bdescr  *remember_hd, *remember_tl;  /* old objects it found pointing to aged ones, to be
                                           remembered after the GC in dest's remembered set
                                           (Note [Aging]): struct GcRemember entries in
                                           blocks of the block allocator, [start, free) of
                                           each, chained by ->link (Note [The GC's remember
                                           list] in evac.c) */
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
extern unsigned gc_n_threads;
/* GC threads holding work, in stealing GCs (gc_scavenge_loop): every idle GC thread polls
 * it, so it has a cache line of its own. */
extern struct GcBusyLine { _Alignas(RTS_CACHE_LINE) unsigned n; } gc_busy_line;
#define gc_busy (gc_busy_line.n)

/* Allocates the array of GC threads for n capabilities. */
void gc_init(unsigned n_caps);
/* The destinations a GC thread keeps to-space blocks for: one per capability (its number),
 * then GC_DEST_SHARED (Note [To-space by capability]). Each has two slots of todo blocks:
 * objects of a type that is written after it is made, and the read-mostly others. */
extern unsigned gc_n_dests;
#define GC_DEST_SHARED (gc_n_dests - 1)
#define GC_TODO_SLOTS  (2 * gc_n_dests)

/* How the copying GC places an object of each type, one load on the copy path
 * (gcthread.c): GC_READ_MOSTLY, the second slot of its destination; GC_OWN_DEST, a
 * destination of its own (own_dest in evac.c: a thread's capability, or shared for a
 * symbol), also for what it holds. */
enum { GC_READ_MOSTLY = 1, GC_OWN_DEST = 2 };
extern const uint8_t gc_type_class[T_NTYPES];

static inline unsigned gc_todo_slot(unsigned dest, unsigned type_class)
{
    return 2 * dest + (type_class & GC_READ_MOSTLY);
}
/* Gives capability `cap` its GC thread state. */
void gc_thread_init(SmCap *cap);

/* Note [Out of memory in a GC]
 * When the OS refuses a GC thread a to-space block, the thread records what was refused
 * (gc_refused_bytes) and leaves its work (gc_out_of_memory: it longjmps back to
 * gc_thread_work in gc.c, to gc_abort_point, and counts itself out of gc_busy, as an idle
 * thief would) so the GC's end is still reached; the object it had claimed gets its header
 * back first, so no other GC thread waits for its copy. The leader, once every GC thread is
 * done, finds gc_refused_bytes set and exits 251 with the world stopped, as at -M overflow:
 * statistics and the eventlog written. The heap is not consistent then (work was left
 * undone), and nothing reads it again. A GC thread that is not the leader cannot exit
 * itself: the orderly exit stops the world, and the world is stopped for the leader's GC
 * already. */
/* Where the calling GC thread's work returns to when it leaves it (set by gc_thread_work
 * for the time of its work; NULL otherwise). */
extern __thread jmp_buf *gc_abort_point;
/* The OS refused a GC thread memory: records it and leaves the thread's GC work. */
void  gc_out_of_memory(GCThread *gct, size_t refused) __attribute__((noreturn));
/* What the OS refused in this GC (0 when nothing): read by the leader once every GC thread
 * is done, and cleared only by the exit that follows. */
size_t gc_refused_bytes(void);

#endif
