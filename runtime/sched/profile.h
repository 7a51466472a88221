/* The time profile, `+RTS -p` (GHC's flag and file name): where the program's threads spend
 * their time, by procedure, from samples on a tick.
 *
 * Note [Time profile]
 * perf sees the interpreter, not the program: every Scheme procedure is vm_loop to it. So
 * the runtime samples the procedure itself, as GHC's -p samples its cost-centre stack on the
 * tick. With -p each capability's OS thread has a CPU-time timer of its own (timer_create on
 * CLOCK_THREAD_CPUTIME_ID, the signal SIGPROF sent to that thread only: SIGEV_THREAD_ID, as
 * gperftools' per-thread timers), which fires after every RTS_PROF_TICK_US (1 ms) of that
 * thread's CPU time. Its handler, on the thread itself, counts the tick as due (atomics only:
 * async-signal-safe) and clears the capability's heap limit, so the thread it runs stops at
 * its next safe point (Note [VM safe points] in scheme/vm.h: the next call, at most a bounded
 * number of instructions on) and the scheduler takes the sample there: the language layer's
 * `where` (rts_set_profiler) names the procedure of the thread's top frame by a key, and the
 * capability counts the key in a table of its own. The scheduler's tick (cap_tick, every
 * RTS_TICK_MS, os/timer.h) is the timer thread's, as without -p.
 *
 * Why a timer per thread, not the timer thread: before, the timer thread woke every 1 ms, read
 * each capability's CPU clock and charged what it found since its last look. On a loaded
 * machine the timer thread itself waits for a CPU, for tens or hundreds of ms; then what it
 * found was one lump, charged at once to whatever ran at that moment, and the CPU time of a
 * thread that stopped meanwhile was dropped (no thread ran when it looked). trace/profile_N2
 * failed so (light-loop 4 of 111 ticks: its whole run fell in one absence of the timer; made
 * certain by trace/profile_N2_stall, RTSLAB_TEST_TIMER_STALL). The kernel checks a CPU-time
 * timer on the thread that uses the CPU, so a tick cannot be late for want of another
 * thread's CPU. It checks at its own tick (every 4 ms at HZ=250), when that finds the thread
 * running: a signal then counts 1 + si_overrun ticks, all to the procedure running at the
 * signal, as perf's and gperftools' samples are, but only this thread's own CPU time since
 * its last signal (4 ms as a rule; more in a thread that blocks often, which the kernel's
 * tick finds asleep: 25 in tests/gc/par_sched pingpong). The .prof's header says how many
 * signals there were and the most ticks one counted.
 *
 * Every tick counts (a count per capability, not a flag: before, the ticks that fell in one
 * long primitive or one GC were one sample). A tick counts only while a thread runs on the
 * capability (prof_thread_starts to prof_thread_stops), so an idle capability gets none. A
 * tick in a GC sync (from its request to its release) goes to the capability's GC ticks, the
 * row "(garbage collection)"; the rest are due, and the next safe point charges them to the
 * procedure on top, or the thread's stop to no procedure (after it blocked, another
 * capability may run it already). A tick whose clearing of the heap limit the thread
 * overwrote (the signal came while it was restoring the limit) is still counted, only taken
 * at a later safe point. A tick is a millisecond of CPU time, not of elapsed time: on a
 * loaded machine a thread that waits for a CPU is charged nothing meanwhile (with elapsed
 * ticks, trace/profile_N2's light loop, a quarter of the work, got 47 % of the ticks when its
 * OS thread was descheduled). The signal comes only while its thread uses the CPU, and with
 * SA_RESTART; the runtime's blocking calls that it could still interrupt retry on EINTR. At
 * exit, with the world stopped, the timers are deleted and the tables are merged
 * into <prog>.prof (or <stem>.prof after -po<stem>): the procedures by ticks, most first. */
#ifndef RTS_SCHED_PROFILE_H
#define RTS_SCHED_PROFILE_H

#include <stdbool.h>
#include "sched/capability.h"

extern bool prof_on;                    /* -p: set once at start-up */

void prof_init(unsigned n_caps);        /* nothing without -p */
void prof_set_program(const char *prog);
/* Opens <prog>.prof (or <stem>.prof) now, before the program runs (Note [Output files] in
 * rts/rts.c); false, after saying why on stderr, when it cannot. prof_file: its name and
 * descriptor (-1 when it is not open). Without prof_open, prof_report opens it. */
bool prof_open(void);
int prof_file(const char **name);
/* The scheduler: a thread starts running on cap; a safe point, where a due sample is taken. */
void prof_thread_starts(Capability *cap);
void prof_safe_point(Capability *cap);
/* The thread stops running on cap (blocked, yielded, finished or dead): the ticks of its last
 * step that no safe point took are counted, to no procedure. */
void prof_thread_stops(Capability *cap);
/* At exit, with the world stopped: writes the profile; false if it could not be written
 * (said on stderr). */
bool prof_report(void);

#endif
