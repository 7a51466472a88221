/* Capabilities: a virtual CPU = an OS worker thread + a run queue of lightweight threads +
 * the storage manager's allocation state (SmCap: nursery, remembered set, GC thread).
 *
 * Invariants:
 *  - a Capability begins with its SmCap (sm/storage.h states the nursery's invariants);
 *  - a lightweight thread is on at most one queue (a run queue, an inbox, a sleep queue, an
 *    MVar's queue, a thread's joiners) at a time, linked through its TSO_LINK field.
 *  - the run queue and the sleep queue belong to the capability's own OS thread; other
 *    capabilities hand it threads only through its inbox (inbox_lock).
 *  - a thread runs only on the capability named by its TSO_CAP; only the capability that
 *    owns a runnable thread changes TSO_CAP (when it pushes the thread to another).
 *
 * Note [Cache lines]
 * Capabilities sit side by side in cap_array, and each OS thread writes its own one all the
 * time (hp at every allocation, the run queue at every switch). So a Capability is aligned
 * to RTS_CACHE_LINE and split by writer: first what its own OS thread writes (SmCap, then
 * the scheduler's hot fields and owner-kept counters), then, each group starting a line of
 * its own, what other capabilities write: the inbox (its lock and queue), and the idle sleep
 * (wake-up flag, mutex, whether it sleeps in its IO back end, the leader's wake-up count). A GC thread's state is laid
 * out the same way (sm/gcthread.h), and each stop-the-world member's word has a line of its
 * own (sync/stw.h). The timer and a GC leader store into hplim and context_switch, in the
 * owner's line, as GHC's HpLim is: one store per tick or GC, not worth a line. capability.c
 * checks the layout with static_assert.
 */
#ifndef RTS_SCHED_CAPABILITY_H
#define RTS_SCHED_CAPABILITY_H

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include "rtslab.h"
#include "sm/storage.h"
#include "sync/spinlock.h"

#define CAP_WAKE_LATER_MAX 8
#define CAP_LROOTS_MAX ((size_t)1 << 21)   /* 16 MiB of address space, touched as used */
#define CAP_IO_DONE_MAX 64                  /* completions taken from the back end at once */

typedef struct Capability Capability;

/* Bits of Capability.context_switch, set by other threads (atomic stores or ORs) and taken
 * by the owner at its running thread's next safe point (run_thread in schedule.c). */
enum {
    CS_SWITCH = 1,             /* the timer's tick: switch threads */
    CS_PUSH   = 2,             /* a GC's leader: try to push work again (Note [Pushing work]) */
};

/* One sleeping thread of a capability's sleep heap (Note [Sleepers] in schedule.c): the key
 * is kept beside the thread, so sifting reads no heap object. `t` is a GC root. */
typedef struct SleepEntry {
    uint64_t wake;             /* ns on the monotonic clock */
    uint64_t seq;
    Value    t;
} SleepEntry;

struct Capability {
    /* --- written by its own OS thread ------------------------------------------------- */
    SmCap    sm;               /* the allocation fast path first (sm/storage.h) */
    Value    current;          /* the running thread, RTS_FALSE when none */
    int      context_switch;   /* CS_*: what the thread's next safe point owes the scheduler */
    Value    run_hd, run_tl;   /* run queue (threads linked by TSO_LINK) */
    size_t   run_len;
    size_t   run_movable;      /* of them, not TSO_LOCKED: what push_work may give away */
    SleepEntry *sleepers;      /* sleeping threads: a binary min-heap on (wake, seq) */
    size_t   n_sleepers, max_sleepers;
    uint64_t sleep_seq;        /* sleeps begun here: equal wake times wake in order */
    /* Local roots: a stack of Values that C code (the language layer's primitives) keeps
     * across allocations; reserved once (CAP_LROOTS_MAX) so it never moves, and so a pointer
     * into it stays valid while the GC updates what it holds. */
    Value   *lroots;
    size_t   nlroots;
    jmp_buf *thread_exit;      /* where rts_thread_error unwinds to */
    /* Wakes owed while this capability holds an object lock (Note [No wake under a lock]) */
    int      defer_wakes;      /* set by obj_lock, cleared by obj_unlock */
    unsigned n_wake_later;
    Capability *wake_later[CAP_WAKE_LATER_MAX];
    pthread_t os_thread;
    uint64_t obj_lock_acq, obj_lock_spins;  /* MVar/thread header locks taken here */
#if RTS_PATCH_SPIN_YIELD
    uint64_t obj_lock_yields;
#endif
    uint64_t threads_pushed;   /* threads given to idle capabilities */
    /* The IO manager (Note [IO manager] in io/iomgr.h): the back end, the threads blocked
     * in IO here (io_waiters[tag - 1] for an op's tag; RTS_FALSE when free or when its thread
     * stopped waiting; GC roots up to io_nwaiters), the free entries, and the tags of the
     * completions taken while idle and not yet handled. */
    struct IoBackend *io;
    Value    *io_waiters;
    unsigned  io_nwaiters, io_waiters_size;
    unsigned *io_free;
    unsigned  io_nfree;
    unsigned  io_ntags;
    uintptr_t io_tags[CAP_IO_DONE_MAX];

