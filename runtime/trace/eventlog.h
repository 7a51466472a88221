/* The eventlog (-l[file]): per-capability events, written in GHC's binary eventlog format
 * (the default; ThreadScope, ghc-events and eventlog2html read it) or as Chrome Trace Event
 * JSON (--eventlog-format=chrome; Perfetto's UI opens it), one track per capability.
 *
 * Note [Eventlog]
 * The runtime records spans, instants and statistics through the calls below; the module
 * keeps, per capability (track), the stack of spans begun and not yet ended, and hands every
 * event to one of two writers (eventlog_writer.h):
 *   eventlog_ghc.c     GHC's format (Note [GHC eventlog format] in eventlog_ghc.h): each
 *                      capability encodes its events into a block buffer of its own, with
 *                      no lock; a full block is written under the file's mutex.
 *   eventlog_chrome.c  fixed-size records per capability, formatted as JSON when a buffer
 *                      is written out (off the hot path).
 * Spans are begin/end pairs, properly nested per capability:
 *   mutator          a lightweight thread running (arg: its id); it ends with GHC's stop
 *                    status (TraceStop: yielding, blocked, finished, or stopped for a GC)
 *   stw request      the leader stopping the world: from its election to the last arrival
 *   enter barrier    a follower: from its arrival to the leader's go
 *   minor GC / major GC   the capability's part of a GC, up to its release
 *     gc work          evacuating and scavenging (nested in the GC span)
 *     await gc threads the leader waiting for the other GC threads (nested)
 *     leave barrier    a follower waiting to be released (nested)
 *   sleep            a nanosleep or futex wait inside any barrier wait (nested in it)
 *   idle             the capability asleep with nothing to run
 * Instants: wake (woken for a GC or for work), spin (a contended spinlock: its name, the
 * spins), gc idle / gc resume (a GC thread out of work looking for more, and finding some:
 * inside gc work), the thread lifecycle (created, made runnable here, woken onto another
 * capability, migrated to another capability), and after each GC, from its leader, the GC's
 * statistics (generation, bytes copied in all and by the busiest GC thread, GHC's balanced
 * copied bytes) and the heap's (bytes allocated so far, heap size, live bytes).
 * The table of which GHC event each of these is, and the event numbers of rtslab's own, is
 * Note [GHC eventlog format]; testsuite/trace/ghc_eventlog.py converts the binary log back
 * to the JSON, event for event.
 * When tracing is off each trace point costs one predicted branch on trace_on.
 * The eventlog is below the layers it records (runtime/README.md): it knows capabilities
 * only as track numbers, set per OS thread by trace_attach, and threads only as numbers.
 */
#ifndef RTS_TRACE_EVENTLOG_H
#define RTS_TRACE_EVENTLOG_H

#include <stdbool.h>
#include <stdint.h>
#include "rts_config.h"

typedef enum {
    SPAN_MUTATOR, SPAN_STW_REQUEST, SPAN_ENTER_BARRIER, SPAN_MINOR_GC, SPAN_MAJOR_GC,
    SPAN_GC_WORK, SPAN_AWAIT_GC_THREADS, SPAN_LEAVE_BARRIER, SPAN_SLEEP, SPAN_IDLE,
    SPAN_NKINDS
} SpanKind;

typedef enum { WAKE_FOR_WORK, WAKE_FOR_GC } WakeReason;

/* Why a thread stopped running: GHC's STOP_THREAD status values (EventLogFormat.h). */
typedef enum {
    STOP_HEAP_OVERFLOW = 1,    /* stopped for a GC or another stop-the-world sync */
    STOP_THREAD_YIELDING = 3,  /* preempted, or yielded: still runnable */
    STOP_THREAD_BLOCKED = 4,   /* blocked on something without a status of its own (IO) */
    STOP_THREAD_FINISHED = 5,  /* finished or killed */
    STOP_BLOCKED_ON_MVAR = 7,  /* an MVar take, read or put, or a join */
    STOP_BLOCKED_ON_DELAY = 11,/* asleep */
} TraceStop;

/* The thread lifecycle instants (GHC's CREATE_THREAD, THREAD_RUNNABLE, THREAD_WAKEUP,
 * MIGRATE_THREAD). */
typedef enum {
    THREAD_EV_CREATE,          /* started on this capability (cap unused) */
    THREAD_EV_RUNNABLE,        /* made runnable on this capability (cap unused) */
    THREAD_EV_WAKEUP,          /* made runnable on capability cap, by this one */
    THREAD_EV_MIGRATE,         /* moved from this capability's run queue to cap's */
    THREAD_EV_NKINDS
} ThreadEv;

/* One GC, as its leader (sm/gc.c) records it after the collection: the one record of a GC,
 * which the eventlog (trace_gc_stats), -s and -S (stats/stats.c, through gc_on_done) and
 * the patches' statistics sections read. Every field is filled for every GC, whether or not
 * the eventlog is on. It lives here, in the lowest layer that reads it (runtime/README.md). */
