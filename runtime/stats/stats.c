/* Statistics: GC records and the -s summary / -S per-GC lines, in GHC's formats.
 *
 * Note [Statistics formats]
 * docs/stats.md is the reference for everything printed here; testsuite/stats checks it.
 *  - `-s[file]`: GHC's `+RTS -s` summary, line for line in GHC's formats (so the regular
 *    expressions of nofib's runstdtest and of other tools read it), then rtslab's lines:
 *    stopping the world, barrier waits, spinlocks, idle wake-ups, context switches.
 *  - `-S[file]`: GHC's per-GC lines (same header and columns) with rtslab's columns appended
 *    after `(Gen:  n)`, then the summary, as GHC's -S does.
 *  - `--machine-readable`: the summary as GHC's ` [("key", "value")` ... ` ]` list instead,
 *    with GHC's keys where they apply and rtslab's own keys prefixed `rtslab_`. The keys are
 *    stable: rename none, add new ones (and document them in docs/stats.md).
 * Like GHC's report_* functions, the reports do no arithmetic of their own: stats_report
 * computes one Summary and every format prints from it, so the formats cannot disagree.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "stats/stats.h"
#include "base/util.h"
#include "os/numa.h"
#include "sm/gc.h"
#include "sm/evac.h"            /* gc_work_wait, gc_copy_wait */
#include "sm/sanity.h"          /* sanity_counts */
#include "sync/stw.h"
#include "sync/wait.h"
#include "sched/capability.h"

static struct {
    uint64_t start_ns, start_cpu, mut_start_ns, mut_start_cpu;
    uint64_t gcs[2], par_gcs[2], gc_ns[2], gc_cpu[2], max_pause[2];
    /* over parallel GCs (more than one GC thread), for the work balance: */
    uint64_t par_copied, par_max_copied, par_balanced_copied;
    uint64_t copied, max_live, cumulative_live, live_samples;
    uint64_t max_heap_blocks;
    uint64_t last_alloc;                    /* -S: allocated at the previous GC */
    long     last_majflt;                   /* -S: major page faults at the previous GC */
} st;

static FILE *stats_out;

/* The registered patches' sections (Note [Patch statistics] in stats.h), in their order. */
#define MAX_SECTIONS 32
static struct {
    const char *name;
    const RtsStatsSection *sec;
} sections[MAX_SECTIONS];
static unsigned n_sections;

#define EACH_SECTION(s_) \
    for (unsigned i_ = 0; i_ < n_sections; i_++) \
        for (const RtsStatsSection *s_ = sections[i_].sec; s_; s_ = NULL)

/* The base's lines and keys a section may follow (the lines_after(...) and keys_after(...)
 * calls below): a section that names another would never be printed, so it is refused. */
static const char *const line_anchors[] = {
    "Productivity", "Stop the world", "Barrier waits", "Spinlocks", "Idle capabilities woken",
    NULL,
};
static const char *const key_anchors[] = {
    "gen_1_avg_pause_seconds", "rtslab_stw_max_seconds", "rtslab_barrier_*",
    "rtslab_idle_gc_wakeups", "rtslab_threads_pushed", NULL,
};

static bool is_anchor(const char *const *anchors, const char *a)
{
    for (; *anchors; anchors++)
        if (strcmp(*anchors, a) == 0) return true;
    return false;
}

void stats_register(const char *name, const RtsStatsSection *sec)
{
    for (unsigned i = 0; i < n_sections; i++)
        if (sections[i].sec == sec) return;
    if (sec->lines && (sec->lines_after == NULL || !is_anchor(line_anchors, sec->lines_after)))
        base_fatal("the statistics of %s follow the -s line \"%s\", which is not one of "
                "stats/stats.c's line_anchors", name, sec->lines_after ? sec->lines_after : "");
    if (sec->keys && (sec->keys_after == NULL || !is_anchor(key_anchors, sec->keys_after)))
        base_fatal("the statistics of %s follow the key \"%s\", which is not one of "
                "stats/stats.c's key_anchors", name, sec->keys_after ? sec->keys_after : "");
    if (n_sections == MAX_SECTIONS)
        base_die(1, "more than %d statistics sections", MAX_SECTIONS);
    sections[n_sections].name = name;
    sections[n_sections].sec = sec;
    n_sections++;
}

static double secs(uint64_t ns) { return (double)ns / 1e9; }

static long major_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_majflt : 0;
}

