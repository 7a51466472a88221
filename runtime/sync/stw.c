/* The stop-the-world protocol: see Note [Stop the world] in stw.h. */
#include "sync/stw.h"
#include "sync/wait.h"
#include "sm/gc.h"
#include "rts/rts.h"
#include "trace/eventlog.h"
#include <unistd.h>

Stw stw;

static inline uint32_t load(uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline bool reached(uint32_t *p, uint32_t epoch) { return (int32_t)(load(p) - epoch) >= 0; }

bool stw_try_lead(Capability *cap, SyncKind kind)
{
    uint32_t w = load(&stw.word);
    if ((w & 3) != SYNC_NONE)
        return false;
    uint32_t nw = (((w >> 2) + 1) << 2) | kind;
    if (!__atomic_compare_exchange_n(&stw.word, &w, nw, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return false;
    __atomic_store_n(&stw.leader, cap, __ATOMIC_RELEASE);
    __atomic_store_n(&stw.done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cap->stw_arrived, nw >> 2, __ATOMIC_RELEASE);
    return true;
}

bool stw_is_leader(Capability *cap)
{
    return stw_pending() && __atomic_load_n(&stw.leader, __ATOMIC_ACQUIRE) == cap;
}

struct arrival { Capability *cap; uint32_t epoch; };

static bool has_arrived(void *arg)
{
    struct arrival *a = arg;
    return reached(&a->cap->stw_arrived, a->epoch);
}

uint64_t stw_stop_all(Capability *leader)
{
    uint64_t t0 = rts_now_ns();
    uint32_t epoch = load(&stw.word) >> 2;
    for (unsigned i = 0; i < n_caps; i++) {
        Capability *c = &caps[i];
        if (c == leader) continue;
        __atomic_store_n(&c->hplim, (Value *)NULL, __ATOMIC_RELAXED);
        if (__atomic_load_n(&c->idle, __ATOMIC_ACQUIRE)) {
            c->gc_wakeups++;
            cap_wake(c);
        }
    }
    /* The baseline leader checks each capability in turn. */
    for (unsigned i = 0; i < n_caps; i++) {
        if (&caps[i] == leader) continue;
        struct arrival a = { &caps[i], epoch };
        sync_wait(&caps[i].stw_arrived, has_arrived, &a, WAIT_ARRIVAL);
    }
    uint64_t ns = rts_now_ns() - t0;
    stw.syncs++;
    stw.stw_ns_total += ns;
    if (ns > stw.stw_ns_max) stw.stw_ns_max = ns;
    return ns;
}

void stw_start_gc(bool major)
{
    __atomic_store_n(&stw.major, major, __ATOMIC_RELAXED);
    __atomic_store_n(&stw.go, load(&stw.word) >> 2, __ATOMIC_RELEASE);
    sync_wake(&stw.go);
}

void stw_gc_thread_done(void)
{
    __atomic_fetch_add(&stw.done, 1, __ATOMIC_ACQ_REL);
    sync_wake(&stw.done);
}

struct count { uint32_t *word; uint32_t n; };

static bool count_reached(void *arg)
{
    struct count *c = arg;
    return load(c->word) >= c->n;
}

void stw_await_gc_threads(unsigned n_followers)
{
    struct count c = { &stw.done, n_followers };
    sync_wait(&stw.done, count_reached, &c, WAIT_GC_DONE);
}

/* The sync ends (kind NONE) before `released` is published: a follower that sees itself
 * released must not find the same sync still pending and follow it a second time. */
void stw_release(void)
{
    uint32_t w = load(&stw.word);
    __atomic_store_n(&stw.word, w & ~3u, __ATOMIC_RELEASE);
    __atomic_store_n(&stw.released, w >> 2, __ATOMIC_RELEASE);
    sync_wake(&stw.released);
}

struct epoch_wait { uint32_t *word; uint32_t epoch; };

static bool epoch_reached(void *arg)
{
    struct epoch_wait *e = arg;
    return reached(e->word, e->epoch);
}

void stw_follow(Capability *cap)
{
    uint32_t w = load(&stw.word);
    SyncKind kind = (SyncKind)(w & 3);
    uint32_t epoch = w >> 2;
    if (kind == SYNC_NONE || load(&cap->stw_arrived) == epoch)
        return;
    bool in_mutator = cap->current != RTS_FALSE;
    if (in_mutator)
        trace_end(SPAN_MUTATOR);
    trace_begin(SPAN_ENTER_BARRIER, 0);
    __atomic_store_n(&cap->stw_arrived, epoch, __ATOMIC_RELEASE);
    sync_wake(&cap->stw_arrived);
    if (kind == SYNC_EXIT)
        for (;;)
            pause();                            /* the leader ends the process */
    struct epoch_wait go = { &stw.go, epoch };
    sync_wait(&stw.go, epoch_reached, &go, WAIT_ENTER);
    trace_end(SPAN_ENTER_BARRIER);
    SpanKind gc = __atomic_load_n(&stw.major, __ATOMIC_RELAXED) ? SPAN_MAJOR_GC : SPAN_MINOR_GC;
    trace_begin(gc, 0);
    trace_begin(SPAN_GC_WORK, 0);
    bool worked = gc_follower_work(cap);
    trace_end(SPAN_GC_WORK);
    if (worked)
        stw_gc_thread_done();
    trace_begin(SPAN_LEAVE_BARRIER, 0);
    struct epoch_wait rel = { &stw.released, epoch };
    sync_wait(&stw.released, epoch_reached, &rel, WAIT_LEAVE);
    trace_end(SPAN_LEAVE_BARRIER);
    trace_end(gc);
    if (in_mutator)
        trace_begin(SPAN_MUTATOR, (uint64_t)rts_thread_id(cap->current));
}