typedef struct GcRecord {
    bool     major;            /* the generation collected: 0 minor, 1 major */
    unsigned gc_threads;
    uint64_t copied_bytes;
    uint64_t max_thread_copied_bytes;   /* the most any one GC thread copied */
    uint64_t balanced_copied_bytes;     /* GHC's par_balanced_copied (gc.c says how); 0
                                           for a GC with one GC thread */
    uint64_t allocated_bytes;  /* by the mutators since the start */
    uint64_t heap_bytes;       /* the heap's blocks */
    uint64_t live_bytes;       /* the old generation after the GC */
    uint64_t stw_ns;           /* from the leader's request to the last arrival */
#if RTS_PATCH_STACK_CHUNKS
    uint64_t stack_scans;      /* stack objects (chunks) scanned, summed over the GC threads */
#endif
    uint64_t pause_ns;
    uint64_t cpu_ns;
#if RTS_PATCH_GEN0_STEAL
    uint64_t steal_tries, steals;    /* summed over the GC threads (Note [Minor GC stealing]
                                        in sm/gc.h) */
#endif
} GcRecord;

typedef enum { EVENTLOG_GHC, EVENTLOG_CHROME } EventlogFormat;   /* base_cfg->eventlog_format */

extern bool trace_on;

/* Starts the eventlog when -l was given: one track per capability. A file named by -l<file>
 * is opened now (a failure ends the process, saying why); without a name the file is
 * <prog>.eventlog (GHC's name; <prog>.eventlog.json for the Chrome format), opened by
 * trace_open (before the program runs: Note [Output files] in rts/rts.c) or else when first
 * written. */
void trace_init(const char *prog, unsigned n_caps);
/* Names the program for the default file (before the file was opened): its base name less
 * a ".scm" ending. */
void trace_set_program(const char *prog);
/* Opens the eventlog's file now if -l was given; false, after saying why on stderr, when it
 * cannot be opened. trace_file: its name and descriptor (-1 when it is not open). */
bool trace_open(void);
int trace_file(const char **name);
/* The calling OS thread runs capability cap_no: its events go to that track. */
void trace_attach(unsigned cap_no);
/* Closes open spans, flushes every buffer and closes the file; false, after saying so on
 * stderr, when the eventlog could not be opened or written in full. */
bool trace_exit(void);

void trace_begin_slow(SpanKind k, uint64_t arg);
void trace_end_slow(SpanKind k);
void trace_stop_thread_slow(TraceStop why);
void trace_wake_slow(WakeReason why);
void trace_spin(const char *lock, uint64_t spins);
void trace_thread_slow(ThreadEv ev, uint64_t thread, unsigned cap);
void trace_gc_idle_slow(bool idle);
void trace_gc_stats_slow(const GcRecord *s);
bool trace_suspend_mutator_slow(uint64_t *arg);

/* Events of the calling OS thread's capability (my_cap); ignored elsewhere. */
static inline void trace_begin(SpanKind k, uint64_t arg)
{ if (__builtin_expect(trace_on, 0)) trace_begin_slow(k, arg); }
/* Ends span k; a mutator span ends with STOP_THREAD_YIELDING (use trace_stop_thread to say
 * why). */
static inline void trace_end(SpanKind k)
{ if (__builtin_expect(trace_on, 0)) trace_end_slow(k); }
/* Ends the mutator span (it must be the innermost one open) with the reason it stopped. */
static inline void trace_stop_thread(TraceStop why)
{ if (__builtin_expect(trace_on, 0)) trace_stop_thread_slow(why); }
static inline void trace_wake(WakeReason why)
{ if (__builtin_expect(trace_on, 0)) trace_wake_slow(why); }
static inline void trace_thread(ThreadEv ev, uint64_t thread, unsigned cap)
{ if (__builtin_expect(trace_on, 0)) trace_thread_slow(ev, thread, cap); }
/* A GC thread runs out of work and looks for more (true), or finds some (false). */
static inline void trace_gc_idle(bool idle)
{ if (__builtin_expect(trace_on, 0)) trace_gc_idle_slow(idle); }
static inline void trace_gc_stats(const GcRecord *s)
{ if (__builtin_expect(trace_on, 0)) trace_gc_stats_slow(s); }
/* A sync stopping this capability: ends the mutator span (status STOP_HEAP_OVERFLOW) if it is
 * the innermost one open, returning true and its argument (the thread), for
 * trace_begin(SPAN_MUTATOR, arg) after. */
static inline bool trace_suspend_mutator(uint64_t *arg)
{ return __builtin_expect(trace_on, 0) && trace_suspend_mutator_slow(arg); }
#if RTS_PATCH_IDLE_OPTOUT
/* An idle capability opts out of a GC at its go (false), or rejoins after opting out
 * (true; waited: it had to wait for the release of a GC still in progress). Instants
 * "opt out" and "rejoin" (Note [Idle opt-out] in sync/stw.h). */
void trace_optout_slow(bool rejoin, bool waited);
static inline void trace_optout(bool rejoin, bool waited)
{ if (__builtin_expect(trace_on, 0)) trace_optout_slow(rejoin, waited); }
#endif

#endif
