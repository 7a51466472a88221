/* The stop-the-world torture (runtime/sync/stw.c with fake members), which every way of
 * waiting (sync/wait.h) must pass: testsuite/unit/test_stw.c runs it, and so may a test of
 * another wait, then check that wait's own counters (sync_wait_stats).
 *
 * MEMBERS pthreads (2..STW_TORTURE_MAX, on however few cores) are the members. Between safe
 * points each does "mutator work" (counts in ops[me], with mutating[me] set meanwhile) and a
 * random delay (mostly spins, sometimes a yield, rarely a sleep of up to 50 us, so that a
 * member is off the CPU when it is wanted and the others must sleep for it); at a safe point
 * it calls stw_follow. The hooks are the torture's: interrupt counts the calls per member;
 * follower_work records the round it ran in and returns true (a GC thread, which yields a
 * while first and counts itself finished) for a different subset of the followers each
 * round. For each sync the leader checks, from what it can observe:
 *   - its election: stw_pending, stw_is_leader, the epoch one more than the last sync's, and
 *     stw_try_lead failing (for itself and another member) while its sync is pending;
 *   - stw_stop_all: every other member interrupted exactly once and itself never; every
 *     follower arrived (stw_all_arrived), and every member takes part (the leader first): none
 *     is mutating and none makes progress until the release; each did its work of its
 *     previous sync exactly once (and none yet of this one);
 *   - stw_await_gc_threads(k) returns only once the k GC-thread followers finished;
 * and each follower checks that its work runs only after the leader's go (stw_start_gc),
 * at most once per sync, and that it leaves stw_follow only after stw_release.
 *   basic:  member 0 leads ROUNDS_BASIC syncs, the others only follow.
 *   stress: every member wants a GC now and then and tries to lead, as gc_collect does (a
 *           loser follows the sync in progress and tries again) until ROUNDS syncs in all.
 * Totals at the end: each member's work calls equal the syncs it followed, stw_stats counts
 * every sync. A broken protocol or wait hangs (the driver's timeout fails it) or fails
 * these checks (check.h: the caller ends with check_done()).
 *
 * START, if not NULL (strtoul's base 0), is the number of the sync before the first
 * (stw_debug_set_sync_number), so that the syncs cross the wrap of the 30-bit sync number
 * (Note [Counters that wrap] in sync/stw.h) where START is just below it. The last line
 * printed counts the wraps and what passed a barrier early: follower work before its go,
 * mutator work while the world was stopped, and leaving stw_follow before the release (all
 * 0, or the checks above have failed).
 *
 * A header of static functions, as check.h is, so that its checks count in check_done of
 * the test that includes it. */
#ifndef RTSLAB_STW_TORTURE_H
#define RTSLAB_STW_TORTURE_H

#include "sync/stw.h"
#include "unit/check.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { STW_TORTURE_MAX = 16, NMAX = STW_TORTURE_MAX, ROUNDS_BASIC = 300, MUTATOR_OPS = 64 };
static unsigned N;                       /* the members */
static unsigned rounds_total;            /* the syncs to run, ROUNDS_BASIC of them basic */

#define LOAD(p)     __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v)   __atomic_fetch_add((p), (v), __ATOMIC_ACQ_REL)

/* Written by the members themselves. */
static uint64_t ops[NMAX];                  /* mutator work done */
static int      mutating[NMAX];             /* between safe points */
static unsigned last_work_round[NMAX];      /* the round of its latest follower_work */
static unsigned work_total[NMAX];           /* follower_work calls */

/* Written by the leader of the sync in progress (leaders are serialised by the protocol). */
static unsigned interrupts[NMAX];           /* in this round, by member (reset before release) */
static unsigned rounds;                  /* syncs completed or in progress */
static unsigned last_followed[NMAX];        /* the last round each member followed */
static unsigned followed_total[NMAX];       /* rounds each member followed */
static uint32_t last_epoch;
static unsigned cur_leader = NMAX;     /* none */
static unsigned go_round;                /* round whose go was given (set just before it) */
static unsigned released_round;          /* round released (set just before the release) */
static unsigned gc_finished;             /* GC-thread followers of this round done working */
static bool     stop;                    /* the members leave their loops */
static unsigned stop_round;              /* the stress's last round sets `stop` before its release */

static unsigned leads[NMAX];                /* syncs each member led (stress) */
static unsigned lost_elections;          /* stw_try_lead that failed (stress) */
static unsigned wraps;                   /* syncs numbered 0 (the one after 2^30 - 1) */

/* What passed a barrier early (each also fails a check). */
static uint64_t early_work;              /* follower_work before its sync's go */
static uint64_t stopped_ops;             /* mutator work done while the world was stopped */
static uint64_t early_leaves;            /* stw_follow returned before the release */

/* The followers of round r that are GC threads. */
static bool is_gc_thread(unsigned no, unsigned r) { return (r * 5 + no * 3) % 4 != 0; }

static void fake_interrupt(unsigned no)
{
    CHECK(no < N);
    CHECK(no != LOAD(&cur_leader));
    ADD(&interrupts[no], 1);
}

