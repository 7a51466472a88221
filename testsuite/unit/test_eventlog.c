/* Unit test: the eventlog (runtime/trace/eventlog.c) without the runtime.
 *
 *   test_eventlog FILE
 *
 * Turns the eventlog on (base_cfg->eventlog, as -lFILE does), opens two tracks and writes:
 *   track 0 (this thread): trace_suspend_mutator with the mutator span innermost (true, its
 *     argument, also when another mutator span is open outside it; the span ends), with
 *     another span inside it or none open (false, nothing written); nested spans in the runtime's conventions, wakes and spins; then enough GC
 *     work spans to fill the per-track buffer (8192 records) more than once; it leaves three
 *     spans open;
 *   track 1 (a second pthread, concurrently): mutator and idle spans, wakes, past the buffer
 *     size too, leaving spans open with its buffer exactly full, so that trace_exit must
 *     flush before it can close them;
 *   a third pthread, never attached: its events go nowhere, as do events before trace_init
 *   and on this thread before trace_attach.
 * After trace_exit (which must close every open span, innermost first) it reads FILE back and
 * checks: the header and the two track names; per tid, B/E balanced and properly nested with
 * matching names, timestamps never decreasing; and each track's events are exactly the
 * sequence it wrote (name, phase, mutator thread, wake reason, lock and spins), in order,
 * under its own tid. The manifest also runs trace_summary.py --check --strict on FILE. */
#include "trace/eventlog.h"
#include "base/util.h"
#include "unit/check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const span_name[SPAN_NKINDS] = {
    "mutator", "stw request", "enter barrier", "minor GC", "major GC",
    "gc work", "await gc threads", "leave barrier", "sleep", "idle",
};

/* --- what each track should hold ----------------------------------------------------------- */

typedef struct Ev {
    char ph;                       /* B, E, i */
    const char *name;
    uint64_t arg;                  /* B mutator: the thread; spin: the spins */
    const char *str;               /* wake: "gc"/"work"; spin: the lock */
} Ev;

typedef struct Track {
    Ev *ev;
    size_t n, cap;
    SpanKind open[64];             /* spans this test has begun and not ended */
    unsigned depth;
} Track;

static Track tracks[2];

static void expect(Track *t, Ev e)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->ev = realloc(t->ev, t->cap * sizeof *t->ev);
        if (!t->ev) abort();
    }
    t->ev[t->n++] = e;
}

static void B(Track *t, SpanKind k, uint64_t arg)
{
    trace_begin(k, arg);
    expect(t, (Ev){ 'B', span_name[k], k == SPAN_MUTATOR ? arg : 0, NULL });
    t->open[t->depth++] = k;
}

static void E(Track *t, SpanKind k)
{
    CHECK(t->depth > 0 && t->open[t->depth - 1] == k);     /* the test's own bookkeeping */
    trace_end(k);
    expect(t, (Ev){ 'E', span_name[k], 0, NULL });
    t->depth--;
}

static void WAKE(Track *t, WakeReason why)
{
    trace_wake(why);
    expect(t, (Ev){ 'i', "wake", 0, why == WAKE_FOR_GC ? "gc" : "work" });
}

static void SPIN(Track *t, const char *lock, uint64_t spins)
{
    trace_spin(lock, spins);
    expect(t, (Ev){ 'i', "spin", spins, lock });
}

/* Ends the mutator span with GHC's stop status (the E event's "status"). */
static void STOP(Track *t, TraceStop why, const char *name)
{
    CHECK(t->depth > 0 && t->open[t->depth - 1] == SPAN_MUTATOR);
    trace_stop_thread(why);
    expect(t, (Ev){ 'E', "mutator", 0, name });
    t->depth--;
}

static void THREAD(Track *t, ThreadEv ev, uint64_t thread, unsigned cap)
{
    static const char *const names[THREAD_EV_NKINDS] = {
        "thread create", "thread runnable", "thread wakeup", "thread migrate",
    };
    trace_thread(ev, thread, cap);
    expect(t, (Ev){ 'i', names[ev], thread, NULL });
}

