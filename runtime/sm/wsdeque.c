/* The GC's work-stealing deque: see wsdeque.h and Note [Work-stealing deque].
 *
 * Note [Work-stealing deque]
 * Indices grow without wrapping (int64_t: 2^63 pushes are out of reach); item i lives in
 * buf[i & mask]. The owner moves bottom both ways, thieves move top up by CAS. Every store of
 * bottom is a release or stronger and every load of it by another thread an acquire or
 * stronger; the slots are accessed with relaxed atomics (a slot may be read by a thief that
 * is about to lose its CAS while the owner rewrites it: a benign race, but a race, so atomic).
 *
 * push (owner): write the slot, then store bottom = b + 1 with release. A thief that reads
 * the new bottom (acquire) therefore reads the slot's new contents, and also everything the
 * owner wrote before the push: the block's objects, its bdescr. A thief that reads an older
 * bottom sees a smaller deque, which is merely conservative. The owner grows the array when
 * b - top would exceed the capacity; its `top` is a load that may be stale, but top only
 * grows, so a stale top only makes it grow early, never overwrite a live slot.
 *
 * pop (owner) and steal (thief) race for the last item, which is Dekker's pattern: the owner
 * stores bottom = b - 1 then loads top; a thief loads top then loads bottom. Without a total
 * order over these four accesses both could see the item as theirs (the owner reads the old
 * top, the thief the old bottom). Chase and Lev assume sequential consistency; Lê et al.
 * (PPoPP'13) use relaxed accesses with seq_cst fences. We make the four accesses, and the
 * CAS on top, seq_cst themselves: they are then in one total order S consistent with each
 * thread's program order, and whichever of "owner's store of bottom" and "thief's load of
 * bottom" comes first in S decides:
 *   - the owner's store first: the thief reads bottom = b - 1 <= t and gives up (empty), or
 *     (when more items were left) steals index t < b - 1, which the owner does not take;
 *   - the thief's load first: its load of top precedes it, hence precedes the owner's load of
 *     top, which so reads t or later. If the owner sees t < b - 1 (several items) the two
 *     take different indices. If it sees t == b - 1 (the last item), both CAS top from t and
 *     exactly one wins: the other returns empty (owner) or ABORT (thief).
 * Two thieves racing for index t are settled by the same CAS. On x86-64 the seq_cst store is
 * one xchg (the mfence that Lê et al.'s fence also costs), the seq_cst loads are plain loads;
 * a push costs no fence at all. (Whole-access seq_cst rather than fences also lets TSan see
 * the happens-before edges, which it does not derive from fences.)
 *
 * Once the owner restores bottom after taking the last item or finding the deque empty, the
 * store is a release so that the bottom a thief may read next still heads a release from the
 * owner (a thief's acquire of any later bottom synchronizes with everything pushed before).
 *
 * Growth: the owner copies items [top, b) into an array twice the size and publishes it with a
 * release store of `array` before the release store of bottom that follows. A thief loads
 * `array` (acquire) after bottom, so it sees an array holding every index below the bottom it
 * read: either the one the item was pushed into, or a newer copy (which holds every index at
 * or above the owner's top at the copy; an index below that was already taken, and the
 * thief's CAS from it fails). An index can be written again only after top has passed it (the
 * owner can pop index top only through the last-item CAS), so a thief that read a slot whose
 * index is reused loses its CAS. Replaced arrays are never written again and stay allocated
 * until wsdeque_quiesce, when no thief can be reading one. */
#include <stdlib.h>
#include "sm/wsdeque.h"
#include "base/util.h"

static WSArray *array_new(int64_t capacity)
{
    WSArray *a = malloc(sizeof *a + (size_t)capacity * sizeof a->buf[0]);
    if (!a) base_fatal("out of memory (GC deque)");
    a->retired = NULL;
    a->mask = capacity - 1;
    return a;
}

void wsdeque_init(WSDeque *q, size_t capacity)
{
    int64_t cap = 2;
    while ((size_t)cap < capacity)
        cap *= 2;
    WSArray *a = array_new(cap);
    q->bottom = q->top = 0;
    q->own_array = q->array = a;
}

/* Owner: a twice bigger array holding items [t, b). */
static WSArray *grow(WSDeque *q, WSArray *a, int64_t t, int64_t b)
{
    WSArray *n = array_new(2 * (a->mask + 1));
    for (int64_t i = t; i < b; i++)
        __atomic_store_n(&n->buf[i & n->mask],
                         __atomic_load_n(&a->buf[i & a->mask], __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    n->retired = a;
    q->own_array = n;
    __atomic_store_n(&q->array, n, __ATOMIC_RELEASE);
    return n;
}

void wsdeque_push(WSDeque *q, bdescr *bd)
{
    int64_t b = __atomic_load_n(&q->bottom, __ATOMIC_RELAXED);    /* ours */
    int64_t t = __atomic_load_n(&q->top, __ATOMIC_ACQUIRE);
    WSArray *a = q->own_array;
    if (b - t > a->mask)
        a = grow(q, a, t, b);
    __atomic_store_n(&a->buf[b & a->mask], bd, __ATOMIC_RELAXED);
    __atomic_store_n(&q->bottom, b + 1, __ATOMIC_RELEASE);
}

bdescr *wsdeque_pop(WSDeque *q)
{
    int64_t b = __atomic_load_n(&q->bottom, __ATOMIC_RELAXED) - 1;
    WSArray *a = q->own_array;
    __atomic_store_n(&q->bottom, b, __ATOMIC_SEQ_CST);
    int64_t t = __atomic_load_n(&q->top, __ATOMIC_SEQ_CST);
    if (t > b) {                                   /* empty */
        __atomic_store_n(&q->bottom, b + 1, __ATOMIC_RELEASE);
        return NULL;
    }
    bdescr *bd = __atomic_load_n(&a->buf[b & a->mask], __ATOMIC_RELAXED);
    if (t < b)                                     /* not the last: no thief can reach it */
        return bd;
    if (!__atomic_compare_exchange_n(&q->top, &t, t + 1, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        bd = NULL;                                 /* a thief took it */
    __atomic_store_n(&q->bottom, b + 1, __ATOMIC_RELEASE);
    return bd;
}

bdescr *wsdeque_steal(WSDeque *q)
{
    int64_t t = __atomic_load_n(&q->top, __ATOMIC_SEQ_CST);
    int64_t b = __atomic_load_n(&q->bottom, __ATOMIC_SEQ_CST);
    if (t >= b)
        return NULL;
    WSArray *a = __atomic_load_n(&q->array, __ATOMIC_ACQUIRE);
    bdescr *bd = __atomic_load_n(&a->buf[t & a->mask], __ATOMIC_RELAXED);
    if (!__atomic_compare_exchange_n(&q->top, &t, t + 1, false,
                                     __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        return WSDEQUE_ABORT;
    return bd;
}

void wsdeque_quiesce(WSDeque *q)
{
    WSArray *a = q->own_array, *r = a->retired;
    a->retired = NULL;
    while (r) {
        WSArray *next = r->retired;
        free(r);
        r = next;
    }
    if (q->top >= q->bottom)                       /* empty: start the indices afresh */
        q->top = q->bottom = 0;
}