static bool fake_follower_work(unsigned no)
{
    unsigned r = LOAD(&go_round);
    /* Only after go: the leader sets go_round to this round just before stw_start_gc, so a
     * follower running early sees the previous round's, which it has worked in already. */
    if (!CHECK(r > LOAD(&last_work_round[no])))
        ADD(&early_work, 1);
    CHECK(!stw_is_leader(no));
    STORE(&last_work_round[no], r);
    ADD(&work_total[no], 1);
    if (!is_gc_thread(no, r))
        return false;
    for (int i = 0; i < 20; i++)                 /* collect a while */
        sched_yield();
    ADD(&gc_finished, 1);
    return true;
}

static const StwHooks hooks = { fake_interrupt, fake_follower_work };

static uint32_t rnd(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* Mostly a few spins, sometimes a yield, rarely a sleep of up to 50 us. */
static void random_delay(uint32_t *seed)
{
    uint32_t r = rnd(seed) % 64;
    if (r < 48) {
        for (uint32_t i = rnd(seed) % 200; i > 0; i--)
            __asm__ __volatile__("" ::: "memory");
    } else if (r < 62) {
        sched_yield();
    } else {
        struct timespec ts = { 0, (long)(rnd(seed) % 50000) };
        nanosleep(&ts, NULL);
    }
}

static uint32_t seeds[NMAX];                /* each member's, for its delays */

static void mutate(unsigned me)
{
    STORE(&mutating[me], 1);
    for (int i = 0; i < MUTATOR_OPS; i++)
        __atomic_fetch_add(&ops[me], 1, __ATOMIC_RELAXED);
    random_delay(&seeds[me]);
    STORE(&mutating[me], 0);
}

/* A safe point: take part in the sync in progress, if any. */
static void safe_point(unsigned me)
{
    unsigned before = LOAD(&last_work_round[me]);
    stw_follow(me);
    unsigned r = LOAD(&last_work_round[me]);
    if (r != before && !CHECK(LOAD(&released_round) >= r))   /* it followed round r: released? */
        ADD(&early_leaves, 1);
}

/* The world is stopped: no follower mutates, nor makes progress since `seen`. */
static void check_stopped(unsigned me, const uint64_t seen[NMAX])
{
    for (unsigned i = 0; i < N; i++) {
        if (i == me) continue;
        CHECK(!LOAD(&mutating[i]));
        uint64_t now = __atomic_load_n(&ops[i], __ATOMIC_RELAXED);
        if (!CHECK_EQ_INT(now, seen[i]))
            ADD(&stopped_ops, now - seen[i]);
    }
}

/* One sync led by `me`, which has just won stw_try_lead(me, SYNC_GC). */
static void lead(unsigned me)
{
    uint32_t w = LOAD(&stw_sync.word);
    uint32_t epoch = w >> 2;
    CHECK_EQ_INT(w & 3, SYNC_GC);
    CHECK_EQ_INT(epoch, (last_epoch + 1) & STW_EPOCH_MASK);
    last_epoch = epoch;
    wraps += epoch == 0;
    CHECK(stw_pending());
    CHECK(stw_is_leader(me));
    CHECK(!stw_is_leader((me + 1) % N));
    CHECK(!stw_try_lead(me, SYNC_GC));
    CHECK(!stw_try_lead((me + 1) % N, SYNC_GC));
    CHECK_EQ_INT(LOAD(&stw_sync.word), w);        /* the failed attempts changed nothing */
    unsigned r = ++rounds;
    STORE(&cur_leader, me);

    StwTakingPart part;
    stw_stop_all(me, &part);
    CHECK(stw_all_arrived());                     /* every follower arrived */
    CHECK_EQ_INT(part.n, N);                      /* everyone takes part: the leader first, */
    CHECK_EQ_INT(part.no[0], me);                 /* then the others by number */
    for (unsigned i = 1, k = 1; i <= N; i++)
        if (i - 1 != me)
            CHECK_EQ_INT(part.no[k++], i - 1);

    uint64_t seen[NMAX] = { 0 };
    for (unsigned i = 0; i < N; i++)
        seen[i] = __atomic_load_n(&ops[i], __ATOMIC_RELAXED);
    check_stopped(me, seen);
    unsigned k = 0;
    for (unsigned i = 0; i < N; i++) {
        CHECK_EQ_INT(LOAD(&interrupts[i]), i != me);
        /* its work of the previous round it followed is done, exactly once, and none of this */
        CHECK_EQ_INT(LOAD(&last_work_round[i]), last_followed[i]);
        CHECK_EQ_INT(LOAD(&work_total[i]), followed_total[i]);
        if (i != me) {
            last_followed[i] = r;
            followed_total[i]++;
            k += is_gc_thread(i, r);
        }
    }
    sched_yield();                               /* time for an early follower to show */
    check_stopped(me, seen);

    STORE(&gc_finished, 0);
    STORE(&go_round, r);
    stw_start_gc(r % 3 == 0);
    for (int i = 0; i < 5; i++)                   /* the leader's own part of the GC */
        sched_yield();
    stw_await_gc_threads(k);
    CHECK_EQ_INT(LOAD(&gc_finished), k);
    check_stopped(me, seen);
    CHECK(stw_is_leader(me));

    for (unsigned i = 0; i < N; i++)
        STORE(&interrupts[i], 0);
    STORE(&cur_leader, NMAX);
    for (int i = 0; i < 3; i++)                   /* time for an early leaver to show */
        sched_yield();
    check_stopped(me, seen);
    if (r == stop_round)
        STORE(&stop, true);                       /* its followers learn it on their release */
    STORE(&released_round, r);
    stw_release();
}

/* --- basic: member 0 leads, the others follow ------------------------------------------- */

static void *basic_follower(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    while (!LOAD(&stop)) {
        mutate(me);
        safe_point(me);
    }
    return NULL;
}

static void test_basic(void)
{
    pthread_t th[NMAX];
    STORE(&stop, false);
    for (unsigned i = 1; i < N; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, basic_follower, (void *)(uintptr_t)i), 0);
    for (unsigned n = 0; n < ROUNDS_BASIC; n++) {
        mutate(0);
        CHECK(!stw_pending());
        CHECK(!stw_is_leader(0));
        CHECK(stw_try_lead(0, SYNC_GC));
        lead(0);
        CHECK(!stw_pending());                    /* nobody else starts syncs */
        CHECK(!stw_is_leader(0));
        CHECK_EQ_INT(LOAD(&stw_sync.word) >> 2, last_epoch);
        CHECK_EQ_INT(LOAD(&stw_sync.word) & 3, SYNC_NONE);
    }
    STORE(&stop, true);
    for (unsigned i = 1; i < N; i++)
        CHECK_EQ_INT(pthread_join(th[i], NULL), 0);
}

