/* The bottom layer: see util.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "base/util.h"

static RtsConfig config;           /* Note [Options, resolved once] in util.h */
const RtsConfig *const base_cfg = &config;

void base_config_set(const RtsConfig *c)
{
    if (config.resolved)
        base_fatal("the configuration was resolved twice");
    config = *c;
    config.resolved = true;
}

static void (*exit_handler)(int status) __attribute__((noreturn));

uint64_t base_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t base_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void base_fatal(const char *fmt, ...)
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

void base_die(int status, const char *fmt, ...)
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

void base_set_exit_handler(void (*handler)(int status) __attribute__((noreturn)))
{
    exit_handler = handler;
}

void rts_exit(int status)
{
    if (exit_handler)
        exit_handler(status);
    fflush(NULL);
    exit(status);
}
