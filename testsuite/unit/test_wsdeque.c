/* Unit test: a GC thread's work-stealing deque (runtime/sm/wsdeque.c) on its own.
 *
 * The deque stores and returns bdescr pointers without dereferencing them, so the items are
 * fake pointers (1, 2, 3, ... scaled to look aligned); ASan would report a dereference.
 *   - one thread: the owner's end is LIFO, the thieves' end FIFO, both ends interleaved;
 *     an empty deque pops and steals NULL (again and again); wsdeque_size follows;
 *   - growth: from 2 slots to far beyond, with items at both ends, while partly drained from
 *     the top (the indices no longer start at 0), and again after wsdeque_quiesce;
 *   - concurrent: ROUNDS rounds in which the owner pushes ITEMS items, popping now and then
 *     (sometimes down to empty, so that it races the thieves for the last item) while THIEVES
 *     threads steal; the deque starts each round with 2 slots so it grows under the thieves.
 *     Every item is taken exactly once, none lost, none twice, the deque ends each round
 *     empty, and the thieves stole some. Millions of operations in all; make check-tsan runs
 *     it under ThreadSanitizer. */
#include "sm/wsdeque.h"
#include "unit/check.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static bdescr *fake(size_t i) { return (bdescr *)(uintptr_t)(i * 64); }
static size_t  index_of(bdescr *bd) { return (size_t)((uintptr_t)bd / 64); }

static void test_ends(void)
{
    WSDeque q;
    wsdeque_init(&q, 16);
    CHECK_EQ_INT(wsdeque_size(&q), 0);
    CHECK(wsdeque_pop(&q) == NULL);
    CHECK(wsdeque_steal(&q) == NULL);
    CHECK(wsdeque_pop(&q) == NULL);
    CHECK(wsdeque_steal(&q) == NULL);
    CHECK_EQ_INT(wsdeque_size(&q), 0);

    for (size_t i = 1; i <= 10; i++) {
        wsdeque_push(&q, fake(i));
        CHECK_EQ_INT(wsdeque_size(&q), i);
    }
    CHECK(wsdeque_pop(&q) == fake(10));            /* the owner takes the newest */
    CHECK(wsdeque_steal(&q) == fake(1));           /* a thief the oldest */
    CHECK(wsdeque_steal(&q) == fake(2));
    CHECK(wsdeque_pop(&q) == fake(9));
    CHECK_EQ_INT(wsdeque_size(&q), 6);
    wsdeque_push(&q, fake(100));
    CHECK(wsdeque_pop(&q) == fake(100));
    CHECK(wsdeque_steal(&q) == fake(3));
    for (size_t i = 8; i >= 5; i--)
        CHECK(wsdeque_pop(&q) == fake(i));
    CHECK_EQ_INT(wsdeque_size(&q), 1);
    CHECK(wsdeque_steal(&q) == fake(4));           /* the last one, from the top */
    CHECK(wsdeque_steal(&q) == NULL);
    CHECK(wsdeque_pop(&q) == NULL);
    CHECK_EQ_INT(wsdeque_size(&q), 0);

    /* One in, one out, at either end; the last item by pop. */
    for (size_t i = 1; i <= 100; i++) {
        wsdeque_push(&q, fake(i));
        CHECK(((i & 1) ? wsdeque_pop(&q) : wsdeque_steal(&q)) == fake(i));
        CHECK(wsdeque_pop(&q) == NULL);
        CHECK(wsdeque_steal(&q) == NULL);
    }
    wsdeque_quiesce(&q);
    CHECK_EQ_INT(wsdeque_size(&q), 0);
    free(q.own_array);
}

static void test_growth(void)
{
    enum { M = 5000 };
    WSDeque q;
    wsdeque_init(&q, 2);
    for (int round = 0; round < 2; round++) {      /* again once quiesced */
        /* Steal a few first so that the items do not start at index 0 (or at a slot 0). */
        for (size_t i = 1; i <= 3; i++)
            wsdeque_push(&q, fake(1000000 + i));
        for (size_t i = 1; i <= 3; i++)
            CHECK(wsdeque_steal(&q) == fake(1000000 + i));
        for (size_t i = 1; i <= M; i++) {
            wsdeque_push(&q, fake(i));
            if (i % 10 == 0)                       /* a thief drains the top meanwhile */
                CHECK(wsdeque_steal(&q) == fake(i / 10));
        }
        CHECK_EQ_INT(wsdeque_size(&q), M - M / 10);
        size_t bad = 0;
        for (size_t i = M; i > M / 10; i--)
            if (wsdeque_pop(&q) != fake(i))
                bad++;
        CHECK_EQ_INT(bad, 0);
        CHECK(wsdeque_pop(&q) == NULL);
        CHECK(wsdeque_steal(&q) == NULL);
        CHECK_EQ_INT(wsdeque_size(&q), 0);
        wsdeque_quiesce(&q);
    }
    /* Both ends after growth: FIFO from the top over the whole range. */
    for (size_t i = 1; i <= 1000; i++)
        wsdeque_push(&q, fake(i));
    size_t bad = 0;
    for (size_t i = 1; i <= 1000; i++)
        if (wsdeque_steal(&q) != fake(i))
            bad++;
    CHECK_EQ_INT(bad, 0);
    CHECK(wsdeque_steal(&q) == NULL);
    wsdeque_quiesce(&q);
    free(q.own_array);
}

/* --- concurrent ---------------------------------------------------------------------------- */

enum { ROUNDS = 100, ITEMS = 20000, THIEVES = 3 };