static void GC_IDLE(Track *t, bool idle)
{
    trace_gc_idle(idle);
    expect(t, (Ev){ 'i', idle ? "gc idle" : "gc resume", 0, NULL });
}

/* A GC's statistics: an instant and the heap counter. */
static void GC_STATS(Track *t, uint64_t copied, uint64_t allocated)
{
    trace_gc_stats(&(GcRecord){ .major = 1, .gc_threads = 2, .copied_bytes = copied,
                                    .max_thread_copied_bytes = copied / 2 + 8,
                                    .balanced_copied_bytes = copied - 16,
                                    .allocated_bytes = allocated, .heap_bytes = 1 << 20,
                                    .live_bytes = copied });
    expect(t, (Ev){ 'i', "gc stats", copied, NULL });
    expect(t, (Ev){ 'C', "heap", allocated, NULL });
}

/* trace_suspend_mutator: true and the thread when the mutator span is innermost, which it
 * ends; otherwise false, *arg untouched, nothing written. */
static void SUSPEND(Track *t, bool want, uint64_t want_arg)
{
    uint64_t arg = 12345;
    bool got = trace_suspend_mutator(&arg);
    CHECK_EQ_INT(got, want);
    CHECK_EQ_INT(arg, want ? want_arg : 12345);
    if (got) {
        expect(t, (Ev){ 'E', "mutator", 0, NULL });
        t->depth--;
    }
}

/* trace_exit closes the spans still open, innermost first. */
static void expect_closed_at_exit(Track *t)
{
    while (t->depth)
        expect(t, (Ev){ 'E', span_name[t->open[--t->depth]], 0, NULL });
}

/* Records written to a track since trace_init (each B, E, wake, spin is one record). */
static size_t records(const Track *t) { return t->n; }

/* --- the writers ----------------------------------------------------------------------------- */

enum { BUF_RECORDS = 8192 };       /* TRACE_BUF_RECORDS in eventlog.c */

