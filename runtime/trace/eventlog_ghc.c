/* The eventlog in GHC's binary format: Note [GHC eventlog format] in eventlog_ghc.h.
 * Each capability encodes its events big-endian into a block of its own as they happen;
 * a full block gets its marker filled in and is written under the file's mutex. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "trace/eventlog_ghc.h"
#include "trace/eventlog_writer.h"
#include "base/util.h"

enum {
    TRACE_GHC_BLOCK = 64 * 1024,      /* bytes per block, its marker included */
    EV_HEAD = 2 + 8,                  /* an event's number and timestamp */
    MARKER_SIZE = EV_HEAD + 4 + 8 + 2,
    VARIABLE = -1,
};

typedef struct {
    uint8_t *buf;                     /* TRACE_GHC_BLOCK bytes: the marker, then events */
    size_t   n;                       /* bytes used; MARKER_SIZE when the block is empty */
    uint64_t last_ts;
} GhcBuf;

static GhcBuf *bufs;
static unsigned ghc_n_caps;

/* Every type this writer uses, as the header declares it. */
static const struct { uint16_t num; int16_t size; const char *desc; } types[] = {
    { EV_CREATE_THREAD, 4, "Create thread" },
    { EV_RUN_THREAD, 4, "Run thread" },
    { EV_STOP_THREAD, 10, "Stop thread" },
    { EV_THREAD_RUNNABLE, 4, "Thread runnable" },
    { EV_MIGRATE_THREAD, 6, "Migrate thread" },
    { EV_THREAD_WAKEUP, 6, "Wakeup thread" },
    { EV_GC_START, 0, "Starting GC" },
    { EV_GC_END, 0, "Finished GC" },
    { EV_REQUEST_SEQ_GC, 0, "Request sequential GC" },
    { EV_REQUEST_PAR_GC, 0, "Request parallel GC" },
    { EV_BLOCK_MARKER, 14, "Block marker" },
    { EV_GC_IDLE, 0, "GC idle" },
    { EV_GC_WORK, 0, "GC working" },
    { EV_GC_DONE, 0, "GC done" },
    { EV_CAPSET_CREATE, 6, "Create capability set" },
    { EV_CAPSET_DELETE, 4, "Delete capability set" },
    { EV_CAPSET_ASSIGN_CAP, 6, "Add capability to capability set" },
    { EV_RTS_IDENTIFIER, VARIABLE, "RTS name and version" },
    { EV_OSPROCESS_PID, 8, "Process ID" },
    { EV_CAP_CREATE, 2, "Create capability" },
    { EV_CAP_DELETE, 2, "Delete capability" },
    { EV_HEAP_ALLOCATED, 12, "Total heap memory ever allocated" },
    { EV_HEAP_SIZE, 12, "Current heap size" },
    { EV_HEAP_LIVE, 12, "Current heap live data" },
    { EV_GC_STATS_GHC, 58, "GC statistics" },
    { EV_GC_GLOBAL_SYNC, 0, "Synchronise stop-the-world GC" },
    { EV_USER_MARKER, VARIABLE, "User marker" },
    { EV_HACK_BUG_T9003, 0, "Empty event for bug #9003" },
    { EV_RTSLAB_ENTER_BARRIER, 0, "rtslab: enter barrier (a follower waits for the go)" },
    { EV_RTSLAB_ENTER_BARRIER_END, 0, "rtslab: enter barrier ends" },
    { EV_RTSLAB_AWAIT_GC_THREADS, 0, "rtslab: await GC threads (the leader waits)" },
    { EV_RTSLAB_AWAIT_GC_THREADS_END, 0, "rtslab: await GC threads ends" },
    { EV_RTSLAB_LEAVE_BARRIER, 0, "rtslab: leave barrier (a follower waits for the release)" },
    { EV_RTSLAB_LEAVE_BARRIER_END, 0, "rtslab: leave barrier ends" },
    { EV_RTSLAB_SLEEP, 0, "rtslab: sleep in a barrier wait" },
    { EV_RTSLAB_SLEEP_END, 0, "rtslab: sleep ends" },
    { EV_RTSLAB_IDLE, 0, "rtslab: capability idle" },
    { EV_RTSLAB_IDLE_END, 0, "rtslab: capability idle ends" },
    { EV_RTSLAB_MAJOR_GC, 0, "rtslab: the GC starting is a major GC" },
    { EV_RTSLAB_WAKE, 1, "rtslab: capability woken (0 for work, 1 for a GC)" },
    { EV_RTSLAB_SPIN, VARIABLE, "rtslab: contended spinlock (spins, lock name)" },
#if RTS_PATCH_IDLE_OPTOUT
    { EV_RTSLAB_OPT_OUT, 0, "rtslab: idle capability opts out of a GC" },
    { EV_RTSLAB_REJOIN, 1, "rtslab: capability rejoins (1: waited for the GC's release)" },
#endif
};

