#include "rtslab_config.h"
#if RTS_PATCH_IDLE_OPTOUT
/* The idle-optout patch's registration (Note [Patch registration] in rts/patch.h): -qi
 * (Note [Idle opt-out] in sync/stw.h). */
#include <stddef.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include "sync/stw.h"

/* -qi<n> (Note [The option table] in rts/options.c): stw_idle_optout_gcs (Note [Idle
 * opt-out] in sync/stw.h) */
static const RtsOption options[] = {
    { .name = "-qi", .syntax = "-qi<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,
      .var = &stw_idle_optout_gcs, .max = 1000000u, .dflt = 1, .noun = "the number of GCs",
      .what = "an idle capability opts out of GCs once it took part in <n> (0: never)",
      .section = RTS_USAGE_QA,
      .help = "  -qi<n>        an idle capability opts out of GCs once it took part in <n> since\n"
              "                it went idle (0..{max}; default {default}; 0: never)\n" },
    { .name = NULL },
};

static void info(FILE *f, RtsInfoPut put)
{
    char optout[80];
    if (stw_idle_optout_gcs)
        snprintf(optout, sizeof optout, "after %u GC(s) idle (-qi<n>; 0: never)",
                 stw_idle_optout_gcs);
    else
        snprintf(optout, sizeof optout, "never (-qi0)");
    put(f, "Idle capabilities opt out of GC", optout);
}

/* Statistics (Note [Patch statistics]; Note [Idle opt-out] in sync/stw.h). */
static struct {
    uint64_t optout_syncs, opted_out, opt_outs, rejoins, rejoin_waits;
} sum;

static void section_summarise(void)
{
    StwOptoutStats s;
    stw_optout_stats(&s);
    sum.optout_syncs = s.optout_syncs;
    sum.opted_out = s.opted_out;
    sum.opt_outs = s.opt_outs;
    sum.rejoins = s.rejoins;
    sum.rejoin_waits = s.rejoin_waits;
}

static void section_lines(FILE *f)
{
    fprintf(f, "  Idle opt-out (-qi%u): %llu GCs left out %llu capabilities; %llu opt-outs, "
               "%llu rejoins (%llu waited for a GC)\n", stw_idle_optout_gcs,
            (unsigned long long)sum.optout_syncs, (unsigned long long)sum.opted_out,
            (unsigned long long)sum.opt_outs, (unsigned long long)sum.rejoins,
            (unsigned long long)sum.rejoin_waits);
}

static const RtsStatsKey section_keys[] = {
    { "rtslab_idle_optout_gcs", &sum.optout_syncs, NULL },
    { "rtslab_idle_opted_out", &sum.opted_out, NULL },
    { "rtslab_idle_optouts", &sum.opt_outs, NULL },
    { "rtslab_idle_rejoins", &sum.rejoins, NULL },
    { "rtslab_idle_rejoin_waits", &sum.rejoin_waits, NULL },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .summarise = section_summarise,
    .lines_after = "Spinlocks",
    .lines = section_lines,
    .keys_after = "rtslab_idle_gc_wakeups",
    .keys = section_keys,
};

const RtsPatch patch_idle_optout = {
    .options = options,
    .info_after = "Configure args",
    .info = info,
    .stats = &stats,
    .name = "idle-optout",
};
#endif
