/* Run-time statistics: counters kept by the storage manager and the scheduler, and the
 * -s/-S reports. */
#ifndef RTS_TRACE_STATS_H
#define RTS_TRACE_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "rtslab.h"
#include "sm/gc.h"

/* Note [Patch statistics]
 * A patch's statistics are one section, which its RtsPatch (Note [Patch registration] in
 * rts/patch.h) carries and rts_init registers here with stats_register, before stats_init
 * (so that this layer refers to none above it); stats.c walks the registered ones and names
 * none: its counters, kept by gc_done after every GC and summed by summarise at exit, then
 * its -s lines (lines, after the base's line lines_after) and its --machine-readable keys
 * (keys, after the base's key keys_after), both printed from what summarise left, so the
 * two cannot disagree. With keys_after "rtslab_barrier_*" the keys are per barrier wait
 * kind: after each kind's base keys, "rtslab_barrier_<kind>_<key>", the value u64[kind].
 * The base lines and keys a section may follow are stats.c's line_anchors and key_anchors;
 * stats_register refuses another (it would never be printed).
 * docs/stats.md lists every key in the patch's marker block; `+RTS --stats-keys` prints the
 * registered ones and testsuite/stats/doc_keys.py compares the two. */
typedef struct RtsStatsKey {
    const char *key;
    const uint64_t *u64;             /* the value, or (per wait kind) the values by kind */
    const double *dbl;               /* or this one (u64 NULL) */
} RtsStatsKey;

typedef struct RtsStatsSection {
    void (*init)(void);              /* at start-up: the counters to zero */
    void (*gc_done)(const GcRecord *r);  /* after each GC, the world stopped */
    void (*summarise)(void);         /* at exit, before the report */
    const char *lines_after;         /* the base -s line (stats/stats.c's anchors) */
    void (*lines)(FILE *f);
    const char *keys_after;          /* the base key, or "rtslab_barrier_*" */
    const RtsStatsKey *keys;         /* ended by a NULL key */
} RtsStatsSection;

/* At start-up, before stats_init: a patch's section (its name for --stats-keys); once each. */
void stats_register(const char *name, const RtsStatsSection *sec);

void stats_init(void);
/* The -s<file>'s descriptor (its name is base_cfg->stats_file); -1 without one. */
int stats_file(void);
void stats_gc_done(const GcRecord *r);   /* registered with gc_on_done */
void stats_mutator_start(void);      /* after init: INIT ends, MUT begins */
/* The -s / -S summary at exit; false, after saying so on stderr, when the -s file could not
 * be written in full. */
bool stats_report(void);
void stats_get(RtsStats *out);
/* `+RTS --stats-keys`: the --machine-readable keys of the registered patches, "NAME KEY" a
 * line (Note [Patch statistics] above). */
void stats_print_keys(FILE *f);

#endif
