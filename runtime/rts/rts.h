/* Runtime-wide state: the options in force, fatal errors, start-up and shut-down. */
#ifndef RTS_RTS_H
#define RTS_RTS_H

#include "rtslab.h"
#include "rts_config.h"

extern RtsOptions rts_opts;

/* An internal error: prints "rtslab: fatal: <msg>" and aborts. */
void rts_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A user-facing error that ends the process: prints "rtslab: <msg>" and exits with status. */
void rts_die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

uint64_t rts_now_ns(void);          /* monotonic clock */
uint64_t rts_cpu_ns(void);          /* process CPU time */

#endif
