/* Scheduling: preemption by the timer at safe points, yield, sleep, join.
 *  - two spinners each loop (RTS_NEXT, never yielding) until they have seen the other one
 *    run: only the timer's preemption lets both make progress on one capability;
 *  - a sleeper sleeps 50 ms and checks the clock moved on by at least that much;
 *  - the main thread joins all three and checks their results. */
#include <stdio.h>
#include <time.h>
#include "rtslab.h"

static long spins[2];                 /* atomics: the spinners may run on two capabilities */
static long switches;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

enum { S_ID, S_LAST_OTHER, S_NSLOTS };

static RtsStep spinner(RtsCap *cap)
{
    intptr_t me = rts_fixnum_val(rts_slot(cap, S_ID));
    long other = __atomic_load_n(&spins[1 - me], __ATOMIC_RELAXED);
    if (rts_slot(cap, S_LAST_OTHER) != rts_fixnum(other)) {   /* the other ran meanwhile */
        if (rts_slot(cap, S_LAST_OTHER) != RTS_FALSE)
            __atomic_fetch_add(&switches, 1, __ATOMIC_RELAXED);
        rts_set_slot(cap, S_LAST_OTHER, rts_fixnum(other));
    }
    __atomic_fetch_add(&spins[me], 1, __ATOMIC_RELAXED);
    rts_cons(cap, rts_fixnum(me), RTS_NIL);                    /* allocate as it spins */
    if (__atomic_load_n(&switches, __ATOMIC_RELAXED) >= 4) {
        rts_set_result(cap, rts_fixnum(me));
        return RTS_FINISH;
    }
    return RTS_NEXT;
}

enum { Z_T0, Z_NSLOTS };
static double sleep_start;

static RtsStep sleeper(RtsCap *cap)
{
    if (rts_slot(cap, Z_T0) == RTS_FALSE) {
        rts_set_slot(cap, Z_T0, RTS_TRUE);
        sleep_start = now();
        rts_sleep(cap, 0.05);
        return RTS_BLOCK;
    }
    rts_set_result(cap, rts_bool(now() - sleep_start >= 0.049));
    return RTS_FINISH;
}

enum { M_T, M_PC, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    if (pc == 0) {
        rts_set_slot(cap, M_T, rts_make_vector(cap, 3, RTS_FALSE));
        for (int i = 0; i < 3; i++) {
            Value t = i < 2 ? rts_thread_new(cap, spinner, S_NSLOTS) : rts_thread_new(cap, sleeper, Z_NSLOTS);
            rts_set_field(cap, rts_slot(cap, M_T), (size_t)i, t);
            if (i < 2) rts_thread_set_slot(cap, t, S_ID, rts_fixnum(i));
            rts_thread_start(cap, t);
        }
        pc = 1;
    }
    for (; pc <= 3; pc++) {
        rts_set_slot(cap, M_PC, rts_fixnum(pc));
        if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)pc - 1)))
            return RTS_BLOCK;
        Value r = rts_result(cap);
        if (pc <= 2)
            printf("spinner %ld finished\n", (long)rts_fixnum_val(r));
        else
            printf("sleeper slept long enough: %s\n", r == RTS_TRUE ? "yes" : "no");
    }
    printf("preempted: %s\n", switches >= 4 && spins[0] > 0 && spins[1] > 0 ? "yes" : "no");
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    rts_run_main(main_code, M_NSLOTS);
    rts_exit(0);
}
