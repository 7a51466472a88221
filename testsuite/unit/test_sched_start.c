/* Test: no false deadlock while the main thread is being made (Note [Idle capabilities and
 * deadlock] in runtime/sched/schedule.c). An idle capability's deadlock check reads the
 * count of live threads, then whether the main thread has finished; this test widens the gap
 * between the two reads (sched_deadlock_check_pause_us, a test hook) to 100 ms. Run with a
 * -ki stack larger than the nursery, making the main thread collects, so the workers, which
 * take part in that GC, run their check right after it, while the main thread is still
 * being made. Before the fix they read 0 live threads there, and once the pause was over a
 * main thread that had started: "thread blocked indefinitely in an MVar operation", exit 1,
 * in 4 of 6 runs (-N2 and -N4, 3 each). The main thread then computes for 300 ms, in steps,
 * and finishes.
 *
 *   test_sched_start [+RTS ... -RTS] */
#include "rtslab.h"
#include "unit/check.h"

#include <stdio.h>
#include <time.h>

extern unsigned sched_deadlock_check_pause_us;   /* runtime/sched/schedule.h */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double t_end;
static unsigned long steps;

static RtsStep main_code(RtsCap *cap)
{
    (void)cap;
    if (t_end == 0)
        t_end = now() + 0.3;
    volatile unsigned long x = 0;
    for (int i = 0; i < 100000; i++)
        x += (unsigned long)i;
    steps++;
    return now() < t_end ? RTS_NEXT : RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    sched_deadlock_check_pause_us = 100000;
    CHECK_EQ_INT(rts_run_main(main_code, 1), 0);
    CHECK(steps > 0);
    printf("main thread ran %s\n", steps > 0 ? "to its end" : "not at all");
    rts_exit(check_done());
}