static uint8_t *put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; return p + 2; }
static uint8_t *put32(uint8_t *p, uint32_t v) { p = put16(p, (uint16_t)(v >> 16)); return put16(p, (uint16_t)v); }
static uint8_t *put64(uint8_t *p, uint64_t v) { p = put32(p, (uint32_t)(v >> 32)); return put32(p, (uint32_t)v); }

static void write_all(FILE *f, const void *p, size_t n)
{
    fwrite(p, 1, n, f);                 /* a failure shows in ferror at exit */
}

/* --- blocks ---------------------------------------------------------------------------- */

static void block_reset(GhcBuf *b)
{
    b->n = MARKER_SIZE;
}

/* Fills in the marker of block buf (n bytes, events from its start to end) for capability
 * cap. */
static void block_mark(uint8_t *buf, size_t n, uint64_t start, uint64_t end, uint16_t cap)
{
    uint8_t *p = put16(buf, EV_BLOCK_MARKER);
    p = put64(p, start);
    p = put32(p, (uint32_t)n);
    p = put64(p, end);
    put16(p, cap);
}

static void ghc_flush(unsigned no)
{
    GhcBuf *b = &bufs[no];
    if (b->n == MARKER_SIZE)
        return;
    uint64_t start;                     /* the first event's timestamp */
    const uint8_t *q = b->buf + MARKER_SIZE + 2;
    start = 0;
    for (int i = 0; i < 8; i++)
        start = start << 8 | q[i];
    block_mark(b->buf, b->n, start, b->last_ts, (uint16_t)no);
    FILE *f = trace_out_lock();
    if (f)
        write_all(f, b->buf, b->n);
    trace_out_unlock();
    block_reset(b);
}

/* Room for an event of `payload` bytes (and its size field when `variable`) on track no:
 * writes its number and timestamp and returns where its payload goes. */
static uint8_t *event(unsigned no, uint16_t num, uint64_t ts, size_t payload, bool variable)
{
    GhcBuf *b = &bufs[no];
    size_t need = EV_HEAD + (variable ? 2 : 0) + payload;
    if (b->n + need > TRACE_GHC_BLOCK)
        ghc_flush(no);
    uint8_t *p = b->buf + b->n;
    b->n += need;
    b->last_ts = ts;
    p = put16(p, num);
    p = put64(p, ts);
    if (variable)
        p = put16(p, (uint16_t)payload);
    return p;
}

static void ev0(unsigned no, uint16_t num, uint64_t ts)
{
    event(no, num, ts, 0, false);
}

/* --- the events -------------------------------------------------------------------------- */

static const uint16_t span_begin[SPAN_NKINDS] = {
    [SPAN_MUTATOR] = EV_RUN_THREAD, [SPAN_STW_REQUEST] = EV_REQUEST_PAR_GC,
    [SPAN_ENTER_BARRIER] = EV_RTSLAB_ENTER_BARRIER, [SPAN_MINOR_GC] = EV_GC_START,
    [SPAN_MAJOR_GC] = EV_GC_START, [SPAN_GC_WORK] = EV_GC_WORK,
    [SPAN_AWAIT_GC_THREADS] = EV_RTSLAB_AWAIT_GC_THREADS,
    [SPAN_LEAVE_BARRIER] = EV_RTSLAB_LEAVE_BARRIER, [SPAN_SLEEP] = EV_RTSLAB_SLEEP,
    [SPAN_IDLE] = EV_RTSLAB_IDLE,
};

static const uint16_t span_end[SPAN_NKINDS] = {
    [SPAN_MUTATOR] = EV_STOP_THREAD, [SPAN_STW_REQUEST] = EV_GC_GLOBAL_SYNC,
    [SPAN_ENTER_BARRIER] = EV_RTSLAB_ENTER_BARRIER_END, [SPAN_MINOR_GC] = EV_GC_END,
    [SPAN_MAJOR_GC] = EV_GC_END, [SPAN_GC_WORK] = EV_GC_DONE,
    [SPAN_AWAIT_GC_THREADS] = EV_RTSLAB_AWAIT_GC_THREADS_END,
    [SPAN_LEAVE_BARRIER] = EV_RTSLAB_LEAVE_BARRIER_END, [SPAN_SLEEP] = EV_RTSLAB_SLEEP_END,
    [SPAN_IDLE] = EV_RTSLAB_IDLE_END,
};

