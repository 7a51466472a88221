/* The stop-the-world protocol: see Note [Stop the world] in stw.h. */
#include <stdlib.h>
#include <unistd.h>
#include "sync/stw.h"
#if RTS_PATCH_IDLE_OPTOUT
#include "sync/stw_idle_optout.h"
#endif
#include "sync/wait.h"
#include "base/util.h"
#include "trace/eventlog.h"

StwSync stw_sync;
static StwMember *members;
static unsigned stw_n_caps;
static unsigned *taking_part;    /* stw_stop_all's answer: written by leaders only */
static StwHooks hooks;
static StwStats totals;          /* written by leaders only */

static inline uint32_t load(uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline bool reached(uint32_t *p, uint32_t epoch) { return stw_epoch_reached(load(p), epoch); }

void stw_init(unsigned n, const StwHooks *h)
{
    members = aligned_alloc(RTS_CACHE_LINE, n * sizeof *members);
    taking_part = malloc(n * sizeof *taking_part);
    if (!members || !taking_part) base_fatal("out of memory (stop-the-world members)");
    for (unsigned i = 0; i < n; i++) {
        members[i].arrived = 0;
        members[i].state = STW_RUNNING;
    }
    stw_n_caps = n;
#if RTS_PATCH_FUTEX_BARRIER
    stw_sync.arriving = n - 1;                  /* Note [Arrival count] in stw.h */
#endif
    hooks = *h;
#if RTS_PATCH_IDLE_OPTOUT
    stw_optout_init(n);                         /* Note [Idle opt-out] in stw.h */
#endif
    const char *start = getenv("RTSLAB_TEST_SYNC_NUMBER");
    if (start && *start) {
        char *end;
        unsigned long v = strtoul(start, &end, 0);
        if (*end || v > UINT32_MAX)
            base_fatal("RTSLAB_TEST_SYNC_NUMBER=%s: not a 32-bit number", start);
        stw_debug_set_sync_number((uint32_t)v);
    }
}

bool stw_try_lead(unsigned me, SyncKind kind)
{
    uint32_t w = load(&stw_sync.word);
    if ((w & 3) != SYNC_NONE)
        return false;
    uint32_t nw = (((w >> 2) + 1) << 2) | kind;
    if (!__atomic_compare_exchange_n(&stw_sync.word, &w, nw, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    __atomic_store_n(&stw_sync.leader, me, __ATOMIC_RELEASE);
    __atomic_store_n(&stw_sync.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&members[me].arrived, nw >> 2, __ATOMIC_RELEASE);
    return true;
}

bool stw_is_leader(unsigned me)
{
    return stw_pending() && __atomic_load_n(&stw_sync.leader, __ATOMIC_ACQUIRE) == me;
}

uint32_t stw_state(unsigned no)
{
    return __atomic_load_n(&members[no].state, __ATOMIC_SEQ_CST);
}

void stw_set_state(unsigned no, uint32_t state)
{
    /* Note [Capability states]: its owner moves it between RUNNING and IDLE */
    RTS_ASSERT(no < stw_n_caps && (state == STW_RUNNING || state == STW_IDLE));
#if RTS_PATCH_IDLE_OPTOUT
    state = stw_optout_state(state);            /* IDLE carries a sync number */
#endif
    __atomic_store_n(&members[no].state, state, __ATOMIC_SEQ_CST);
}

#if RTS_PATCH_IDLE_OPTOUT
StwMember *stw_member(unsigned no) { return &members[no]; }   /* for sync/stw_idle_optout.c */
#endif

bool stw_idle(unsigned no)
{
    uint32_t s = STW_STATE(stw_state(no));
#if RTS_PATCH_IDLE_OPTOUT
    if (s == STW_OPTED_OUT) return true;        /* asleep too (Note [Idle opt-out]) */
#endif
    return s == STW_IDLE;
}

#if RTS_PATCH_FUTEX_BARRIER
static bool all_arrived(void *arg)
{
    (void)arg;
    return load(&stw_sync.arriving) == 0;
}
#else
struct arrival { uint32_t *word; uint32_t epoch; };

static bool has_arrived(void *arg)
{
    struct arrival *a = arg;
    return reached(a->word, a->epoch);
}
#endif

/* The sync being stopped, between stw_interrupt_all and stw_await_arrivals: the leader's. */
static uint64_t request_ns;
static uint32_t request_epoch;
static unsigned n_taking_part;
static bool ran_on;              /* the leader ran on during this sync (stw_defer) */

void stw_interrupt_all(unsigned leader, StwTakingPart *part)
{
    RTS_ASSERT(stw_is_leader(leader));          /* Note [Stop the world]: step 1 */
    request_ns = base_now_ns();
    uint32_t epoch = load(&stw_sync.word) >> 2;
    request_epoch = epoch;
    ran_on = false;
    unsigned n_part = 0;
    taking_part[n_part++] = leader;
    for (unsigned i = 0; i < stw_n_caps; i++) {
        if (i == leader) continue;
#if RTS_PATCH_IDLE_OPTOUT
        if (stw_optout_leave_out(i, epoch)) continue;   /* Note [Idle opt-out] in stw.h */
#endif
        taking_part[n_part++] = i;
        hooks.interrupt(i);
    }
    n_taking_part = n_part;
#if RTS_PATCH_FUTEX_BARRIER
    /* Note [Arrival count] in stw.h: members that take no part never arrive */
    unsigned out = stw_n_caps - n_part;
    if (out && __atomic_sub_fetch(&stw_sync.arriving, out, __ATOMIC_ACQ_REL) == 0)
        sync_wake(&stw_sync.arriving, WAIT_ARRIVAL);
#endif
    if (part) {
        part->n = n_part;
        part->no = taking_part;
    }
}

bool stw_all_arrived(void)
{
#if RTS_PATCH_FUTEX_BARRIER
    return all_arrived(NULL);
#else
    for (unsigned k = 1; k < n_taking_part; k++)
        if (!reached(&members[taking_part[k]].arrived, request_epoch))
            return false;
    return true;
#endif
}

void stw_defer(void)
{
    ran_on = true;
    /* Against the follower's arrival (stw_follow): each stores, fences, then reads the
     * other's word, so either the leader sees the arrival or the follower sees the flag. */
    __atomic_store_n(&stw_sync.deferred, 1, __ATOMIC_SEQ_CST);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint64_t stw_await_arrivals(void)
{
    RTS_ASSERT(stw_pending());
    uint64_t t0 = base_now_ns();
    if (ran_on)                 /* it waits now: the arrivals need not interrupt it */
        __atomic_store_n(&stw_sync.deferred, 0, __ATOMIC_SEQ_CST);
#if RTS_PATCH_FUTEX_BARRIER
    /* Note [Futex barrier] (sync/wait_futex_barrier.c): the followers count themselves down
     * in one word and the last to arrive wakes the leader, which sleeps on that word alone. */
    sync_wait(&stw_sync.arriving, all_arrived, NULL, WAIT_ARRIVAL);
#else
    /* The baseline leader checks each capability that takes part in turn. */
    for (unsigned k = 1; k < n_taking_part; k++) {
        unsigned i = taking_part[k];
        struct arrival a = { &members[i].arrived, request_epoch };
        sync_wait(&members[i].arrived, has_arrived, &a, WAIT_ARRIVAL);
    }
#endif
    RTS_ASSERT(stw_all_arrived());              /* the enter barrier is complete */
    uint64_t now = base_now_ns();
    /* A leader that ran on waited only from here; one that did not, since its request. */
    uint64_t ns = now - (ran_on ? t0 : request_ns);
    totals.syncs++;
    totals.stw_ns_total += ns;
    if (ns > totals.stw_ns_max) totals.stw_ns_max = ns;
    if (ran_on) {
        totals.deferred_syncs++;
        totals.deferred_ns_total += now - request_ns;
    }
    return ns;
}

uint64_t stw_stop_all(unsigned leader, StwTakingPart *part)
{
    stw_interrupt_all(leader, part);
    return stw_await_arrivals();
}

void stw_start_gc(bool major)
{
    /* Note [Stop the world]: step 3, once every member that takes part has arrived */
    RTS_ASSERT((load(&stw_sync.word) & 3) == SYNC_GC && stw_all_arrived());
    __atomic_store_n(&stw_sync.major, major, __ATOMIC_RELAXED);
    __atomic_store_n(&stw_sync.go, load(&stw_sync.word) >> 2, __ATOMIC_RELEASE);
    sync_wake(&stw_sync.go, WAIT_ENTER);
}

void stw_gc_thread_done(void)
{
    __atomic_fetch_add(&stw_sync.done, 1, __ATOMIC_ACQ_REL);
    sync_wake(&stw_sync.done, WAIT_GC_DONE);
}

struct count { uint32_t *word; uint32_t n; };

static bool count_reached(void *arg)
{
    struct count *c = arg;
    return load(c->word) >= c->n;
}

void stw_await_gc_threads(unsigned n_followers)
{
    /* the GC threads are picked among the members that take part (Note [Stop the world]) */
    RTS_ASSERT(n_followers < n_taking_part);
    struct count c = { &stw_sync.done, n_followers };
    sync_wait(&stw_sync.done, count_reached, &c, WAIT_GC_DONE);
}

/* The sync ends (kind NONE) before `released` is published: a follower that sees itself
 * released must not find the same sync still pending and follow it a second time. */
void stw_release(void)
{
    uint32_t w = load(&stw_sync.word);
    RTS_ASSERT((w & 3) == SYNC_GC);             /* a SYNC_EXIT never releases */
#if RTS_PATCH_FUTEX_BARRIER
    /* Every follower has arrived (counted down) already; the next sync's cannot start
     * counting before the word below says this one is over (Note [Arrival count]). */
    __atomic_store_n(&stw_sync.arriving, stw_n_caps - 1, __ATOMIC_RELAXED);
#endif
    __atomic_store_n(&stw_sync.word, w & ~3u, __ATOMIC_RELEASE);
    __atomic_store_n(&stw_sync.released, w >> 2, __ATOMIC_RELEASE);
    sync_wake(&stw_sync.released, WAIT_LEAVE);
}

struct epoch_wait { uint32_t *word; uint32_t epoch; };

static bool epoch_reached(void *arg)
{
    struct epoch_wait *e = arg;
    return reached(e->word, e->epoch);
}

/* The leave barrier of sync `epoch`. */
static void await_release(uint32_t epoch)
{
    trace_begin(SPAN_LEAVE_BARRIER, 0);
    struct epoch_wait rel = { &stw_sync.released, epoch };
    sync_wait(&stw_sync.released, epoch_reached, &rel, WAIT_LEAVE);
    trace_end(SPAN_LEAVE_BARRIER);
}

void stw_follow(unsigned me)
{
    uint32_t w = load(&stw_sync.word);
    SyncKind kind = (SyncKind)(w & 3);
    uint32_t epoch = w >> 2;
    if (kind == SYNC_NONE || load(&members[me].arrived) == epoch)
        return;
    /* Note [Counters that wrap]: every member's `arrived` is the last sync, one before this */
    RTS_ASSERT(((epoch - load(&members[me].arrived)) & STW_EPOCH_MASK) == 1);
    uint64_t thread = 0;
    bool in_mutator = trace_suspend_mutator(&thread);
    trace_begin(SPAN_ENTER_BARRIER, 0);
#if RTS_PATCH_FUTEX_BARRIER
    /* Only the last to arrive wakes the leader (Note [Futex barrier] in
     * sync/wait_futex_barrier.c). */
    __atomic_store_n(&members[me].arrived, epoch, __ATOMIC_RELEASE);
    if (__atomic_sub_fetch(&stw_sync.arriving, 1, __ATOMIC_ACQ_REL) == 0)
        sync_wake(&stw_sync.arriving, WAIT_ARRIVAL);
#else
    __atomic_store_n(&members[me].arrived, epoch, __ATOMIC_RELEASE);
    sync_wake(&members[me].arrived, WAIT_ARRIVAL);
#endif
    /* Note [Deferred GC requests] in sm/gc.h: a leader that runs on is told (stw_defer) */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&stw_sync.deferred, __ATOMIC_SEQ_CST))
        hooks.interrupt(__atomic_load_n(&stw_sync.leader, __ATOMIC_ACQUIRE));
    if (kind == SYNC_EXIT)
        for (;;)
            pause();                            /* the leader ends the process */
    struct epoch_wait go = { &stw_sync.go, epoch };
    sync_wait(&stw_sync.go, epoch_reached, &go, WAIT_ENTER);
    trace_end(SPAN_ENTER_BARRIER);
#if RTS_PATCH_IDLE_OPTOUT
    bool left = stw_optout_at_go(me, epoch);    /* Note [Idle opt-out] in stw.h */
#endif
    SpanKind gc = __atomic_load_n(&stw_sync.major, __ATOMIC_RELAXED) ? SPAN_MAJOR_GC : SPAN_MINOR_GC;
    trace_begin(gc, 0);
    trace_begin(SPAN_GC_WORK, 0);
    bool worked = hooks.follower_work(me);
    trace_end(SPAN_GC_WORK);
    if (worked)
        stw_gc_thread_done();
#if RTS_PATCH_IDLE_OPTOUT
    if (!left)                  /* opted out: no leave barrier (Note [Idle opt-out]) */
#endif
    await_release(epoch);
    trace_end(gc);
    if (in_mutator)
        trace_begin(SPAN_MUTATOR, thread);
}

void stw_stats(StwStats *out)
{
    *out = totals;
}

void stw_debug_set_sync_number(uint32_t n)
{
    if (stw_pending())
        base_fatal("stw_debug_set_sync_number: a sync is in progress");
    n &= STW_EPOCH_MASK;
    for (unsigned i = 0; i < stw_n_caps; i++)
        __atomic_store_n(&members[i].arrived, n, __ATOMIC_RELAXED);
#if RTS_PATCH_IDLE_OPTOUT
    stw_optout_set_sync_number(n);
#endif
    __atomic_store_n(&stw_sync.go, n, __ATOMIC_RELAXED);
    __atomic_store_n(&stw_sync.released, n, __ATOMIC_RELAXED);
    __atomic_store_n(&stw_sync.word, n << 2 | SYNC_NONE, __ATOMIC_RELEASE);
}
