/* Idle capabilities and the GC: work started on idle capabilities while GCs run, and the
 * roots that idle capabilities hold through many GCs that other capabilities lead. A way of
 * collecting that treats idle capabilities differently (leaves them out of a GC, say) must
 * keep every check here; each mode also runs at -DS (the heap checked at every GC).
 *
 *   idle_caps race ROUNDS
 *     Each round the main thread (capability 0) starts one worker on every other capability
 *     (rts_thread_start_on: work pushed to an idle capability, which wakes) and at once forces
 *     1-3 GCs, each with 2000 young pairs to copy, so that a capability wakes while a GC is in
 *     progress. Each worker builds a list on its own capability, stores a young list into an
 *     old vector (remembered by its capability), checks the list and returns. The main thread
 *     joins them (blocking: capability 0 itself goes idle, and the last worker's wake of the
 *     main thread wakes it), checks every result and the vector's lists, and forces two more
 *     GCs while the workers' capabilities are idle. Every 97th round a GC is major.
 *
 *   idle_caps roots ROUNDS GCS
 *     Each round, on every capability c but 0: a writer stores a young list into slot c of an
 *     old vector (so only c's remembered set reaches it at the next minor GC) and finishes; a
 *     sleeper builds a list in its frame and sleeps (30 + c ms: a thread of c's on its timer
 *     queue); a blocker builds a list and blocks taking from an empty MVar (a thread of c's,
 *     blocked). The main thread joins the writers, then forces GCS GCs with garbage allocated
 *     between them (every 64th a major one) while c is idle. Then it checks the vector's
 *     lists, puts a list into each MVar (waking the blockers and their capability), joins
 *     every thread, and each thread checks its own list and (a blocker) the list it received.
 *
 * Every check that fails prints "FAIL ..." to stderr; the last line says "... 0 bad" when all
 * passed, and the exit status is 1 otherwise. It needs -N2 or more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab.h"

enum { LIST_LEN = 64, YOUNG_LEN = 8, PUT_LEN = 16 };

static long rounds, gcs_per_round;
static unsigned ncaps;
static long bad;

static void fail(const char *what, long a, long b)
{
    __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "FAIL %s (%ld, %ld)\n", what, a, b);
}

static intptr_t fix(RtsCap *cap, size_t slot)
{
    Value v = rts_slot(cap, slot);
    return rts_is_fixnum(v) ? rts_fixnum_val(v) : 0;
}

/* The list (k k+1 ... k+n-1), built on cap. */
static Value make_list(RtsCap *cap, intptr_t k, int n)
{
    Value l = RTS_NIL;
    for (int i = n - 1; i >= 0; i--)
        l = rts_cons(cap, rts_fixnum(k + i), l);
    return l;
}

static bool list_ok(Value l, intptr_t k, int n)
{
    for (int i = 0; i < n; i++, l = rts_cdr(l))
        if (!rts_has_type(l, T_PAIR) || rts_car(l) != rts_fixnum(k + i))
            return false;
    return l == RTS_NIL;
}

/* --- the threads of the other capabilities -------------------------------------------- */

/* A writer (and the race's worker): K = round * 1000 + c. */
enum { W_K, W_C, W_V, W_L, W_NSLOTS };

static RtsStep writer(RtsCap *cap)
{
    intptr_t k = fix(cap, W_K), c = fix(cap, W_C);
    rts_set_slot(cap, W_L, make_list(cap, k, LIST_LEN));
    Value young = make_list(cap, k + 500, YOUNG_LEN);
    rts_set_field(cap, rts_slot(cap, W_V), (size_t)c, young);   /* old -> young: remembered */
    if (!list_ok(rts_slot(cap, W_L), k, LIST_LEN))
        fail("writer's own list", (long)k, 0);
    rts_set_result(cap, rts_fixnum(k));
    return RTS_FINISH;
}

enum { S_PC, S_K, S_L, S_NSLOTS };

