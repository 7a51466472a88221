/* Test: MVars (runtime/sched/mvar.c, Note [MVar queues]) through the public API. Unlike the
 * other unit tests it needs the runtime: blocking means lightweight threads and a scheduler.
 *
 * The main thread runs scripts of steps. A SPAWN step starts a worker thread that takes,
 * reads or puts, and waits (yielding, allocating garbage so that GCs run meanwhile) until the
 * worker has found the MVar empty or full and queued itself; so the workers queue in the
 * script's order. Worker k runs on capability k mod -N, so with several capabilities most
 * wake-ups cross capabilities. The main thread itself uses the operations
 * that must not block it (put into an empty MVar, take from a full one, try_*), and checks
 * which workers a step served (they join with the value they got) and which it did not
 * (they are still blocked). What is tested and not elsewhere (gc/gc_threads tests the FIFO
 * of 10 000 takers at -N1):
 *   - blocked takers are served in arrival order, also across capabilities;
 *   - a put serves every reader at the head of the queue and then the first taker, in one
 *     go, the MVar staying empty; readers behind that taker wait for the next put; a put that
 *     finds only readers serves them and fills the MVar;
 *   - a put to a full MVar blocks; each take lets the first blocked putter's value in, in
 *     arrival order;
 *   - try_take and try_put never block the caller (it is not queued: a later put/take does
 *     not serve it), and hand values to/from queued threads as put/take do.
 *
 *   test_mvar [+RTS ... -RTS] */
#include "rtslab.h"
#include "unit/check.h"

#include <stdio.h>

enum { MAX_WORKERS = 64 };

/* Set by the workers (atomics): queued on the MVar; finished. */
static int blocked[MAX_WORKERS];
static int finished[MAX_WORKERS];
static unsigned elsewhere;       /* workers that ran on a capability other than the main one's */

typedef enum { W_TAKE, W_READ, W_PUT } Role;

enum { W_ROLE, W_MVAR, W_K, W_VAL, W_PC, W_NSLOTS };

/* Finishes with the value it took or read, or the one it put. */
static RtsStep worker(RtsCap *cap)
{
    Role role = (Role)rts_fixnum_val(rts_slot(cap, W_ROLE));
    intptr_t k = rts_fixnum_val(rts_slot(cap, W_K));
    Value mv = rts_slot(cap, W_MVAR), got = rts_slot(cap, W_VAL);
    if (rts_slot(cap, W_PC) == RTS_FALSE) {
        rts_set_slot(cap, W_PC, RTS_TRUE);
        bool done = role == W_TAKE ? rts_mvar_take(cap, mv, &got)
                  : role == W_READ ? rts_mvar_read(cap, mv, &got)
                  : rts_mvar_put(cap, mv, got);
        if (!done) {
            __atomic_store_n(&blocked[k], 1, __ATOMIC_RELEASE);
            return RTS_BLOCK;
        }
    } else if (role != W_PUT) {
        got = rts_result(cap);
    }
    if (rts_cap_no(cap) != 0)
        __atomic_fetch_add(&elsewhere, 1, __ATOMIC_RELAXED);
    rts_set_result(cap, got);
    __atomic_store_n(&finished[k], 1, __ATOMIC_RELEASE);
    return RTS_FINISH;
}

/* --- scripts ------------------------------------------------------------------------------ */

typedef enum {
    OP_NEW,         /* a new empty MVar becomes the current one */
    OP_SPAWN_TAKE,  /* worker k takes; waits until it is queued */
    OP_SPAWN_READ,  /* worker k reads; likewise */
    OP_SPAWN_PUT,   /* worker k puts v; likewise */
    OP_PUT,         /* the main thread puts v: must be done at once */
    OP_TAKE,        /* the main thread takes: done at once, getting v */
    OP_READ,        /* the main thread reads: done at once, getting v */
    OP_TRY_PUT,     /* try_put v: succeeds iff want */
    OP_TRY_TAKE,    /* try_take: gets v if want, else fails */
    OP_PENDING,     /* worker k is still blocked */
    OP_JOIN,        /* worker k finishes with v */
    OP_END
} Op;

typedef struct Step { Op op; int k; intptr_t v; bool want; } Step;

