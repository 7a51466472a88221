/* The time profile, +RTS -p: Note [Time profile] in profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include "sched/profile.h"
#include "base/util.h"
#include "sync/stw.h"
#include "rts_config.h"

bool prof_on;

/* One capability's counts: its own, written only by the OS thread that runs it; the tick
 * adds to `due` and `gc` and reads `running`. An open-addressing table keyed by the language
 * layer's key. */
typedef struct {
    _Alignas(RTS_CACHE_LINE) uint64_t due_ns;  /* atomic: CPU time while a thread ran, not
                                             * yet charged (the tick adds, the owner takes) */
    int running;                            /* atomic: a thread runs here (its owner writes) */
    int has_clock;                          /* atomic: `clock` is set (its owner, once) */
    clockid_t clock;                        /* the CPU clock of the OS thread that runs it */
    uint64_t last_cpu;                      /* the tick's: that clock at the last tick */
    uint64_t gc_ns;                         /* the tick's: CPU time in a GC while a thread ran */
    uint64_t samples;                       /* the ticks taken, `other` included, `gc` not */
    uint64_t other;                         /* not in a procedure (where gave NULL) */
    const void **keys;
    uint64_t *counts;
    size_t size, used;                      /* size a power of two, used < size / 2 */
} ProfCap;

static ProfCap *prof_caps;
static unsigned prof_n_caps;
static RtsProfiler profiler;
static char prog_stem[256];
static FILE *prof_out;                      /* opened by prof_open, before the program runs */
static char prof_path[4096];

void rts_set_profiler(const RtsProfiler *p) { profiler = *p; }

void prof_init(unsigned n_caps)
{
    if (!rts_cfg->profile)
        return;
    prof_caps = aligned_alloc(RTS_CACHE_LINE, n_caps * sizeof *prof_caps);
    if (!prof_caps) rts_fatal("out of memory (profile)");
    memset(prof_caps, 0, n_caps * sizeof *prof_caps);
    prof_n_caps = n_caps;
    prof_on = true;
}

/* <prog>.prof: the program's base name less ".scm", as the eventlog's (GHC: <prog>.prof). */
void prof_set_program(const char *prog)
{
    const char *base = strrchr(prog, '/');
    base = base ? base + 1 : prog;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".scm") == 0)
        n -= 4;
    snprintf(prog_stem, sizeof prog_stem, "%.*s", (int)n, base);
}

static void set_path(void)
{
    if (rts_cfg->profile_stem)
        snprintf(prof_path, sizeof prof_path, "%s.prof", rts_cfg->profile_stem);
    else
        snprintf(prof_path, sizeof prof_path, "%s.prof", prog_stem[0] ? prog_stem : "rtslab");
}

bool prof_open(void)
{
    if (!prof_on || prof_out)
        return true;
    set_path();
    prof_out = fopen(prof_path, "w");
    if (!prof_out) {
        fprintf(stderr, "rtslab: cannot open %s for the profile: %s\n", prof_path, strerror(errno));
        return false;
    }
    return true;
}

int prof_file(const char **name)
{
    if (!prof_out)
        set_path();
    *name = prof_path;
    return prof_out ? fileno(prof_out) : -1;
}

#define TICK_NS ((uint64_t)RTS_PROF_TICK_US * 1000u)

/* Note [Time profile]: each tick adds, to every capability running a thread, the CPU time
 * its OS thread used since the last tick, and asks for a sample once a whole tick is due. */
