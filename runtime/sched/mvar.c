/* MVars: a box that is empty or full; take empties it, put fills it, read looks.
 *
 * Note [MVar queues]
 * A T_MVAR holds its value (RTS_UNDEF when empty) and one FIFO queue of blocked threads
 * (head, tail; linked through TSO_LINK). The queue holds takers and readers only while the
 * MVar is empty and putters only while it is full. Operations hand values over directly, as
 * GHC does: a put to an empty MVar first satisfies every reader at the head of the queue,
 * then the first taker (the MVar stays empty); a take from a full MVar lets the first
 * putter's value in. So blocked threads are served strictly in arrival order.
 */
#include "sched/thread.h"
#include "base/util.h"

enum { MVAR_VALUE, MVAR_HEAD, MVAR_TAIL, MVAR_NFIELDS };

static inline Value mv_get(Value mv, int f) { return obj_payload(mv)[f]; }
static inline void  mv_set(Capability *cap, Value mv, int f, Value v) { sm_set_field(cap, mv, (size_t)f, v); }

Value rts_new_mvar(Capability *cap)
{
    Value mv = rts_make_object(cap, T_MVAR, MVAR_NFIELDS, RTS_FALSE);
    obj_payload(mv)[MVAR_VALUE] = RTS_UNDEF;
    return mv;
}

/* The queue of Note [MVar queues]. Locks held (here to try_put_locked): mv's (obj_lock). */
static void enqueue(Capability *cap, Value mv, Value t)
{
    RTS_ASSERT(obj_locked(mv));
    tso_set(cap, t, TSO_LINK, RTS_FALSE);
    tso_set(cap, t, TSO_BLOCKED_ON, mv);
    if (mv_get(mv, MVAR_TAIL) == RTS_FALSE)
        mv_set(cap, mv, MVAR_HEAD, t);
    else
        tso_set(cap, mv_get(mv, MVAR_TAIL), TSO_LINK, t);
    mv_set(cap, mv, MVAR_TAIL, t);
}

static Value dequeue(Capability *cap, Value mv)
{
    RTS_ASSERT(obj_locked(mv) && mv_get(mv, MVAR_HEAD) != RTS_FALSE);
    Value t = mv_get(mv, MVAR_HEAD);
    Value next = tso_get(t, TSO_LINK);
    mv_set(cap, mv, MVAR_HEAD, next);
    if (next == RTS_FALSE)
        mv_set(cap, mv, MVAR_TAIL, RTS_FALSE);
    return t;
}

static void block_on(Capability *cap, Value mv, ThreadStatus why)
{
    /* Note [MVar queues]: putters wait only while it is full, the others while it is empty */
    RTS_ASSERT((why == TS_BLOCKED_PUT) == (mv_get(mv, MVAR_VALUE) != RTS_UNDEF));
    Value me = cap->current;
    tso_set_status(cap, me, why);
    enqueue(cap, mv, me);
}

/* The MVar was full and its value has just been taken: let the first putter in. */
static void after_take(Capability *cap, Value mv)
{
    if (mv_get(mv, MVAR_HEAD) == RTS_FALSE) {
        mv_set(cap, mv, MVAR_VALUE, RTS_UNDEF);
        return;
    }
    Value putter = dequeue(cap, mv);
    RTS_ASSERT(tso_status(putter) == TS_BLOCKED_PUT);   /* Note [MVar queues]: it was full */
    mv_set(cap, mv, MVAR_VALUE, tso_get(putter, TSO_PUT_VALUE));
    tso_set(cap, putter, TSO_PUT_VALUE, RTS_FALSE);
    thread_wake(cap, putter);
}

/* Locks held: none; takes mv's. */
bool mvar_cancel_wait(Capability *cap, Value mv, Value t)
{
    obj_lock(cap, mv);
    Value prev, next;
    bool found = thread_unlink(cap, mv_get(mv, MVAR_HEAD), t, &prev, &next);
    if (found) {
        if (prev == RTS_FALSE) mv_set(cap, mv, MVAR_HEAD, next);
        if (mv_get(mv, MVAR_TAIL) == t)
            mv_set(cap, mv, MVAR_TAIL, prev);
        tso_set(cap, t, TSO_PUT_VALUE, RTS_FALSE);
    }
    obj_unlock(cap, mv);
    return found;
}

/* The operations below run with the MVar locked (obj_lock: its header's lock bit), so
 * capabilities may share it; rts_set_result touches only the caller's own thread.
 * Locks held: try_*_locked, mv's; the rts_mvar_* entry points (rtslab.h), none: each takes
 * mv's and releases it before it returns. */

static bool try_take_locked(Capability *cap, Value mv, Value *out)
{
    Value v = mv_get(mv, MVAR_VALUE);
    if (v == RTS_UNDEF)
        return false;
    after_take(cap, mv);
    *out = v;
    return true;
}

static bool try_put_locked(Capability *cap, Value mv, Value v)
{
    if (mv_get(mv, MVAR_VALUE) != RTS_UNDEF)
        return false;
    /* Empty: serve the readers at the head, then one taker. */
    while (mv_get(mv, MVAR_HEAD) != RTS_FALSE) {
        Value t = dequeue(cap, mv);
        tso_set(cap, t, TSO_RESULT, v);
        bool taker = tso_status(t) == TS_BLOCKED_TAKE;
        RTS_ASSERT(taker || tso_status(t) == TS_BLOCKED_READ);   /* Note [MVar queues] */
        thread_wake(cap, t);
        if (taker)
            return true;
    }
    mv_set(cap, mv, MVAR_VALUE, v);
    return true;
}

bool rts_mvar_try_take(Capability *cap, Value mv, Value *out)
{
    obj_lock(cap, mv);
    bool ok = try_take_locked(cap, mv, out);
    obj_unlock(cap, mv);
    if (ok)
        rts_set_result(cap, *out);
    return ok;
}

bool rts_mvar_take(Capability *cap, Value mv, Value *out)
{
    obj_lock(cap, mv);
    bool ok = try_take_locked(cap, mv, out);
    if (!ok)
        block_on(cap, mv, TS_BLOCKED_TAKE);
    obj_unlock(cap, mv);
    if (ok)
        rts_set_result(cap, *out);
    return ok;
}

bool rts_mvar_read(Capability *cap, Value mv, Value *out)
{
    obj_lock(cap, mv);
    Value v = mv_get(mv, MVAR_VALUE);
    bool ok = v != RTS_UNDEF;
    if (ok)
        *out = v;
    else
        block_on(cap, mv, TS_BLOCKED_READ);
    obj_unlock(cap, mv);
    if (ok)
        rts_set_result(cap, v);
    return ok;
}

bool rts_mvar_try_put(Capability *cap, Value mv, Value v)
{
    obj_lock(cap, mv);
    bool ok = try_put_locked(cap, mv, v);
    obj_unlock(cap, mv);
    return ok;
}

bool rts_mvar_put(Capability *cap, Value mv, Value v)
{
    obj_lock(cap, mv);
    bool ok = try_put_locked(cap, mv, v);
    if (!ok) {
        tso_set(cap, cap->current, TSO_PUT_VALUE, v);
        block_on(cap, mv, TS_BLOCKED_PUT);
    }
    obj_unlock(cap, mv);
    return ok;
}
