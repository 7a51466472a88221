#include "rtslab_config.h"
#if RTS_PATCH_SPIN_YIELD
/* The spin-yield patch's registration (Note [Patch registration] in rts/patch.h): -qy. */
#include <stddef.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include "sync/spinwait.h"

/* -qy<n> (Note [The option table] in rts/options.c): spin_yield_every, which spin-waits
 * read (Note [Spin-wait yields] in sync/spinwait.h), the default until the options are
 * parsed. */

static const RtsOption options[] = {
    { .name = "-qy", .syntax = "-qy<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,
      .var = &spin_yield_every, .min = 1, .max = 1000000000u, .from_to = true,
      .dflt = RTS_SPIN_YIELD_SPINS, .noun = "the spins between yields",
      .what = "spin-waits yield the CPU every <n> spins", .section = RTS_USAGE_GC,
      .help = "  -qy<n>        spin-waits (spinlocks, the GC's look-for-work loop) yield the CPU\n"
              "                every <n> spins (default {default})\n" },
    { .name = NULL },
};

static void info(FILE *f, RtsInfoPut put)
{
    char spin[64];
    snprintf(spin, sizeof spin, "every %u spins (-qy<n>; configure's default %d)", spin_yield_every,
             (int)RTS_SPIN_YIELD_SPINS);
    put(f, "Spin-wait yield", spin);
}

const RtsPatch rts_patch_spin_yield = {
    .options = options,
    .info_after = "Patches",
    .info = info,
    .name = "spin-yield",
};
#endif