static WSDeque q_conc;
static unsigned char taken[ITEMS + 1];         /* times each item of the round was taken */
static size_t round_taken;                     /* atomic */
static bool round_done, all_done;              /* atomic */
static pthread_barrier_t start_line, finish_line;
static size_t thief_steals[THIEVES], thief_aborts[THIEVES];

static void take(bdescr *bd)
{
    size_t i = index_of(bd);
    if (!CHECK(i >= 1 && i <= ITEMS))
        return;
    __atomic_fetch_add(&taken[i], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&round_taken, 1, __ATOMIC_RELAXED);
}

static void *thief(void *arg)
{
    size_t me = (size_t)(uintptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&start_line);
        if (__atomic_load_n(&all_done, __ATOMIC_ACQUIRE))
            return NULL;
        unsigned idle = 0;
        for (;;) {
            /* round_done read before the steal: empty after it means all is out (the owner
             * drains what is left) */
            bool done = __atomic_load_n(&round_done, __ATOMIC_ACQUIRE);
            bdescr *bd = wsdeque_steal(&q_conc);
            if (bd == WSDEQUE_ABORT) {
                thief_aborts[me]++;
            } else if (bd) {
                take(bd);
                __atomic_fetch_add(&thief_steals[me], 1, __ATOMIC_RELAXED);
            } else if (done) {
                break;
            } else if (++idle % 64 == 0) {
                sched_yield();                     /* 2 cores, 4 threads */
            }
        }
        pthread_barrier_wait(&finish_line);
    }
}

static size_t steals_so_far(void)
{
    size_t n = 0;
    for (size_t t = 0; t < THIEVES; t++)
        n += __atomic_load_n(&thief_steals[t], __ATOMIC_RELAXED);
    return n;
}

/* Until a thief has stolen once, each round ends with the owner waiting (yielding, 10 s at
 * most) while its deque still holds items, so that the steal path runs however the kernel
 * schedules the four threads on a busy machine: "stolen > 0" below is then a check of the
 * deque, not of the scheduler's luck. */
static void await_first_steal(void)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (steals_so_far() == 0 && wsdeque_size(&q_conc) > 0) {
        sched_yield();
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t.tv_sec - t0.tv_sec > 10)
            break;
    }
}

static uint64_t rng = 88172645463325252ull;
static unsigned next_rand(void)
{
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return (unsigned)(rng >> 32);
}

static void test_concurrent(void)
{
    wsdeque_init(&q_conc, 2);
    pthread_barrier_init(&start_line, NULL, THIEVES + 1);
    pthread_barrier_init(&finish_line, NULL, THIEVES + 1);
    pthread_t th[THIEVES];
    for (size_t t = 0; t < THIEVES; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, thief, (void *)(uintptr_t)t), 0);

    size_t owner_pops = 0, never = 0, twice = 0, lost = 0, not_empty = 0;
    for (int round = 0; round < ROUNDS; round++) {
        memset(taken, 0, sizeof taken);
        round_taken = 0;
        __atomic_store_n(&round_done, false, __ATOMIC_RELAXED);
        pthread_barrier_wait(&start_line);
        for (size_t i = 1; i <= ITEMS; i++) {
            for (volatile unsigned w = 0; w < 100; w++)
                ;                                  /* copying the block's objects */
            wsdeque_push(&q_conc, fake(i));
            unsigned r = next_rand() % 16;
            unsigned pops = r < 4 ? 1 : r == 4 ? 3 : r == 5 ? ITEMS : 0;  /* 5: to empty */
            for (unsigned k = 0; k < pops; k++) {
                bdescr *bd = wsdeque_pop(&q_conc);
                if (!bd)
                    break;
                take(bd);
                owner_pops++;
            }
        }
        await_first_steal();
        __atomic_store_n(&round_done, true, __ATOMIC_RELEASE);
        bdescr *bd;
        while ((bd = wsdeque_pop(&q_conc)) != NULL) {
            take(bd);
            owner_pops++;
        }
        pthread_barrier_wait(&finish_line);
        /* Quiescent: check the round, free the grown arrays, start from 2 slots again. */
        not_empty += wsdeque_size(&q_conc) != 0 || wsdeque_steal(&q_conc) != NULL
                     || wsdeque_pop(&q_conc) != NULL;
        lost += __atomic_load_n(&round_taken, __ATOMIC_RELAXED) != ITEMS;
        for (size_t i = 1; i <= ITEMS; i++) {
            never += taken[i] == 0;
            twice += taken[i] > 1;
        }
        wsdeque_quiesce(&q_conc);
        free(q_conc.own_array);
        wsdeque_init(&q_conc, 2);
    }
    __atomic_store_n(&all_done, true, __ATOMIC_RELEASE);
    pthread_barrier_wait(&start_line);
    for (size_t t = 0; t < THIEVES; t++)
        CHECK_EQ_INT(pthread_join(th[t], NULL), 0);
    free(q_conc.own_array);

    CHECK_EQ_INT(never, 0);
    CHECK_EQ_INT(twice, 0);
    CHECK_EQ_INT(lost, 0);
    CHECK_EQ_INT(not_empty, 0);
    size_t stolen = 0, aborts = 0;
    for (size_t t = 0; t < THIEVES; t++) {
        stolen += thief_steals[t];
        aborts += thief_aborts[t];
    }
    CHECK_EQ_INT(stolen + owner_pops, (size_t)ROUNDS * ITEMS);
    CHECK(stolen > 0);
    printf("concurrent: %d rounds of %d items: %zu taken by the owner, %zu stolen by %d thieves "
           "(%zu steals lost a race)\n", ROUNDS, ITEMS, owner_pops, stolen, THIEVES, aborts);
}

int main(void)
{
    test_ends();
    test_growth();
    test_concurrent();
    return check_done();
}