void stats_init(void)
{
    memset(&st, 0, sizeof st);
    EACH_SECTION(sec)
        if (sec->init) sec->init();
    st.start_ns = base_now_ns();
    st.start_cpu = base_cpu_ns();
    stats_out = NULL;
    if (base_cfg->stats != RTS_STATS_NONE) {
        stats_out = base_cfg->stats_file ? fopen(base_cfg->stats_file, "w") : stderr;
        if (!stats_out)
            base_die(1, "cannot open %s for the statistics: %s", base_cfg->stats_file,
                     strerror(errno));
        if (base_cfg->stats == RTS_STATS_VERBOSE) {
            /* GHC's two header lines, then ours after `(Gen:  n)` */
            fprintf(stats_out,
                    "    Alloc    Copied     Live     GC     GC      TOT      TOT  Page Flts"
                    "              Kind     Pause       STW Thr  Balance\n"
                    "    bytes     bytes     bytes   user   elap     user     elap"
                    "                                   (s)       (s)          (%%)\n");
            st.last_majflt = major_faults();
        }
    }
}

int stats_file(void)
{
    return stats_out && stats_out != stderr ? fileno(stats_out) : -1;
}

void stats_mutator_start(void)
{
    st.mut_start_ns = base_now_ns();
    st.mut_start_cpu = base_cpu_ns();
}

/* The work balance of one GC, as GHC's of a run (its Note [Work Balance], rts/Stats.c):
 * balanced copied bytes / copied bytes; 0 when one thread copied everything, 1 when every
 * thread copied the same. Negative when undefined (a serial GC, or nothing copied). */
static double gc_balance(const GcRecord *r)
{
    if (r->gc_threads < 2 || r->copied_bytes == 0)
        return -1;
    return (double)r->balanced_copied_bytes / (double)r->copied_bytes;
}

/* Called by the GC leader while the world is stopped. */
void stats_gc_done(const GcRecord *r)
{
    int g = r->major;
    st.gcs[g]++;
    if (r->gc_threads > 1) {
        st.par_gcs[g]++;
        st.par_copied += r->copied_bytes;
        st.par_max_copied += r->max_thread_copied_bytes;
        st.par_balanced_copied += r->balanced_copied_bytes;
    }
    st.gc_ns[g] += r->pause_ns;
    st.gc_cpu[g] += r->cpu_ns;
    if (r->pause_ns > st.max_pause[g]) st.max_pause[g] = r->pause_ns;
    st.copied += r->copied_bytes;
    EACH_SECTION(sec)
        if (sec->gc_done) sec->gc_done(r);
    if (r->major) {
        st.cumulative_live += r->live_bytes;
        st.live_samples++;
        if (r->live_bytes > st.max_live) st.max_live = r->live_bytes;
    }
    size_t heap = r->heap_bytes / BLOCK_SIZE;
    if (heap > st.max_heap_blocks) st.max_heap_blocks = heap;
    if (stats_out && base_cfg->stats == RTS_STATS_VERBOSE) {
        uint64_t alloc = r->allocated_bytes;
        long faults = major_faults();
        double bal = gc_balance(r);
        char balbuf[16];
        if (bal < 0)
            snprintf(balbuf, sizeof balbuf, "-");
        else
            snprintf(balbuf, sizeof balbuf, "%.1f", 100 * bal);
        /* GHC's columns; its page-fault columns are the faults during this GC and those of
         * the mutator before it: we cannot split them, so "-" and both together. */
        fprintf(stats_out, "%9llu %9llu %9llu %6.3f %6.3f %8.3f %8.3f %4s %4ld  (Gen: %2d)"
                           "  %5s %9.6f %9.6f %3u %8s\n",
                (unsigned long long)(alloc - st.last_alloc), (unsigned long long)r->copied_bytes,
                (unsigned long long)r->live_bytes, secs(r->cpu_ns), secs(r->pause_ns),
                secs(base_cpu_ns() - st.start_cpu), secs(base_now_ns() - st.start_ns),
                "-", faults - st.last_majflt, g,
                r->major ? "major" : "minor", secs(r->pause_ns), secs(r->stw_ns),
                r->gc_threads, balbuf);
        st.last_alloc = alloc;
        st.last_majflt = faults;
    }
}

void stats_get(RtsStats *out)
{
    memset(out, 0, sizeof *out);
    out->bytes_allocated = sm_bytes_allocated();
    out->bytes_copied = st.copied;
    out->minor_gcs = st.gcs[0];
    out->major_gcs = st.gcs[1];
    out->max_live_bytes = st.max_live;
    out->minor_gc_ns = st.gc_ns[0];
    out->major_gc_ns = st.gc_ns[1];
    out->gc_ns = st.gc_ns[0] + st.gc_ns[1];
    out->max_pause_ns = st.max_pause[0] > st.max_pause[1] ? st.max_pause[0] : st.max_pause[1];
    out->heap_blocks = sm_heap_blocks();
}

