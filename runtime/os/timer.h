/* The tick: a background OS thread that, every RTS_TICK_MS, asks each capability to switch
 * threads at its next safe point (context_switch) and makes its next heap check fail
 * (hplim = NULL) so that a thread in a tight allocating loop reaches that safe point. */
#ifndef RTS_OS_TIMER_H
#define RTS_OS_TIMER_H

void timer_start(void);
void timer_stop(void);

#endif
