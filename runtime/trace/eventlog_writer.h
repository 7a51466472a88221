/* Inside the eventlog module (Note [Eventlog] in eventlog.h): what eventlog.c hands its
 * writers, and what it offers them.
 *
 * eventlog.c timestamps every event and keeps each track's open spans; a writer encodes the
 * event on the calling capability's track (its own buffer, no lock) and writes full buffers
 * through trace_out_lock/unlock. A track is written by one OS thread at a time (the one
 * attached to it), and at exit by trace_exit alone, after trace_on went false.
 */
#ifndef RTS_TRACE_EVENTLOG_WRITER_H
#define RTS_TRACE_EVENTLOG_WRITER_H

#include <stdio.h>
#include "trace/eventlog.h"

typedef enum {
    TEV_BEGIN,          /* span: a = the mutator's thread */
    TEV_END,            /* span; for the mutator: a = its thread, n = its TraceStop */
    TEV_WAKE,           /* n = WakeReason */
    TEV_SPIN,           /* str = the lock, a = spins */
    TEV_GC_IDLE,        /* inside gc work: out of work */
    TEV_GC_RESUME,      /* inside gc work: found work again */
    TEV_THREAD,         /* n = ThreadEv, a = the thread, b = the other capability */
    TEV_GC_STATS,       /* stats */
#if RTS_PATCH_IDLE_OPTOUT
    TEV_OPT_OUT,        /* n: 0 opted out of a GC, 1 rejoined; a: the rejoin waited */
#endif
} TraceEvKind;

typedef struct TraceEv {
    uint16_t kind;      /* TraceEvKind */
    uint16_t span;      /* SpanKind of TEV_BEGIN/TEV_END */
    uint32_t n;
    uint64_t a, b;
    const char *str;    /* a string that lives as long as the process */
    const GcRecord *stats;   /* TEV_GC_STATS: valid during the post call only */
} TraceEv;

typedef struct TraceWriter {
    const char *default_suffix;                 /* of <prog> in the default file name */
    /* Allocates the tracks' buffers. */
    void (*init)(unsigned n_caps);
    /* Writes what comes before the events, once, when the file is opened. */
    void (*head)(FILE *f, unsigned n_caps);
    /* Records e, at ts (ns since trace_init), on track no. */
    void (*post)(unsigned no, uint64_t ts, const TraceEv *e);
    /* Writes out what track no holds. */
    void (*flush)(unsigned no);
    /* Writes what comes after the events; ts is the time of the end. */
    void (*tail)(FILE *f, uint64_t ts);
} TraceWriter;

extern const TraceWriter trace_ghc_writer, trace_chrome_writer;

/* The eventlog's file, opened (and its head written) on first use; NULL, after saying why
 * once, when it cannot be opened. trace_out_unlock must follow either way. */
FILE *trace_out_lock(void);
void  trace_out_unlock(void);

#endif
