/* The eventlog: see Note [Eventlog] in eventlog.h. This file keeps the tracks' open spans
 * and the file; eventlog_ghc.c and eventlog_chrome.c encode the events. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/eventlog_writer.h"
#include "base/util.h"

bool trace_on;

enum { MAX_OPEN_SPANS = 16 };

typedef struct Track {
    SpanKind open[MAX_OPEN_SPANS];   /* spans begun and not yet ended, innermost last */
    uint64_t open_arg[MAX_OPEN_SPANS];
    unsigned depth;
    uint64_t last_ts;                /* of the last event, written or not */
} Track;

static Track *tracks;                   /* one per capability */
static unsigned trace_n_caps;
static __thread int my_track = -1;      /* the capability this OS thread runs, if any */
static const TraceWriter *writer;
static FILE *out;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;   /* guards out and what follows */
static char out_name[4096];             /* the file, opened on first use unless -l named it */
static bool out_failed;                 /* it could not be opened or written: said once */
static uint64_t t0;

/* Opens the file and writes its head; on failure says why, once. Caller holds out_mu. */
static bool open_out(void)
{
    if (out || out_failed)
        return out != NULL;
    out = fopen(out_name, "w");
    if (!out) {
        fprintf(stderr, "rtslab: cannot open the eventlog %s: %s\n", out_name, strerror(errno));
        out_failed = true;
        return false;
    }
    writer->head(out, trace_n_caps);
    return true;
}

FILE *trace_out_lock(void)
{
    pthread_mutex_lock(&out_mu);
    return open_out() ? out : NULL;
}

void trace_out_unlock(void)
{
    pthread_mutex_unlock(&out_mu);
}

/* The calling OS thread's track, or NULL (not attached, or not tracing). */
static inline Track *my(unsigned *no)
{
    if (my_track < 0 || !tracks)
        return NULL;
    *no = (unsigned)my_track;
    return &tracks[*no];
}

static void post(unsigned no, Track *t, const TraceEv *e)
{
    uint64_t ts = base_now_ns() - t0;
    if (ts < t->last_ts)                 /* one clock, one thread: only a guard */
        ts = t->last_ts;
    __atomic_store_n(&t->last_ts, ts, __ATOMIC_RELAXED);
    writer->post(no, ts, e);
}

void trace_begin_slow(SpanKind k, uint64_t arg)
{
    unsigned no;
    Track *t = my(&no);
    if (!t) return;
    if (t->depth < MAX_OPEN_SPANS) {
        t->open[t->depth] = k;
        t->open_arg[t->depth] = arg;
    }
    t->depth++;
    post(no, t, &(TraceEv){ .kind = TEV_BEGIN, .span = (uint16_t)k, .a = arg });
}

/* Ends span k on track t; for a mutator span, with the thread it ran and why it stopped. */
static void end_span(unsigned no, Track *t, SpanKind k, TraceStop why)
{
    uint64_t arg = 0;
    if (t->depth) {
        t->depth--;
        if (t->depth < MAX_OPEN_SPANS)
            arg = t->open_arg[t->depth];
    }
    post(no, t, &(TraceEv){ .kind = TEV_END, .span = (uint16_t)k, .n = why, .a = arg });
}

void trace_end_slow(SpanKind k)
{
    unsigned no;
    Track *t = my(&no);
    if (t) end_span(no, t, k, STOP_THREAD_YIELDING);
}

void trace_stop_thread_slow(TraceStop why)
{
    unsigned no;
    Track *t = my(&no);
    if (t) end_span(no, t, SPAN_MUTATOR, why);
}

void trace_attach(unsigned cap_no)
{
    my_track = (int)cap_no;
}

bool trace_suspend_mutator_slow(uint64_t *arg)
{
    unsigned no;
    Track *t = my(&no);
    if (!t || !t->depth || t->depth > MAX_OPEN_SPANS || t->open[t->depth - 1] != SPAN_MUTATOR)
        return false;
    *arg = t->open_arg[t->depth - 1];
    end_span(no, t, SPAN_MUTATOR, STOP_HEAP_OVERFLOW);
    return true;
}

void trace_wake_slow(WakeReason why)
{
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = TEV_WAKE, .n = why });
}

void trace_spin(const char *lock, uint64_t spins)
{
    if (!trace_on)
        return;
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = TEV_SPIN, .a = spins, .str = lock });
}

void trace_thread_slow(ThreadEv ev, uint64_t thread, unsigned cap)
{
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = TEV_THREAD, .n = ev, .a = thread, .b = cap });
}