void rts_get_stats(RtsStats *out) { stats_get(out); }

/* ---------------------------------------------------------------------------------------
 * The summary at exit
 */

/* The spinlocks -s reports, summed over the capabilities where there is one per capability,
 * and the GC threads' other spin-waits (sm/gc.h), whose "acquisitions" are waits. `key`
 * names the lock in the machine-readable keys (docs/stats.md lists them). Spins are the
 * locks' own counters (sync/spinwait.h). A spin-wait never sleeps, so there is no sleeps
 * column (a patch that makes one give up the CPU adds its own line: Note [Patch statistics]
 * in stats.h). */
typedef struct {
    const char *key, *label;
    uint64_t acquisitions, spins;
} LockSummary;

enum { LOCK_SM, LOCK_INBOX, LOCK_OBJ, LOCK_GC_WORK, LOCK_GC_COPY, NLOCKS };

/* machine-readable names of the wait kinds of sync/wait.h, in its order; a kind added there
 * gets a key from its name (and testsuite/stats fails until docs/stats.md lists it) */
static const char *const wait_keys[] = { "enter", "arrival", "gc_done", "leave" };

typedef struct {
    uint64_t alloc, copied, max_live, live_samples, avg_live, cumulative_live;
    uint64_t max_mem_bytes;
    uint64_t gcs[2], par_gcs[2];
    double gc_cpu[2], gc_wall[2], max_pause[2], avg_pause[2];
    double init_c, init_e, mut_c, mut_e, gc_c, gc_e, exit_c, exit_e, tot_c, tot_e;
    double gc_cpu_frac, gc_wall_frac, prod_cpu_frac, prod_wall_frac;
    uint64_t alloc_rate;                    /* bytes per mutator CPU second, as GHC */
    uint64_t par_copied, par_max_copied, par_balanced_copied;
    double work_balance;                    /* 0..1; 0 also when no parallel GC copied */
    /* ours */
    uint64_t stw_syncs;
    double stw_total, stw_mean, stw_max;
    uint64_t deferred_syncs, deferred_blocks, deferred_blocks_max,   /* Note [Deferred GC */
             deferred_extensions;                                    /* requests] in sm/gc.h */
    double deferred_mean;
    SyncWaitStats waits[WAIT_NKINDS];
    LockSummary locks[NLOCKS];
    uint64_t gc_wakeups, threads_pushed;
    uint64_t vcsw, ivcsw;
    uint64_t mem_returned, mem_mapped, mem_mapped_peak;   /* bytes (Note [Returning megablocks]) */
    SanityCounts sanity;                    /* -DS (Note [Sanity checking cost] in sm/sanity.c) */
} Summary;

