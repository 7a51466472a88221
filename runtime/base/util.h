/* The bottom layer (runtime/README.md): errors, clocks, the options in force, and the
 * process's orderly exit. Everything else may use it; it uses nothing of the runtime. */
#ifndef RTS_BASE_UTIL_H
#define RTS_BASE_UTIL_H

#include <stdint.h>
#include "rtslab.h"
#include "rts_config.h"

#include <stdbool.h>

/* The options in force: set once by rts_init before any other layer starts, read-only after. */
extern RtsOptions rts_opts;

/* Note [Options, resolved once]
 * rts_opts holds the options as they were given, and nothing writes it after parsing. What
 * they come to on this machine is resolved once, by rts_init right after parsing (before -?
 * and --info, which show it), into *rts_cfg, which no module writes. Every module reads the
 * resolved value from there instead of working it out again: before, the -N rule ("-N<n>,
 * or what -N means here") was written out in rts.c, in --info's NUMA line and in a patch's
 * --info, and rts.c wrote the clamped -qn back into rts_opts; a patch's -qb default was
 * worked out again at every GC from a ~0u sentinel. A patch decides what its own options
 * come to, and what it changes of the base's (-qb's default), in its RtsPatch.resolve
 * (Note [Patch registration] in rts/patch.h), called by rts_config_resolve. A module
 * still keeps its own copy of the capability count where it needs one on a hot path
 * (cap_count, sm_n_caps, the stop-the-world member count), set from rts_cfg->n_caps by its
 * init. */
typedef struct RtsConfig {
    unsigned n_caps;            /* the capabilities: -N<n>, or -N's default
                                   (affinity_default_caps() in os/affinity.h) */
    unsigned gc_threads;        /* -qn<n>, at most n_caps; 0: every capability */
    bool gc_threads_clamped;    /* -qn<n> was above n_caps (rts_init warns, as GHC does) */
    bool balance;               /* parallel GCs balance load (no -qb alone) */
    unsigned balance_gen;       /* ... those of generations >= this (-qb<gen>, or its default
                                   as resolved: a patch may decide it from other options) */
    bool resolved;              /* false until rts_init has resolved it */
} RtsConfig;
extern const RtsConfig *const rts_cfg;
/* Sets *rts_cfg: once, by rts_init (rts_config_resolve in rts/options.c); a second call is an
 * internal error. */
void rts_config_set(const RtsConfig *c);

/* An internal error: prints "rtslab: fatal: <msg>" and aborts. */
void rts_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A user-facing error that ends the process: prints "rtslab: <msg>" and exits with status. */
void rts_die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Note [Assertions]
 * RTS_ASSERT(cond) checks an invariant where a Note states it must hold. In a debug build
 * (./configure --enable-debug, which defines RTS_DEBUG to 1 in rtslab_config.h) a false
 * condition is an internal error: rts_fatal names it, its file, line and function, and
 * aborts. Otherwise (RTS_DEBUG 0) the condition is not evaluated, so it costs nothing, but
 * it is still compiled (inside sizeof), so it cannot rot: a check may read what it likes, as
 * long as it has no side effect. Unlike assert(), it follows the build's debug setting, not
 * NDEBUG. (whippet's GC_ASSERT, GHC's ASSERT under -debug.) */
#if RTS_DEBUG
#define RTS_ASSERT(cond)                                                                \
    (__builtin_expect(!!(cond), 1) ? (void)0                                            \
     : rts_fatal("assertion failed: %s (%s:%d, %s)", #cond, __FILE__, __LINE__, __func__))
#else
#define RTS_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

uint64_t rts_now_ns(void);          /* monotonic clock */
uint64_t rts_cpu_ns(void);          /* process CPU time */

/* rts_exit (rtslab.h) is defined here so that any layer may end the process; what an orderly
 * exit does (stop the world, flush the eventlog, print -s) belongs to the start-up layer,
 * which registers it. Without a handler rts_exit just flushes and exits. */
void rts_set_exit_handler(void (*handler)(int status) __attribute__((noreturn)));

#endif
