#include "rtslab_config.h"
#if RTS_PATCH_SPIN_YIELD
/* The spin-yield patch's registration (Note [Patch registration] in rts/patch.h): -qy. */
#include <stddef.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"

static const RtsPatchOption options[] = {
    { "-qy", offsetof(RtsOptions, spin_yield), RTS_DEFAULT_SPIN_YIELD, RTS_NO_FIELD,
      RTS_USAGE_GC,
      "  -qy<n>        spin-waits (spinlocks, the GC's look-for-work loop) yield the CPU\n"
      "                every <n> spins (default %s)\n" },
    { NULL, 0, 0, 0, 0, NULL },
};

static void info(FILE *f, RtsInfoPut put)
{
    char spin[64];
    snprintf(spin, sizeof spin, "every %u spins (-qy<n>; configure's default %d)",
             rts_opts.spin_yield, (int)RTS_SPIN_YIELD_SPINS);
    put(f, "Spin-wait yield", spin);
}

const RtsPatch rts_patch_spin_yield = {
    .options = options,
    .info_after = "Patches",
    .info = info,
    .name = "spin-yield",
};
#endif
