/* The time profile, +RTS -p: Note [Time profile] in profile.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "sched/profile.h"
#include "base/util.h"
#include "sync/stw.h"
#include "rts_config.h"

bool prof_on;

/* One capability's counts: its own, written only by the OS thread that runs it, some of them
 * by that thread's handler of the timer's signal (prof_signal), which interrupts it: those are
 * atomic. An open-addressing table keyed by the language layer's key. */
typedef struct {
    _Alignas(RTS_CACHE_LINE) uint64_t due;  /* atomic: ticks while a thread ran, not yet charged
                                             * (the handler adds, the owner takes) */
    uint64_t gc;                            /* atomic: ticks in a GC sync while a thread ran */
    int running;                            /* atomic: a thread runs here */
    int has_timer;                          /* `timer` is set (once) */
    timer_t timer;                          /* its OS thread's CPU-time timer */
    uint64_t signals;                       /* atomic: the timer's signals that counted ticks */
    uint64_t most;                          /* atomic: the most ticks one signal counted */
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

static void prof_signal(int sig, siginfo_t *si, void *uc);

void prof_init(unsigned n_caps)
{
    if (!base_cfg->profile)
        return;
    prof_caps = aligned_alloc(RTS_CACHE_LINE, n_caps * sizeof *prof_caps);
    if (!prof_caps) base_fatal("out of memory (profile)");
    memset(prof_caps, 0, n_caps * sizeof *prof_caps);
    prof_n_caps = n_caps;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = prof_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (sigaction(SIGPROF, &sa, NULL) != 0)
        base_fatal("cannot handle SIGPROF for the profile: %s", strerror(errno));
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
    if (base_cfg->profile_stem)
        snprintf(prof_path, sizeof prof_path, "%s.prof", base_cfg->profile_stem);
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

/* Note [Time profile]: the signal of a capability's CPU-time timer, on the OS thread that
 * runs it, which has just used one tick of CPU (or 1 + si_overrun: the kernel checks CPU
 * timers at its own tick, every 4 ms at HZ=250). Async-signal-safe: atomics only. */
static void prof_signal(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if (si->si_code != SI_TIMER)                /* not our timer's (a kill -PROF) */
        return;
    ProfCap *pc = si->si_value.sival_ptr;
    uint64_t n = 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0);
    if (!__atomic_load_n(&pc->running, __ATOMIC_RELAXED))
        return;                                 /* an idle capability gets none */
    __atomic_add_fetch(&pc->signals, 1, __ATOMIC_RELAXED);
    if (n > __atomic_load_n(&pc->most, __ATOMIC_RELAXED))
        __atomic_store_n(&pc->most, n, __ATOMIC_RELAXED);   /* only this thread writes it */
    if ((__atomic_load_n(&stw_sync.word, __ATOMIC_ACQUIRE) & 3) == SYNC_GC) {
        __atomic_add_fetch(&pc->gc, n, __ATOMIC_RELAXED);
    } else {
        __atomic_add_fetch(&pc->due, n, __ATOMIC_RELAXED);
        __atomic_store_n(&cap_array[pc - prof_caps].sm.hplim, (Value *)NULL, __ATOMIC_RELAXED);
    }
}

/* The calling OS thread's CPU-time timer, every RTS_PROF_TICK_US of its CPU time, its signal
 * to this thread only (SIGEV_THREAD_ID, as gperftools' per-thread timers). */
static void start_timer(ProfCap *pc)
{
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = pc;
    sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
    if (timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &pc->timer) != 0)
        base_fatal("cannot create the profile's CPU-time timer: %s", strerror(errno));
    struct itimerspec its = {
        .it_interval = { 0, (long)RTS_PROF_TICK_US * 1000 },
        .it_value = { 0, (long)RTS_PROF_TICK_US * 1000 },
    };
    if (timer_settime(pc->timer, 0, &its, NULL) != 0)
        base_fatal("cannot start the profile's CPU-time timer: %s", strerror(errno));
    pc->has_timer = 1;
}

void prof_thread_starts(Capability *cap)
{
    ProfCap *pc = &prof_caps[cap->sm.no];
    if (!pc->has_timer)
        start_timer(pc);
    __atomic_store_n(&pc->running, 1, __ATOMIC_RELAXED);
}

/* The ticks due on pc, taken. */
static unsigned take_due(ProfCap *pc)
{
    return (unsigned)__atomic_exchange_n(&pc->due, 0, __ATOMIC_RELAXED);
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
        if (!keys || !counts) base_fatal("out of memory (profile)");
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
    uint64_t samples = 0, other = 0, gc = 0, signals = 0, most = 0;
    for (unsigned i = 0; i < prof_n_caps; i++)     /* no more ticks (timers are process-wide) */
        if (prof_caps[i].has_timer)
            timer_delete(prof_caps[i].timer);
    for (unsigned i = 0; i < prof_n_caps; i++) {
        n += prof_caps[i].used;
        samples += prof_caps[i].samples;
        other += prof_caps[i].other;
        gc += __atomic_load_n(&prof_caps[i].gc, __ATOMIC_RELAXED);
        signals += __atomic_load_n(&prof_caps[i].signals, __ATOMIC_RELAXED);
        uint64_t m = __atomic_load_n(&prof_caps[i].most, __ATOMIC_RELAXED);
        most = m > most ? m : most;
    }
    samples += gc;
    Entry *e = malloc((n + 1) * sizeof *e);
    if (!e) base_fatal("out of memory (profile)");
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
    fprintf(f, "\tticks in a procedure: %llu, in GC: %llu, elsewhere (a C frame on top): %llu\n",
            (unsigned long long)(samples - other - gc), (unsigned long long)gc,
            (unsigned long long)other);
    fprintf(f, "\ttimer signals: %llu, the most ticks in one: %llu\n\n",
            (unsigned long long)signals, (unsigned long long)most);
    /* The columns as wide as their longest entry (GHC's .prof does the same); after the
     * procedures, the GC's row and the row of no procedure, each when it has ticks. */
    typedef struct { char name[128], src[256]; uint64_t n; } Names;
    Names *names = calloc(m + 2, sizeof *names);
    if (!names) base_fatal("out of memory (profile)");
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
