#include "rtslab_config.h"
#if RTS_PATCH_GEN0_STEAL
/* The gen0-steal patch's registration (Note [Patch registration] in rts/patch.h): it gives
 * -qb0 a meaning (minor GCs steal work too). */
#include <stddef.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include <string.h>
#include "sm/evac.h"            /* gc_work_yields */

/* No -qb<gen>: -qb0 (minor GCs steal work too) when the allocation area is at least this,
 * else -qb1, as GHC decides (Note [Minor GC stealing] in sm/gc.h) */
#define BALANCE_YOUNG_MIN_AREA ((size_t)32 << 20)    /* -A32m */

/* -qb0 is the base's -qb<gen> with a generation only this patch gives meaning to (Note [The
 * option table] in rts/options.c); -qb's -? lines say what its default is here. */
static const RtsOption options[] = {
    { .name = "-qb0", .kind = RTS_OPT_CLAIM },
    { .name = NULL },
};

static const RtsUsageLine usage_lines[] = {
    { "-qb[<gen>]", "  -qb           no load balancing in parallel GC\n"
                    "  -qb<gen>      load-balance in parallel GC only for generations >= <gen>\n"
                    "                (default 0 with -A of 32m or more, else 1)\n" },
    { NULL, NULL },
};

/* Decided once (Note [Options, resolved once] in base/util.h): -qb's default from -A. */
static void resolve(const RtsOptions *o, RtsConfig *c)
{
    if (!o->balance_gen_given)
        c->balance_gen = o->alloc_area >= BALANCE_YOUNG_MIN_AREA ? 0 : 1;
}

static void info(FILE *f, RtsInfoPut put)
{
    char steal[160];
    if (base_cfg->balance)
        snprintf(steal, sizeof steal, "generations >= %u (without -qb<gen>: 0 with -A of 32m "
                 "or more, else 1)", base_cfg->balance_gen);
    else
        snprintf(steal, sizeof steal, "off (-qb)");
    put(f, "GC work stealing", steal);
}

/* Statistics (Note [Patch statistics]): the work balance by GC kind (minor, major), and the
 * steals and the look-for-work yields, which are counted in the GCs that the patch balances
 * only (Note [Minor GC stealing]): none under -qb1. */
static struct {
    uint64_t kind_copied[2], kind_balanced[2], steal_tries[2], steals[2], yields[2];
} st;

static struct {
    double kind_balance[2];              /* negative: no parallel GC of the kind copied */
    uint64_t balance_gen;
    double minor_balance, major_balance; /* 0 for negative */
} sum;

static void section_init(void)
{
    memset(&st, 0, sizeof st);
    memset(&sum, 0, sizeof sum);
}

static void section_gc_done(const GcRecord *r)
{
    int g = r->major;
    if (r->gc_threads > 1) {            /* GHC's balance, as the base's -s line */
        st.kind_copied[g] += r->copied_bytes;
        st.kind_balanced[g] += r->balanced_copied_bytes;
    }
    st.steal_tries[g] += r->steal_tries;
    st.steals[g] += r->steals;
}

static void section_summarise(void)
{
    for (int g = 0; g < 2; g++)
        sum.kind_balance[g] = st.kind_copied[g]
            ? (double)st.kind_balanced[g] / (double)st.kind_copied[g] : -1;
    sum.balance_gen = base_cfg->balance ? base_cfg->balance_gen : 255;
    sum.minor_balance = sum.kind_balance[0] > 0 ? sum.kind_balance[0] : 0.0;
    sum.major_balance = sum.kind_balance[1] > 0 ? sum.kind_balance[1] : 0.0;
    for (int g = 0; g < 2; g++)
        st.yields[g] = __atomic_load_n(&gc_work_yields[g], __ATOMIC_RELAXED);
}

static void section_lines(FILE *f)
{
    unsigned g = base_cfg->balance_gen;
    if (!base_cfg->balance)
        fprintf(f, "  GC work stealing: off (-qb)\n");
    else
        fprintf(f, "  GC work stealing: generations >= %u (-qb%u%s)\n", g, g,
                base_cfg->balance_gen_given ? ""
                : g == 0 ? ", the default from -A32m up" : ", the default below -A32m");
    fprintf(f, "  GC work balance by kind: minor %.2f%%, major %.2f%%",
            100 * sum.minor_balance, 100 * sum.major_balance);
    if (base_cfg->balance && g == 0)
        fprintf(f, "; steals: minor %llu of %llu tries, major %llu of %llu; idle yields: minor %llu,"
                   " major %llu\n",
                (unsigned long long)st.steals[0], (unsigned long long)st.steal_tries[0],
                (unsigned long long)st.steals[1], (unsigned long long)st.steal_tries[1],
                (unsigned long long)st.yields[0], (unsigned long long)st.yields[1]);
    else
        fprintf(f, " (steals not counted: the baseline's policy)\n");
}

static const RtsStatsKey section_keys[] = {
    { "rtslab_balance_gen", &sum.balance_gen, NULL },
    { "rtslab_minor_work_balance", NULL, &sum.minor_balance },
    { "rtslab_major_work_balance", NULL, &sum.major_balance },
    { "rtslab_minor_steal_tries", &st.steal_tries[0], NULL },
    { "rtslab_minor_steals", &st.steals[0], NULL },
    { "rtslab_major_steal_tries", &st.steal_tries[1], NULL },
    { "rtslab_major_steals", &st.steals[1], NULL },
    { "rtslab_minor_work_yields", &st.yields[0], NULL },
    { "rtslab_major_work_yields", &st.yields[1], NULL },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .init = section_init,
    .gc_done = section_gc_done,
    .summarise = section_summarise,
    .lines_after = "Productivity",
    .lines = section_lines,
    .keys_after = "gen_1_avg_pause_seconds",
    .keys = section_keys,
};

const RtsPatch patch_gen0_steal = {
    .options = options,
    .usage_lines = usage_lines,
    .resolve = resolve,
    .info_after = "libnuma",
    .info = info,
    .stats = &stats,
    .name = "gen0-steal",
};
#endif
