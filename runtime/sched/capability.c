/* Capabilities: initialisation, waking, interrupting, handing threads over. */
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <time.h>
#include "sched/thread.h"
#include "io/iomgr.h"
#include "sync/stw.h"
#include "base/util.h"
#include "trace/eventlog.h"
#if RTS_PATCH_STACK_CHUNKS
#include "sched/stack.h"
#endif

/* Note [Cache lines]: the owner's fields first, each group others write on a line of its own. */
_Static_assert(offsetof(Capability, sm) == 0, "a Capability begins with its SmCap");
_Static_assert(offsetof(Capability, inbox_lock) % RTS_CACHE_LINE == 0, "inbox on its own line");
_Static_assert(offsetof(Capability, wake_pending) % RTS_CACHE_LINE == 0, "idle sleep on its own line");
_Static_assert(offsetof(Capability, wake_pending) - offsetof(Capability, inbox_lock) >= RTS_CACHE_LINE,
               "inbox and idle sleep on different lines");
_Static_assert(offsetof(Capability, inbox_lock) >= offsetof(Capability, io_tags)
               + sizeof(uintptr_t) * CAP_IO_DONE_MAX, "owner's fields before the shared ones");
_Static_assert(sizeof(Capability) % RTS_CACHE_LINE == 0, "capabilities tile cache lines");

Capability *cap_array;
unsigned cap_n_caps;
__thread Capability *cap_self;

static void cap_init(Capability *cap, unsigned no)
{
    memset(cap, 0, sizeof *cap);
    cap->sm.no = no;
    cap->current = cap->run_hd = cap->run_tl = RTS_FALSE;
    cap->sleepers = NULL;
    cap->n_sleepers = cap->max_sleepers = 0;
    cap->inbox_hd = cap->inbox_tl = RTS_FALSE;
    cap->inbox_lock.name = "inbox";
    pthread_mutex_init(&cap->idle_mu, NULL);
    /* Reserved, not committed: pages are touched only as the stack of local roots grows. */
    void *lr = mmap(NULL, CAP_LROOTS_MAX * sizeof(Value), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (lr == MAP_FAILED) base_fatal("cannot reserve the local roots of capability %u", no);
    cap->lroots = lr;
    cap->io = io_backend_new();
}

void cap_init_all(unsigned n)
{
    cap_array = aligned_alloc(RTS_CACHE_LINE, n * sizeof *cap_array);
    if (!cap_array) base_fatal("out of memory (capabilities)");
    cap_n_caps = n;
    for (unsigned i = 0; i < n; i++)
        cap_init(&cap_array[i], i);
#if RTS_PATCH_STACK_CHUNKS
    stack_pools_init(n);
#endif
}

void cap_attach(Capability *cap)
{
    cap_self = cap;
    trace_attach(cap->sm.no);
}

void cap_lroots_overflow(Capability *cap)
{
    rts_thread_error(cap, "too many local roots (over %zu values held by C code)", CAP_LROOTS_MAX);
}

unsigned rts_cap_no(RtsCap *cap) { return cap->sm.no; }
unsigned rts_n_caps(void) { return cap_n_caps; }

void cap_wake(Capability *cap)
{
    pthread_mutex_lock(&cap->idle_mu);
    /* Note [Idle in the ring] in io/iomgr.h: it sleeps in io_wait. The first wake-up since
     * it went to sleep writes its eventfd; later ones find wake_pending set (it is cleared
     * only by the owner, once awake) and write nothing: a capability woken by many others
     * (an MVar chain across capabilities) cost one write each, 3.6 per wake-up. */
    bool write = cap->io_sleeping && !cap->wake_pending;
    cap->wake_pending = 1;
    pthread_mutex_unlock(&cap->idle_mu);
    if (write)
        io_wake(cap->io);
}

void cap_interrupt(unsigned no)
{
    Capability *c = &cap_array[no];
    __atomic_store_n(&c->sm.hplim, (Value *)NULL, __ATOMIC_RELAXED);
    if (stw_idle(no)) {
#if RTS_PATCH_IDLE_OPTOUT
        /* an opted-out member is interrupted only by an exit (Note [Idle opt-out] in
         * sync/stw.h): it rejoins and takes part; an exit's wake-up is not one for GC */
        if (stw_pending_kind() == SYNC_GC)
#endif
        c->gc_wakeups++;
        cap_wake(c);
    }
}

void cap_tick(void)
{
    for (unsigned i = 0; i < cap_n_caps; i++) {
        __atomic_fetch_or(&cap_array[i].context_switch, CS_SWITCH, __ATOMIC_RELAXED);
        __atomic_store_n(&cap_array[i].sm.hplim, (Value *)NULL, __ATOMIC_RELAXED);
    }
}

void cap_send_thread(Capability *from, Capability *to, Value t)
{
    /* a thread runs only on the capability its TSO_CAP names (capability.h) */
    RTS_ASSERT(rts_fixnum_val(tso_get(t, TSO_CAP)) == (intptr_t)to->sm.no);
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
