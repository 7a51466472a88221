/* What a patch registers with the base (issue 34).
 *
 * Note [Patch registration]
 * A patch's RTS options, its --info lines, its checks of the options once all are parsed,
 * its -? lines and its statistics are one RtsPatch, defined in the patch's own file
 * runtime/rts/patch_NAME.c (nothing but the patch's island, so the build compiles it only
 * with the patch and `make patches` gives it to the patch, tools/mkpatches.py). configure
 * lists the patches that are on as RTSLAB_PATCH_REGS, one RTSLAB_PATCH_REG(name) each (the
 * name with '_' for '-', m4/rtslab_patches.m4); options.c makes of it patch_registry[], the
 * registered patches in configure.ac's order, which options.c and stats/stats.c walk. So
 * neither names a patch, and a patch touches neither. A patch's --info lines and -s lines
 * follow a line of the base's that it names (so that the output is the same as when each
 * patch had islands in the two files).
 *
 * A patch's options are rows of the one option table (Note [The option table] in
 * rts/options.c): its `options`, in its own file, with its own variables (a build without
 * the patch does not know them: "unknown RTS option"). A row may also claim a value of a
 * base option that only the patch gives meaning to (RTS_OPT_CLAIM: "-qb0"), or word a base
 * option's -? lines differently (`usage_lines`). What a patch's options come to on this
 * machine it decides in `resolve`, once, with the base's (opts_resolve).
 */
#ifndef RTS_RTS_PATCH_REG_H
#define RTS_RTS_PATCH_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "rtslab_options.h"
#include "base/util.h"                /* RtsConfig */
#include "stats/stats.h"             /* RtsStatsSection */

/* Where a patch's -? lines go: right after -qa, after those (the other -q options), after
 * the stack sizes; within one place, in the patches' order. A base row emits the sections
 * of its `then` bits after its own lines. */
typedef enum { RTS_USAGE_QA, RTS_USAGE_GC, RTS_USAGE_STACK } RtsUsageSection;
#define RTS_USAGE_AFTER(s) (1u << (s))

#define RTS_NO_FIELD (-1)

/* How a row reads its word (Note [The option table] in rts/options.c). */
typedef enum {
    RTS_OPT_FLAG,       /* the word alone: the bool is set */
    RTS_OPT_NUMBER,     /* digits, from min to max: an unsigned */
    RTS_OPT_SIZE,       /* a size (rts_parse_size) of at least min, rounded up to grain */
    RTS_OPT_CUSTOM,     /* the row's own `parse` */
    RTS_OPT_CLAIM,      /* a patch's: a value of a base option it gives meaning to */
} RtsOptKind;

/* The type of the variable a row sets: a field of RtsOptions (base rows) or the patch's. */
typedef enum { RTS_T_NONE, RTS_T_BOOL, RTS_T_UNSIGNED, RTS_T_SIZE, RTS_T_DOUBLE,
               RTS_T_INT } RtsOptType;

struct RtsOption;
typedef int (*RtsOptParse)(const struct RtsOption *r, RtsOptions *o, const char *word,
                           const char *arg, char *err, size_t errlen);

/* One row of the option table: one RTS option (or one spelling of it with its own -? lines:
 * "-N" and "-N<n>"). A word is the row whose name it is (exact) or, failing that, the row
 * with the longest name it begins with (a value follows). */
typedef struct RtsOption {
    const char *name;        /* "-qn": the word, or its prefix when a value follows */
    bool exact;              /* the word is the name alone */
    const char *syntax;      /* as -? and the docs write it: "-qn<n>" */
    RtsOptKind kind;
    RtsOptType type;         /* of the variable it sets; RTS_T_NONE: none (its parser's) */
    int field;               /* offsetof(RtsOptions, ...) (a base row with a type) */
    void *var;               /* or a patch's own variable */
    bool *given;             /* a patch's: true once the option is given */
    int given_field;         /* a base row's bool set once it is given (0: none) */
    int on_field;            /* a base row's bool that the word alone clears and a value sets
                                (-qg, -qb: opt_gen; 0: none) */
    unsigned long long min, max;   /* the range of a number or a size (max 0: none) */
    unsigned long long dflt;       /* the default (not for RTS_T_DOUBLE) */
    double dflt_f;                 /* the default of a RTS_T_DOUBLE */
    size_t grain;            /* a size rounds up to a multiple of this (0: 1) */
    bool from_to;            /* out of range: "must be from min to max" (else at least / most) */
    const char *noun;        /* "the number of GC threads": the subject of a range message */
    RtsOptParse parse;       /* RTS_OPT_CUSTOM */
    const char *dflt_text;   /* the default in words (docs), when not the value of dflt */
    const char *range_text;  /* the values in words (docs), when not min..max */
    const char *what;        /* one line: what it does (docs, --print-option-table) */
    RtsUsageSection section; /* a patch's row: where its -? lines go */
    unsigned then;           /* a base row: the patches' sections that follow it in -? */
    const char *help;        /* its -? lines: "{default}", "{min}", "{max}" are replaced */
} RtsOption;

/* A -? line of the base that a patch words differently (e.g. "-N"). */
typedef struct RtsUsageLine {
    const char *name, *text;
} RtsUsageLine;

typedef void (*RtsInfoPut)(FILE *f, const char *key, const char *val);


typedef struct RtsPatch {
    const RtsOption *options;        /* its rows, ended by a NULL name; NULL: none */
    const RtsUsageLine *usage_lines; /* ended by a NULL name; NULL: none */
    const char *info_after;          /* the base --info key its lines follow */
    void (*info)(FILE *f, RtsInfoPut put);
    /* once all options are parsed: 0, or -1 with "rtslab: ..." in err */
    int (*check)(const RtsOptions *o, char *err, size_t errlen);
    /* once, in opts_resolve: what its options come to here; may set the base's
     * values that it gives another meaning to (-qb's default) */
    void (*resolve)(const RtsOptions *o, RtsConfig *c);
    const RtsStatsSection *stats;    /* NULL: none (Note [Patch statistics] in stats/stats.h) */
    const char *name;                /* the patch's name (configure --enable-NAME) */
} RtsPatch;

/* The registered patches, in configure.ac's order, ended by NULL. */
extern const RtsPatch *const patch_registry[];

/* "1m", "512m", "4k", "100": a size as the options write it. */
const char *opts_fmt_size(char *buf, size_t len, size_t v);

#endif
