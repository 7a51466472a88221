/* Start-up and shut-down of the runtime. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rts/rts.h"
#include "sm/storage.h"
#include "os/timer.h"
#include "trace/stats.h"
#include "os/topology.h"
#include "sched/thread.h"
#include "sync/stw.h"
#include "trace/eventlog.h"

RtsOptions rts_opts;

uint64_t rts_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t rts_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void rts_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "rtslab: fatal: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

void rts_die(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "rtslab: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(status);
}

const RtsOptions *rts_options(void) { return &rts_opts; }

void rts_init(int *argc, char ***argv)
{
    char err[512];
    rts_options_defaults(&rts_opts);
    if (rts_options_parse(&rts_opts, argc, *argv, getenv("RTSLAB_RTS"), err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        fprintf(stderr, "rtslab: use `+RTS -?' for the list of RTS options\n");
        exit(1);
    }
    if (rts_opts.show_help) {
        rts_options_usage(stdout);
        exit(0);
    }
    if (rts_opts.show_info) {
        rts_options_info(stdout);
        exit(0);
    }
    if (rts_opts.max_heap && rts_opts.max_heap < rts_opts.alloc_area)
        rts_die(1, "maximum heap size (-M) is smaller than the allocation area (-A)");
#if !RTS_PATCH_GEN0_STEAL
    if (rts_opts.balance && rts_opts.balance_gen == 0)
        rts_die(1, "-qb0: work stealing in minor GCs needs a build with --enable-gen0-steal");
#endif

    stats_init();
    sm_init();
    n_caps = rts_opts.n_caps_auto ? (unsigned)topo_get()->n_logical : rts_opts.n_caps;
    caps = calloc(n_caps, sizeof *caps);
    if (!caps) rts_fatal("out of memory (capabilities)");
    for (unsigned i = 0; i < n_caps; i++)
        cap_init(&caps[i], i);
    my_cap = &caps[0];
    trace_init((*argv)[0]);
    timer_start();
    stats_mutator_start();
}

/* Stops every capability (a SYNC_EXIT: they park at a safe point and never resume), then
 * reports and exits. The heap is left to the OS: other OS threads still exist. */
void rts_exit(int status)
{
    fflush(stdout);
    Capability *cap = my_cap;
    if (cap && n_caps > 1 && !stw_is_leader(cap)) {
        while (!stw_try_lead(cap, SYNC_EXIT))
            stw_follow(cap);
        trace_begin(SPAN_STW_REQUEST, 0);
        stw_stop_all(cap);
        trace_end(SPAN_STW_REQUEST);
    }
    timer_stop();
    trace_exit();
    stats_report();
    fflush(NULL);
    exit(status);
}