void prof_tick(void)
{
    static unsigned ticks;      /* only the timer thread */
    bool gc = (__atomic_load_n(&stw_sync.word, __ATOMIC_ACQUIRE) & 3) == SYNC_GC;
    for (unsigned i = 0; i < prof_n_caps; i++) {
        ProfCap *pc = &prof_caps[i];
        if (!__atomic_load_n(&pc->has_clock, __ATOMIC_ACQUIRE))
            continue;
        struct timespec ts;
        if (clock_gettime(pc->clock, &ts) != 0)
            continue;
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        uint64_t used = now - pc->last_cpu;
        pc->last_cpu = now;
        if (!__atomic_load_n(&pc->running, __ATOMIC_RELAXED))
            continue;
        if (gc) {
            pc->gc_ns += used;
        } else if (__atomic_add_fetch(&pc->due_ns, used, __ATOMIC_RELAXED) >= TICK_NS) {
            __atomic_store_n(&cap_array[i].sm.hplim, (Value *)NULL, __ATOMIC_RELAXED);
        }
    }
    if (++ticks % (RTS_TICK_MS * 1000 / RTS_PROF_TICK_US) == 0)
        cap_tick();
}

void prof_thread_starts(Capability *cap)
{
    ProfCap *pc = &prof_caps[cap->sm.no];
    if (!pc->has_clock && pthread_getcpuclockid(pthread_self(), &pc->clock) == 0)
        __atomic_store_n(&pc->has_clock, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&pc->running, 1, __ATOMIC_RELAXED);
}

/* The whole ticks due on pc, taken (the rest stays due). */
static unsigned take_due(ProfCap *pc)
{
    uint64_t due = __atomic_load_n(&pc->due_ns, __ATOMIC_RELAXED);
    unsigned n = (unsigned)(due / TICK_NS);
    if (n)
        __atomic_sub_fetch(&pc->due_ns, (uint64_t)n * TICK_NS, __ATOMIC_RELAXED);
    return n;
}

static size_t slot_of(const void *key, size_t size)
{
    uintptr_t h = (uintptr_t)key;
    h ^= h >> 17;
    h *= (uintptr_t)0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (size - 1);
}

static void count(ProfCap *pc, const void *key, unsigned n)
{
    if (2 * (pc->used + 1) >= pc->size) {
        size_t size = pc->size ? 2 * pc->size : 256;
        const void **keys = calloc(size, sizeof *keys);
        uint64_t *counts = calloc(size, sizeof *counts);
        if (!keys || !counts) rts_fatal("out of memory (profile)");
        for (size_t i = 0; i < pc->size; i++) {
            if (!pc->keys[i]) continue;
            size_t j = slot_of(pc->keys[i], size);
            while (keys[j]) j = (j + 1) & (size - 1);
            keys[j] = pc->keys[i];
            counts[j] = pc->counts[i];
        }
        free(pc->keys);
        free(pc->counts);
        pc->keys = keys;
        pc->counts = counts;
        pc->size = size;
    }
    size_t j = slot_of(key, pc->size);
    while (pc->keys[j] && pc->keys[j] != key) j = (j + 1) & (pc->size - 1);
    if (!pc->keys[j]) {
        pc->keys[j] = key;
        pc->used++;
    }
    pc->counts[j] += n;
}

void prof_safe_point(Capability *cap)
{
    ProfCap *pc = &prof_caps[cap->sm.no];
    unsigned n = take_due(pc);
    if (!n)
        return;
    pc->samples += n;
    const void *key = profiler.where && cap->current != RTS_FALSE ? profiler.where(cap) : NULL;
    if (key)
        count(pc, key, n);
    else
        pc->other += n;
}

void prof_thread_stops(Capability *cap)
{
    ProfCap *pc = &prof_caps[cap->sm.no];
    __atomic_store_n(&pc->running, 0, __ATOMIC_RELAXED);
    unsigned n = take_due(pc);
    pc->samples += n;
    pc->other += n;
}

typedef struct { const void *key; uint64_t n; } Entry;

static int by_key(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const Entry *)a)->key, y = (uintptr_t)((const Entry *)b)->key;
    return x < y ? -1 : x > y;
}

static int by_count(const void *a, const void *b)
{
    uint64_t x = ((const Entry *)a)->n, y = ((const Entry *)b)->n;
    return x > y ? -1 : x < y ? 1 : by_key(a, b);
}