static void write_track0(void)
{
    Track *t = &tracks[0];
    trace_attach(0);

    /* The mutator span innermost, or under another span, or no span open. */
    B(t, SPAN_MUTATOR, 42);
    SUSPEND(t, true, 42);
    SUSPEND(t, false, 0);
    B(t, SPAN_MUTATOR, 43);
    B(t, SPAN_IDLE, 0);
    SUSPEND(t, false, 0);
    E(t, SPAN_IDLE);
    SUSPEND(t, true, 43);
    B(t, SPAN_MUTATOR, 45);                       /* the innermost one's argument */
    B(t, SPAN_MUTATOR, 46);
    SUSPEND(t, true, 46);
    SUSPEND(t, true, 45);

    /* A thread's lifecycle, each way a thread stops, a parallel GC's statistics. */
    THREAD(t, THREAD_EV_CREATE, 50, 0);
    THREAD(t, THREAD_EV_WAKEUP, 50, 1);
    THREAD(t, THREAD_EV_MIGRATE, 51, 1);
    THREAD(t, THREAD_EV_RUNNABLE, 52, 0);
    B(t, SPAN_MUTATOR, 52);
    STOP(t, STOP_BLOCKED_ON_MVAR, "BlockedOnMVar");
    B(t, SPAN_MUTATOR, 52);
    STOP(t, STOP_BLOCKED_ON_DELAY, "BlockedOnDelay");
    B(t, SPAN_MUTATOR, 52);
    STOP(t, STOP_THREAD_BLOCKED, "ThreadBlocked");
    B(t, SPAN_MUTATOR, 52);
    STOP(t, STOP_THREAD_YIELDING, "ThreadYielding");
    B(t, SPAN_MUTATOR, 52);
    STOP(t, STOP_THREAD_FINISHED, "ThreadFinished");
    B(t, SPAN_MINOR_GC, 0);
    B(t, SPAN_GC_WORK, 0);
    GC_IDLE(t, true);
    GC_IDLE(t, false);
    GC_IDLE(t, true);
    E(t, SPAN_GC_WORK);
    E(t, SPAN_MINOR_GC);
    GC_STATS(t, 4096, 1 << 16);

    /* A minor GC as a leader writes it: nested spans, a sleep inside a barrier wait. */
    B(t, SPAN_MUTATOR, 44);
    SUSPEND(t, true, 44);
    B(t, SPAN_STW_REQUEST, 0);
    SPIN(t, "gc_entry", 37);
    E(t, SPAN_STW_REQUEST);
    B(t, SPAN_MINOR_GC, 0);
    B(t, SPAN_GC_WORK, 0);
    E(t, SPAN_GC_WORK);
    B(t, SPAN_AWAIT_GC_THREADS, 0);
    B(t, SPAN_SLEEP, 0);
    E(t, SPAN_SLEEP);
    E(t, SPAN_AWAIT_GC_THREADS);
    E(t, SPAN_MINOR_GC);
    B(t, SPAN_MUTATOR, 44);
    E(t, SPAN_MUTATOR);

    /* Idle, woken for work and for a GC; then a follower's part of a major GC. */
    B(t, SPAN_IDLE, 0);
    WAKE(t, WAKE_FOR_WORK);
    E(t, SPAN_IDLE);
    B(t, SPAN_IDLE, 0);
    WAKE(t, WAKE_FOR_GC);
    E(t, SPAN_IDLE);
    B(t, SPAN_ENTER_BARRIER, 0);
    B(t, SPAN_SLEEP, 0);
    E(t, SPAN_SLEEP);
    E(t, SPAN_ENTER_BARRIER);
    B(t, SPAN_MAJOR_GC, 0);
    for (unsigned i = 0; i < 2 * BUF_RECORDS; i++) {   /* fills the buffer twice over */
        B(t, SPAN_GC_WORK, 0);
        if (i % 1000 == 0)
            SPIN(t, "sm_lock", i + 1);
        E(t, SPAN_GC_WORK);
    }
    /* Left open for trace_exit: the major GC, its leave barrier and a sleep in it. */
    B(t, SPAN_LEAVE_BARRIER, 0);
    B(t, SPAN_SLEEP, 0);
    CHECK(records(t) > 2 * BUF_RECORDS);
}

static void *track1_main(void *arg)
{
    (void)arg;
    Track *t = &tracks[1];
    trace_attach(1);
    for (uint64_t i = 0; records(t) < 2 * BUF_RECORDS + 100; i++) {
        B(t, SPAN_MUTATOR, 1000 + i);
        if (i % 3 == 0) {
            SUSPEND(t, true, 1000 + i);
            B(t, SPAN_IDLE, 0);
            WAKE(t, WAKE_FOR_WORK);
            E(t, SPAN_IDLE);
        } else {
            E(t, SPAN_MUTATOR);
        }
    }
    /* Then the buffer exactly full once three more spans are open. */
    while ((records(t) + 3) % BUF_RECORDS != 0)
        WAKE(t, WAKE_FOR_GC);
    B(t, SPAN_MUTATOR, 5000);
    B(t, SPAN_IDLE, 0);
    B(t, SPAN_MUTATOR, 5001);
    CHECK_EQ_INT(records(t) % BUF_RECORDS, 0);
    return NULL;
}

/* Never attached to a track: everything it writes is dropped. */
static void *stray_main(void *arg)
{
    (void)arg;
    uint64_t a = 0;
    trace_begin(SPAN_MUTATOR, 7);
    CHECK(!trace_suspend_mutator(&a));
    trace_begin(SPAN_IDLE, 0);
    trace_wake(WAKE_FOR_GC);
    trace_spin("stray", 1);
    trace_end(SPAN_IDLE);
    return NULL;
}

/* --- reading the file back ------------------------------------------------------------------ */

/* The value after `"key":` in an event line, or NULL. */
static const char *field(const char *line, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    const char *p = strstr(line, pat);
    return p ? p + strlen(pat) : NULL;
}

