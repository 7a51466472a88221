#include "rtslab_config.h"
#if RTS_PATCH_IDLE_OPTOUT
/* The idle-optout patch's part of the stop-the-world protocol (Note [Idle opt-out] in
 * stw.h): the leader leaving opted-out members out, the owner opting out at a go and
 * rejoining, and their counters. sync/stw.c calls it at the points where the patch acts
 * (the stw_optout_* hooks, declared in stw_idle_optout.h) and lends it its members
 * (stw_member). */
#include <stdlib.h>
#include "sync/stw.h"
#include "sync/stw_idle_optout.h"
#include "sync/wait.h"
#include "base/util.h"
#include "trace/eventlog.h"

/* As in stw.c. */
static inline uint32_t load(uint32_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline bool reached(uint32_t *p, uint32_t epoch) { return stw_epoch_reached(load(p), epoch); }

/* A member's words of the patch, on a cache line of their own: written by its owner only. */
typedef struct OptoutMember {
    _Alignas(RTS_CACHE_LINE) uint64_t opt_outs, rejoins, rejoin_waits;
    bool opt_out_at_go;      /* stw_follow_idle's argument, for stw_optout_at_go */
} OptoutMember;

unsigned stw_idle_optout_gcs = 1;             /* -qi1 (stw.h) */

static OptoutMember *optout;
static unsigned optout_n_caps;
static uint32_t optout_epoch;    /* the last sync that left a member out: leaders only */
static uint64_t optout_syncs, opted_out;                  /* leaders only */

void stw_optout_init(unsigned n)
{
    optout = aligned_alloc(RTS_CACHE_LINE, n * sizeof *optout);
    if (!optout) base_fatal("out of memory (stop-the-world members)");
    for (unsigned i = 0; i < n; i++)
        optout[i] = (OptoutMember){ .opt_outs = 0 };
    optout_n_caps = n;
}

/* IDLE carries the number of the sync in progress or the last one, not 0: opt_out compares it
 * with a sync's, modulo 2^30 (Note [Counters that wrap]). */
uint32_t stw_optout_state(uint32_t state)
{
    if (state == STW_IDLE)
        state |= load(&stw_sync.word) & ~3u;
    return state;
}

/* The leader of GC sync `epoch` leaves member `no` out when it finds it opted out (a CAS,
 * against the owner's in stw_rejoin). */
bool stw_optout_leave_out(unsigned no, uint32_t epoch)
{
    if (!stw_idle_optout_gcs || (load(&stw_sync.word) & 3) != SYNC_GC)
        return false;                           /* -qi0, or an exit: everyone takes part */
    StwMember *m = stw_member(no);
    uint32_t s = load(&m->state);
    for (;;) {
        uint32_t st = STW_STATE(s), to;
        if (st == STW_OPTED_OUT)
            to = epoch << 2 | STW_OPTED_OUT;
        else if (st == STW_IDLE)
            to = epoch << 2 | STW_IDLE;         /* counted on: no opt-out before this go */
        else
            return false;
        if (__atomic_compare_exchange_n(&m->state, &s, to, false, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            break;
    }
    if (STW_STATE(s) == STW_IDLE)
        return false;
    /* Left out, it counts as arrived (as it would if it took part), so that its `arrived`,
     * which this leader and its owner's stw_follow compare, stays within one sync of the
     * sync number however long it stays out (Note [Counters that wrap]). Its owner writes
     * the word only once it has rejoined, after this sync's release. */
    __atomic_store_n(&m->arrived, epoch, __ATOMIC_RELEASE);
    opted_out++;
    if (optout_epoch != epoch) {
        optout_epoch = epoch;
        optout_syncs++;
    }
    return true;
}

/* At the go of sync `epoch`, which it follows from the idle wait: opts out (until `epoch` is
 * released, it may not touch the heap), unless a later leader has stamped it IDLE with its
 * own epoch (it saw this go late, and counts on it). Returns whether it opted out. */
static bool opt_out(unsigned me, uint32_t epoch)
{
    StwMember *m = stw_member(me);
    uint32_t s = load(&m->state);
    while (STW_STATE(s) == STW_IDLE && stw_epoch_reached(epoch, STW_EPOCH(s)))
        if (__atomic_compare_exchange_n(&m->state, &s, epoch << 2 | STW_OPTED_OUT,
                                        false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            __atomic_fetch_add(&optout[me].opt_outs, 1, __ATOMIC_RELAXED);
            return true;
        }
    return false;
}

/* Opted out at the go, a follower skips the leave barrier: it waits for this release only if
 * it rejoins first (stw_rejoin), so the next sync never finds it still in this one's wait. */
bool stw_optout_at_go(unsigned me, uint32_t epoch)
{
    bool left = optout[me].opt_out_at_go && opt_out(me, epoch);
    if (left)
        trace_optout(false, false);
    return left;
}

bool stw_follow_idle(unsigned me, bool out)
{
    optout[me].opt_out_at_go = out;
    stw_follow(me);
    optout[me].opt_out_at_go = false;
    return STW_STATE(stw_state(me)) == STW_OPTED_OUT;
}

struct released_wait { uint32_t epoch; };

static bool released_reached(void *arg)
{
    struct released_wait *r = arg;
    return reached(&stw_sync.released, r->epoch);
}

void stw_rejoin(unsigned me)
{
    StwMember *m = stw_member(me);
    uint32_t s = load(&m->state);
    for (;;) {
        if (STW_STATE(s) != STW_OPTED_OUT)
            base_fatal("capability %u rejoins in state %u", me, (unsigned)STW_STATE(s));
        if (__atomic_compare_exchange_n(&m->state, &s, (s & ~3u) | STW_WAKING,
                                        false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            break;
    }
    __atomic_fetch_add(&optout[me].rejoins, 1, __ATOMIC_RELAXED);
    struct released_wait r = { STW_EPOCH(s) };
    bool waited = !released_reached(&r);
    if (waited) {
        /* left out of a GC in progress: its heap, nursery and roots are the GC's until the
         * release (which wakes WAIT_LEAVE waiters on `released`) */
        __atomic_fetch_add(&optout[me].rejoin_waits, 1, __ATOMIC_RELAXED);
        sync_wait(&stw_sync.released, released_reached, &r, WAIT_LEAVE);
    }
    trace_optout(true, waited);
    __atomic_store_n(&m->state, STW_RUNNING, __ATOMIC_SEQ_CST);
}

void stw_optout_set_sync_number(uint32_t n)
{
    optout_epoch = n;
}

void stw_optout_stats(StwOptoutStats *out)
{
    *out = (StwOptoutStats){ .optout_syncs = optout_syncs, .opted_out = opted_out };
    for (unsigned i = 0; i < optout_n_caps; i++) {
        out->opt_outs += __atomic_load_n(&optout[i].opt_outs, __ATOMIC_RELAXED);
        out->rejoins += __atomic_load_n(&optout[i].rejoins, __ATOMIC_RELAXED);
        out->rejoin_waits += __atomic_load_n(&optout[i].rejoin_waits, __ATOMIC_RELAXED);
    }
}
#endif
