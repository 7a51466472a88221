/* Capabilities: a virtual CPU = an OS worker thread + a run queue of lightweight threads +
 * a nursery + a remembered set + a GC thread's state (sm/gc.h).
 *
 * Invariants:
 *  - hp lies in cur_block: cur_block->start <= hp <= hplim_real, and the nursery blocks
 *    before cur_block on the ->link chain are full (their ->free is final); cur_block->free
 *    is only brought up to date (= hp) at a GC or a block switch.
 *  - hplim is either hplim_real or NULL: another OS thread (the timer, a GC leader) stores
 *    NULL to make the next heap check fail and so reach a safe point (GHC's HpLim trick).
 *  - every object in remset is old (generation 1), mutable and has OBJ_DIRTY set; an old
 *    object with OBJ_DIRTY is in exactly one capability's remset.
 *  - a lightweight thread is on at most one queue (a run queue, an inbox, a sleep queue, an
 *    MVar's queue, a thread's joiners) at a time, linked through its TSO_LINK field.
 *  - the run queue and the sleep queue belong to the capability's own OS thread; other
 *    capabilities hand it threads only through its inbox (inbox_lock).
 *  - a thread runs only on the capability named by its TSO_CAP; only the capability that
 *    owns a runnable thread changes TSO_CAP (when it pushes the thread to another).
 */
#ifndef RTS_SCHED_CAPABILITY_H
#define RTS_SCHED_CAPABILITY_H

#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include "rtslab.h"
#include "sm/block.h"
#include "sync/spinlock.h"

#define CAP_SAVE_MAX 8
#define CAP_WAKE_LATER_MAX 8
#define CAP_LROOTS_MAX ((size_t)1 << 21)   /* 16 MiB of address space, touched as used */

typedef struct Capability Capability;
struct GCThread;

struct Capability {
    /* mutator fast path */
    Value   *hp;               /* next free word of the current nursery block */
    Value   *hplim;            /* end of it, or NULL when the heap check must trap */
    Value   *hplim_real;
    bdescr  *cur_block;
    bdescr  *nursery;          /* chain of nursery blocks (gen 0, BF_NURSERY) */
    size_t   nursery_blocks;
    size_t   large_blocks_since_gc;  /* young large objects count against the nursery */
    bdescr  *large_young;      /* young large objects allocated here */

    int      context_switch;   /* set by the timer: switch threads at the next safe point */

    Value    current;          /* the running thread, RTS_FALSE when none */
    Value    run_hd, run_tl;   /* run queue (threads linked by TSO_LINK) */
    size_t   run_len;
    Value    sleep_q;          /* sleeping threads, earliest wake-up first */

    SpinLock inbox_lock;       /* guards inbox_hd/tl */
    Value    inbox_hd, inbox_tl;  /* threads made runnable here by other capabilities */
    unsigned inbox_n;          /* atomic: threads in the inbox */

    /* idle sleep: the OS thread waits on idle_cv until woken (by work, a GC, exit) */
    pthread_mutex_t idle_mu;
    pthread_cond_t  idle_cv;
    int      wake_pending;     /* under idle_mu */
    int      idle;             /* atomic: in the idle wait */
    pthread_t os_thread;
    /* Wakes owed while this capability holds an object lock (Note [No wake under a lock]) */
    Capability *wake_later[CAP_WAKE_LATER_MAX];
    unsigned n_wake_later;
    int      defer_wakes;      /* set by obj_lock, cleared by obj_unlock */

    Value   *remset;           /* remembered set: old mutable objects written since a GC */
    size_t   remset_n, remset_cap;

    Value    save[CAP_SAVE_MAX];  /* values an allocating call protects across a GC */
    unsigned nsave;
    /* Local roots: a stack of Values that C code (the language layer's primitives) keeps
     * across allocations; reserved once (CAP_LROOTS_MAX) so it never moves, and so a pointer
     * into it stays valid while the GC updates what it holds. */
    Value   *lroots;
    size_t   nlroots;

    uint32_t stw_arrived;      /* epoch of the last stop-the-world sync it arrived at */
    struct GCThread *gct;      /* this capability's GC thread state */
    unsigned gc_roots_by;      /* index of the GC thread that scans its roots this GC */

    jmp_buf *thread_exit;      /* where rts_thread_error unwinds to */
    unsigned no;

    /* statistics */
    uint64_t bytes_allocated;  /* in nursery blocks already left behind, and large objects */
    uint64_t gc_wakeups;       /* times a GC leader woke this capability from idle */
    uint64_t obj_lock_acq, obj_lock_spins;   /* MVar/thread header locks taken here */
    uint64_t threads_pushed;   /* threads given to idle capabilities */
};

extern Capability *caps;
extern unsigned n_caps;
extern __thread Capability *my_cap;       /* the capability this OS thread runs, or NULL */

void cap_init(Capability *cap, unsigned no);
void cap_remember(Capability *cap, Value obj);
/* Wakes the capability's OS thread if it is idle (a syscall). */
void cap_wake(Capability *cap);
/* Gives thread t to capability `to` (through its inbox) and wakes it. */
void cap_send_thread(Capability *from, Capability *to, Value t);

/* Locks on a heap object's header (MVars, threads); never held across a safe point.
 *
 * Note [No wake under a lock]
 * Handing a thread to another capability ends in cap_wake, a mutex and a condition-variable
 * signal: system calls, after which the kernel often runs the woken OS thread at once. Made
 * while holding an object lock, that parks the holder with the lock held, and every other
 * capability that wants the MVar spins (the baseline's spinlocks never yield) until the
 * holder runs again: threadring at -N4 on 2 cores spent 97% of its time in obj_lock and
 * took ~1.8 ms per hand-off. So between obj_lock and obj_unlock, cap_send_thread queues the
 * thread in the inbox at once but only records the wake (cap->wake_later, or wakes at once
 * when that is full), and obj_unlock makes the owed wakes after releasing the lock. A
 * capability holds at most one object lock at a time. */
void obj_lock(Capability *cap, Value obj);
void obj_unlock(Capability *cap, Value obj);

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
