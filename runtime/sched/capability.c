/* Capabilities: initialisation, waking, handing threads over, object locks. */
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include "sched/thread.h"
#include "sm/gc.h"
#include "rts/rts.h"

Capability *caps;
unsigned n_caps;
__thread Capability *my_cap;

void cap_init(Capability *cap, unsigned no)
{
    memset(cap, 0, sizeof *cap);
    cap->no = no;
    cap->current = cap->run_hd = cap->run_tl = cap->sleep_q = RTS_FALSE;
    cap->inbox_hd = cap->inbox_tl = RTS_FALSE;
    cap->inbox_lock.name = "inbox";
    pthread_mutex_init(&cap->idle_mu, NULL);
    pthread_condattr_t attr;                 /* timed waits use the monotonic clock */
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&cap->idle_cv, &attr);
    pthread_condattr_destroy(&attr);
    sm_cap_init(cap);
    gc_thread_init(cap);
    /* Reserved, not committed: pages are touched only as the stack of local roots grows. */
    void *lr = mmap(NULL, CAP_LROOTS_MAX * sizeof(Value), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (lr == MAP_FAILED) rts_fatal("cannot reserve the local roots of capability %u", no);
    cap->lroots = lr;
}

void cap_lroots_overflow(Capability *cap)
{
    rts_thread_error(cap, "too many local roots (over %zu values held by C code)", CAP_LROOTS_MAX);
}

unsigned rts_cap_no(Capability *cap) { return cap->no; }
unsigned rts_n_caps(void) { return n_caps; }

void cap_wake(Capability *cap)
{
    pthread_mutex_lock(&cap->idle_mu);
    cap->wake_pending = 1;
    pthread_cond_signal(&cap->idle_cv);
    pthread_mutex_unlock(&cap->idle_mu);
}

void cap_send_thread(Capability *from, Capability *to, Value t)
{
    spin_lock(&to->inbox_lock);
    tso_set(from, t, TSO_LINK, RTS_FALSE);
    if (to->inbox_tl == RTS_FALSE)
        to->inbox_hd = t;
    else
        tso_set(from, to->inbox_tl, TSO_LINK, t);
    to->inbox_tl = t;
    __atomic_fetch_add(&to->inbox_n, 1, __ATOMIC_RELEASE);
    spin_unlock(&to->inbox_lock);
    if (from->defer_wakes && from->n_wake_later < CAP_WAKE_LATER_MAX) {
        for (unsigned i = 0; i < from->n_wake_later; i++)
            if (from->wake_later[i] == to)
                return;
        from->wake_later[from->n_wake_later++] = to;
        return;
    }
    cap_wake(to);
}

void obj_lock(Capability *cap, Value obj)
{
    Value *h = obj_ptr(obj);
    uint64_t spins = 0;
    while (__atomic_fetch_or(h, OBJ_LOCKED, __ATOMIC_ACQUIRE) & OBJ_LOCKED)
        while (__atomic_load_n(h, __ATOMIC_RELAXED) & OBJ_LOCKED) {
            cpu_relax();
            spins++;
        }
    cap->obj_lock_acq++;
    cap->obj_lock_spins += spins;
    cap->defer_wakes = 1;
    if (__builtin_expect(spins && trace_on, 0))
        trace_spin("mvar/thread header", spins);
}

void obj_unlock(Capability *cap, Value obj)
{
    __atomic_fetch_and(obj_ptr(obj), ~OBJ_LOCKED, __ATOMIC_RELEASE);
    cap->defer_wakes = 0;
    for (unsigned i = 0; i < cap->n_wake_later; i++)
        cap_wake(cap->wake_later[i]);
    cap->n_wake_later = 0;
}
