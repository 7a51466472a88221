/* The eventlog (-l[file]): per-capability events written as Chrome Trace Event JSON, which
 * Perfetto's UI opens directly, one track (tid) per capability.
 *
 * Note [Eventlog]
 * Each capability appends fixed-size records to a buffer of its own, with no lock; a full
 * buffer is formatted and written to the file under the file's mutex (off the hot path).
 * Spans are B/E pairs, properly nested per capability:
 *   mutator          a lightweight thread running (arg: its id)
 *   stw request      the leader stopping the world: from its election to the last arrival
 *   enter barrier    a follower: from its arrival to the leader's go
 *   minor GC / major GC   the capability's part of a GC, up to its release
 *     gc work          evacuating and scavenging (nested in the GC span)
 *     await gc threads the leader waiting for the other GC threads (nested)
 *     leave barrier    a follower waiting to be released (nested)
 *   sleep            a nanosleep inside any barrier wait (nested in it)
 *   idle             the capability asleep with nothing to run
 * Instants: wake (arg: woken for a GC or for work), spin (a contended spinlock: its name,
 * the spins). When tracing is off each event costs one predicted branch on trace_on.
 * The eventlog is below the layers it records (runtime/README.md): it knows capabilities
 * only as track numbers, set per OS thread by trace_attach.
 */
#ifndef RTS_TRACE_EVENTLOG_H
#define RTS_TRACE_EVENTLOG_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
    SPAN_MUTATOR, SPAN_STW_REQUEST, SPAN_ENTER_BARRIER, SPAN_MINOR_GC, SPAN_MAJOR_GC,
    SPAN_GC_WORK, SPAN_AWAIT_GC_THREADS, SPAN_LEAVE_BARRIER, SPAN_SLEEP, SPAN_IDLE,
    SPAN_NKINDS
} SpanKind;

typedef enum { WAKE_FOR_WORK, WAKE_FOR_GC } WakeReason;

extern bool trace_on;

/* Starts the eventlog when -l was given: one track per capability. A file named by -l<file>
 * is opened now (a failure ends the process, saying why); without a name the file is
 * <prog>.eventlog.json, opened by trace_set_program or else when first written. */
void trace_init(const char *prog, unsigned n_caps);
/* Names the program for the default file (before anything was written): its base name less
 * a ".scm" ending. */
void trace_set_program(const char *prog);
/* The calling OS thread runs capability cap_no: its events go to that track. */
void trace_attach(unsigned cap_no);
/* Closes open spans, flushes every buffer and closes the file; false, after saying so on
 * stderr, when the eventlog could not be opened or written in full. */
bool trace_exit(void);

void trace_begin_slow(SpanKind k, uint64_t arg);
void trace_end_slow(SpanKind k);
void trace_wake_slow(WakeReason why);
void trace_spin(const char *lock, uint64_t spins);
bool trace_suspend_mutator_slow(uint64_t *arg);

/* Events of the calling OS thread's capability (my_cap); ignored elsewhere. */
static inline void trace_begin(SpanKind k, uint64_t arg)
{ if (__builtin_expect(trace_on, 0)) trace_begin_slow(k, arg); }
static inline void trace_end(SpanKind k)
{ if (__builtin_expect(trace_on, 0)) trace_end_slow(k); }
static inline void trace_wake(WakeReason why)
{ if (__builtin_expect(trace_on, 0)) trace_wake_slow(why); }
/* A sync stopping this capability: ends the mutator span if it is the innermost one open,
 * returning true and its argument (the thread), for trace_begin(SPAN_MUTATOR, arg) after. */
static inline bool trace_suspend_mutator(uint64_t *arg)
{ return __builtin_expect(trace_on, 0) && trace_suspend_mutator_slow(arg); }

#endif