/* The values put are 1000 + x, apart from worker numbers. */
#define NEW_MVAR          { .op = OP_NEW }
#define TAKER(k_)         { .op = OP_SPAWN_TAKE, .k = (k_) }
#define READER(k_)        { .op = OP_SPAWN_READ, .k = (k_) }
#define PUTTER(k_, x)     { .op = OP_SPAWN_PUT, .k = (k_), .v = 1000 + (x) }
#define PUT(x)            { .op = OP_PUT, .v = 1000 + (x) }
#define TAKE(x)           { .op = OP_TAKE, .v = 1000 + (x) }
#define READ(x)           { .op = OP_READ, .v = 1000 + (x) }
#define TRY_PUT_OK(x)     { .op = OP_TRY_PUT, .v = 1000 + (x), .want = true }
#define TRY_PUT_FAILS(x)  { .op = OP_TRY_PUT, .v = 1000 + (x), .want = false }
#define TRY_TAKE_GETS(x)  { .op = OP_TRY_TAKE, .v = 1000 + (x), .want = true }
#define TRY_TAKE_FAILS    { .op = OP_TRY_TAKE, .want = false }
#define PENDING(k_)       { .op = OP_PENDING, .k = (k_) }
#define JOIN(k_, x)       { .op = OP_JOIN, .k = (k_), .v = 1000 + (x) }

static const Step script[] = {
    /* Takers in FIFO order: each put hands its value to the longest-waiting taker. */
    NEW_MVAR, TAKER(0), TAKER(1), TAKER(2), TAKER(3),
    PUT(0), PENDING(1), PENDING(2), PENDING(3),
    PUT(1), PUT(2), PENDING(3),
    TRY_TAKE_FAILS,                                       /* empty: the takers got them */
    PUT(3),
    JOIN(0, 0), JOIN(1, 1), JOIN(2, 2), JOIN(3, 3),
    TRY_TAKE_FAILS,

    /* Readers at the head and the first taker are served by one put; the MVar stays
     * empty; a reader behind that taker waits for the next put. A put that finds only
     * readers serves them all and fills the MVar. */
    NEW_MVAR, READER(10), READER(11), READER(12), TAKER(13), READER(14), TAKER(15),
    READER(16), READER(17),
    PUT(10), PENDING(14), PENDING(15), PENDING(16), PENDING(17), TRY_TAKE_FAILS,
    JOIN(10, 10), JOIN(11, 10), JOIN(12, 10), JOIN(13, 10),
    PUT(11), PENDING(16), PENDING(17), TRY_TAKE_FAILS,
    JOIN(14, 11), JOIN(15, 11),
    PUT(12), JOIN(16, 12), JOIN(17, 12),
    READ(12), TAKE(12), TRY_TAKE_FAILS,

    /* A put to a full MVar blocks; each take lets the first blocked putter in. */
    NEW_MVAR, PUT(20), PUTTER(20, 21), PUTTER(21, 22), PUTTER(22, 23),
    TRY_PUT_FAILS(99), READ(20),
    TAKE(20), PENDING(21), PENDING(22), JOIN(20, 21),
    TAKE(21), PENDING(22),
    TRY_TAKE_GETS(22), JOIN(21, 22),
    TAKE(23), JOIN(22, 23),
    TRY_TAKE_FAILS,

    /* try_* never block: the caller is not queued, so a later put (take) does not serve it
     * and leaves the value in (lets none in). */
    NEW_MVAR, TRY_TAKE_FAILS, TRY_TAKE_FAILS,
    TRY_PUT_OK(30), TRY_PUT_FAILS(31), TRY_TAKE_GETS(30), TRY_TAKE_FAILS,
    PUT(32), TRY_PUT_FAILS(33), TAKE(32), TRY_TAKE_FAILS,
    /* ... and they hand values over to queued threads as put and take do. */
    READER(30), TAKER(31), TAKER(32),
    TRY_PUT_OK(34), PENDING(32), TRY_TAKE_FAILS, JOIN(30, 34), JOIN(31, 34),
    TRY_PUT_OK(35), JOIN(32, 35),
    TRY_PUT_OK(36), PUTTER(33, 37), TRY_TAKE_GETS(36), JOIN(33, 37),
    TRY_PUT_FAILS(38), TRY_TAKE_GETS(37), TRY_TAKE_FAILS,
    { .op = OP_END },
};

/* --- the main thread ---------------------------------------------------------------------- */

enum { M_MVAR, M_THREADS, M_PC, M_WAITING, M_NSLOTS };

static unsigned long gcs_forced;

static void spawn(RtsCap *cap, Role role, int k, intptr_t v)
{
    Value t = rts_thread_new(cap, worker, W_NSLOTS);
    rts_set_field(cap, rts_slot(cap, M_THREADS), (size_t)k, t);
    rts_thread_set_slot(cap, t, W_ROLE, rts_fixnum(role));
    rts_thread_set_slot(cap, t, W_MVAR, rts_slot(cap, M_MVAR));
    rts_thread_set_slot(cap, t, W_K, rts_fixnum(k));
    rts_thread_set_slot(cap, t, W_VAL, rts_fixnum(v));
    rts_thread_start_on(cap, t, (unsigned)k);     /* mod the capabilities: spread */
}

