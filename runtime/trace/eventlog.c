/* The eventlog: see Note [Eventlog] in eventlog.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "trace/eventlog.h"
#include "base/util.h"

bool trace_on;

enum { REC_BEGIN, REC_END, REC_WAKE, REC_SPIN };
enum { TRACE_BUF_RECORDS = 8192, MAX_OPEN_SPANS = 16 };

typedef struct {
    uint64_t ts;              /* ns since trace_init */
    uint32_t rec;             /* REC_* */
    uint32_t span;            /* SpanKind, for B/E */
    uint64_t arg;
    const char *name;         /* the lock of a spin record */
} Record;

typedef struct {
    Record   recs[TRACE_BUF_RECORDS];
    unsigned n;
    SpanKind open[MAX_OPEN_SPANS];   /* spans begun and not yet ended, innermost last */
    uint64_t open_arg[MAX_OPEN_SPANS];
    unsigned depth;
    uint64_t last_ts;                /* of the last record, flushed or not */
} TraceBuf;

static TraceBuf *bufs;                  /* one per capability */
static unsigned n_bufs;
static __thread int my_buf = -1;        /* the capability this OS thread runs, if any */
static FILE *out;
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;   /* guards out and what follows */
static char out_name[4096];             /* the file, opened on first use unless -l named it */
static bool out_failed;                 /* it could not be opened or written: said once */
static unsigned out_ncaps;
static bool first_event = true;
static uint64_t t0;

static const char *span_names[SPAN_NKINDS] = {
    "mutator", "stw request", "enter barrier", "minor GC", "major GC",
    "gc work", "await gc threads", "leave barrier", "sleep", "idle",
};

static void emit(FILE *f, unsigned tid, const Record *r)
{
    fputs(first_event ? "\n " : ",\n ", f);
    first_event = false;
    double ts = (double)r->ts / 1e3;
    switch (r->rec) {
    case REC_BEGIN:
        fprintf(f, "{\"ph\":\"B\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f", span_names[r->span], tid, ts);
        if (r->span == SPAN_MUTATOR)
            fprintf(f, ",\"args\":{\"thread\":%llu}", (unsigned long long)r->arg);
        fputc('}', f);
        break;
    case REC_END:
        fprintf(f, "{\"ph\":\"E\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f}", span_names[r->span], tid, ts);
        break;
    case REC_WAKE:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"wake\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"by\":\"%s\"}}",
                tid, ts, r->arg == WAKE_FOR_GC ? "gc" : "work");
        break;
    case REC_SPIN:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"spin\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"lock\":\"%s\",\"spins\":%llu}}",
                tid, ts, r->name, (unsigned long long)r->arg);
        break;
    }
}

/* Writes a capability's buffer out; called by its own OS thread, or at exit. */
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
    fputs("{\"displayTimeUnit\":\"ns\",\n \"otherData\":{\"rtslab\":\"" RTSLAB_VERSION "\"", out);
    fprintf(out, ",\"n_caps\":%u},\n \"traceEvents\":[", out_ncaps);
    for (unsigned i = 0; i < out_ncaps; i++) {
        fputs(first_event ? "\n " : ",\n ", out);
        first_event = false;
        fprintf(out, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"cap %u\"}}", i, i);
    }
    return true;
}

static void flush(unsigned no)
{
    TraceBuf *b = &bufs[no];
    pthread_mutex_lock(&out_mu);
    if (open_out())
        for (unsigned i = 0; i < b->n; i++)
            emit(out, no, &b->recs[i]);
    pthread_mutex_unlock(&out_mu);
    b->n = 0;
}

static Record *next_record(unsigned *no)
{
    if (my_buf < 0 || !bufs)
        return NULL;
    *no = (unsigned)my_buf;
    TraceBuf *b = &bufs[*no];
    if (b->n == TRACE_BUF_RECORDS)
        flush(*no);
    Record *r = &b->recs[b->n++];
    r->ts = b->last_ts = rts_now_ns() - t0;
    r->name = NULL;
    r->arg = 0;
    return r;
}