static RtsStep sleeper(RtsCap *cap)
{
    intptr_t k = fix(cap, S_K);
    if (fix(cap, S_PC) == 0) {
        rts_set_slot(cap, S_L, make_list(cap, k + 100, LIST_LEN));
        rts_set_slot(cap, S_PC, rts_fixnum(1));
        rts_sleep(cap, 0.030 + 0.001 * (double)(k % 1000));
        return RTS_BLOCK;
    }
    if (!list_ok(rts_slot(cap, S_L), k + 100, LIST_LEN))
        fail("sleeper's list", (long)k, 0);
    rts_set_result(cap, rts_fixnum(k));
    return RTS_FINISH;
}

enum { B_PC, B_K, B_MV, B_L, B_NSLOTS };

static RtsStep blocker(RtsCap *cap)
{
    intptr_t k = fix(cap, B_K);
    if (fix(cap, B_PC) == 0) {
        rts_set_slot(cap, B_L, make_list(cap, k + 300, LIST_LEN));
        rts_set_slot(cap, B_PC, rts_fixnum(1));
        Value out;
        if (!rts_mvar_take(cap, rts_slot(cap, B_MV), &out))
            return RTS_BLOCK;
    }
    if (!list_ok(rts_result(cap), k + 700, PUT_LEN))
        fail("blocker's received list", (long)k, 0);
    if (!list_ok(rts_slot(cap, B_L), k + 300, LIST_LEN))
        fail("blocker's list", (long)k, 0);
    rts_set_result(cap, rts_fixnum(k));
    return RTS_FINISH;
}

/* --- the main thread ------------------------------------------------------------------- */

/* pc: 0 set up; 1 a round starts; 2 join the writers/workers; 3 forced GCs (roots);
 * 4 join the rest (roots); 9 done. T holds the round's threads: writer of c at c, sleeper at
 * ncaps + c, blocker at 2 ncaps + c. */
enum { M_PC, M_R, M_J, M_G, M_T, M_V, M_MV, M_NSLOTS };

static bool race_mode;

/* A new thread of the round, in slot tslot of T, its K slot set. */
static Value start(RtsCap *cap, RtsCode code, size_t nslots, size_t kslot, intptr_t k,
                   size_t tslot)
{
    Value t = rts_thread_new(cap, code, nslots);
    rts_set_field(cap, rts_slot(cap, M_T), tslot, t);
    rts_thread_set_slot(cap, t, kslot, rts_fixnum(k));
    return t;
}

static void garbage(RtsCap *cap, int n)
{
    (void)make_list(cap, 0, n);
}

