/* Every knob of the runtime defaults here, once. The patch switches (RTS_PATCH_NAME, each
 * 0 or 1) and what configure found come from the generated rtslab_config.h; code tests them
 * with #if, and the build uses -Wundef so a misspelt name is an error. A patch's own knobs
 * sit in its own files (its options' rows and its resolve, in rts/patch_NAME.c). */
#ifndef RTS_CONFIG_H
#define RTS_CONFIG_H

#include "rtslab_config.h"

#define RTS_DEFAULT_ALLOC_AREA     ((size_t)1 << 20)     /* -A1m */
#define RTS_MIN_ALLOC_AREA         ((size_t)4 << 10)     /* -A4k: one block */
#define RTS_DEFAULT_SYNC_DEFER     ((size_t)8 << 20)     /* --sync-defer=8m */
#define RTS_DEFAULT_OLD_GEN_FACTOR 2.0                   /* -F2 */
#define RTS_DEFAULT_MAX_STACK      ((size_t)512 << 20)   /* -K512m */
/* Room above -K for the handler of a stack overflow (Note [Stack overflow] in sched/stack.h) */
#define RTS_STACK_HEADROOM         ((size_t)64 << 10)
#define RTS_DEFAULT_INITIAL_STACK  ((size_t)1 << 10)     /* -ki1k */
#define RTS_DEFAULT_PAR_GC_GEN     0                     /* -qg0: parallel GC in every generation */
#define RTS_DEFAULT_BALANCE_GEN    1                     /* -qb1: major GCs only */
#define RTS_MIN_OLD_GEN_LIMIT      ((size_t)4 << 20)     /* -O4m: no major GC while the old gen is below this */
#define RTS_TICK_MS                20                    /* preemption timer period */
#define RTS_PROF_TICK_US           1000                  /* -p: a tick of a capability's CPU time, in us */
/* -DS walks the whole heap at a minor GC while the old generation is under the floor (the
 * least major-GC limit, plus the nurseries: what one GC can promote past it), or while such
 * walks stay within the budget: old-generation words walked per word allocated (Note
 * [Sanity checking cost] in sm/sanity.c). */
#define RTS_SANITY_FULL_FLOOR      RTS_MIN_OLD_GEN_LIMIT
#define RTS_SANITY_FULL_BUDGET     4

/* The unit of false sharing: per-capability and per-GC-thread state is aligned to it and
 * split by writer (Note [Cache lines] in sched/capability.h). 128 on aarch64, whose big
 * cores (Neoverse, Apple) fetch lines in pairs, as OCaml 5 and the Linux kernel assume. */
#if defined(__aarch64__)
#define RTS_CACHE_LINE             128
#else
#define RTS_CACHE_LINE             64
#endif

/* An object of at least this many bytes is large: it gets a block group of its own and is
 * linked, never copied (GHC: 8/10 of a block). */
#define RTS_LARGE_OBJECT_BYTES     (BLOCK_SIZE * 8 / 10)

#endif
