/* Unit test: the waits of the stop-the-world protocol (runtime/sync/wait.c) on their own.
 *
 * Behaviour only, never a duration bound:
 *   - a wait whose condition holds returns at once, counting no spin and no sleep;
 *   - waiters on other pthreads stay put while their condition is false, even once asleep,
 *     and through a change of their word that leaves it false (woken or not); they are all
 *     released when another thread makes it true and calls sync_wake once, and each returns
 *     with its condition true; a wake of another word releases nobody;
 *   - the statistics of a kind count each wait that had to wait (one wait, at least one
 *     sleep each for those that slept) and nothing in the other kinds.
 * A waiter is known to have gone to sleep once it has checked its condition SYNC_SPINS + 2
 * times (once on entry, once per spin, once more before the first sleep); a variant that
 * checks less often is given 50 ms to get there. A waiter never released hangs: the driver's
 * timeout fails the test. */
#include "sync/wait.h"
#include "unit/check.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A waiter's condition: *word has reached `want`. */
typedef struct Waiter {
    pthread_t th;
    uint32_t *word;
    uint32_t want;
    SyncWaitKind kind;
    unsigned long checks;          /* calls of its ready() */
    bool returned;                 /* sync_wait returned */
    bool held_on_return;           /* the condition held when it did */
} Waiter;

static bool ready(void *arg)
{
    Waiter *w = arg;
    __atomic_fetch_add(&w->checks, 1, __ATOMIC_RELAXED);
    return __atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= w->want;
}

static void set_and_wake(uint32_t *word, uint32_t v, SyncWaitKind kind)
{
    __atomic_store_n(word, v, __ATOMIC_RELEASE);
    sync_wake(word, kind);
}

static void *waiter_main(void *arg)
{
    Waiter *w = arg;
    sync_wait(w->word, ready, w, w->kind);
    __atomic_store_n(&w->held_on_return, __atomic_load_n(w->word, __ATOMIC_ACQUIRE) >= w->want,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&w->returned, true, __ATOMIC_RELEASE);
    return NULL;
}

static void start_waiter(Waiter *w, uint32_t *word, uint32_t want, SyncWaitKind kind)
{
    *w = (Waiter){ .word = word, .want = want, .kind = kind };
    CHECK_EQ_INT(pthread_create(&w->th, NULL, waiter_main, w), 0);
}

static bool has_returned(Waiter *w) { return __atomic_load_n(&w->returned, __ATOMIC_ACQUIRE); }
static unsigned long checks(Waiter *w) { return __atomic_load_n(&w->checks, __ATOMIC_RELAXED); }

/* Returns once w has started waiting and then gone to sleep (see the top). */
static void await_asleep(Waiter *w)
{
    while (checks(w) == 0)
        sched_yield();
    uint64_t t0 = now_ms();
    while (checks(w) < SYNC_SPINS + 2 && now_ms() - t0 < 50)
        sleep_ms(1);
    sleep_ms(5);
}

static SyncWaitStats delta(SyncWaitKind k, const SyncWaitStats *before)
{
    SyncWaitStats now;
    sync_wait_stats(k, &now);
    return (SyncWaitStats){ .waits = now.waits - before->waits,
                            .spins = now.spins - before->spins,
                            .sleeps = now.sleeps - before->sleeps,
                            .wait_ns = now.wait_ns - before->wait_ns };
}

static void snapshot(SyncWaitStats s[WAIT_NKINDS])
{
    for (int k = 0; k < WAIT_NKINDS; k++)
        sync_wait_stats((SyncWaitKind)k, &s[k]);
}

/* The kinds other than `k` did not move. */
static void check_others_unchanged(SyncWaitKind k, const SyncWaitStats before[WAIT_NKINDS])
{
    for (int o = 0; o < WAIT_NKINDS; o++) {
        if (o == (int)k) continue;
        SyncWaitStats d = delta((SyncWaitKind)o, &before[o]);
        CHECK(d.waits == 0 && d.spins == 0 && d.sleeps == 0 && d.wait_ns == 0);
    }
}

static void test_names(void)
{
    for (int k = 0; k < WAIT_NKINDS; k++) {
        const char *n = sync_wait_kind_name((SyncWaitKind)k);
        CHECK(n != NULL && n[0] != '\0');
        for (int j = 0; j < k; j++)
            CHECK(strcmp(n, sync_wait_kind_name((SyncWaitKind)j)) != 0);
    }
}

