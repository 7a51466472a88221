/* Error path: stack overflow under -K. A frame whose code pushes another frame of itself and
 * returns RTS_NEXT, without end; each frame also keeps a fresh pair in a slot, so GCs run
 * while the stack grows and scan it.
 *
 * usage: err_stack [main|fork|limit DEPTH]
 *   main       the main thread recurses: "rtslab: stack overflow", exit 1
 *   fork       two forked threads recurse and die of it ("rtslab: thread N: stack overflow"),
 *              alone: a third forked thread finishes normally, main joins all three, checks
 *              the good one's result, collects, and prints "main: carried on" (exit 0)
 *   limit N    main recurses N frames deep only, then unwinds; prints "depth N: ok"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab.h"

/* Recursive frame: R_PC is #f until the frame has pushed its callee. */
enum { R_PC, R_PAIR, R_DEPTH, R_NSLOTS };

static intptr_t max_depth = -1;              /* -1: no end */

static RtsStep recurse(RtsCap *cap)
{
    if (rts_slot(cap, R_PC) == RTS_FALSE) {
        /* The caller passes our depth in the result register (#f: we are a thread's first
         * frame); rts_stack_depth would make the recursion quadratic. */
        Value dv = rts_result(cap);
        intptr_t d = rts_is_fixnum(dv) ? rts_fixnum_val(dv) : 1;
        rts_set_slot(cap, R_PC, rts_fixnum(1));
        rts_set_slot(cap, R_DEPTH, rts_fixnum(d));
        rts_set_slot(cap, R_PAIR, rts_cons(cap, rts_fixnum(d), RTS_NIL));
        if (max_depth < 0 || d < max_depth) {
            rts_set_result(cap, rts_fixnum(d + 1));
            rts_push_frame(cap, recurse, R_NSLOTS);
            return RTS_NEXT;
        }
        rts_set_result(cap, rts_fixnum(d));
    }
    /* The callee returned (or there was none): check our slots survived, and return. */
    Value p = rts_slot(cap, R_PAIR);
    if (!rts_has_type(p, T_PAIR) || rts_car(p) != rts_slot(cap, R_DEPTH)) {
        fprintf(stderr, "err_stack: frame slots corrupted at depth %ld\n",
                (long)rts_fixnum_val(rts_slot(cap, R_DEPTH)));
        exit(2);
    }
    if (rts_slot(cap, R_DEPTH) == rts_fixnum(1) && rts_stack_depth(cap) == 1)
        return RTS_FINISH;
    rts_pop_frame(cap);
    return RTS_NEXT;
}

/* A well-behaved thread: sums 1..1000 in a list, yielding now and then. */
enum { G_I, G_LIST, G_NSLOTS };

static RtsStep good(RtsCap *cap)
{
    if (rts_slot(cap, G_I) == RTS_FALSE) {
        rts_set_slot(cap, G_I, rts_fixnum(0));
        rts_set_slot(cap, G_LIST, RTS_NIL);
    }
    intptr_t i = rts_fixnum_val(rts_slot(cap, G_I));
    for (; i < 1000; i++) {
        rts_set_slot(cap, G_LIST, rts_cons(cap, rts_fixnum(i + 1), rts_slot(cap, G_LIST)));
        if (i % 100 == 99) {
            rts_set_slot(cap, G_I, rts_fixnum(i + 1));
            return RTS_YIELD;
        }
    }
    intptr_t sum = 0;
    for (Value l = rts_slot(cap, G_LIST); l != RTS_NIL; l = rts_cdr(l))
        sum += rts_fixnum_val(rts_car(l));
    rts_set_result(cap, rts_fixnum(sum));
    return RTS_FINISH;
}

enum { M_PC, M_T1, M_T2, M_T3, M_NSLOTS };

static bool fork_mode;

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    switch (pc) {
    case 0:
        if (!fork_mode) {
            rts_set_slot(cap, M_PC, rts_fixnum(10));
            rts_set_result(cap, rts_fixnum(2));
            rts_push_frame(cap, recurse, R_NSLOTS);
            return RTS_NEXT;
        }
        for (int k = 0; k < 3; k++) {
            Value t = rts_thread_new(cap, k == 1 ? good : recurse, k == 1 ? G_NSLOTS : R_NSLOTS);
            rts_set_slot(cap, M_T1 + k, t);
            rts_thread_start(cap, t);
        }
        printf("main: forked threads %ld %ld %ld\n",
               (long)rts_thread_id(rts_slot(cap, M_T1)), (long)rts_thread_id(rts_slot(cap, M_T2)),
               (long)rts_thread_id(rts_slot(cap, M_T3)));
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        /* fall through */
    case 1:
        rts_set_slot(cap, M_PC, rts_fixnum(2));
        if (!rts_thread_join(cap, rts_slot(cap, M_T1))) return RTS_BLOCK;
        /* fall through */
    case 2:
        rts_set_slot(cap, M_PC, rts_fixnum(3));
        if (!rts_thread_join(cap, rts_slot(cap, M_T2))) return RTS_BLOCK;
        /* fall through */
    case 3:
        if (rts_result(cap) != rts_fixnum(500500)) {
            printf("main: the good thread's result is wrong\n");
            return RTS_FINISH;
        }
        printf("main: the good thread finished: 500500\n");
        rts_set_slot(cap, M_PC, rts_fixnum(4));
        if (!rts_thread_join(cap, rts_slot(cap, M_T3))) return RTS_BLOCK;
        /* fall through */
    case 4:
        printf("main: killed %d %d %d, joined result of a killed thread: %s\n",
               rts_thread_killed(rts_slot(cap, M_T1)), rts_thread_killed(rts_slot(cap, M_T2)),
               rts_thread_killed(rts_slot(cap, M_T3)), rts_result(cap) == RTS_FALSE ? "#f" : "?");
        rts_gc(cap, true);
        rts_set_slot(cap, M_T1, rts_cons(cap, rts_fixnum(1), RTS_NIL));
        printf("main: carried on\n");
        return RTS_FINISH;
    default:                                  /* the recursion returned (limit mode) */
        printf("depth %ld: ok\n", (long)rts_fixnum_val(rts_result(cap)));
        return RTS_FINISH;
    }
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "fork") == 0)
        fork_mode = true;
    else if (argc > 2 && strcmp(argv[1], "limit") == 0)
        max_depth = atol(argv[2]);
    else if (argc > 1 && strcmp(argv[1], "main") != 0) {
        fprintf(stderr, "usage: err_stack [main|fork|limit DEPTH]\n");
        return 2;
    }
    rts_run_main(main_code, M_NSLOTS);
    printf("main: exiting\n");
    rts_exit(0);
}
