/* The eventlog as Chrome Trace Event JSON (--eventlog-format=chrome), which Perfetto's UI
 * opens: Note [Eventlog] in eventlog.h. Each capability appends fixed-size records to a
 * buffer of its own; a full buffer is formatted and written under the file's mutex. */
#include <stdio.h>
#include <stdlib.h>
#include "trace/eventlog_writer.h"
#include "base/util.h"

enum { TRACE_BUF_RECORDS = 8192, TRACE_BUF_GCS = 64 };

typedef struct {
    uint64_t ts;              /* ns since trace_init */
    TraceEv e;                /* TEV_GC_STATS: stats NULL, a the index in gcs */
} Record;

typedef struct {
    Record   recs[TRACE_BUF_RECORDS];
    unsigned n;
    GcRecord gcs[TRACE_BUF_GCS];   /* the statistics of the TEV_GC_STATS in recs */
    unsigned n_gcs;
} ChromeBuf;

static ChromeBuf *bufs;
static bool first_event = true;         /* guarded by the file's mutex */

static const char *const span_names[SPAN_NKINDS] = {
    "mutator", "stw request", "enter barrier", "minor GC", "major GC",
    "gc work", "await gc threads", "leave barrier", "sleep", "idle",
};

static const char *const thread_ev_names[THREAD_EV_NKINDS] = {
    "thread create", "thread runnable", "thread wakeup", "thread migrate",
};

/* GHC's names of the STOP_THREAD statuses rtslab uses. */
static const char *stop_name(uint32_t why)
{
    switch (why) {
    case STOP_HEAP_OVERFLOW:    return "HeapOverflow";
    case STOP_THREAD_YIELDING:  return "ThreadYielding";
    case STOP_THREAD_BLOCKED:   return "ThreadBlocked";
    case STOP_THREAD_FINISHED:  return "ThreadFinished";
    case STOP_BLOCKED_ON_MVAR:  return "BlockedOnMVar";
    case STOP_BLOCKED_ON_DELAY: return "BlockedOnDelay";
    default:                    return "?";
    }
}

static void emit(FILE *f, unsigned tid, const Record *r, const GcRecord *gcs)
{
    fputs(first_event ? "\n " : ",\n ", f);
    first_event = false;
    double ts = (double)r->ts / 1e3;
    const TraceEv *e = &r->e;
    switch ((TraceEvKind)e->kind) {
    case TEV_BEGIN:
        fprintf(f, "{\"ph\":\"B\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f", span_names[e->span], tid, ts);
        if (e->span == SPAN_MUTATOR)
            fprintf(f, ",\"args\":{\"thread\":%llu}", (unsigned long long)e->a);
        fputc('}', f);
        break;
    case TEV_END:
        fprintf(f, "{\"ph\":\"E\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f", span_names[e->span], tid, ts);
        if (e->span == SPAN_MUTATOR)
            fprintf(f, ",\"args\":{\"status\":\"%s\"}", stop_name(e->n));
        fputc('}', f);
        break;
    case TEV_WAKE:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"wake\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"by\":\"%s\"}}",
                tid, ts, e->n == WAKE_FOR_GC ? "gc" : "work");
        break;
    case TEV_SPIN:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"spin\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"lock\":\"%s\",\"spins\":%llu}}",
                tid, ts, e->str, (unsigned long long)e->a);
        break;
    case TEV_GC_IDLE:
    case TEV_GC_RESUME:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f}",
                e->kind == TEV_GC_IDLE ? "gc idle" : "gc resume", tid, ts);
        break;
    case TEV_THREAD:
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"%s\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"thread\":%llu",
                thread_ev_names[e->n], tid, ts, (unsigned long long)e->a);
        if (e->n == THREAD_EV_WAKEUP || e->n == THREAD_EV_MIGRATE)
            fprintf(f, ",\"cap\":%llu", (unsigned long long)e->b);
        fputs("}}", f);
        break;
    case TEV_GC_STATS: {
        const GcRecord *s = &gcs[e->a];
        fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"gc stats\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
                "\"args\":{\"gen\":%u,\"copied\":%llu,\"threads\":%u,\"max_copied\":%llu,\"balanced_copied\":%llu}},\n ",
                tid, ts, (unsigned)s->major, (unsigned long long)s->copied_bytes, s->gc_threads,
                (unsigned long long)s->max_thread_copied_bytes,
                (unsigned long long)s->balanced_copied_bytes);
        fprintf(f, "{\"ph\":\"C\",\"name\":\"heap\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,"
                "\"args\":{\"allocated\":%llu,\"size\":%llu,\"live\":%llu}}",
                tid, ts, (unsigned long long)s->allocated_bytes,
                (unsigned long long)s->heap_bytes, (unsigned long long)s->live_bytes);
        break;
    }
#if RTS_PATCH_IDLE_OPTOUT
    case TEV_OPT_OUT:
        if (e->n)
            fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"rejoin\",\"pid\":1,\"tid\":%u,\"ts\":%.3f,\"args\":{\"waited\":%s}}",
                    tid, ts, e->a ? "true" : "false");
        else
            fprintf(f, "{\"ph\":\"i\",\"s\":\"t\",\"name\":\"opt out\",\"pid\":1,\"tid\":%u,\"ts\":%.3f}", tid, ts);
        break;
#endif
    }
}

static void chrome_init(unsigned n)
{
    bufs = calloc(n, sizeof *bufs);
    if (!bufs) base_fatal("out of memory (eventlog)");
}

static void chrome_head(FILE *f, unsigned n)
{
    fputs("{\"displayTimeUnit\":\"ns\",\n \"otherData\":{\"rtslab\":\"" RTSLAB_VERSION "\"", f);
    fprintf(f, ",\"n_caps\":%u},\n \"traceEvents\":[", n);
    for (unsigned i = 0; i < n; i++) {
        fputs(first_event ? "\n " : ",\n ", f);
        first_event = false;
        fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%u,\"args\":{\"name\":\"cap %u\"}}", i, i);
    }
}

static void chrome_flush(unsigned no)
{
    ChromeBuf *b = &bufs[no];
    FILE *f = trace_out_lock();
    if (f)
        for (unsigned i = 0; i < b->n; i++)
            emit(f, no, &b->recs[i], b->gcs);
    trace_out_unlock();
    b->n = 0;
    b->n_gcs = 0;
}

static void chrome_post(unsigned no, uint64_t ts, const TraceEv *e)
{
    ChromeBuf *b = &bufs[no];
    if (b->n == TRACE_BUF_RECORDS || (e->kind == TEV_GC_STATS && b->n_gcs == TRACE_BUF_GCS))
        chrome_flush(no);
    Record *r = &b->recs[b->n++];
    r->ts = ts;
    r->e = *e;
    if (e->kind == TEV_GC_STATS) {
        r->e.stats = NULL;
        r->e.a = b->n_gcs;
        b->gcs[b->n_gcs++] = *e->stats;
    }
}

static void chrome_tail(FILE *f, uint64_t ts)
{
    (void)ts;
    fputs("\n]}\n", f);
}

const TraceWriter trace_chrome_writer = {
    .default_suffix = ".eventlog.json",
    .init = chrome_init, .head = chrome_head, .post = chrome_post,
    .flush = chrome_flush, .tail = chrome_tail,
};