void trace_begin_slow(SpanKind k, uint64_t arg)
{
    unsigned no;
    Record *r = next_record(&no);
    if (!r) return;
    r->rec = REC_BEGIN;
    r->span = k;
    r->arg = arg;
    TraceBuf *b = &bufs[no];
    if (b->depth < MAX_OPEN_SPANS) {
        b->open[b->depth] = k;
        b->open_arg[b->depth] = arg;
    }
    b->depth++;
}

void trace_attach(unsigned cap_no)
{
    my_buf = (int)cap_no;
}

bool trace_suspend_mutator_slow(uint64_t *arg)
{
    if (my_buf < 0 || !bufs)
        return false;
    TraceBuf *b = &bufs[my_buf];
    if (!b->depth || b->depth > MAX_OPEN_SPANS || b->open[b->depth - 1] != SPAN_MUTATOR)
        return false;
    *arg = b->open_arg[b->depth - 1];
    trace_end_slow(SPAN_MUTATOR);
    return true;
}

void trace_end_slow(SpanKind k)
{
    unsigned no;
    Record *r = next_record(&no);
    if (!r) return;
    r->rec = REC_END;
    r->span = k;
    if (bufs[no].depth)
        bufs[no].depth--;
}

void trace_wake_slow(WakeReason why)
{
    unsigned no;
    Record *r = next_record(&no);
    if (!r) return;
    r->rec = REC_WAKE;
    r->arg = why;
}

void trace_spin(const char *lock, uint64_t spins)
{
    if (!trace_on)
        return;
    unsigned no;
    Record *r = next_record(&no);
    if (!r) return;
    r->rec = REC_SPIN;
    r->arg = spins;
    r->name = lock;
}

void trace_init(const char *prog, unsigned n_caps)
{
    if (!rts_opts.eventlog)
        return;
    out_ncaps = n_caps;
    if (rts_opts.eventlog_file) {
        snprintf(out_name, sizeof out_name, "%s", rts_opts.eventlog_file);
        if (!open_out())
            exit(1);
    } else {
        trace_set_program(prog);
    }
    bufs = calloc(n_caps, sizeof *bufs);
    n_bufs = n_caps;
    if (!bufs) rts_fatal("out of memory (eventlog)");
    t0 = rts_now_ns();
    trace_on = true;
}

void trace_set_program(const char *prog)
{
    if (!rts_opts.eventlog || rts_opts.eventlog_file)
        return;
    pthread_mutex_lock(&out_mu);
    if (!out && !out_failed) {
        const char *base = strrchr(prog, '/');
        base = base ? base + 1 : prog;
        size_t n = strlen(base);
        if (n > 4 && strcmp(base + n - 4, ".scm") == 0)
            n -= 4;
        snprintf(out_name, sizeof out_name, "%.*s.eventlog.json", (int)n, base);
    }
    pthread_mutex_unlock(&out_mu);
}

/* With the world stopped (or one capability): every span still open is closed now. */
bool trace_exit(void)
{
    if (!trace_on)
        return true;
    /* An exit from a GC's leader leaves the other GC threads waiting in the barrier (heap
     * overflow, out of memory), and they record their waits: no more records from now, and
     * the spans still open end no earlier than the last record of their track. */
    __atomic_store_n(&trace_on, false, __ATOMIC_SEQ_CST);
    uint64_t now = rts_now_ns() - t0;
    for (unsigned i = 0; i < n_bufs; i++) {
        TraceBuf *b = &bufs[i];
        uint64_t end = __atomic_load_n(&b->last_ts, __ATOMIC_RELAXED);
        if (end < now)
            end = now;
        while (b->depth) {
            if (b->n == TRACE_BUF_RECORDS)
                flush(i);
            b->depth--;
            Record *r = &b->recs[b->n++];
            *r = (Record){ .ts = end, .rec = REC_END,
                           .span = b->depth < MAX_OPEN_SPANS ? b->open[b->depth] : SPAN_MUTATOR };
        }
        flush(i);
    }
    pthread_mutex_lock(&out_mu);
    bool ok = open_out();
    if (ok) {
        fputs("\n]}\n", out);
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
