/* The tick: a background OS thread that calls a function every period_us microseconds
 * (RTS_TICK_MS). The scheduler registers the function that asks each capability to switch
 * threads at its next safe point (sched/capability.h); the timer itself knows nothing of
 * capabilities. The time profile's ticks (-p) are not this thread's but CPU-time timers of
 * the capabilities' own OS threads (Note [Time profile] in sched/profile.h).
 * For tests, RTSLAB_TEST_TIMER_STALL=MS makes the second tick MS ms late, as when the timer
 * thread waits for a CPU on a loaded machine (trace/profile_N2_stall). */
#ifndef RTS_OS_TIMER_H
#define RTS_OS_TIMER_H

void timer_start(void (*tick)(void), long period_us);
void timer_stop(void);

#endif