static const uint16_t thread_events[THREAD_EV_NKINDS] = {
    [THREAD_EV_CREATE] = EV_CREATE_THREAD, [THREAD_EV_RUNNABLE] = EV_THREAD_RUNNABLE,
    [THREAD_EV_WAKEUP] = EV_THREAD_WAKEUP, [THREAD_EV_MIGRATE] = EV_MIGRATE_THREAD,
};

static void ghc_post(unsigned no, uint64_t ts, const TraceEv *e)
{
    uint8_t *p;
    switch ((TraceEvKind)e->kind) {
    case TEV_BEGIN:
        switch ((SpanKind)e->span) {
        case SPAN_MUTATOR:
            put32(event(no, EV_RUN_THREAD, ts, 4, false), (uint32_t)e->a);
            break;
        case SPAN_STW_REQUEST:
            ev0(no, ghc_n_caps > 1 ? EV_REQUEST_PAR_GC : EV_REQUEST_SEQ_GC, ts);
            break;
        case SPAN_MAJOR_GC:
            ev0(no, EV_RTSLAB_MAJOR_GC, ts);
            ev0(no, EV_GC_START, ts);
            break;
        default:
            ev0(no, span_begin[e->span], ts);
            break;
        }
        break;
    case TEV_END:
        if (e->span == SPAN_MUTATOR) {
            p = event(no, EV_STOP_THREAD, ts, 10, false);
            p = put32(p, (uint32_t)e->a);
            p = put16(p, (uint16_t)e->n);
            put32(p, 0);
        } else {
            ev0(no, span_end[e->span], ts);
        }
        break;
    case TEV_WAKE:
        *event(no, EV_RTSLAB_WAKE, ts, 1, false) = e->n == WAKE_FOR_GC;
        break;
    case TEV_SPIN: {
        size_t len = strlen(e->str);
        if (len > 256)
            len = 256;
        p = put64(event(no, EV_RTSLAB_SPIN, ts, 8 + len, true), e->a);
        memcpy(p, e->str, len);
        break;
    }
    case TEV_GC_IDLE:
        ev0(no, EV_GC_IDLE, ts);
        break;
    case TEV_GC_RESUME:
        ev0(no, EV_GC_WORK, ts);
        break;
    case TEV_THREAD:
        if (e->n == THREAD_EV_WAKEUP || e->n == THREAD_EV_MIGRATE) {
            p = put32(event(no, thread_events[e->n], ts, 6, false), (uint32_t)e->a);
            put16(p, (uint16_t)e->b);
        } else {
            put32(event(no, thread_events[e->n], ts, 4, false), (uint32_t)e->a);
        }
        break;
    case TEV_GC_STATS: {
        const GcRecord *s = e->stats;
        p = put32(event(no, EV_GC_STATS_GHC, ts, 58, false), 0);
        p = put16(p, (uint16_t)s->major);
        p = put64(p, s->copied_bytes);
        p = put64(p, 0);                        /* slop: not measured */
        p = put64(p, 0);                        /* fragmentation: not measured */
        p = put32(p, s->gc_threads);
        p = put64(p, s->max_thread_copied_bytes);
        p = put64(p, s->copied_bytes);
        put64(p, s->balanced_copied_bytes);
        put64(put32(event(no, EV_HEAP_ALLOCATED, ts, 12, false), 0), s->allocated_bytes);
        put64(put32(event(no, EV_HEAP_SIZE, ts, 12, false), 0), s->heap_bytes);
        put64(put32(event(no, EV_HEAP_LIVE, ts, 12, false), 0), s->live_bytes);
        break;
    }
#if RTS_PATCH_IDLE_OPTOUT
    case TEV_OPT_OUT:
        if (e->n)
            *event(no, EV_RTSLAB_REJOIN, ts, 1, false) = e->a != 0;
        else
            ev0(no, EV_RTSLAB_OPT_OUT, ts);
        break;
#endif
    }
}

/* --- the file ---------------------------------------------------------------------------- */