static void summarise(Summary *s)
{
    memset(s, 0, sizeof *s);
    uint64_t end_ns = base_now_ns(), end_cpu = base_cpu_ns();
    size_t heap = sm_heap_blocks();
    if (heap > st.max_heap_blocks) st.max_heap_blocks = heap;

    s->alloc = sm_bytes_allocated();
    s->copied = st.copied;
    s->max_live = st.max_live;
    s->live_samples = st.live_samples;
    s->cumulative_live = st.cumulative_live;
    s->avg_live = st.live_samples ? st.cumulative_live / st.live_samples : 0;
    s->max_mem_bytes = (uint64_t)st.max_heap_blocks * BLOCK_SIZE;
    for (int g = 0; g < 2; g++) {
        s->gcs[g] = st.gcs[g];
        s->par_gcs[g] = st.par_gcs[g];
        s->gc_cpu[g] = secs(st.gc_cpu[g]);
        s->gc_wall[g] = secs(st.gc_ns[g]);
        s->max_pause[g] = secs(st.max_pause[g]);
        s->avg_pause[g] = st.gcs[g] ? s->gc_wall[g] / (double)st.gcs[g] : 0.0;
    }
    s->init_e = secs(st.mut_start_ns - st.start_ns);
    s->init_c = secs(st.mut_start_cpu - st.start_cpu);
    s->gc_e = s->gc_wall[0] + s->gc_wall[1];
    s->gc_c = s->gc_cpu[0] + s->gc_cpu[1];
    s->tot_e = secs(end_ns - st.start_ns);
    s->tot_c = secs(end_cpu - st.start_cpu);
    s->exit_c = s->exit_e = 0;      /* the exit sync is counted in MUT */
    s->mut_e = s->tot_e - s->init_e - s->gc_e - s->exit_e;
    s->mut_c = s->tot_c - s->init_c - s->gc_c - s->exit_c;
    if (s->mut_e < 0) s->mut_e = 0;
    if (s->mut_c < 0) s->mut_c = 0;
    s->gc_cpu_frac = s->tot_c > 0 ? s->gc_c / s->tot_c : 0;
    s->gc_wall_frac = s->tot_e > 0 ? s->gc_e / s->tot_e : 0;
    s->prod_cpu_frac = s->tot_c > 0 ? s->mut_c / s->tot_c : 0;
    s->prod_wall_frac = s->tot_e > 0 ? s->mut_e / s->tot_e : 0;
    s->alloc_rate = s->mut_c > 0 ? (uint64_t)((double)s->alloc / s->mut_c) : 0;
    s->par_copied = st.par_copied;
    s->par_max_copied = st.par_max_copied;
    s->par_balanced_copied = st.par_balanced_copied;
    /* GHC's (stat_exitReport in rts/Stats.c, Note [Work Balance] there): the balanced copied
     * bytes over the copied bytes, both summed over the parallel GCs; 0 when none copied */
    s->work_balance = st.par_copied
        ? (double)st.par_balanced_copied / (double)st.par_copied : 0.0;

    s->mem_returned = blk_mblocks_returned() * MBLOCK_SIZE;
    s->mem_mapped = (uint64_t)blk_mblocks() * MBLOCK_SIZE;
    s->mem_mapped_peak = (uint64_t)blk_mblocks_peak() * MBLOCK_SIZE;

    StwStats st;
    stw_stats(&st);
    s->stw_syncs = st.syncs;
    s->stw_total = secs(st.stw_ns_total);
    s->stw_mean = st.syncs ? s->stw_total / (double)st.syncs : 0;
    s->stw_max = secs(st.stw_ns_max);
    s->deferred_syncs = st.deferred_syncs;
    s->deferred_mean = st.deferred_syncs ? secs(st.deferred_ns_total) / (double)st.deferred_syncs : 0;
    for (unsigned i = 0; i < cap_n_caps; i++) {
        s->deferred_blocks += cap_array[i].sm.deferred_blocks;
        s->deferred_extensions += cap_array[i].sm.deferred_extensions;
        if (cap_array[i].sm.deferred_blocks_max > s->deferred_blocks_max)
            s->deferred_blocks_max = cap_array[i].sm.deferred_blocks_max;
    }
    for (int k = 0; k < WAIT_NKINDS; k++)
        sync_wait_stats((SyncWaitKind)k, &s->waits[k]);

    LockSummary *l = s->locks;
    l[LOCK_SM] = (LockSummary){ "sm", sm_lock.name, sm_lock.acquisitions, sm_lock.spins };
    l[LOCK_INBOX] = (LockSummary){ "inbox", "inboxes", 0, 0 };
    l[LOCK_OBJ] = (LockSummary){ "obj", "mvar/thread headers", 0, 0 };
    const SpinCount *gw = &gc_work_wait, *gcw = &gc_copy_wait;
    l[LOCK_GC_WORK] = (LockSummary){ "gc_work", "gc look-for-work", gw->waits, gw->spins };
    l[LOCK_GC_COPY] = (LockSummary){ "gc_copy", "gc copy in progress", gcw->waits, gcw->spins };
    for (unsigned i = 0; i < cap_n_caps; i++) {
        const SpinLock *in = &cap_array[i].inbox_lock;
        l[LOCK_INBOX].acquisitions += in->acquisitions;
        l[LOCK_INBOX].spins += in->spins;
        l[LOCK_OBJ].acquisitions += cap_array[i].obj_lock_acq;
        l[LOCK_OBJ].spins += cap_array[i].obj_lock_spins;
        s->gc_wakeups += cap_array[i].gc_wakeups;
        s->threads_pushed += cap_array[i].threads_pushed;
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        s->vcsw = (uint64_t)ru.ru_nvcsw;
        s->ivcsw = (uint64_t)ru.ru_nivcsw;
    }
    sanity_counts(&s->sanity);
    EACH_SECTION(sec)
        if (sec->summarise) sec->summarise();
}

/* The -s lines of the sections that follow the base's line `anchor`. */
static void lines_after(FILE *f, const char *anchor)
{
    EACH_SECTION(sec)
        if (sec->lines && sec->lines_after && strcmp(sec->lines_after, anchor) == 0)
            sec->lines(f);
}

