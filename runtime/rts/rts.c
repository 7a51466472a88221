/* Start-up and shut-down of the runtime. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "rts/rts.h"
#include "sm/storage.h"
#include "os/timer.h"
#include "trace/stats.h"

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
    if (rts_opts.n_caps_auto || rts_opts.n_caps > 1)
        rts_die(1, "-N: this build runs one capability (-N1); more arrive with the parallel runtime");

    stats_init();
    sm_init();
    n_caps = 1;
    caps = calloc(n_caps, sizeof *caps);
    if (!caps) rts_fatal("out of memory (capabilities)");
    for (unsigned i = 0; i < n_caps; i++)
        cap_init(&caps[i], i);
    timer_start();
    stats_mutator_start();
}

void rts_exit(int status)
{
    fflush(stdout);
    timer_stop();
    stats_report();
    sm_exit();
    for (unsigned i = 0; i < n_caps; i++)
        free(caps[i].remset);
    free(caps);
    caps = NULL;
    n_caps = 0;
    rts_options_free(&rts_opts);
    exit(status);
}