static RtsStep main_code(RtsCap *cap)
{
    intptr_t r = fix(cap, M_R), j = fix(cap, M_J), g = fix(cap, M_G);
    switch (fix(cap, M_PC)) {
    case 0:
        rts_set_slot(cap, M_V, rts_make_vector(cap, ncaps, RTS_NIL));
        rts_set_slot(cap, M_T, rts_make_vector(cap, 3 * (size_t)ncaps, RTS_FALSE));
        rts_set_slot(cap, M_MV, rts_make_vector(cap, ncaps, RTS_FALSE));
        rts_gc(cap, true);                      /* the vector is old from now on */
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        return RTS_NEXT;
    case 1:
        if (r == rounds) {
            rts_set_slot(cap, M_PC, rts_fixnum(9));
            return RTS_NEXT;
        }
        for (unsigned c = 1; c < ncaps; c++) {
            intptr_t k = r * 1000 + c;
            Value t = start(cap, writer, W_NSLOTS, W_K, k, c);
            rts_thread_set_slot(cap, t, W_C, rts_fixnum(c));
            rts_thread_set_slot(cap, t, W_V, rts_slot(cap, M_V));
            rts_thread_start_on(cap, t, c);
            if (race_mode)
                continue;
            rts_set_field(cap, rts_slot(cap, M_MV), c, rts_new_mvar(cap));
            t = start(cap, sleeper, S_NSLOTS, S_K, k, ncaps + c);
            rts_thread_start_on(cap, t, c);
            t = start(cap, blocker, B_NSLOTS, B_K, k, 2 * ncaps + c);
            rts_thread_set_slot(cap, t, B_MV, rts_field(rts_slot(cap, M_MV), c));
            rts_thread_start_on(cap, t, c);
        }
        if (race_mode)                          /* GCs while the workers' capabilities wake */
            for (intptr_t i = 0; i <= r % 3; i++) {
                /* young data that lives through the GC, so that it lasts longer than a
                 * capability takes to wake */
                rts_set_slot(cap, M_G, make_list(cap, i, 2000));
                rts_gc(cap, i == 0 && r % 97 == 96);
                if (!list_ok(rts_slot(cap, M_G), i, 2000))
                    fail("main's list", (long)r, (long)i);
            }
        rts_set_slot(cap, M_PC, rts_fixnum(2));
        rts_set_slot(cap, M_J, rts_fixnum(1));
        return RTS_NEXT;
    case 2:                                     /* join the writers */
        for (; j < (intptr_t)ncaps; j++) {
            rts_set_slot(cap, M_J, rts_fixnum(j));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)j)))
                return RTS_BLOCK;
            if (rts_result(cap) != rts_fixnum(r * 1000 + j))
                fail("writer's result", (long)r, (long)j);
        }
        if (race_mode) {
            for (unsigned c = 1; c < ncaps; c++)
                if (!list_ok(rts_field(rts_slot(cap, M_V), c), r * 1000 + c + 500, YOUNG_LEN))
                    fail("remembered list", (long)r, (long)c);
            garbage(cap, 32);
            rts_gc(cap, false);                 /* with the workers' capabilities idle */
            rts_gc(cap, false);                 /* twice */
            rts_set_slot(cap, M_R, rts_fixnum(r + 1));
            rts_set_slot(cap, M_PC, rts_fixnum(1));
            return RTS_NEXT;
        }
        rts_set_slot(cap, M_G, rts_fixnum(0));
        rts_set_slot(cap, M_PC, rts_fixnum(3));
        return RTS_NEXT;
    case 3:                                     /* roots: GCs, one per step */
        if (g < gcs_per_round) {
            garbage(cap, 256);
            rts_gc(cap, g % 64 == 63);
            rts_set_slot(cap, M_G, rts_fixnum(g + 1));
            return RTS_NEXT;
        }
        for (unsigned c = 1; c < ncaps; c++) {
            if (!list_ok(rts_field(rts_slot(cap, M_V), c), r * 1000 + c + 500, YOUNG_LEN))
                fail("remembered list", (long)r, (long)c);
            Value l = make_list(cap, r * 1000 + c + 700, PUT_LEN);
            if (!rts_mvar_put(cap, rts_field(rts_slot(cap, M_MV), c), l))
                fail("put blocked", (long)r, (long)c);
        }
        rts_set_slot(cap, M_J, rts_fixnum(ncaps + 1));
        rts_set_slot(cap, M_PC, rts_fixnum(4));
        return RTS_NEXT;
    case 4:                                     /* join the sleepers and blockers */
        for (; j < 3 * (intptr_t)ncaps; j++) {
            if (j % ncaps == 0)
                continue;
            rts_set_slot(cap, M_J, rts_fixnum(j));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)j)))
                return RTS_BLOCK;
            if (rts_result(cap) != rts_fixnum(r * 1000 + j % ncaps))
                fail("thread's result", (long)r, (long)j);
        }
        rts_set_slot(cap, M_R, rts_fixnum(r + 1));
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        return RTS_NEXT;
    default:
        if (race_mode)
            printf("race: %ld rounds, %u capabilities, %ld bad\n", rounds, ncaps, bad);
        else
            printf("roots: %ld rounds of %ld GCs, %u capabilities, %ld bad\n", rounds,
                   gcs_per_round, ncaps, bad);
        return RTS_FINISH;
    }
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    ncaps = rts_n_caps();
    if (argc >= 3 && strcmp(argv[1], "race") == 0) {
        race_mode = true;
        rounds = atol(argv[2]);
    } else if (argc >= 4 && strcmp(argv[1], "roots") == 0) {
        rounds = atol(argv[2]);
        gcs_per_round = atol(argv[3]);
    } else {
        fprintf(stderr, "usage: idle_caps race ROUNDS | roots ROUNDS GCS\n");
        return 2;
    }
    if (ncaps < 2 || rounds < 1 || rounds > 1000000) {
        fprintf(stderr, "idle_caps: needs -N2 or more and 1..1000000 rounds\n");
        return 2;
    }
    rts_run_main(main_code, M_NSLOTS);
    rts_exit(bad ? 1 : 0);
}