/* 1234567 -> "1,234,567" */
static const char *commas(uint64_t n, char *buf)
{
    char tmp[32];
    int len = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)n), j = 0;
    for (int i = 0; i < len; i++) {
        buf[j++] = tmp[i];
        if ((len - i - 1) % 3 == 0 && i != len - 1) buf[j++] = ',';
    }
    buf[j] = 0;
    return buf;
}
/* Note [NUMA-local heap] in os/numa.h: what --numa did. */
static void report_numa(FILE *f)
{
    size_t len = 12 * (size_t)cap_n_caps + 512;
    char *buf = malloc(len);
    if (buf == NULL)
        return;
    fprintf(f, "  NUMA (--numa): %s; %llu megablocks given a node's policy",
            numa_explain(buf, len, true, base_cfg->numa_mask, base_cfg->pin_caps, cap_n_caps),
            (unsigned long long)numa_bound_mblocks());
    if (numa_bind_failures())
        fprintf(f, ", %llu refused", (unsigned long long)numa_bind_failures());
    fprintf(f, "\n\n");
    free(buf);
}

/* GHC's report_summary (rts/Stats.c), for the threaded RTS, less what rtslab does not have
 * (maximum slop, sparks); plus the `%GC time` line of GHC's non-threaded RTS. Memory in use
 * is in "MB" as GHC printed it before 9.2 ("MiB" since), which nofib's runstdtest reads. */
static void report_summary(FILE *f, const Summary *s)
{
    char b[40];
    fprintf(f, "%16s bytes allocated in the heap\n", commas(s->alloc, b));
    fprintf(f, "%16s bytes copied during GC\n", commas(s->copied, b));
    fprintf(f, "%16s bytes maximum residency (%llu sample(s))\n", commas(s->max_live, b),
            (unsigned long long)s->live_samples);
    fprintf(f, "%16llu MB total memory in use (0 MB lost due to fragmentation)\n\n",
            (unsigned long long)(s->max_mem_bytes / (1024 * 1024)));
    fprintf(f, "                                     Tot time (elapsed)  Avg pause  Max pause\n");
    for (int g = 0; g < 2; g++)
        fprintf(f, "  Gen %2d     %5llu colls, %5llu par   %6.3fs  %6.3fs     %3.4fs    %3.4fs\n",
                g, (unsigned long long)s->gcs[g], (unsigned long long)s->par_gcs[g],
                s->gc_cpu[g], s->gc_wall[g], s->avg_pause[g], s->max_pause[g]);
    fprintf(f, "\n");
    if (s->work_balance > 0)                /* as GHC: not after serial GCs only (-N1, -qg) */
        fprintf(f, "  Parallel GC work balance: %.2f%% (serial 0%%, perfect 100%%)\n\n",
                100 * s->work_balance);
    fprintf(f, "  TASKS: %u (%u bound, %u peak workers (%u total), using -N%u)\n\n",
            cap_n_caps + 1, 1u, cap_n_caps, cap_n_caps, cap_n_caps);
    fprintf(f, "  INIT    time  %7.3fs  (%7.3fs elapsed)\n", s->init_c, s->init_e);
    fprintf(f, "  MUT     time  %7.3fs  (%7.3fs elapsed)\n", s->mut_c, s->mut_e);
    fprintf(f, "  GC      time  %7.3fs  (%7.3fs elapsed)\n", s->gc_c, s->gc_e);
    fprintf(f, "  EXIT    time  %7.3fs  (%7.3fs elapsed)\n", s->exit_c, s->exit_e);
    fprintf(f, "  Total   time  %7.3fs  (%7.3fs elapsed)\n\n", s->tot_c, s->tot_e);
    fprintf(f, "  %%GC     time     %5.1f%%  (%.1f%% elapsed)\n\n",
            100 * s->gc_cpu_frac, 100 * s->gc_wall_frac);
    fprintf(f, "  Alloc rate    %s bytes per MUT second\n\n", commas(s->alloc_rate, b));
    fprintf(f, "  Productivity %5.1f%% of total user, %.1f%% of total elapsed\n\n",
            100 * s->prod_cpu_frac, 100 * s->prod_wall_frac);

    /* ours, after GHC's */
    lines_after(f, "Productivity");

    fprintf(f, "  Stop the world: %llu syncs, mean %.1f us, max %.1f us (the leader's wait for the last arrival)\n",
            (unsigned long long)s->stw_syncs, s->stw_mean * 1e6, s->stw_max * 1e6);
    fprintf(f, "  Deferred GC requests: %llu (mean %.1f us from request to last arrival), %llu nursery blocks taken meanwhile in %llu extensions, at most %llu at once\n",
            (unsigned long long)s->deferred_syncs, s->deferred_mean * 1e6,
            (unsigned long long)s->deferred_blocks, (unsigned long long)s->deferred_extensions,
            (unsigned long long)s->deferred_blocks_max);
    lines_after(f, "Stop the world");
    fprintf(f, "  Barrier waits:          waits      spins     sleeps    time\n");
    for (int k = 0; k < WAIT_NKINDS; k++)
        fprintf(f, "    %-26s %8llu %10llu %10llu  %6.3fs\n", sync_wait_kind_name((SyncWaitKind)k),
                (unsigned long long)s->waits[k].waits, (unsigned long long)s->waits[k].spins,
                (unsigned long long)s->waits[k].sleeps, secs(s->waits[k].wait_ns));
    lines_after(f, "Barrier waits");
    fprintf(f, "  Spinlocks:             acquired      spins\n");
    for (int i = 0; i < NLOCKS; i++)
        fprintf(f, "    %-22s %12llu %10llu\n", s->locks[i].label,
                (unsigned long long)s->locks[i].acquisitions, (unsigned long long)s->locks[i].spins);
    lines_after(f, "Spinlocks");
    fprintf(f, "  Idle capabilities woken for GC: %llu; threads pushed to idle capabilities: %llu\n",
            (unsigned long long)s->gc_wakeups, (unsigned long long)s->threads_pushed);
    lines_after(f, "Idle capabilities woken");
    fprintf(f, "  Memory returned to the OS: %llu MB; %llu MB mapped at exit, %llu MB at most\n",
            (unsigned long long)(s->mem_returned >> 20), (unsigned long long)(s->mem_mapped >> 20),
            (unsigned long long)(s->mem_mapped_peak >> 20));
    fprintf(f, "  OS context switches: %llu (%llu voluntary, %llu involuntary)\n\n",
            (unsigned long long)(s->vcsw + s->ivcsw), (unsigned long long)s->vcsw,
            (unsigned long long)s->ivcsw);
    if (base_cfg->numa)
        report_numa(f);
    if (base_cfg->sanity) {
        char w[40];
        uint64_t alloc_words = s->alloc / sizeof(Value);
        fprintf(f, "  Sanity checks (-DS): %llu, %llu of them whole-heap; %s words walked, "
                   "%.2f x the words allocated\n\n",
                (unsigned long long)s->sanity.checks, (unsigned long long)s->sanity.full_checks,
                commas(s->sanity.words_walked, w),
                alloc_words ? (double)s->sanity.words_walked / (double)alloc_words : 0.0);
    }
}

