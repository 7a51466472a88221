/* The bottom layer (runtime/README.md): errors, clocks, the options in force, and the
 * process's orderly exit. Everything else may use it; it uses nothing of the runtime. */
#ifndef RTS_BASE_UTIL_H
#define RTS_BASE_UTIL_H

#include <stdint.h>
#include "rtslab.h"
#include "rts_config.h"

#include <stdbool.h>

/* Note [Options, resolved once]
 * The options as given (RtsOptions, rtslab_options.h) are private to option parsing: the
 * start-up layer (rts/options.c parses them, rts/rts.c calls the parser, and a patch's
 * RtsPatch.resolve reads them) and the public rts_options(); no module below rts/ reads
 * them (testsuite/lint/options_private.py checks it). What they come to on this machine is
 * resolved once, by opts_resolve (rts/options.c) right after parsing (before -? and
 * --info, which show it), into *base_cfg, which no module writes. Every module reads its
 * settings from there, never working them out again: before, the -N rule ("-N<n>, or what
 * -N means here") was written out in rts.c, in --info's NUMA line and in a patch's --info;
 * rts.c wrote the clamped -qn back into the options; a patch's -qb default was worked out
 * again at every GC from a ~0u sentinel; -A and -O were divided into blocks at each
 * capability's init and at every major GC, and "-qn, or every capability" at every GC. A
 * plain option whose value is the one given is copied as it is; a derived value (in blocks,
 * a count) is computed once here. A patch decides what its own options come to, and what it
 * changes of the base's (-qb's default), in its RtsPatch.resolve (Note [Patch registration]
 * in rts/patch.h), called by opts_resolve, and hands its own settings to its module
 * there, before the module runs.
 *
 * One name per quantity: the number of capabilities is `n_caps` everywhere: the config's
 * base_cfg->n_caps, a parameter `n_caps`, and a module's own copy (for its hot paths, or set
 * by its init) `<prefix>_n_caps`: cap_n_caps in sched/capability.h, sm_n_caps in
 * sm/storage.h, stw_n_caps in sync/stw.c, trace_n_caps in trace/eventlog.c, ghc_n_caps in
 * trace/eventlog_ghc.c, prof_n_caps in sched/profile.c, numa_n_caps in os/numa.c, and a
 * patch's module the same way, each set from base_cfg->n_caps by rts_init. (The GC threads of
 * one GC, the parties of one barrier or the members taking part in one sync are other
 * quantities, with their own names.) */
typedef struct RtsConfig {
    /* capabilities and the parallel GC */
    unsigned n_caps;            /* the capabilities: -N<n>, or -N's default
                                   (affinity_default_caps() in os/affinity.h) */
    bool n_caps_auto;           /* -N alone: n_caps is what the machine gives */
    bool n_caps_given;          /* -N<n> given (neither: no -N, 1 capability) */
    bool pin_caps;              /* -qa */
    bool gc_threads_clamped;    /* -qn<n> was above n_caps (rts_init warns, as GHC does) */
    unsigned gc_threads;        /* a parallel GC's threads: -qn<n>, at most n_caps; n_caps
                                   without -qn */
    bool par_gc;                /* false after -qg alone: every GC sequential */
    unsigned par_gc_gen;        /* -qg<gen>: parallel GCs only of generations >= this */
    bool balance;               /* parallel GCs balance load (no -qb alone) */
    bool balance_gen_given;     /* -qb<gen> given (else balance_gen is its default) */
    unsigned balance_gen;       /* ... those of generations >= this (-qb<gen>, or its default
                                   as resolved: a patch may decide it from other options) */
    /* the heap */
    size_t alloc_area;          /* -A: nursery bytes per capability */
    size_t nursery_blocks;      /* ... in blocks: alloc_area / BLOCK_SIZE */
    size_t max_heap;            /* -M: 0 = unlimited */
    double old_gen_factor;      /* -F */
    size_t min_old_gen_blocks;  /* -O, in blocks: the old generation's least limit */
    bool aging;                 /* --aging=1 */
    size_t sync_defer;          /* --sync-defer: bytes; 0 = none */
    bool numa;                  /* --numa[=<mask>] */
    unsigned long long numa_mask; /* its nodes (all bits for --numa alone) */
    /* threads */
    size_t max_stack;           /* -K: bytes */
    size_t initial_stack;       /* -ki: bytes */
    /* checks */
    bool sanity;                /* -DS */
    unsigned gc_stress;         /* -DG<n>: a minor GC every n allocations; 0 = off */
    /* IO */
    int io_manager;             /* --io-manager: an IoChoice (io/iomgr.h) */
    /* output */
    RtsStatsMode stats;         /* -s / -S */
    const char *stats_file;     /* -s<file> / -S<file>; NULL = stderr */
    bool machine_readable;      /* --machine-readable */
    bool eventlog;              /* -l */
    const char *eventlog_file;  /* -l<file>; NULL = <prog>.eventlog */
    int eventlog_format;        /* --eventlog-format: an EventlogFormat (trace/eventlog.h) */
    bool profile;               /* -p */
    const char *profile_stem;   /* -po<stem>; NULL = <prog> */
    bool resolved;              /* false until rts_init has resolved it */
} RtsConfig;
extern const RtsConfig *const base_cfg;
/* Sets *base_cfg: once, by rts_init (opts_resolve in rts/options.c); a second call is an
 * internal error. */
void base_config_set(const RtsConfig *c);

/* An internal error: prints "rtslab: fatal: <msg>" and aborts. */
void base_fatal(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* A user-facing error that ends the process: prints "rtslab: <msg>" and exits with status. */
void base_die(int status, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

/* Note [Assertions]
 * RTS_ASSERT(cond) checks an invariant where a Note states it must hold. In a debug build
 * (./configure --enable-debug, which defines RTS_DEBUG to 1 in rtslab_config.h) a false
 * condition is an internal error: base_fatal names it, its file, line and function, and
 * aborts. Otherwise (RTS_DEBUG 0) the condition is not evaluated, so it costs nothing, but
 * it is still compiled (inside sizeof), so it cannot rot: a check may read what it likes, as
 * long as it has no side effect. Unlike assert(), it follows the build's debug setting, not
 * NDEBUG. (whippet's GC_ASSERT, GHC's ASSERT under -debug.) */
#if RTS_DEBUG
#define RTS_ASSERT(cond)                                                                \
    (__builtin_expect(!!(cond), 1) ? (void)0                                            \
     : base_fatal("assertion failed: %s (%s:%d, %s)", #cond, __FILE__, __LINE__, __func__))
#else
#define RTS_ASSERT(cond) ((void)sizeof(!(cond)))
#endif

uint64_t base_now_ns(void);          /* monotonic clock */
uint64_t base_cpu_ns(void);          /* process CPU time */

/* rts_exit (rtslab.h) is defined here so that any layer may end the process; what an orderly
 * exit does (stop the world, flush the eventlog, print -s) belongs to the start-up layer,
 * which registers it. Without a handler rts_exit just flushes and exits. */
void base_set_exit_handler(void (*handler)(int status) __attribute__((noreturn)));

#endif
