/* The tick: a background OS thread that calls a function every period_us microseconds
 * (RTS_TICK_MS; RTS_PROF_TICK_US under -p). The scheduler registers the function that asks
 * each capability to switch threads at its next safe point (sched/capability.h), or under
 * -p the profiler's (sched/profile.h); the timer itself knows nothing of capabilities. */
#ifndef RTS_OS_TIMER_H
#define RTS_OS_TIMER_H

void timer_start(void (*tick)(void), long period_us);
void timer_stop(void);

#endif