/* GHC's report_machine_readable: ` [("key", "value")`, then ` ,("key", "value")`, then ` ]`. */
static bool mr_first;

static void mr_str(FILE *f, const char *key, const char *val)
{
    fprintf(f, " %s(\"%s\", \"%s\")\n", mr_first ? "[" : ",", key, val);
    mr_first = false;
}

static void mr_u64(FILE *f, const char *key, uint64_t v)
{
    char b[32];
    snprintf(b, sizeof b, "%llu", (unsigned long long)v);
    mr_str(f, key, b);
}

static void mr_dbl(FILE *f, const char *key, double v)
{
    char b[64];
    snprintf(b, sizeof b, "%f", v);
    mr_str(f, key, b);
}

/* The machine-readable name of a barrier wait kind (wait_keys, else from its name). */
static const char *wait_key(int k, char *kind, size_t len)
{
    if ((size_t)k < sizeof wait_keys / sizeof wait_keys[0]) {
        snprintf(kind, len, "%s", wait_keys[k]);
    } else {
        const char *n = sync_wait_kind_name((SyncWaitKind)k);
        size_t j = 0;
        for (; n[j] && j < len - 1; j++)
            kind[j] = (n[j] >= 'a' && n[j] <= 'z') || (n[j] >= '0' && n[j] <= '9') ? n[j] : '_';
        kind[j] = 0;
    }
    return kind;
}

/* A section's key, per wait kind k (k < 0: not). */
static void mr_key(FILE *f, const RtsStatsKey *key, int k, const char *kind)
{
    char name[128];
    const char *n = key->key;
    if (k >= 0) {
        snprintf(name, sizeof name, "rtslab_barrier_%s_%s", kind, key->key);
        n = name;
    }
    if (key->u64)
        mr_u64(f, n, key->u64[k >= 0 ? k : 0]);
    else
        mr_dbl(f, n, key->dbl[k >= 0 ? k : 0]);
}

