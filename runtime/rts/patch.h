/* What a patch registers with the base (issue 34).
 *
 * Note [Patch registration]
 * A patch's RTS options, its --info lines, its checks of the options once all are parsed,
 * its -? lines and its statistics are one RtsPatch, defined in the patch's own file
 * runtime/rts/patch_NAME.c (nothing but the patch's island, so the build compiles it only
 * with the patch and `make patches` gives it to the patch, tools/mkpatches.py). configure
 * lists the patches that are on as RTSLAB_PATCH_REGS, one RTSLAB_PATCH_REG(name) each (the
 * name with '_' for '-', m4/rtslab_patches.m4); options.c makes of it rts_patches[], the
 * registered patches in configure.ac's order, which options.c and trace/stats.c walk. So
 * neither names a patch, and a patch touches neither. A patch's --info lines and -s lines
 * follow a line of the base's that it names (so that the output is the same as when each
 * patch had islands in the two files).
 *
 * How an option that only a patch gives meaning to is parsed (its syntax, range and the
 * message without the patch) is the base's, options.c's patch_option_specs[], since a build
 * without the patch still reports a malformed value as such (Note [Options that need a
 * patch] in options.c); what it sets, its default and its -? lines are the patch's entry.
 */
#ifndef RTS_RTS_PATCH_REG_H
#define RTS_RTS_PATCH_REG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include "rtslab_options.h"
#include "trace/stats.h"             /* RtsStatsSection */

/* Where a patch's -? lines go: right after -qa, after those (the other -q options), after
 * the stack sizes; within one place, in the patches' order. */
typedef enum { RTS_USAGE_QA, RTS_USAGE_GC, RTS_USAGE_STACK } RtsUsageSection;

#define RTS_NO_FIELD (-1)

/* One option of a patch. Its value, parsed as options.c's spec of the same name says, goes
 * to `field` (an unsigned for a number, a size_t for a size); `auto_field`, when not
 * RTS_NO_FIELD, is a bool that is true until the option is given. An entry with field
 * RTS_NO_FIELD only claims a value of a base option (e.g. "-qb0"), which the base refuses
 * in a build where no patch claims it. */
typedef struct RtsPatchOption {
    const char *name;                /* "-qw": the word's prefix, the value follows */
    int field;                       /* offsetof(RtsOptions, ...), or RTS_NO_FIELD */
    unsigned long long dflt;         /* its default */
    int auto_field;                  /* offsetof(RtsOptions, a bool), or RTS_NO_FIELD */
    RtsUsageSection section;
    const char *usage;               /* its -? lines; "%s" (at most once): the default */
} RtsPatchOption;

/* A -? line of the base that a patch words differently (e.g. "-N"). */
typedef struct RtsUsageLine {
    const char *name, *text;
} RtsUsageLine;

typedef void (*RtsInfoPut)(FILE *f, const char *key, const char *val);


typedef struct RtsPatch {
    const RtsPatchOption *options;   /* ended by a NULL name; NULL: none */
    const RtsUsageLine *usage_lines; /* ended by a NULL name; NULL: none */
    const char *info_after;          /* the base --info key its lines follow */
    void (*info)(FILE *f, RtsInfoPut put);
    /* once all options are parsed: 0, or -1 with "rtslab: ..." in err */
    int (*check)(const RtsOptions *o, char *err, size_t errlen);
    const RtsStatsSection *stats;    /* NULL: none (Note [Patch statistics] in trace/stats.h) */
    const char *name;                /* the patch's name (configure --enable-NAME) */
} RtsPatch;

/* The registered patches, in configure.ac's order, ended by NULL. */
extern const RtsPatch *const rts_patches[];

/* "1m", "512m", "4k", "100": a size as the options write it. */
const char *rts_fmt_size(char *buf, size_t len, size_t v);

#endif