/* --- stress: whoever wins the election leads --------------------------------------------- */

static void *stress_member(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    uint64_t rng = 0x9E3779B97F4A7C15ull * (me + 1);
    while (!LOAD(&stop)) {
        mutate(me);
        rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
        if (rng % 4 != 0) {
            safe_point(me);
            continue;
        }
        /* Wants a GC: as gc_collect, a loser takes part in the sync in progress and retries. */
        bool won;
        while (!(won = stw_try_lead(me, SYNC_GC))) {
            ADD(&lost_elections, 1);
            safe_point(me);
            if (LOAD(&stop))
                break;
        }
        if (!won)
            break;
        leads[me]++;
        lead(me);
    }
    return NULL;
}

static void test_stress(void)
{
    pthread_t th[NMAX];
    STORE(&stop, false);
    stop_round = rounds_total;
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, stress_member, (void *)(uintptr_t)i), 0);
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ_INT(pthread_join(th[i], NULL), 0);
    CHECK_EQ_INT(rounds, rounds_total);
    unsigned led = 0;
    for (unsigned i = 0; i < N; i++)
        led += leads[i];
    CHECK_EQ_INT(led, rounds_total - ROUNDS_BASIC);
    /* Who led and how often elections were lost depend on the OS scheduler: shown only. */
    printf("stress: %u syncs, led by", led);
    for (unsigned i = 0; i < N; i++)
        printf(" %u", leads[i]);
    printf("; %u lost elections\n", LOAD(&lost_elections));
}

/* Runs the torture: MEMBERS (2..STW_TORTURE_MAX) members, ROUNDS (more than ROUNDS_BASIC)
 * syncs, from sync number START if not NULL (above). Call it once per process. */
static void stw_torture(unsigned members, unsigned rounds, const char *start)
{
    N = members;
    rounds_total = rounds;
    for (unsigned i = 0; i < N; i++)
        seeds[i] = 0x9e3779b9u * (i + 1);
    stw_init(N, &hooks);
    if (start)
        stw_debug_set_sync_number((uint32_t)strtoul(start, NULL, 0));
    uint32_t first = (stw_sync.word >> 2) + 1;
    last_epoch = stw_sync.word >> 2;
    CHECK(!stw_pending());
    for (unsigned i = 0; i < N; i++) {
        CHECK(!stw_is_leader(i));
        stw_follow(i);                           /* no sync: returns at once */
    }

    test_basic();
    test_stress();

    CHECK(!stw_pending());
    for (unsigned i = 0; i < N; i++)
        CHECK_EQ_INT(work_total[i], followed_total[i]);
    StwStats st;
    stw_stats(&st);
    CHECK_EQ_INT(st.syncs, rounds_total);
    CHECK(st.stw_ns_max <= st.stw_ns_total);
    printf("stw: %u members, syncs %#x..%#x, %u wrap(s); passed early: %llu follower works "
           "before go, %llu mutator ops while stopped, %llu leaves before release\n", N,
           (unsigned)(first & STW_EPOCH_MASK), (unsigned)last_epoch, wraps,
           (unsigned long long)early_work, (unsigned long long)stopped_ops,
           (unsigned long long)early_leaves);
}

#endif
