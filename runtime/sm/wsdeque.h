/* A GC thread's work-stealing deque of blocks waiting to be scanned (Note [To-space] in
 * gcthread.h): Chase and Lev's deque ("Dynamic circular work-stealing deque", SPAA 2005),
 * with the C11 orderings of Lê, Pop, Cohen and Zappa Nardelli ("Correct and efficient
 * work-stealing for weak memory models", PPoPP 2013), as GHC's rts/WSDeque.c uses for its
 * parallel GC (ISMM'08).
 *
 * The owner pushes and pops at the bottom, without a lock and (but for the last item) without
 * an atomic read-modify-write; thieves take from the top with a CAS. So the owner scans its
 * newest block (the one most likely still in its cache) and a thief takes the oldest (the
 * one whose objects have had the most time to grow a subgraph worth stealing).
 *
 * Invariants:
 *   - top <= bottom + 1 at all times, and top <= bottom whenever no wsdeque_pop is between its
 *     store of bottom and its restore; the items are buf[i & mask] for top <= i < bottom.
 *   - top only grows (by CAS, from a thief or from the owner taking the last item); bottom is
 *     written by the owner only.
 *   - An item is returned by exactly one wsdeque_pop or wsdeque_steal.
 *   - Arrays replaced by growth stay allocated until wsdeque_quiesce (a thief may still be
 *     reading one); an array is never written once it has been replaced.
 * Threads: wsdeque_push and wsdeque_pop by the owner only; wsdeque_steal and wsdeque_size by
 * anyone; wsdeque_quiesce by one thread while no other uses the deque (the GC leader, after
 * the GC threads are done).
 *
 * Layout: the owner's fields (bottom, its copy of the array) are one cache line, the fields
 * every thief reads and CASes (top, the published array) another, so the owner's pushes and
 * pops do not fight the thieves' polling for a line (Note [Cache lines] in
 * sched/capability.h). The GC thread's state embeds the deque whole (gcthread.h). */
#ifndef RTS_SM_WSDEQUE_H
#define RTS_SM_WSDEQUE_H

#include <stddef.h>
#include <stdint.h>
#include "rts_config.h"
#include "sm/block.h"

typedef struct WSArray {
    struct WSArray *retired;     /* the array this one replaced (freed by wsdeque_quiesce) */
    int64_t mask;                /* capacity - 1, a power of two minus one */
    bdescr *buf[];               /* atomics: a thief reads a slot while the owner may write it */
} WSArray;

typedef struct WSDeque {
    /* the owner's: written by the owner only; thieves read bottom */
    _Alignas(RTS_CACHE_LINE) int64_t bottom;   /* atomic */
    WSArray *own_array;          /* the owner's copy of `array` (read without a fence) */
    /* the thieves': every steal reads both and CASes top */
    _Alignas(RTS_CACHE_LINE) int64_t top;      /* atomic */
    WSArray *array;              /* atomic: replaced (release) when the owner grows it */
} WSDeque;

_Static_assert(offsetof(WSDeque, top) % RTS_CACHE_LINE == 0
               && offsetof(WSDeque, top) >= offsetof(WSDeque, own_array) + sizeof(WSArray *),
               "the thieves' fields of a WSDeque start a cache line of their own");

/* The result of a steal that lost a race (the deque was not empty: try again). */
#define WSDEQUE_ABORT ((bdescr *)(uintptr_t)1)

/* An empty deque with room for `capacity` items before it grows (rounded up to a power of
 * two, at least 2). */
void    wsdeque_init(WSDeque *q, size_t capacity);
/* Owner: adds bd at the bottom (grows the array when full). bd must not be NULL. */
void    wsdeque_push(WSDeque *q, bdescr *bd);
/* Owner: the newest item, or NULL when empty. */
bdescr *wsdeque_pop(WSDeque *q);
/* Anyone: the oldest item, NULL when empty, or WSDEQUE_ABORT when another thread took the
 * item it was after (the deque may still hold others). */
bdescr *wsdeque_steal(WSDeque *q);
/* While no other thread uses the deque (between GCs): frees the arrays that growth replaced,
 * and restarts the indices at 0 if it is empty. */
void    wsdeque_quiesce(WSDeque *q);

/* A snapshot of the number of items (a hint: it may change at once; never negative). */
static inline size_t wsdeque_size(WSDeque *q)
{
    int64_t t = __atomic_load_n(&q->top, __ATOMIC_ACQUIRE);
    int64_t b = __atomic_load_n(&q->bottom, __ATOMIC_ACQUIRE);
    return b > t ? (size_t)(b - t) : 0;
}

#endif
