#include "rtslab_config.h"
#if RTS_PATCH_SPIN_YIELD
/* The spin-yield patch's registration (Note [Patch registration] in rts/patch.h): -qy. */
#include <stddef.h>
#include <string.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include "sync/spinwait.h"
#include "sched/capability.h"       /* cap_array: the inboxes' and the header locks' yields */
#include "sm/evac.h"                /* gc_work_wait, gc_copy_wait */
#include "sm/storage.h"             /* sm_lock */
#include "stats/stats.h"

/* -qy<n> (Note [The option table] in rts/options.c): sync_spin_yield_every, which spin-waits
 * read (Note [Spin-wait yields] in sync/spinwait.h), the default until the options are
 * parsed. */

static const RtsOption options[] = {
    { .name = "-qy", .syntax = "-qy<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,
      .var = &sync_spin_yield_every, .min = 1, .max = 1000000000u, .from_to = true,
      .dflt = RTS_SPIN_YIELD_SPINS, .noun = "the spins between yields",
      .what = "spin-waits yield the CPU every <n> spins", .section = RTS_USAGE_GC,
      .help = "  -qy<n>        spin-waits (spinlocks, the GC's look-for-work loop) yield the CPU\n"
              "                every <n> spins (default {default})\n" },
    { .name = NULL },
};

static void info(FILE *f, RtsInfoPut put)
{
    char spin[64];
    snprintf(spin, sizeof spin, "every %u spins (-qy<n>; configure's default %d)",
             sync_spin_yield_every, (int)RTS_SPIN_YIELD_SPINS);
    put(f, "Spin-wait yield", spin);
}

/* Statistics (Note [Patch statistics]): the yields of each spin-wait that -s's spinlock table
 * counts, in its rows, summed over the capabilities as there: the waits' own counters
 * (Note [Spin-wait yields]), read at exit. */
enum { Y_SM, Y_INBOX, Y_OBJ, Y_GC_WORK, Y_GC_COPY, NY };
static uint64_t yields[NY];

static void section_init(void)
{
    memset(yields, 0, sizeof yields);
}

static void section_summarise(void)
{
    yields[Y_SM] = sm_lock.yields;
    yields[Y_INBOX] = yields[Y_OBJ] = 0;
    for (unsigned i = 0; i < cap_n_caps; i++) {
        yields[Y_INBOX] += cap_array[i].inbox_lock.yields;
        yields[Y_OBJ] += cap_array[i].obj_lock_yields;
    }
    yields[Y_GC_WORK] = __atomic_load_n(&gc_work_wait.yields, __ATOMIC_RELAXED);
    yields[Y_GC_COPY] = __atomic_load_n(&gc_copy_wait.yields, __ATOMIC_RELAXED);
}

static void section_lines(FILE *f)
{
    fprintf(f, "  Spin-wait yields (every %u spins, -qy<n>): sm %llu, inboxes %llu, mvar/thread "
               "headers %llu, gc look-for-work %llu, gc copy in progress %llu\n",
            sync_spin_yield_every, (unsigned long long)yields[Y_SM],
            (unsigned long long)yields[Y_INBOX], (unsigned long long)yields[Y_OBJ],
            (unsigned long long)yields[Y_GC_WORK], (unsigned long long)yields[Y_GC_COPY]);
}

static const RtsStatsKey section_keys[] = {
    { "rtslab_lock_sm_yields", &yields[Y_SM], NULL },
    { "rtslab_lock_inbox_yields", &yields[Y_INBOX], NULL },
    { "rtslab_lock_obj_yields", &yields[Y_OBJ], NULL },
    { "rtslab_lock_gc_work_yields", &yields[Y_GC_WORK], NULL },
    { "rtslab_lock_gc_copy_yields", &yields[Y_GC_COPY], NULL },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .init = section_init,
    .summarise = section_summarise,
    .lines_after = "Spinlocks",
    .lines = section_lines,
    .keys_after = "rtslab_idle_gc_wakeups",
    .keys = section_keys,
};

const RtsPatch patch_spin_yield = {
    .options = options,
    .stats = &stats,
    .info_after = "Patches",
    .info = info,
    .name = "spin-yield",
};
#endif