/* The keys of the sections that follow the base's key `anchor`. */
static void keys_after(FILE *f, const char *anchor, int k, const char *kind)
{
    EACH_SECTION(sec)
        if (sec->keys && sec->keys_after && strcmp(sec->keys_after, anchor) == 0)
            for (const RtsStatsKey *key = sec->keys; key->key; key++)
                mr_key(f, key, k, kind);
}

void stats_print_keys(FILE *f)
{
    char kind[48];
    for (unsigned i = 0; i < n_sections; i++) {
        const RtsStatsSection *sec = sections[i].sec;
        if (!sec->keys) continue;
        bool per_kind = sec->keys_after && strcmp(sec->keys_after, "rtslab_barrier_*") == 0;
        for (int k = 0; k < (per_kind ? WAIT_NKINDS : 1); k++)
            for (const RtsStatsKey *key = sec->keys; key->key; key++) {
                if (per_kind)
                    fprintf(f, "%s rtslab_barrier_%s_%s\n", sections[i].name,
                            wait_key(k, kind, sizeof kind), key->key);
                else
                    fprintf(f, "%s %s\n", sections[i].name, key->key);
            }
    }
}

static void report_machine_readable(FILE *f, const Summary *s)
{
    char key[96];
    mr_first = true;
    /* GHC's, in GHC's order */
    mr_u64(f, "bytes allocated", s->alloc);
    mr_u64(f, "num_GCs", s->gcs[0] + s->gcs[1]);
    mr_u64(f, "average_bytes_used", s->avg_live);
    mr_u64(f, "max_bytes_used", s->max_live);
    mr_u64(f, "num_byte_usage_samples", s->live_samples);
    mr_u64(f, "peak_megabytes_allocated", s->max_mem_bytes / (1024 * 1024));
    mr_dbl(f, "init_cpu_seconds", s->init_c);
    mr_dbl(f, "init_wall_seconds", s->init_e);
    mr_dbl(f, "mut_cpu_seconds", s->mut_c);
    mr_dbl(f, "mut_wall_seconds", s->mut_e);
    mr_dbl(f, "mutator_cpu_seconds", s->mut_c);     /* GHC before 8.2 */
    mr_dbl(f, "mutator_wall_seconds", s->mut_e);
    mr_dbl(f, "GC_cpu_seconds", s->gc_c);
    mr_dbl(f, "GC_wall_seconds", s->gc_e);
    mr_dbl(f, "exit_cpu_seconds", s->exit_c);
    mr_dbl(f, "exit_wall_seconds", s->exit_e);
    mr_dbl(f, "total_cpu_seconds", s->tot_c);
    mr_dbl(f, "total_wall_seconds", s->tot_e);
    mr_u64(f, "major_gcs", s->gcs[1]);
    mr_u64(f, "allocated_bytes", s->alloc);
    mr_u64(f, "max_live_bytes", s->max_live);
    mr_u64(f, "max_mem_in_use_bytes", s->max_mem_bytes);
    mr_u64(f, "cumulative_live_bytes", s->cumulative_live);
    mr_u64(f, "copied_bytes", s->copied);
    mr_u64(f, "par_copied_bytes", s->par_copied);
    mr_u64(f, "cumulative_par_max_copied_bytes", s->par_max_copied);
    mr_u64(f, "cumulative_par_balanced_copied_bytes", s->par_balanced_copied);
    mr_dbl(f, "gc_cpu_percent", s->gc_cpu_frac);
    mr_dbl(f, "gc_wall_percent", s->gc_wall_frac);
    mr_u64(f, "alloc_rate", s->alloc_rate);
    mr_dbl(f, "productivity_cpu_percent", s->prod_cpu_frac);
    mr_dbl(f, "productivity_wall_percent", s->prod_wall_frac);
    mr_dbl(f, "work_balance", s->work_balance);
    mr_u64(f, "n_capabilities", cap_n_caps);
    for (int g = 0; g < 2; g++) {
#define GEN_KEY(name) (snprintf(key, sizeof key, "gen_%d_" name, g), key)
        mr_u64(f, GEN_KEY("collections"), s->gcs[g]);
        mr_u64(f, GEN_KEY("par_collections"), s->par_gcs[g]);
        mr_dbl(f, GEN_KEY("cpu_seconds"), s->gc_cpu[g]);
        mr_dbl(f, GEN_KEY("wall_seconds"), s->gc_wall[g]);
        mr_dbl(f, GEN_KEY("max_pause_seconds"), s->max_pause[g]);
        mr_dbl(f, GEN_KEY("avg_pause_seconds"), s->avg_pause[g]);
#undef GEN_KEY
    }
    keys_after(f, "gen_1_avg_pause_seconds", -1, NULL);

    /* ours */

    mr_u64(f, "rtslab_stw_syncs", s->stw_syncs);
    mr_dbl(f, "rtslab_stw_total_seconds", s->stw_total);
    mr_dbl(f, "rtslab_stw_mean_seconds", s->stw_mean);
    mr_dbl(f, "rtslab_stw_max_seconds", s->stw_max);
    mr_u64(f, "rtslab_stw_deferred_syncs", s->deferred_syncs);
    mr_dbl(f, "rtslab_stw_deferred_mean_seconds", s->deferred_mean);
    mr_u64(f, "rtslab_stw_deferred_blocks", s->deferred_blocks);
    mr_u64(f, "rtslab_stw_deferred_blocks_max", s->deferred_blocks_max);
    mr_u64(f, "rtslab_stw_deferred_extensions", s->deferred_extensions);
    keys_after(f, "rtslab_stw_max_seconds", -1, NULL);
    for (int k = 0; k < WAIT_NKINDS; k++) {
        char kind[48];
        wait_key(k, kind, sizeof kind);
#define WAIT_KEY(name) (snprintf(key, sizeof key, "rtslab_barrier_%s_" name, kind), key)
        mr_u64(f, WAIT_KEY("waits"), s->waits[k].waits);
        mr_u64(f, WAIT_KEY("spins"), s->waits[k].spins);
        mr_u64(f, WAIT_KEY("sleeps"), s->waits[k].sleeps);
        mr_dbl(f, WAIT_KEY("seconds"), secs(s->waits[k].wait_ns));
        keys_after(f, "rtslab_barrier_*", k, kind);
#undef WAIT_KEY
    }
    for (int i = 0; i < NLOCKS; i++) {
#define LOCK_KEY(name) (snprintf(key, sizeof key, "rtslab_lock_%s_" name, s->locks[i].key), key)
        mr_u64(f, LOCK_KEY("acquisitions"), s->locks[i].acquisitions);
        mr_u64(f, LOCK_KEY("spins"), s->locks[i].spins);
#undef LOCK_KEY
    }
    mr_u64(f, "rtslab_idle_gc_wakeups", s->gc_wakeups);
    keys_after(f, "rtslab_idle_gc_wakeups", -1, NULL);
    mr_u64(f, "rtslab_threads_pushed", s->threads_pushed);
    keys_after(f, "rtslab_threads_pushed", -1, NULL);
    mr_u64(f, "rtslab_mem_returned_bytes", s->mem_returned);
    mr_u64(f, "rtslab_mem_mapped_bytes", s->mem_mapped);
    mr_u64(f, "rtslab_mem_mapped_peak_bytes", s->mem_mapped_peak);
    mr_u64(f, "rtslab_os_context_switches", s->vcsw + s->ivcsw);
    mr_u64(f, "rtslab_os_voluntary_context_switches", s->vcsw);
    mr_u64(f, "rtslab_os_involuntary_context_switches", s->ivcsw);
    if (base_cfg->numa) {
        mr_u64(f, "rtslab_numa_heap_nodes", numa_heap_nodes());
        mr_u64(f, "rtslab_numa_bound_mblocks", numa_bound_mblocks());
        mr_u64(f, "rtslab_numa_bind_failures", numa_bind_failures());
    }
    mr_u64(f, "rtslab_sanity_checks", s->sanity.checks);
    mr_u64(f, "rtslab_sanity_full_checks", s->sanity.full_checks);
    mr_u64(f, "rtslab_sanity_words_walked", s->sanity.words_walked);
    fprintf(f, " ]\n");
}

bool stats_report(void)
{
    if (!stats_out || !cap_array)
        return true;
    Summary s;
    summarise(&s);
    if (base_cfg->machine_readable)
        report_machine_readable(stats_out, &s);
    else
        report_summary(stats_out, &s);
    bool ok = true;
    if (stats_out != stderr) {
        /* a write that failed earlier leaves the error flag; fclose flushes the rest */
        errno = 0;
        bool failed = ferror(stats_out) != 0;
        int e = errno;
        if (fclose(stats_out) != 0) {
            failed = true;
            e = errno;
        }
        if (failed) {
            fprintf(stderr, "rtslab: cannot write the statistics to %s: %s\n", base_cfg->stats_file,
                    strerror(e ? e : EIO));
            ok = false;
        }
    }
    stats_out = NULL;
    return ok;
}