    /* --- written by other capabilities: the inbox ---------------------------------------- */
    _Alignas(RTS_CACHE_LINE) SpinLock inbox_lock;  /* guards inbox_hd/tl */
    Value    inbox_hd, inbox_tl;  /* threads made runnable here by other capabilities */
    unsigned inbox_n;          /* atomic: threads in the inbox */

    /* --- written by other capabilities: the idle sleep ----------------------------------- */
    /* The OS thread sleeps in its IO back end's wait until woken (by work, a GC, exit, a
     * completion, its next sleeper's time: Note [Idle in the ring] in io/iomgr.h). Whether
     * it is in the idle wait is its stop-the-world member's state word (stw_state(no) ==
     * STW_IDLE: Note [Capability states] in sync/stw.h), which the leader of a sync reads. */
    _Alignas(RTS_CACHE_LINE) int wake_pending;   /* under idle_mu */
    uint64_t gc_wakeups;       /* times a GC leader woke this capability from idle */
    int      io_sleeping;      /* under idle_mu: asleep in its IO back end's wait (io_wait) */
    pthread_mutex_t idle_mu;
};

extern Capability *cap_array;              /* cap_n_caps capabilities, cache-line aligned */
extern unsigned cap_n_caps;
extern __thread Capability *cap_self;      /* the capability this OS thread runs, or NULL */

/* Allocates cap_array and initialises the scheduler's part of each capability (the start-up
 * layer then gives each its storage: sm_cap_init(&cap->sm, no)). */
void cap_init_all(unsigned n);
/* This OS thread runs capability cap from now on. */
void cap_attach(Capability *cap);
/* Wakes the capability's OS thread if it is idle: a write to its IO back end's eventfd
 * when it sleeps there; else wake_pending keeps it from going to sleep.
 * Locks held: none (not cap's idle_mu); takes cap's idle_mu. */
void cap_wake(Capability *cap);
/* Gives thread t, which is to's (TSO_CAP), to capability `to` (through its inbox) and wakes
 * it. Locks held: none, or one object lock, under which the wake waits for obj_unlock (Note
 * [No wake under a lock] in objlock.h); takes to's inbox_lock, then (cap_wake) its idle_mu. */
void cap_send_thread(Capability *from, Capability *to, Value t);
/* The StwHooks.interrupt of sync/stw.h: makes capability `no`'s next heap check trap, and
 * wakes it (counted in gc_wakeups) when it is idle. Locks held: none; takes no's idle_mu
 * when it is idle (cap_wake). */
void cap_interrupt(unsigned no);
/* The timer's tick (os/timer.h): every capability switches threads at its next safe point. */
void cap_tick(void);

/* Local roots (see the lroots field): push returns the slot, which the GC keeps current;
 * release pops back to a mark taken before. */
void cap_lroots_overflow(Capability *cap) __attribute__((noreturn));
static inline size_t cap_lroots_mark(Capability *cap) { return cap->nlroots; }
static inline Value *cap_lroot(Capability *cap, Value v)
{
    if (__builtin_expect(cap->nlroots == CAP_LROOTS_MAX, 0))
        cap_lroots_overflow(cap);
    Value *p = &cap->lroots[cap->nlroots++];
    *p = v;
    return p;
}
static inline void cap_lroots_release(Capability *cap, size_t mark) { cap->nlroots = mark; }

#endif
