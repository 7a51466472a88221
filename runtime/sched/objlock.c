/* Object header locks: see objlock.h. */
#include "sched/objlock.h"
#include "base/util.h"
#include "trace/eventlog.h"

void obj_lock(Capability *cap, Value obj)
{
    RTS_ASSERT(!cap->defer_wakes && cap->n_wake_later == 0);   /* one at a time (objlock.h) */
    Value *h = obj_ptr(obj);
    SpinWait w = SPIN_WAIT_INIT;
    while (__atomic_fetch_or(h, OBJ_LOCKED, __ATOMIC_ACQUIRE) & OBJ_LOCKED)
        while (__atomic_load_n(h, __ATOMIC_RELAXED) & OBJ_LOCKED)
            spin_wait(&w);
    cap->obj_lock_acq++;
    cap->obj_lock_spins += w.spins;
#if RTS_PATCH_SPIN_YIELD
    cap->obj_lock_yields += w.yields;
#endif
    cap->defer_wakes = 1;
    if (__builtin_expect(w.spins && trace_on, 0))
        trace_spin("mvar/thread header", w.spins);
}

void obj_unlock(Capability *cap, Value obj)
{
    RTS_ASSERT(cap->defer_wakes && obj_locked(obj));
    __atomic_fetch_and(obj_ptr(obj), ~OBJ_LOCKED, __ATOMIC_RELEASE);
    cap->defer_wakes = 0;
    for (unsigned i = 0; i < cap->n_wake_later; i++)
        cap_wake(cap->wake_later[i]);
    cap->n_wake_later = 0;
}