bool prof_report(void)
{
    if (!prof_on)
        return true;
    size_t n = 0;
    uint64_t samples = 0, other = 0, gc = 0;
    for (unsigned i = 0; i < prof_n_caps; i++) {
        n += prof_caps[i].used;
        samples += prof_caps[i].samples;
        other += prof_caps[i].other;
        gc += prof_caps[i].gc_ns / TICK_NS;
    }
    samples += gc;
    Entry *e = malloc((n + 1) * sizeof *e);
    if (!e) rts_fatal("out of memory (profile)");
    size_t k = 0;
    for (unsigned i = 0; i < prof_n_caps; i++)
        for (size_t j = 0; j < prof_caps[i].size; j++)
            if (prof_caps[i].keys[j])
                e[k++] = (Entry){ prof_caps[i].keys[j], prof_caps[i].counts[j] };
    qsort(e, k, sizeof *e, by_key);          /* one entry per key over the capabilities */
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (m && e[m - 1].key == e[i].key)
            e[m - 1].n += e[i].n;
        else
            e[m++] = e[i];
    }
    qsort(e, m, sizeof *e, by_count);

    if (!prof_open()) {         /* not opened before the program ran (no rts_run_main) */
        free(e);
        return false;
    }
    FILE *f = prof_out;
    prof_out = NULL;
    time_t now = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%a %b %e %H:%M %Y", localtime(&now));
    fprintf(f, "\t%s Time profile (rtslab +RTS -p)\n\n", date);
    fprintf(f, "\t   %s\n\n", prog_stem[0] ? prog_stem : "rtslab");
    fprintf(f, "\ttotal time  = %12.3f secs   (%llu ticks @ %d us, %u capabilit%s)\n",
            (double)samples * RTS_PROF_TICK_US / 1e6, (unsigned long long)samples,
            RTS_PROF_TICK_US, prof_n_caps, prof_n_caps == 1 ? "y" : "ies");
    fprintf(f, "\tticks in a procedure: %llu, in GC: %llu, elsewhere (a C frame on top): %llu\n\n",
            (unsigned long long)(samples - other - gc), (unsigned long long)gc,
            (unsigned long long)other);
    /* The columns as wide as their longest entry (GHC's .prof does the same); after the
     * procedures, the GC's row and the row of no procedure, each when it has ticks. */
    typedef struct { char name[128], src[256]; uint64_t n; } Names;
    Names *names = calloc(m + 2, sizeof *names);
    if (!names) rts_fatal("out of memory (profile)");
    size_t rows = 0;
    for (size_t i = 0; i < m; i++, rows++) {
        if (profiler.describe)
            profiler.describe(e[i].key, names[rows].name, sizeof names[rows].name,
                              names[rows].src, sizeof names[rows].src);
        names[rows].n = e[i].n;
    }
    if (gc) {
        snprintf(names[rows].name, sizeof names[rows].name, "(garbage collection)");
        snprintf(names[rows].src, sizeof names[rows].src, "-");
        names[rows++].n = gc;
    }
    if (other) {
        snprintf(names[rows].name, sizeof names[rows].name, "(not in a procedure)");
        snprintf(names[rows].src, sizeof names[rows].src, "-");
        names[rows++].n = other;
    }
    int wn = (int)strlen("PROCEDURE"), ws = (int)strlen("SRC");
    for (size_t i = 0; i < rows; i++) {
        int a = (int)strlen(names[i].name), b = (int)strlen(names[i].src);
        wn = a > wn ? a : wn;
        ws = b > ws ? b : ws;
    }
    fprintf(f, "%-*s  %-*s  %6s %9s\n\n", wn, "PROCEDURE", ws, "SRC", "%time", "ticks");
    for (size_t i = 0; i < rows; i++)
        fprintf(f, "%-*s  %-*s  %6.1f %9llu\n", wn, names[i].name, ws, names[i].src,
                samples ? 100.0 * (double)names[i].n / (double)samples : 0.0,
                (unsigned long long)names[i].n);
    free(names);
    free(e);
    if (fclose(f) != 0) {
        fprintf(stderr, "rtslab: cannot write the profile %s: %s\n", prof_path, strerror(errno));
        return false;
    }
    return true;
}
