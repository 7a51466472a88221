/* The time profile, `+RTS -p` (GHC's flag and file name): where the program's threads spend
 * their time, by procedure, from samples on a tick.
 *
 * Note [Time profile]
 * perf sees the interpreter, not the program: every Scheme procedure is vm_loop to it. So
 * the runtime samples the procedure itself, as GHC's -p samples its cost-centre stack on the
 * tick. With -p the timer ticks every RTS_PROF_TICK_US (1 ms) instead of RTS_TICK_MS; each
 * tick adds to the due time of every capability running a thread the CPU time its OS thread
 * used since the last tick (that thread's CPU clock, pthread_getcpuclockid, read by the
 * timer), and once a whole tick (1 ms of CPU) is due clears its heap limit, so the thread
 * it runs stops at its next safe point (Note [VM safe points] in
 * scheme/vm.h: the next call, at most
 * a bounded number of instructions on) and the scheduler takes the sample there: the
 * language layer's `where` (rts_set_profiler) names the procedure of the thread's top frame
 * by a key, and the capability counts the key in a table of its own. Every
 * RTS_TICK_MS / RTS_PROF_TICK_US-th tick is also the scheduler's tick (cap_tick), so
 * threads switch as often as without -p.
 *
 * Every tick counts (a count per capability, not a flag: before, the ticks that fell in one
 * long primitive or one GC were one sample). Time counts only while a thread runs on the
 * capability (prof_thread_starts to prof_thread_stops), so an idle capability gets none. CPU
 * time that a tick finds in a GC sync (from its request to its release) goes to the
 * capability's GC time, the row "(garbage collection)"; the rest adds to its due time, whose
 * whole ticks the next safe point charges to the procedure on top, or the thread's stop to
 * no procedure (after it blocked, another capability may run it already). A tick whose
 * clearing of the heap limit the capability overwrote (it was restoring the limit at that
 * moment) is still counted, only taken at a later safe point. A tick is a millisecond of CPU
 * time, not of elapsed time: on a loaded machine a thread that waits for a CPU is charged
 * nothing meanwhile (with elapsed ticks, trace/profile_N2's light loop, a quarter of the
 * work, got 47 % of the ticks when its OS thread was descheduled). At exit, with the world
 * stopped, the tables are merged
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
/* The timer's function under -p (Note [Time profile]). */
void prof_tick(void);
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
