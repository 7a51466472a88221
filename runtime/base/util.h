/* The bottom layer (runtime/README.md): errors, clocks, the options in force, and the
 * process's orderly exit. Everything else may use it; it uses nothing of the runtime. */
#ifndef RTS_BASE_UTIL_H
#define RTS_BASE_UTIL_H

#include <stdint.h>
#include "rtslab.h"
#include "rts_config.h"

/* The options in force: set once by rts_init before any other layer starts, read-only after. */
extern RtsOptions rts_opts;

/* An internal error: prints "rtslab: fatal: <msg>" and aborts. */
void rts_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A user-facing error that ends the process: prints "rtslab: <msg>" and exits with status. */
void rts_die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

uint64_t rts_now_ns(void);          /* monotonic clock */
uint64_t rts_cpu_ns(void);          /* process CPU time */

/* rts_exit (rtslab.h) is defined here so that any layer may end the process; what an orderly
 * exit does (stop the world, flush the eventlog, print -s) belongs to the start-up layer,
 * which registers it. Without a handler rts_exit just flushes and exits. */
void rts_set_exit_handler(void (*handler)(int status) __attribute__((noreturn)));

#endif