void trace_gc_idle_slow(bool idle)
{
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = idle ? TEV_GC_IDLE : TEV_GC_RESUME });
}

void trace_gc_stats_slow(const GcRecord *s)
{
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = TEV_GC_STATS, .stats = s });
}

#if RTS_PATCH_IDLE_OPTOUT
void trace_optout_slow(bool rejoin, bool waited)
{
    unsigned no;
    Track *t = my(&no);
    if (t) post(no, t, &(TraceEv){ .kind = TEV_OPT_OUT, .n = rejoin, .a = waited });
}
#endif

void trace_init(const char *prog, unsigned n_caps)
{
    if (!base_cfg->eventlog)
        return;
    writer = base_cfg->eventlog_format == EVENTLOG_CHROME ? &trace_chrome_writer
                                                          : &trace_ghc_writer;
    trace_n_caps = n_caps;
    if (base_cfg->eventlog_file) {
        snprintf(out_name, sizeof out_name, "%s", base_cfg->eventlog_file);
        pthread_mutex_lock(&out_mu);
        bool ok = open_out();
        pthread_mutex_unlock(&out_mu);
        if (!ok)
            exit(1);
    } else {
        trace_set_program(prog);
    }
    tracks = calloc(n_caps, sizeof *tracks);
    if (!tracks) base_fatal("out of memory (eventlog)");
    writer->init(n_caps);
    t0 = base_now_ns();
    trace_on = true;
}

void trace_set_program(const char *prog)
{
    if (!base_cfg->eventlog || base_cfg->eventlog_file)
        return;
    pthread_mutex_lock(&out_mu);
    if (!out && !out_failed) {
        const char *base = strrchr(prog, '/');
        base = base ? base + 1 : prog;
        size_t n = strlen(base);
        if (n > 4 && strcmp(base + n - 4, ".scm") == 0)
            n -= 4;
        const char *suffix = (base_cfg->eventlog_format == EVENTLOG_CHROME
                              ? trace_chrome_writer : trace_ghc_writer).default_suffix;
        snprintf(out_name, sizeof out_name, "%.*s%s", (int)n, base, suffix);
    }
    pthread_mutex_unlock(&out_mu);
}

bool trace_open(void)
{
    if (!trace_on)
        return true;
    pthread_mutex_lock(&out_mu);
    bool ok = open_out();
    pthread_mutex_unlock(&out_mu);
    return ok;
}

int trace_file(const char **name)
{
    pthread_mutex_lock(&out_mu);
    *name = out_name;
    int fd = out ? fileno(out) : -1;
    pthread_mutex_unlock(&out_mu);
    return fd;
}

/* With the world stopped (or one capability): every span still open is closed now. */
bool trace_exit(void)
{
    if (!trace_on)
        return true;
    /* An exit from a GC's leader leaves the other GC threads waiting in the barrier (heap
     * overflow, out of memory), and they record their waits: no more events from now, and
     * the spans still open end no earlier than the last event of their track. */
    __atomic_store_n(&trace_on, false, __ATOMIC_SEQ_CST);
    uint64_t now = base_now_ns() - t0;
    for (unsigned i = 0; i < trace_n_caps; i++) {
        Track *t = &tracks[i];
        uint64_t end = __atomic_load_n(&t->last_ts, __ATOMIC_RELAXED);
        if (end < now)
            end = now;
        while (t->depth) {
            t->depth--;
            SpanKind k = t->depth < MAX_OPEN_SPANS ? t->open[t->depth] : SPAN_MUTATOR;
            uint64_t arg = t->depth < MAX_OPEN_SPANS ? t->open_arg[t->depth] : 0;
            writer->post(i, end, &(TraceEv){ .kind = TEV_END, .span = (uint16_t)k,
                                             .n = STOP_THREAD_YIELDING, .a = arg });
        }
        t->last_ts = end;
        writer->flush(i);
        if (end > now)
            now = end;
    }
    pthread_mutex_lock(&out_mu);
    bool ok = open_out();
    if (ok) {
        writer->tail(out, now);
        errno = 0;
        bool failed = ferror(out) != 0;
        int e = errno;
        if (fclose(out) != 0) {
            failed = true;
            e = errno;
        }
        out = NULL;
        if (failed) {
            fprintf(stderr, "rtslab: cannot write the eventlog %s: %s\n", out_name, strerror(e ? e : EIO));
            ok = false;
        }
    }
    pthread_mutex_unlock(&out_mu);
    return ok;
}