/* A string field: copies it into buf. */
static bool str_field(const char *line, const char *key, char *buf, size_t size)
{
    const char *p = field(line, key);
    if (!p || *p != '"') return false;
    p++;
    const char *q = strchr(p, '"');
    if (!q || (size_t)(q - p) >= size) return false;
    memcpy(buf, p, (size_t)(q - p));
    buf[q - p] = '\0';
    return true;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 1 << 20, n = 0;
    char *s = malloc(cap);
    size_t got;
    while ((got = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (n + 1 == cap) s = realloc(s, cap *= 2);
    }
    fclose(f);
    s[n] = '\0';
    return s;
}

typedef struct Seen {
    size_t matched;                /* events so far, compared with the track's expected */
    size_t mismatches;
    char stack[64][64];            /* open span names */
    unsigned depth;
    size_t unbalanced;
    double last_ts;
    size_t backwards;
    bool named;                    /* its thread_name metadata */
} Seen;

static void check_file(const char *path)
{
    char *text = slurp(path);
    if (!CHECK(text != NULL)) return;
    CHECK(strncmp(text, "{\"displayTimeUnit\":\"ns\"", 22) == 0);
    CHECK(strstr(text, "\"n_caps\":2}") != NULL);
    size_t len = strlen(text);
    CHECK(len > 4 && strcmp(text + len - 4, "\n]}\n") == 0);

    Seen seen[2] = { 0 };
    size_t events = 0, bad_lines = 0, other_tids = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, " {\"ph\":", 7) != 0)
            continue;
        events++;
        char ph[4], name[64];
        const char *tidp = field(line, "tid");
        if (!str_field(line, "ph", ph, sizeof ph) || !str_field(line, "name", name, sizeof name)
            || !tidp) {
            bad_lines++;
            continue;
        }
        unsigned long tid = strtoul(tidp, NULL, 10);
        if (tid > 1) {
            other_tids++;
            continue;
        }
        Seen *s = &seen[tid];
        if (ph[0] == 'M') {
            char want[16], got[16];
            const char *args = strstr(line, "\"args\":{");
            snprintf(want, sizeof want, "cap %lu", tid);
            CHECK_STR(name, "thread_name");
            CHECK(args && str_field(args, "name", got, sizeof got));
            CHECK_STR(args ? got : NULL, want);
            s->named = true;
            continue;
        }
        const char *tsp = field(line, "ts");
        double ts = tsp ? strtod(tsp, NULL) : -1;
        if (ts < s->last_ts) s->backwards++;
        s->last_ts = ts;

        /* Nesting: E closes the innermost open span of its tid, by name. */
        if (ph[0] == 'B') {
            if (s->depth < 64) snprintf(s->stack[s->depth], sizeof s->stack[0], "%s", name);
            s->depth++;
        } else if (ph[0] == 'E') {
            if (!s->depth || (s->depth <= 64 && strcmp(s->stack[s->depth - 1], name) != 0))
                s->unbalanced++;
            if (s->depth) s->depth--;
        }

        /* The exact sequence its track wrote. */
        Track *t = &tracks[tid];
        if (s->matched >= t->n) {
            s->mismatches++;
            continue;
        }
        const Ev *e = &t->ev[s->matched++];
        bool ok = ph[0] == e->ph && strcmp(name, e->name) == 0;
        if (ok && e->ph == 'B' && strcmp(name, "mutator") == 0) {
            const char *a = field(line, "thread");
            ok = a && strtoull(a, NULL, 10) == e->arg;
        } else if (ok && e->ph == 'E' && e->str) {
            char str[64];
            ok = str_field(line, "status", str, sizeof str) && strcmp(str, e->str) == 0;
        } else if (ok && (e->ph == 'C' || strcmp(name, "gc stats") == 0
                          || strncmp(name, "thread ", 7) == 0)) {
            const char *a = field(line, e->ph == 'C' ? "allocated"
                                        : name[0] == 'g' ? "copied" : "thread");
            ok = a && strtoull(a, NULL, 10) == e->arg;
        } else if (ok && e->ph == 'i' && strncmp(name, "gc ", 3) == 0) {
            ok = strcmp(name, e->name) == 0;
        } else if (ok && e->ph == 'i') {
            char str[64];
            if (strcmp(name, "wake") == 0) {
                ok = str_field(line, "by", str, sizeof str) && strcmp(str, e->str) == 0;
            } else {
                const char *sp = field(line, "spins");
                ok = str_field(line, "lock", str, sizeof str) && strcmp(str, e->str) == 0
                     && sp && strtoull(sp, NULL, 10) == e->arg;
            }
        }
        if (!ok) {
            if (s->mismatches < 5)
                fprintf(stderr, "tid %lu event %zu: got %s\n  expected ph %c name %s\n", tid,
                        s->matched - 1, line, e->ph, e->name);
            s->mismatches++;
        }
    }
    CHECK_EQ_INT(bad_lines, 0);
    CHECK_EQ_INT(other_tids, 0);
    CHECK_EQ_INT(events, 2 + tracks[0].n + tracks[1].n);
    for (int tid = 0; tid < 2; tid++) {
        Seen *s = &seen[tid];
        CHECK(s->named);
        CHECK_EQ_INT(s->matched, tracks[tid].n);
        CHECK_EQ_INT(s->mismatches, 0);
        CHECK_EQ_INT(s->unbalanced, 0);
        CHECK_EQ_INT(s->depth, 0);
        CHECK_EQ_INT(s->backwards, 0);
    }
    printf("eventlog: %zu events (track 0: %zu, track 1: %zu)\n", events, tracks[0].n,
           tracks[1].n);
    free(text);
}