static RtsStep main_code(RtsCap *cap)
{
    if (rts_slot(cap, M_THREADS) == RTS_FALSE)
        rts_set_slot(cap, M_THREADS, rts_make_vector(cap, MAX_WORKERS, RTS_FALSE));
    Value pcv = rts_slot(cap, M_PC);
    size_t pc = rts_is_fixnum(pcv) ? (size_t)rts_fixnum_val(pcv) : 0;
    for (;; pc++) {
        rts_set_slot(cap, M_PC, rts_fixnum((intptr_t)pc));
        const Step *s = &script[pc];
        Value mv = rts_slot(cap, M_MVAR), out = RTS_FALSE;
        bool ok;
        switch (s->op) {
        case OP_NEW:
            rts_set_slot(cap, M_MVAR, rts_new_mvar(cap));
            break;
        case OP_SPAWN_TAKE: case OP_SPAWN_READ: case OP_SPAWN_PUT:
            if (rts_slot(cap, M_WAITING) == RTS_FALSE) {
                spawn(cap, s->op == OP_SPAWN_TAKE ? W_TAKE : s->op == OP_SPAWN_READ ? W_READ : W_PUT,
                      s->k, s->v);
                rts_set_slot(cap, M_WAITING, RTS_TRUE);
            }
            if (!__atomic_load_n(&blocked[s->k], __ATOMIC_ACQUIRE)) {
                if (!CHECK(!__atomic_load_n(&finished[s->k], __ATOMIC_ACQUIRE))) {
                    fprintf(stderr, "step %zu: worker %d was not queued\n", pc, s->k);
                    rts_set_slot(cap, M_WAITING, RTS_FALSE);
                    break;
                }
                rts_make_vector(cap, 64, RTS_FALSE);       /* garbage while it gets there */
                if (++gcs_forced % 8 == 0)
                    rts_gc(cap, gcs_forced % 32 == 0);
                return RTS_YIELD;
            }
            rts_set_slot(cap, M_WAITING, RTS_FALSE);
            break;
        case OP_PUT:
            ok = rts_mvar_put(cap, mv, rts_fixnum(s->v));
            if (!CHECK(ok))
                rts_thread_error(cap, "step %zu: put blocked", pc);
            break;
        case OP_TAKE: case OP_READ:
            ok = s->op == OP_TAKE ? rts_mvar_take(cap, mv, &out) : rts_mvar_read(cap, mv, &out);
            if (!CHECK(ok))
                rts_thread_error(cap, "step %zu: %s blocked", pc, s->op == OP_TAKE ? "take" : "read");
            CHECK(out == rts_fixnum(s->v));
            CHECK(rts_result(cap) == rts_fixnum(s->v));
            break;
        case OP_TRY_PUT:
            if (!CHECK_EQ_INT(rts_mvar_try_put(cap, mv, rts_fixnum(s->v)), s->want))
                fprintf(stderr, "step %zu: try_put\n", pc);
            break;
        case OP_TRY_TAKE:
            ok = rts_mvar_try_take(cap, mv, &out);
            if (!CHECK_EQ_INT(ok, s->want))
                fprintf(stderr, "step %zu: try_take\n", pc);
            else if (ok && !CHECK(out == rts_fixnum(s->v)))
                fprintf(stderr, "step %zu: try_take got %ld\n", pc,
                        rts_is_fixnum(out) ? (long)rts_fixnum_val(out) : -1L);
            break;
        case OP_PENDING:
            if (!CHECK(!__atomic_load_n(&finished[s->k], __ATOMIC_ACQUIRE)))
                fprintf(stderr, "step %zu: worker %d was served\n", pc, s->k);
            break;
        case OP_JOIN:
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_THREADS), (size_t)s->k)))
                return RTS_BLOCK;                         /* again on resumption: now true */
            if (!CHECK(rts_result(cap) == rts_fixnum(s->v)))
                fprintf(stderr, "step %zu: worker %d finished with %ld, not %ld\n", pc, s->k,
                        rts_is_fixnum(rts_result(cap)) ? (long)rts_fixnum_val(rts_result(cap)) : -1L,
                        (long)s->v);
            CHECK(__atomic_load_n(&finished[s->k], __ATOMIC_ACQUIRE));
            break;
        case OP_END:
            printf("mvar: %zu steps on %u capabilities; %u workers finished on others\n", pc,
                   rts_n_caps(), __atomic_load_n(&elsewhere, __ATOMIC_RELAXED));
            CHECK(rts_n_caps() == 1 || __atomic_load_n(&elsewhere, __ATOMIC_RELAXED) > 0);
            return RTS_FINISH;
        }
    }
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    CHECK_EQ_INT(rts_run_main(main_code, M_NSLOTS), 0);
    rts_exit(check_done());
}
