/* The tick: a background OS thread that calls a function every RTS_TICK_MS. The scheduler
 * registers the function that asks each capability to switch threads at its next safe point
 * (sched/capability.h); the timer itself knows nothing of capabilities. */
#ifndef RTS_OS_TIMER_H
#define RTS_OS_TIMER_H

void timer_start(void (*tick)(void));
void timer_stop(void);

#endif