int main(int argc, char **argv)
{
    bool ghc = argc == 3 && strcmp(argv[2], "ghc") == 0;
    if (argc != 2 && !ghc) {
        fprintf(stderr, "usage: test_eventlog FILE [ghc]\n");
        return 2;
    }
    /* Before trace_init: off, and events go nowhere. */
    CHECK(!trace_on);
    trace_begin(SPAN_MUTATOR, 1);
    trace_spin("early", 1);

    /* the configuration -lFILE [--eventlog-format=ghc] resolves to (base/util.h) */
    RtsConfig cfg = { .eventlog = true, .eventlog_file = argv[1],
                      .eventlog_format = ghc ? EVENTLOG_GHC : EVENTLOG_CHROME };
    base_config_set(&cfg);
    trace_init(argv[0], 2);
    CHECK(trace_on);

    /* Not attached yet: dropped. */
    uint64_t a = 99;
    trace_begin(SPAN_MUTATOR, 2);
    CHECK(!trace_suspend_mutator(&a));
    CHECK_EQ_INT(a, 99);
    trace_wake(WAKE_FOR_GC);

    pthread_t t1, stray;
    CHECK_EQ_INT(pthread_create(&t1, NULL, track1_main, NULL), 0);
    CHECK_EQ_INT(pthread_create(&stray, NULL, stray_main, NULL), 0);
    write_track0();
    CHECK_EQ_INT(pthread_join(t1, NULL), 0);
    CHECK_EQ_INT(pthread_join(stray, NULL), 0);

    expect_closed_at_exit(&tracks[0]);
    expect_closed_at_exit(&tracks[1]);
    trace_exit();
    CHECK(!trace_on);
    trace_begin(SPAN_MUTATOR, 3);                 /* after the exit: ignored, no crash */
    CHECK(!trace_suspend_mutator(&a));

    if (ghc)                    /* ghc_eventlog.py reads it (testsuite/unit/TESTS) */
        printf("eventlog: %zu events written (track 0: %zu, track 1: %zu)\n",
               tracks[0].n + tracks[1].n, tracks[0].n, tracks[1].n);
    else
        check_file(argv[1]);
    free(tracks[0].ev);
    free(tracks[1].ev);
    return check_done();
}
