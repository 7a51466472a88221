/* Many threads blocked and woken: N threads (default 10 000) each allocate a private
 * object, then block taking from one gate MVar; the main thread puts 0..N-1 into the gate,
 * one value at a time, and each put wakes the longest-waiting taker (FIFO). Blocked threads
 * are reachable only through the gate's queue while GCs run. Each thread checks its object,
 * returns (its creation index . value received); the main thread joins them all and checks
 * that every value was received exactly once and, on one capability (where the k-th thread
 * created is the k-th to block), that the k-th thread received k. With more capabilities
 * threads are pushed to idle ones and block in an order of their making.
 *
 * usage: gc_threads [n] */
#include <stdio.h>
#include <stdlib.h>
#include "rtslab.h"

static long n_threads = 10000;
static long bad;
static char *received;            /* received[v]: value v was delivered */
static bool fifo;

enum { T_INDEX, T_GATE, T_OBJ, T_PC, T_NSLOTS };

static RtsStep worker(RtsCap *cap)
{
    intptr_t idx = rts_fixnum_val(rts_slot(cap, T_INDEX));
    Value got;
    if (rts_slot(cap, T_PC) == RTS_FALSE) {
        Value obj = rts_make_vector(cap, 3, rts_fixnum(idx));
        rts_set_slot(cap, T_OBJ, obj);
        rts_set_slot(cap, T_PC, rts_fixnum(1));
        if (!rts_mvar_take(cap, rts_slot(cap, T_GATE), &got))
            return RTS_BLOCK;
    } else {
        got = rts_result(cap);
    }
    Value obj = rts_slot(cap, T_OBJ);
    if (rts_field(obj, 0) != rts_fixnum(idx) || rts_field(obj, 2) != rts_fixnum(idx))
        bad++;
    rts_set_result(cap, rts_cons(cap, rts_fixnum(idx), got));
    return RTS_FINISH;
}

enum { M_THREADS, M_GATE, M_I, M_PC, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    intptr_t i = rts_is_fixnum(rts_slot(cap, M_I)) ? rts_fixnum_val(rts_slot(cap, M_I)) : 0;
    switch (pc) {
    case 0:                                /* fork all, each runs until it blocks */
        rts_set_slot(cap, M_GATE, rts_new_mvar(cap));
        rts_set_slot(cap, M_THREADS, rts_make_vector(cap, (size_t)n_threads, RTS_FALSE));
        for (i = 0; i < n_threads; i++) {
            Value t = rts_thread_new(cap, worker, T_NSLOTS);
            rts_set_field(cap, rts_slot(cap, M_THREADS), (size_t)i, t);
            rts_thread_set_slot(cap, t, T_INDEX, rts_fixnum(i));
            rts_thread_set_slot(cap, t, T_GATE, rts_slot(cap, M_GATE));
            rts_thread_start(cap, t);
        }
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        return RTS_YIELD;                  /* let every worker run and block */
    case 1:                                /* open the gate one value at a time */
        for (; i < n_threads; i++) {
            rts_set_slot(cap, M_I, rts_fixnum(i + 1));
            if (!rts_mvar_put(cap, rts_slot(cap, M_GATE), rts_fixnum(i))) {
                rts_set_slot(cap, M_PC, rts_fixnum(1));
                return RTS_BLOCK;          /* full: resumes once a taker emptied it */
            }
            rts_make_vector(cap, 8, RTS_FALSE);   /* garbage between puts */
        }
        rts_set_slot(cap, M_I, rts_fixnum(0));
        rts_set_slot(cap, M_PC, rts_fixnum(2));
        return RTS_NEXT;
    case 2:                                /* join them all */
        for (; i < n_threads; i++) {
            rts_set_slot(cap, M_I, rts_fixnum(i));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_THREADS), (size_t)i)))
                return RTS_BLOCK;
            Value r = rts_result(cap);
            intptr_t got = rts_fixnum_val(rts_cdr(r));
            if (rts_car(r) != rts_fixnum(i) || got < 0 || got >= n_threads || received[got]++
                || (fifo && got != i))
                bad++;
        }
        printf("%ld threads blocked, woken %sand joined; %ld bad\n", n_threads,
               fifo ? "in order " : "", bad);
        if (bad)
            rts_thread_error(cap, "thread check failed");
        return RTS_FINISH;
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) n_threads = atol(argv[1]);
    received = calloc((size_t)n_threads, 1);
    fifo = rts_options()->n_caps == 1 && !rts_options()->n_caps_auto;
    rts_run_main(main_code, M_NSLOTS);
    printf("ok\n");
    rts_exit(0);
}
