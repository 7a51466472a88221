/* Statistics: GC records and the -s summary / -S per-GC lines, in GHC's formats. */
#include <stdio.h>
#include <string.h>
#include "trace/stats.h"
#include "rts/rts.h"
#include "sm/gc.h"
#include "sync/stw.h"
#include "sync/wait.h"

static struct {
    uint64_t start_ns, start_cpu, mut_start_ns, mut_start_cpu;
    uint64_t gcs[2], par_gcs[2], gc_ns[2], gc_cpu[2], max_pause[2];
    uint64_t par_copied, par_max_copied;    /* over parallel GCs: for the work balance */
    unsigned par_threads;
    uint64_t copied, max_live, cumulative_live, live_samples;
    uint64_t max_heap_blocks;
} st;

static FILE *stats_out;

void stats_init(void)
{
    memset(&st, 0, sizeof st);
    st.start_ns = rts_now_ns();
    st.start_cpu = rts_cpu_ns();
    stats_out = NULL;
    if (rts_opts.stats != RTS_STATS_NONE) {
        stats_out = rts_opts.stats_file ? fopen(rts_opts.stats_file, "w") : stderr;
        if (!stats_out)
            rts_die(1, "cannot open %s for the statistics", rts_opts.stats_file);
        if (rts_opts.stats == RTS_STATS_VERBOSE)
            fprintf(stats_out, "    Alloc    Copied     Live     GC     GC      TOT      TOT  Page Flts\n"
                               "    bytes     bytes     bytes   user   elap     user     elap\n");
    }
}

void stats_mutator_start(void)
{
    st.mut_start_ns = rts_now_ns();
    st.mut_start_cpu = rts_cpu_ns();
}

static uint64_t bytes_allocated(void)
{
    uint64_t n = 0;
    for (unsigned i = 0; i < n_caps; i++)
        n += caps[i].bytes_allocated
           + (uint64_t)((uint8_t *)caps[i].hp - caps[i].cur_block->free);
    return n;
}

void stats_gc_done(const GcRecord *r)
{
    static uint64_t last_alloc;
    int g = r->major;
    st.gcs[g]++;
    if (r->gc_threads > 1) {
        st.par_gcs[g]++;
        st.par_copied += r->copied_bytes;
        st.par_max_copied += r->max_thread_copied_bytes;
        st.par_threads = r->gc_threads;
    }
    st.gc_ns[g] += r->pause_ns;
    st.gc_cpu[g] += r->cpu_ns;
    if (r->pause_ns > st.max_pause[g]) st.max_pause[g] = r->pause_ns;
    st.copied += r->copied_bytes;
    if (r->major) {
        st.cumulative_live += r->live_bytes;
        st.live_samples++;
        if (r->live_bytes > st.max_live) st.max_live = r->live_bytes;
    }
    size_t heap = sm_heap_blocks();
    if (heap > st.max_heap_blocks) st.max_heap_blocks = heap;
    if (stats_out && rts_opts.stats == RTS_STATS_VERBOSE) {
        uint64_t alloc = bytes_allocated();
        fprintf(stats_out, "%9llu %9llu %9llu %6.3f %6.3f %8.3f %8.3f %4d %4d  (Gen:  %d)\n",
                (unsigned long long)(alloc - last_alloc), (unsigned long long)r->copied_bytes,
                (unsigned long long)r->live_bytes, r->cpu_ns / 1e9, r->pause_ns / 1e9,
                (rts_cpu_ns() - st.start_cpu) / 1e9, (rts_now_ns() - st.start_ns) / 1e9, 0, 0, g);
        last_alloc = alloc;
    }
}

