/* Torture test of the futex-barrier patch (Note [Futex barrier] in
 * runtime/sync/wait_futex_barrier.c): testsuite/patches/futex-barrier/TESTS runs it; it is
 * built in every build but without the patch it only says so and fails. A lost wake-up
 * leaves a waiter asleep for ever: the driver's timeout fails the test.
 *
 *   test_futex_barrier pingpong ROUNDS SPINS
 *     Two pthreads hand a token back and forth ROUNDS times through two words, each side
 *     waiting with sync_wait (spinning SPINS times, then announcing and sleeping) for the
 *     other's store + sync_wake: every round, the waker's store races with the waiter's
 *     announce/recheck, the race the Note is about.
 *   test_futex_barrier stw THREADS ROUNDS SPINS [START]
 *     The base's stop-the-world torture (testsuite/unit/stw_torture.h: 2..16 members, random
 *     delays, every member trying to lead now and then, START the sync number before the
 *     first) with the futex waits, then: one arrival wait per sync (the leader waits on the
 *     count alone).
 * At the end of each, per kind: FUTEX_WAKE calls never exceed announcements (no system call
 * when nobody sleeps), and with SPINS at most 100 some waits did sleep (the race was run).
 * SPINS is the spin count before sleeping (+RTS -qw in the runtime): small values make
 * nearly every wait sleep, so the announce/recheck/wait path runs thousands of times.
 */
#include "rtslab_config.h"
#include "sync/stw.h"
#include "sync/wait.h"
#include "unit/check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if RTS_PATCH_FUTEX_BARRIER
#include "unit/stw_torture.h"

/* `wakers`: how many may wake one sleeper of the kind before it withdraws (the GC threads
 * all wake the leader awaiting them; every other word has one waker per sleep).
 * A FUTEX_WAKE is made only while an announcement is live, but one live announcement may be
 * seen by two wakes of its word: the waker of the previous round, delayed between its store
 * and its check of the count (K1-K2 in Note [Futex barrier]), finds the waiter already
 * announced for the next round and between its recheck and its FUTEX_WAIT (W2-W3), so the
 * wake finds nobody queued; the waiter then sleeps on that announcement (its word still
 * holds the value it read), and the next round's store wakes it again. A third cannot: in pingpong the waker's next
 * store needs the waiter's reply, and in a stop-the-world the delayed waker (the leader of
 * the previous sync) must take part in the next one first. */
static void check_futex_counters(const char *what, bool want_sleeps, unsigned gc_done_wakers)
{
    uint64_t slept = 0;
    for (int k = 0; k < WAIT_NKINDS; k++) {
        SyncWaitStats s;
        sync_wait_stats((SyncWaitKind)k, &s);
        printf("%s: %-26s waits %llu sleeps %llu announced %llu futex wakes %llu "
               "no-syscall wakes %llu\n", what, sync_wait_kind_name((SyncWaitKind)k),
               (unsigned long long)s.waits, (unsigned long long)s.sleeps,
               (unsigned long long)s.announced, (unsigned long long)s.futex_wakes,
               (unsigned long long)s.quiet_wakes);
        /* a FUTEX_WAKE only where someone announced (one kind per word here), at most two
         * per announcement (above) */
        CHECK(s.futex_wakes <= 2 * s.announced * (k == WAIT_GC_DONE ? gc_done_wakers : 1));
        if (s.announced == 0)
            CHECK_EQ_INT(s.futex_wakes, 0);
        CHECK(s.sleeps <= s.announced);
        slept += s.sleeps;
    }
    if (want_sleeps)
        CHECK(slept > 0);                         /* the sleeping path was exercised */
}

/* --- pingpong ------------------------------------------------------------------------- */

static uint32_t ping, pong;                 /* the round each side has reached */
static uint32_t pp_rounds;

typedef struct { uint32_t *word; uint32_t want; } Want;

static bool reached(void *arg)
{
    Want *w = arg;
    return LOAD(w->word) >= w->want;
}

static void *pong_main(void *arg)
{
    uint32_t seed = 12345;
    (void)arg;
    for (uint32_t r = 1; r <= pp_rounds; r++) {
        Want w = { &ping, r };
        sync_wait(&ping, reached, &w, WAIT_LEAVE);
        CHECK(LOAD(&ping) >= r);
        if (rnd(&seed) % 4 == 0)
            random_delay(&seed);
        STORE(&pong, r);
        sync_wake(&pong, WAIT_ENTER);
    }
    return NULL;
}

static int run_pingpong(uint32_t rounds)
{
    pthread_t th;
    uint32_t seed = 777;
    pp_rounds = rounds;
    CHECK_EQ_INT(pthread_create(&th, NULL, pong_main, NULL), 0);
    for (uint32_t r = 1; r <= rounds; r++) {
        if (rnd(&seed) % 4 == 0)
            random_delay(&seed);
        STORE(&ping, r);
        sync_wake(&ping, WAIT_LEAVE);
        Want w = { &pong, r };
        sync_wait(&pong, reached, &w, WAIT_ENTER);
        CHECK_EQ_INT(LOAD(&pong), r);             /* pong never runs ahead of ping */
    }
    CHECK_EQ_INT(pthread_join(th, NULL), 0);
    printf("pingpong: %u rounds, spins %u\n", rounds, sync_spins());
    check_futex_counters("pingpong", sync_spins() <= 100, 1);
    return check_done();
}

/* --- stw ------------------------------------------------------------------------------ */

static int run_stw(unsigned threads, uint32_t total, const char *start)
{
    stw_torture(threads, total, start);
    SyncWaitStats arr;
    sync_wait_stats(WAIT_ARRIVAL, &arr);
    CHECK(arr.waits <= total);                   /* one count to await per sync */
    printf("stw: %u threads, %u rounds, spins %u\n", threads, total, sync_spins());
    check_futex_counters("stw", sync_spins() <= 100, threads - 1);
    return check_done();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        goto usage;
    if (strcmp(argv[1], "pingpong") == 0 && argc == 4) {
        sync_set_spins((unsigned)strtoul(argv[3], NULL, 10));
        return run_pingpong((uint32_t)strtoul(argv[2], NULL, 10));
    }
    if (strcmp(argv[1], "stw") == 0 && (argc == 5 || argc == 6)) {
        unsigned t = (unsigned)strtoul(argv[2], NULL, 10);
        uint32_t n = (uint32_t)strtoul(argv[3], NULL, 10);
        if (t < 2 || t > STW_TORTURE_MAX || n <= ROUNDS_BASIC)
            goto usage;
        sync_set_spins((unsigned)strtoul(argv[4], NULL, 10));
        return run_stw(t, n, argc == 6 ? argv[5] : NULL);
    }
usage:
    fprintf(stderr, "usage: test_futex_barrier pingpong ROUNDS SPINS | stw THREADS(2..16) ROUNDS(>300) SPINS [START]\n");
    return 2;
}

#else

int main(void)
{
    fprintf(stderr, "test_futex_barrier: this build has no futex barriers "
            "(configure --enable-futex-barrier)\n");
    return 1;
}

#endif