/* The condition already holds: no spin, no sleep, and at most one wait counted (the baseline
 * counts none; a variant may count the call). */
static void test_ready_at_once(void)
{
    SyncWaitStats before[WAIT_NKINDS];
    snapshot(before);
    uint32_t word = 5;
    Waiter w = { .word = &word, .want = 5 };
    sync_wait(&word, ready, &w, WAIT_LEAVE);
    CHECK(w.checks >= 1);
    SyncWaitStats d = delta(WAIT_LEAVE, &before[WAIT_LEAVE]);
    CHECK(d.waits <= 1);
    CHECK_EQ_INT(d.spins, 0);
    CHECK_EQ_INT(d.sleeps, 0);
    check_others_unchanged(WAIT_LEAVE, before);
}

/* n waiters of one kind on one word, asleep: they stay while it is short of `want` (a change
 * of it woken on the way), and all go once it gets there and sync_wake is called once. */
static void test_released_after_sleeping(int n, SyncWaitKind kind)
{
    enum { MAX_WAITERS = 4 };
    SyncWaitStats before[WAIT_NKINDS];
    snapshot(before);
    uint32_t word = 0;
    Waiter w[MAX_WAITERS];
    for (int i = 0; i < n; i++)
        start_waiter(&w[i], &word, 2, kind);
    for (int i = 0; i < n; i++)
        await_asleep(&w[i]);
    for (int i = 0; i < n; i++)
        CHECK(!has_returned(&w[i]));

    /* A change that does not make the condition true: woken or not, nobody leaves. */
    unsigned long seen[MAX_WAITERS];
    for (int i = 0; i < n; i++)
        seen[i] = checks(&w[i]);
    set_and_wake(&word, 1, kind);
    for (int i = 0; i < n; i++) {                 /* each looks again (polling or woken) */
        while (checks(&w[i]) == seen[i] && !has_returned(&w[i]))
            sleep_ms(1);
    }
    for (int i = 0; i < n; i++)
        CHECK(!has_returned(&w[i]));

    set_and_wake(&word, 2, kind);
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(pthread_join(w[i].th, NULL), 0);
        CHECK(has_returned(&w[i]));
        CHECK(w[i].held_on_return);
    }
    SyncWaitStats d = delta(kind, &before[kind]);
    CHECK_EQ_INT(d.waits, n);
    CHECK(d.sleeps >= (uint64_t)n);               /* each one had to sleep */
    CHECK(d.wait_ns > 0);
    check_others_unchanged(kind, before);
}

/* A wake of another word (its condition true) leaves a sleeper on this one asleep. */
static void test_other_word(void)
{
    uint32_t a = 0, b = 0;
    Waiter wa, wb;
    start_waiter(&wa, &a, 1, WAIT_ARRIVAL);
    start_waiter(&wb, &b, 1, WAIT_ARRIVAL);
    await_asleep(&wa);
    await_asleep(&wb);
    set_and_wake(&b, 1, WAIT_ARRIVAL);
    CHECK_EQ_INT(pthread_join(wb.th, NULL), 0);
    CHECK(wb.held_on_return);
    sleep_ms(10);
    CHECK(!has_returned(&wa));
    set_and_wake(&a, 1, WAIT_ARRIVAL);
    CHECK_EQ_INT(pthread_join(wa.th, NULL), 0);
    CHECK(wa.held_on_return);
}

/* Many short waits racing with the setter: each returns with its condition true, none is lost. */
static void test_many_rounds(void)
{
    enum { ROUNDS = 200 };
    SyncWaitStats before;
    sync_wait_stats(WAIT_ENTER, &before);
    unsigned long wrong = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint32_t word = 0;
        Waiter w;
        start_waiter(&w, &word, 1, WAIT_ENTER);
        if (r % 2)
            sched_yield();
        set_and_wake(&word, 1, WAIT_ENTER);
        CHECK_EQ_INT(pthread_join(w.th, NULL), 0);
        if (!w.held_on_return)
            wrong++;
    }
    CHECK_EQ_INT(wrong, 0);
    SyncWaitStats d = delta(WAIT_ENTER, &before);
    CHECK(d.waits <= ROUNDS);
}

int main(void)
{
    test_names();
    test_ready_at_once();
    test_released_after_sleeping(1, WAIT_ENTER);
    test_released_after_sleeping(3, WAIT_LEAVE);
    test_released_after_sleeping(1, WAIT_GC_DONE);
    test_other_word();
    test_many_rounds();
    return check_done();
}
