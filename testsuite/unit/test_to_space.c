/* Test: Note [To-space by capability] (runtime/sm/gcthread.h). Two threads, started on
 * capabilities 0 and 1, each hold a pair of their own in a frame slot and block on one
 * MVar; the main thread holds both threads in global roots, so at every GC the leader's GC
 * thread reaches both (through the roots and the MVar's queue) before or instead of their
 * own capabilities' GC threads: the placement issue 43's slow mode came from. After each
 * minor GC (aged, then promoted) and a major one, each pair must lie in a to-space block of
 * its thread's capability, and the two pairs must not share a 128-byte span (two cache
 * lines that a spatial prefetcher fetches as one). Before the fix, whoever scanned a
 * thread copied its pair, and the two pairs were copied side by side.
 *
 *   test_to_space   prints "to-space: ok on N capabilities", or fails checks
 */
#include "rtslab.h"
#include "sm/gc.h"
#include "sched/stack.h"
#include "sched/schedule.h"
#include "unit/check.h"

#include <stdio.h>

enum { NT = 2 };
static Value threads[NT], mvar;      /* global roots: the GC updates them */
static int blocked[NT];              /* set by a worker once it waits on the MVar (atomic) */

enum { W_PAIR, W_MVAR, W_K, W_PC, W_NSLOTS };

/* Holds its pair in a slot and waits on the MVar; finishes with the pair's car. */
static RtsStep worker(RtsCap *cap)
{
    intptr_t k = rts_fixnum_val(rts_slot(cap, W_K));
    if (rts_slot(cap, W_PC) == RTS_FALSE) {
        rts_set_slot(cap, W_PC, RTS_TRUE);
        Value got;
        if (!rts_mvar_take(cap, rts_slot(cap, W_MVAR), &got)) {
            __atomic_store_n(&blocked[k], 1, __ATOMIC_RELEASE);
            return RTS_BLOCK;
        }
    }
    rts_set_result(cap, rts_car(rts_slot(cap, W_PAIR)));
    return RTS_FINISH;
}

/* Slot i of thread t's top frame (rts_thread_set_slot's arithmetic). */
static Value thread_slot(Value t, size_t i)
{
    Value s = tso_stack(t);
    Value *sl = stack_slots(s);
    size_t sp = stack_sp(s);
    size_t n = (size_t)rts_fixnum_val(sl[sp - 1]);
    return sl[sp - 2 - n + i];
}

static void check_placement(const char *after)
{
    Value p[NT];
    for (int k = 0; k < NT; k++) {
        p[k] = thread_slot(threads[k], W_PAIR);
        CHECK_EQ_INT(rts_fixnum_val(rts_car(p[k])), 100 + k);
        const bdescr *bd = bdescr_of(obj_ptr(p[k]));
        if (!CHECK(!(bd->flags & BF_NURSERY)))
            fprintf(stderr, "after %s: thread %d's pair is still in a nursery\n", after, k);
        else if (!CHECK_EQ_INT(bd->dest, sched_thread_cap(threads[k])))
            fprintf(stderr, "after %s: thread %d's pair in a block for capability %u\n",
                    after, k, bd->dest);
    }
    if (rts_n_caps() > 1) {
        uintptr_t a = (uintptr_t)obj_ptr(p[0]), b = (uintptr_t)obj_ptr(p[1]);
        if (!CHECK(a / 128 != b / 128))
            fprintf(stderr, "after %s: the two threads' pairs are %ld bytes apart\n", after,
                    (long)(b - a));
    }
}

enum { M_STATE, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    intptr_t state = rts_is_fixnum(rts_slot(cap, M_STATE)) ? rts_fixnum_val(rts_slot(cap, M_STATE)) : 0;
    switch (state) {
    case 0:
        mvar = rts_new_mvar(cap);
        for (int k = 0; k < NT; k++) {
            /* the pairs are made here, side by side in this capability's nursery */
            Value pair = rts_cons(cap, rts_fixnum(100 + k), RTS_NIL);
            Value t = rts_thread_new(cap, worker, W_NSLOTS);
            threads[k] = t;
            rts_thread_set_slot(cap, t, W_PAIR, pair);
            rts_thread_set_slot(cap, t, W_MVAR, mvar);
            rts_thread_set_slot(cap, t, W_K, rts_fixnum(k));
            rts_thread_start_on(cap, t, (unsigned)k);
        }
        rts_set_slot(cap, M_STATE, rts_fixnum(1));
        /* fall through */
    case 1:
        for (int k = 0; k < NT; k++)
            if (!__atomic_load_n(&blocked[k], __ATOMIC_ACQUIRE))
                return RTS_YIELD;
        rts_gc(cap, false);
        check_placement("a minor GC (aged)");
        rts_gc(cap, false);
        check_placement("a second minor GC (promoted)");
        rts_gc(cap, true);
        check_placement("a major GC");
        for (int k = 0; k < NT; k++)
            CHECK(rts_mvar_put(cap, mvar, RTS_TRUE));
        rts_set_slot(cap, M_STATE, rts_fixnum(2));
        /* fall through */
    case 2:
        for (int k = 0; k < NT; k++)
            if (!rts_thread_killed(threads[k]) && !rts_thread_join(cap, threads[k]))
                return RTS_BLOCK;            /* resumed when it finishes: join again */
        return RTS_FINISH;
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    threads[0] = threads[1] = mvar = RTS_FALSE;
    rts_add_root(&threads[0]);
    rts_add_root(&threads[1]);
    rts_add_root(&mvar);
    CHECK_EQ_INT(rts_run_main(main_code, M_NSLOTS), 0);
    int failed = check_done();
    if (!failed)
        printf("to-space: ok on %u capabilities\n", rts_n_caps());
    rts_exit(failed);
}
