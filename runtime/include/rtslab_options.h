/* RTS options: GHC's conventions (BRIEF §4). Given between +RTS and -RTS on the command line
 * (--RTS ends option processing: what follows belongs to the program), or in the RTSLAB_RTS
 * environment variable, which is read first so that the command line wins.
 * Each option is a row of the option table (Note [The option table] in runtime/rts/options.c),
 * with its default (the constants are rts_config.h's); rts_options_defaults() applies them. */
#ifndef RTSLAB_OPTIONS_H
#define RTSLAB_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include "rtslab_config.h"

typedef enum { RTS_STATS_NONE = 0, RTS_STATS_SUMMARY, RTS_STATS_VERBOSE } RtsStatsMode;

typedef struct RtsOptions {
    unsigned n_caps;          /* -N<n>; 1 when absent */
    bool     n_caps_auto;     /* -N alone: as many as the topology gives */
    bool     n_caps_given;    /* -N<n> given (false: -N alone, or no -N: 1); in the padding */
    size_t   alloc_area;      /* -A<size>: nursery bytes per capability */
    size_t   max_heap;        /* -M<size>: 0 = unlimited */
    double   old_gen_factor;  /* -F<n>: major GC when old gen > F x live at last major GC */
    size_t   min_old_gen;     /* -O<size>: no major GC while the old gen is below this (GHC's -O) */
    size_t   max_stack;       /* -K<size> */
    size_t   initial_stack;   /* -ki<size> */
    size_t   unused_56[2];    /* Note [A fixed layout] */
    bool     par_gc;          /* false after -qg alone: sequential GC */
    unsigned par_gc_gen;      /* -qg<gen>: parallel GC only in generations >= gen */
    bool     balance;         /* false after -qb alone: no load balancing */
    bool     balance_gen_given; /* -qb<gen> given (in the padding) */
    unsigned balance_gen;     /* -qb<gen>: balance in generations >= gen */
    unsigned gc_threads;      /* -qn<n>: 0 = one per capability */
    unsigned unused_92;       /* Note [A fixed layout] */
    bool     show_option_table; /* --print-option-table (docs, tests) */
    bool     pin_caps;        /* -qa */
    bool     aging;           /* --aging=1 (default): promote after two minor GCs, not one
                               * (in the padding: Note [A fixed layout]) */
    unsigned unused_100;      /* Note [A fixed layout] */
    RtsStatsMode stats;       /* -s / -S */
    char    *stats_file;      /* -s<file> / -S<file>; NULL = stderr */
    bool     machine_readable;/* --machine-readable */
    bool     numa;            /* --numa[=<mask>]: Note [NUMA-local heap] in os/numa.h */
    unsigned long long numa_mask;  /* its nodes: bit i is node i; all bits for --numa alone */
    bool     eventlog;        /* -l */
    char    *eventlog_file;   /* -l<file>; NULL = <prog>.eventlog */
    int      eventlog_format; /* --eventlog-format=ghc|chrome: 0, 1 (trace/eventlog.h) */
    bool     profile;         /* -p: a time profile by procedure to <prog>.prof (sched/profile.h) */
    char    *profile_stem;    /* -po<stem>: to <stem>.prof instead; NULL = <prog> */
    bool     sanity;          /* -DS: sanity-check the heap before and after every GC */
    unsigned gc_stress;       /* -DG<n>: a minor GC every n allocations; 0 = off */
    unsigned unused_176;      /* Note [A fixed layout] */
    int      io_manager;      /* --io-manager=auto|uring|epoll: 0, 1, 2 (io/iomgr.h's IoChoice) */
    bool     show_info;       /* --info */
    bool     show_help;       /* -? */
    bool     show_stats_keys; /* --stats-keys: the patches' --machine-readable keys (tests) */
    size_t   sync_defer;      /* --sync-defer=<size>: what a capability may allocate past -A
                               * while its GC request waits (Note [Deferred GC requests] in
                               * runtime/sm/gc.h); 0 = none */
    /* Room for the options of patches to come, so that the layout stays (Note [A fixed
     * layout]). */
    unsigned long long reserved[7];
} RtsOptions;

/* Note [A fixed layout]
 * The struct is the same in every build and holds the base's options only: a patch's options
 * are rows of its own file with its own variables (Note [The option table] in
 * runtime/rts/options.c). The unused_N words held options of patches before they moved
 * there; they stay so that every field keeps its offset, and a new base option takes one of
 * them or a reserved word, so a program compiled against the installed header works with
 * any build of the library. RTS_OPTIONS_SIZE is its size on LP64 (x86-64,
 * AArch64), which testsuite/unit/test_options.c asserts in every build. */
#define RTS_OPTIONS_SIZE 256

void rts_options_defaults(RtsOptions *o);

/* Parses one option word (e.g. "-A64k"). Returns 0, or -1 with a message in err. */
int rts_options_parse_word(RtsOptions *o, const char *word, char *err, size_t errlen);

/* Parses the RTSLAB_RTS value `env` (may be NULL) and then argv, removing every RTS word and
 * the +RTS/-RTS/--RTS markers from argv (argc is updated; argv[argc] stays NULL).
 * Returns 0, or -1 with "rtslab: <message>" in err. */
int rts_options_parse(RtsOptions *o, int *argc, char **argv, const char *env,
                      char *err, size_t errlen);

/* Parses a size: digits with an optional fraction and k/m/g (either case) suffix. */
int rts_parse_size(const char *s, size_t *out);

void rts_options_usage(void *file);     /* FILE *: the -? text */
void rts_options_info(void *file);      /* FILE *: the --info text */
void rts_options_print_table(void *file); /* FILE *: --print-option-table (docs/rts-options.md) */
void rts_options_free(RtsOptions *o);

#endif