void stats_get(RtsStats *out)
{
    memset(out, 0, sizeof *out);
    out->bytes_allocated = bytes_allocated();
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

/* Ours, after GHC's lines: stopping the world, barrier waits, spinlocks, idle wake-ups. */
static void report_sync(FILE *f)
{
    fprintf(f, "  Stop the world: %llu syncs, mean %.1f us, max %.1f us (request to last arrival)\n",
            (unsigned long long)stw.syncs, stw.syncs ? stw.stw_ns_total / 1e3 / (double)stw.syncs : 0.0,
            stw.stw_ns_max / 1e3);
    fprintf(f, "  Barrier waits:          waits      spins     sleeps    time\n");
    for (int k = 0; k < WAIT_NKINDS; k++) {
        SyncWaitStats w;
        sync_wait_stats((SyncWaitKind)k, &w);
        fprintf(f, "    %-26s %8llu %10llu %10llu  %6.3fs\n", sync_wait_kind_name((SyncWaitKind)k),
                (unsigned long long)w.waits, (unsigned long long)w.spins,
                (unsigned long long)w.sleeps, w.wait_ns / 1e9);
    }
    uint64_t inbox_acq = 0, inbox_spins = 0, q_acq = 0, q_spins = 0, obj_acq = 0, obj_spins = 0;
    uint64_t wakeups = 0, pushed = 0;
    for (unsigned i = 0; i < n_caps; i++) {
        inbox_acq += caps[i].inbox_lock.acquisitions;
        inbox_spins += caps[i].inbox_lock.spins;
        q_acq += caps[i].gct->queue_lock.acquisitions;
        q_spins += caps[i].gct->queue_lock.spins;
        obj_acq += caps[i].obj_lock_acq;
        obj_spins += caps[i].obj_lock_spins;
        wakeups += caps[i].gc_wakeups;
        pushed += caps[i].threads_pushed;
    }
    fprintf(f, "  Spinlocks:             acquired      spins     yields\n");
    fprintf(f, "    %-22s %12llu %10llu %10d\n", sm_lock.name,
            (unsigned long long)sm_lock.acquisitions, (unsigned long long)sm_lock.spins, 0);
    fprintf(f, "    %-22s %12llu %10llu %10d\n", "gc work queues", (unsigned long long)q_acq,
            (unsigned long long)q_spins, 0);
    fprintf(f, "    %-22s %12llu %10llu %10d\n", "inboxes", (unsigned long long)inbox_acq,
            (unsigned long long)inbox_spins, 0);
    fprintf(f, "    %-22s %12llu %10llu %10d\n", "mvar/thread headers", (unsigned long long)obj_acq,
            (unsigned long long)obj_spins, 0);
    fprintf(f, "  Idle capabilities woken for GC: %llu; threads pushed to idle capabilities: %llu\n\n",
            (unsigned long long)wakeups, (unsigned long long)pushed);
}

void stats_report(void)
{
    if (!stats_out || !caps)
        return;
    char b[40];
    uint64_t end_ns = rts_now_ns(), end_cpu = rts_cpu_ns();
    double init_e = (st.mut_start_ns - st.start_ns) / 1e9, init_c = (st.mut_start_cpu - st.start_cpu) / 1e9;
    double gc_e = (st.gc_ns[0] + st.gc_ns[1]) / 1e9, gc_c = (st.gc_cpu[0] + st.gc_cpu[1]) / 1e9;
    double tot_e = (end_ns - st.start_ns) / 1e9, tot_c = (end_cpu - st.start_cpu) / 1e9;
    double mut_e = tot_e - init_e - gc_e, mut_c = tot_c - init_c - gc_c;
    if (mut_e < 0) mut_e = 0;
    if (mut_c < 0) mut_c = 0;
    uint64_t alloc = bytes_allocated();
    FILE *f = stats_out;
    fprintf(f, "%16s bytes allocated in the heap\n", commas(alloc, b));
    fprintf(f, "%16s bytes copied during GC\n", commas(st.copied, b));
    fprintf(f, "%16s bytes maximum residency (%llu sample(s))\n", commas(st.max_live, b),
            (unsigned long long)st.live_samples);
    fprintf(f, "%16s MB total memory in use (0 MB lost due to fragmentation)\n\n",
            commas(st.max_heap_blocks * BLOCK_SIZE / (1024 * 1024), b));
    fprintf(f, "                                     Tot time (elapsed)  Avg pause  Max pause\n");
    for (int g = 0; g < 2; g++)
        fprintf(f, "  Gen  %d     %6llu colls, %6llu par   %6.3fs  %6.3fs     %.4fs    %.4fs\n", g,
                (unsigned long long)st.gcs[g], (unsigned long long)st.par_gcs[g],
                st.gc_cpu[g] / 1e9, st.gc_ns[g] / 1e9,
                st.gcs[g] ? st.gc_ns[g] / 1e9 / (double)st.gcs[g] : 0.0, st.max_pause[g] / 1e9);
    if (st.par_threads > 1 && st.par_max_copied)
        fprintf(f, "\n  Parallel GC work balance: %.2f%% (serial 0%%, perfect 100%%)\n",
                100.0 * ((double)st.par_copied / (double)st.par_max_copied - 1) / (st.par_threads - 1));
    fprintf(f, "\n  TASKS: %u (%u bound, %u peak workers (%u total), using -N%u)\n\n",
            n_caps + 1, 1u, n_caps, n_caps, n_caps);
    fprintf(f, "  INIT    time  %7.3fs  (%7.3fs elapsed)\n", init_c, init_e);
    fprintf(f, "  MUT     time  %7.3fs  (%7.3fs elapsed)\n", mut_c, mut_e);
    fprintf(f, "  GC      time  %7.3fs  (%7.3fs elapsed)\n", gc_c, gc_e);
    fprintf(f, "  EXIT    time  %7.3fs  (%7.3fs elapsed)\n", 0.0, 0.0);
    fprintf(f, "  Total   time  %7.3fs  (%7.3fs elapsed)\n\n", tot_c, tot_e);
    fprintf(f, "  Alloc rate    %s bytes per MUT second\n\n",
            commas(mut_e > 0 ? (uint64_t)(alloc / mut_e) : 0, b));
    fprintf(f, "  Productivity %5.1f%% of total user, %5.1f%% of total elapsed\n\n",
            tot_c > 0 ? 100 * mut_c / tot_c : 0.0, tot_e > 0 ? 100 * mut_e / tot_e : 0.0);
    report_sync(f);
    if (f != stderr)
        fclose(f);
    stats_out = NULL;
}
