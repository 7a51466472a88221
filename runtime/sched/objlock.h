/* Locks on a heap object's header (MVars, threads): the OBJ_LOCKED bit, waited for through
 * spin_wait (sync/spinwait.h) like a SpinLock, its spins counted per capability
 * (-s prints them as the "mvar/thread header" lock).
 * Never held across a safe point; a capability holds at most one at a time.
 *
 * Note [No wake under a lock]
 * Handing a thread to another capability ends in cap_wake, a mutex and a write to the idle
 * capability's eventfd (Note [Idle in the ring] in io/iomgr.h): system calls, after which the kernel often runs the woken OS thread at once. Made
 * while holding an object lock, that parks the holder with the lock held, and every other
 * capability that wants the MVar spins (the baseline's spinlocks never yield) until the
 * holder runs again: threadring at -N4 on 2 cores spent 97% of its time in obj_lock and
 * took ~1.8 ms per hand-off. So between obj_lock and obj_unlock, cap_send_thread queues the
 * thread in the inbox at once but only records the wake (cap->wake_later, or wakes at once
 * when that is full), and obj_unlock makes the owed wakes after releasing the lock. */
#ifndef RTS_SCHED_OBJLOCK_H
#define RTS_SCHED_OBJLOCK_H

#include "sched/capability.h"

/* Locks held: no object lock (cap holds at most one; RTS_ASSERT checks it through
 * cap->defer_wakes, which only obj_lock sets); takes obj's. */
void obj_lock(Capability *cap, Value obj);
/* Locks held: obj's; releases it, then makes the wakes owed (Note [No wake under a lock]). */
void obj_unlock(Capability *cap, Value obj);

/* Whether some capability holds obj's lock: for RTS_ASSERT (Note [Assertions] in
 * base/util.h) in functions whose "Locks held:" says an object's lock. */
static inline bool obj_locked(Value obj)
{
    return (__atomic_load_n(obj_ptr(obj), __ATOMIC_RELAXED) & OBJ_LOCKED) != 0;
}

#endif
