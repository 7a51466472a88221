/* Unit test: a GC thread's block queue (runtime/sm/workq.c) on its own.
 *
 * The queue stores and returns bdescr pointers without dereferencing them, so the items are
 * fake pointers (1, 2, 3, ... scaled to look aligned); ASan would report a dereference.
 *   - LIFO: pops return the newest item first, interleaved with pushes too; an empty queue
 *     pops NULL (again and again); workq_size follows every push and pop;
 *   - growth: far beyond the first 64 slots, and again after being emptied;
 *   - concurrent: the owner pushes M items (popping some itself now and then) while T thieves
 *     pop; every item is popped exactly once, none lost, none twice, and the queue ends empty. */
#include "sm/workq.h"
#include "unit/check.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

static bdescr *fake(size_t i) { return (bdescr *)(uintptr_t)(i * 64); }
static size_t  index_of(bdescr *bd) { return (size_t)((uintptr_t)bd / 64); }

/* The queues live for the whole process, like the GC threads' (the queue has no destructor). */
static WorkQueue q_lifo, q_grow, q_conc;

static void test_lifo(void)
{
    WorkQueue *q = &q_lifo;
    workq_init(q, "test lifo");
    CHECK_EQ_INT(workq_size(q), 0);
    CHECK(workq_pop(q) == NULL);
    CHECK(workq_pop(q) == NULL);
    CHECK_EQ_INT(workq_size(q), 0);

    for (size_t i = 1; i <= 10; i++) {
        workq_push(q, fake(i));
        CHECK_EQ_INT(workq_size(q), i);
    }
    for (size_t i = 10; i >= 6; i--) {
        CHECK(workq_pop(q) == fake(i));
        CHECK_EQ_INT(workq_size(q), i - 1);
    }
    /* Pushes after pops: the new ones come out first, then the older rest. */
    workq_push(q, fake(100));
    workq_push(q, fake(101));
    CHECK_EQ_INT(workq_size(q), 7);
    CHECK(workq_pop(q) == fake(101));
    CHECK(workq_pop(q) == fake(100));
    for (size_t i = 5; i >= 1; i--)
        CHECK(workq_pop(q) == fake(i));
    CHECK(workq_pop(q) == NULL);
    CHECK_EQ_INT(workq_size(q), 0);

    /* One in, one out. */
    for (size_t i = 1; i <= 100; i++) {
        workq_push(q, fake(i));
        CHECK(workq_pop(q) == fake(i));
        CHECK(workq_pop(q) == NULL);
    }
}

static void test_growth(void)
{
    enum { M = 5000 };
    WorkQueue *q = &q_grow;
    workq_init(q, "test growth");
    for (int round = 0; round < 2; round++) {      /* again once emptied: the capacity stays */
        for (size_t i = 1; i <= M; i++) {
            workq_push(q, fake(i + round * M));
            if (i == 63 || i == 64 || i == 65 || i == 129 || i == M)
                CHECK_EQ_INT(workq_size(q), i);
        }
        size_t bad = 0;
        for (size_t i = M; i >= 1; i--)
            if (workq_pop(q) != fake(i + round * M))
                bad++;
        CHECK_EQ_INT(bad, 0);
        CHECK(workq_pop(q) == NULL);
        CHECK_EQ_INT(workq_size(q), 0);
    }
    /* Grows while partly drained. */
    size_t expect = 0;
    for (size_t i = 1; i <= 1000; i++) {
        workq_push(q, fake(i));
        expect++;
        if (i % 3 == 0) {
            CHECK(workq_pop(q) == fake(i));
            expect--;
        }
    }
    CHECK_EQ_INT(workq_size(q), expect);
    size_t last = SIZE_MAX, n = 0;
    bdescr *bd;
    while (n <= expect && (bd = workq_pop(q)) != NULL) {
        CHECK(index_of(bd) < last && index_of(bd) % 3 != 0);
        last = index_of(bd);
        n++;
    }
    CHECK_EQ_INT(n, expect);
}

/* --- concurrent ---------------------------------------------------------------------------- */

enum { M_ITEMS = 200000, THIEVES = 3 };

static unsigned char popped[M_ITEMS + 1];     /* times each item was popped (atomics) */
static size_t total_popped;
static bool pushing_done;
static size_t thief_pops[THIEVES];

static void take(bdescr *bd)
{
    size_t i = index_of(bd);
    if (!CHECK(i >= 1 && i <= M_ITEMS))
        return;
    __atomic_fetch_add(&popped[i], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&total_popped, 1, __ATOMIC_RELAXED);
}

static void *thief(void *arg)
{
    size_t me = (size_t)(uintptr_t)arg;
    for (;;) {
        /* pushing_done read before the pop: an empty queue after it means everything is out */
        bool done = __atomic_load_n(&pushing_done, __ATOMIC_ACQUIRE);
        bdescr *bd = workq_pop(&q_conc);
        if (bd) {
            take(bd);
            thief_pops[me]++;
        } else if (done) {
            break;
        } else {
            sched_yield();
        }
    }
    return NULL;
}

static void test_concurrent(void)
{
    workq_init(&q_conc, "test concurrent");
    pthread_t th[THIEVES];
    for (size_t t = 0; t < THIEVES; t++)
        CHECK_EQ_INT(pthread_create(&th[t], NULL, thief, (void *)(uintptr_t)t), 0);
    size_t owner_pops = 0;
    for (size_t i = 1; i <= M_ITEMS; i++) {
        workq_push(&q_conc, fake(i));
        if (i % 7 == 0) {                          /* the owner scans some blocks itself */
            bdescr *bd = workq_pop(&q_conc);
            if (bd) {
                take(bd);
                owner_pops++;
            }
        }
    }
    __atomic_store_n(&pushing_done, true, __ATOMIC_RELEASE);
    for (size_t t = 0; t < THIEVES; t++)
        CHECK_EQ_INT(pthread_join(th[t], NULL), 0);

    CHECK(workq_pop(&q_conc) == NULL);
    CHECK_EQ_INT(workq_size(&q_conc), 0);
    CHECK_EQ_INT(total_popped, M_ITEMS);
    size_t never = 0, twice = 0, stolen = 0;
    for (size_t i = 1; i <= M_ITEMS; i++) {
        never += popped[i] == 0;
        twice += popped[i] > 1;
    }
    CHECK_EQ_INT(never, 0);
    CHECK_EQ_INT(twice, 0);
    for (size_t t = 0; t < THIEVES; t++)
        stolen += thief_pops[t];
    CHECK_EQ_INT(stolen + owner_pops, M_ITEMS);
    printf("concurrent: %d items, %zu popped by the owner, %zu by %d thieves\n", M_ITEMS,
           owner_pops, stolen, THIEVES);
}

int main(void)
{
    test_lifo();
    test_growth();
    test_concurrent();
    return check_done();
}
