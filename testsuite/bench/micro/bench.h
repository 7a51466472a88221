/* Helpers shared by the microbenchmarks in this directory (header only: the Makefile builds
 * every *.c here into its own program, bench/micro/NAME).
 *
 * Output convention, parsed by run.py:
 *     metric NAME VALUE UNIT      a measured figure (run.py takes median/min/max over runs)
 *     info NAME VALUE             context: parameters, counters, sanity checks
 * Anything else is free text for a human. Benchmarks never decide pass/fail on timings; they
 * exit non-zero only when the measurement itself went wrong (e.g. a GC was not the kind
 * being measured, or a data check failed). */
#ifndef RTSLAB_BENCH_H
#define RTSLAB_BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <time.h>
#include "rtslab.h"

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void bench_metric(const char *name, double value, const char *unit)
{
    printf("metric %s %.10g %s\n", name, value, unit);
}

static inline void bench_info_u(const char *name, unsigned long long value)
{
    printf("info %s %llu\n", name, value);
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Sorts xs in place; returns the median. */
static inline double bench_median(double *xs, size_t n)
{
    if (n == 0) return 0;
    qsort(xs, n, sizeof *xs, bench_cmp_double);
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

static inline double bench_mean(const double *xs, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) s += xs[i];
    return n ? s / (double)n : 0;
}

/* A positive count from argv[i] (k/m/g suffixes, powers of 1024), or dflt when absent. */
static inline unsigned long long bench_arg(int argc, char **argv, int i, unsigned long long dflt)
{
    if (argc <= i) return dflt;
    char *end;
    unsigned long long n = strtoull(argv[i], &end, 10);
    switch (*end) {
    case 'k': case 'K': n <<= 10; end++; break;
    case 'm': case 'M': n <<= 20; end++; break;
    case 'g': case 'G': n <<= 30; end++; break;
    default: break;
    }
    if (*end || n == 0) {
        fprintf(stderr, "%s: bad count '%s'\n", argv[0], argv[i]);
        exit(2);
    }
    return n;
}

/* Process CPU time (user + system), ns. */
static inline uint64_t bench_cpu_ns(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000u
         + (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000u;
}

/* A plain positive count from argv[i] (no suffix, at most 2^24), or dflt when absent. */
static inline unsigned long long bench_count(int argc, char **argv, int i, unsigned long long dflt)
{
    if (argc <= i) return dflt;
    char *end;
    unsigned long long n = strtoull(argv[i], &end, 10);
    if (*end || n == 0 || n > (1ull << 24)) {
        fprintf(stderr, "%s: bad count '%s'\n", argv[0], argv[i]);
        exit(2);
    }
    return n;
}

#endif