static void ghc_init(unsigned n)
{
    ghc_n_caps = n;
    bufs = calloc(n, sizeof *bufs);
    if (!bufs) base_fatal("out of memory (eventlog)");
    for (unsigned i = 0; i < n; i++) {
        bufs[i].buf = malloc(TRACE_GHC_BLOCK);
        if (!bufs[i].buf) base_fatal("out of memory (eventlog)");
        block_reset(&bufs[i]);
    }
}

/* A process-wide block of events all at ts, built in a buffer of its own. */
typedef struct {
    uint8_t buf[4096];
    uint8_t *p;
    uint64_t ts;
} GlobalBlock;

static uint8_t *global_event(GlobalBlock *g, uint16_t num, size_t payload, bool variable)
{
    if ((size_t)(g->p - g->buf) + EV_HEAD + 2 + payload > sizeof g->buf)
        return NULL;
    uint8_t *p = put64(put16(g->p, num), g->ts);
    if (variable)
        p = put16(p, (uint16_t)payload);
    g->p = p + payload;
    return p;
}

static void global_write(FILE *f, GlobalBlock *g)
{
    block_mark(g->buf, (size_t)(g->p - g->buf), g->ts, g->ts, EV_NO_CAP);
    write_all(f, g->buf, (size_t)(g->p - g->buf));
}

static void ghc_head(FILE *f, unsigned n)
{
    uint8_t tmp[512], *p;
    write_all(f, "hdrbhetb", 8);
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t len = strlen(types[i].desc);
        p = put32(tmp, 0x65746200);                       /* "etb\0" */
        p = put16(p, types[i].num);
        p = put16(p, (uint16_t)types[i].size);
        p = put32(p, (uint32_t)len);
        memcpy(p, types[i].desc, len);
        p = put32(p + len, 0);                            /* no extra information */
        p = put32(p, 0x65746500);                         /* "ete\0" */
        write_all(f, tmp, (size_t)(p - tmp));
    }
    write_all(f, "hetehdredatb", 12);

    GlobalBlock *g = calloc(1, sizeof *g);                /* too big for a small stack */
    if (!g) base_fatal("out of memory (eventlog)");
    g->p = g->buf + MARKER_SIZE;
    g->ts = 0;
    put16(put32(global_event(g, EV_CAPSET_CREATE, 6, false), 0), CAPSET_TYPE_OSPROCESS);
    static const char id[] = "rtslab-" RTSLAB_VERSION;
    memcpy(put32(global_event(g, EV_RTS_IDENTIFIER, 4 + sizeof id - 1, true), 0), id, sizeof id - 1);
    put32(put32(global_event(g, EV_OSPROCESS_PID, 8, false), 0), (uint32_t)getpid());
    global_write(f, g);
    /* two events per capability, in blocks of at most 4096 bytes */
    for (unsigned i = 0; i < n; ) {
        g->p = g->buf + MARKER_SIZE;
        for (; i < n && (p = global_event(g, EV_CAP_CREATE, 2, false)) != NULL; i++) {
            put16(p, (uint16_t)i);
            uint8_t *q = global_event(g, EV_CAPSET_ASSIGN_CAP, 6, false);
            if (!q) {                                     /* no room: undo the CAP_CREATE */
                g->p -= EV_HEAD + 2;
                break;
            }
            put16(put32(q, 0), (uint16_t)i);
        }
        global_write(f, g);
    }
    free(g);
}

static void ghc_tail(FILE *f, uint64_t ts)
{
    GlobalBlock *g = calloc(1, sizeof *g);
    if (!g) base_fatal("out of memory (eventlog)");
    g->ts = ts;
    for (unsigned i = 0; i < ghc_n_caps; ) {
        g->p = g->buf + MARKER_SIZE;
        uint8_t *p;
        for (; i < ghc_n_caps && (p = global_event(g, EV_CAP_DELETE, 2, false)) != NULL; i++)
            put16(p, (uint16_t)i);
        global_write(f, g);
    }
    g->p = g->buf + MARKER_SIZE;
    put32(global_event(g, EV_CAPSET_DELETE, 4, false), 0);
    global_write(f, g);
    free(g);
    uint8_t end[2];
    put16(end, 0xffff);
    write_all(f, end, 2);
}

const TraceWriter trace_ghc_writer = {
    .default_suffix = ".eventlog",
    .init = ghc_init, .head = ghc_head, .post = ghc_post,
    .flush = ghc_flush, .tail = ghc_tail,
};
