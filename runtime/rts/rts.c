/* Start-up and shut-down of the runtime. */
#include <stdio.h>
#include <stdlib.h>
#include "rts/rts.h"
#include "os/timer.h"
#include "os/affinity.h"
#include "sync/stw.h"
#if RTS_PATCH_FUTEX_BARRIER
#include "sync/wait.h"
#endif
#include "sm/gc.h"
#include "sched/thread.h"
#include "trace/stats.h"
#include "trace/eventlog.h"

/* The layers' hooks (runtime/README.md: a lower layer calls up only through these). */
static const StwHooks stw_hooks = { cap_interrupt, gc_follower_work };
static const GcClient gc_client = { sched_cap_roots, sched_after_gc };

static void shutdown(int status) __attribute__((noreturn));

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
    unsigned n = rts_opts.n_caps_auto ? affinity_default_caps() : rts_opts.n_caps;
    stats_init();
    gc_on_done(stats_gc_done);
    rts_set_exit_handler(shutdown);
#if RTS_PATCH_FUTEX_BARRIER
    sync_set_spins(rts_opts.wait_spins);
#endif
    stw_init(n, &stw_hooks);
    sm_init(n);
    gc_set_client(&gc_client);
    gc_add_root(&sched_main_thread);
    cap_init_all(n);
    for (unsigned i = 0; i < n; i++)
        sm_cap_init(&cap_array[i].sm, i);
    trace_init((*argv)[0], n);
    cap_attach(&cap_array[0]);
    timer_start(cap_tick);
    stats_mutator_start();
}

/* rts_exit's work (base/util.h): stops every capability (a SYNC_EXIT: they park at a safe
 * point and never resume), then reports and exits. The heap is left to the OS: other OS
 * threads still exist. */
static void shutdown(int status)
{
    fflush(stdout);
    Capability *cap = cap_self;
    if (cap && cap_count > 1 && !stw_is_leader(cap->sm.no)) {
        while (!stw_try_lead(cap->sm.no, SYNC_EXIT))
            stw_follow(cap->sm.no);
        trace_begin(SPAN_STW_REQUEST, 0);
        stw_stop_all(cap->sm.no, NULL);
        trace_end(SPAN_STW_REQUEST);
    }
    timer_stop();
    trace_exit();
    stats_report();
    fflush(NULL);
    exit(status);
}
