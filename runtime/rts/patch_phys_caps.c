#include "rtslab_config.h"
#if RTS_PATCH_PHYS_CAPS
/* The phys-caps patch's registration (Note [Patch registration] in rts/patch.h): what -N
 * and -qa mean (Note [Capabilities on physical cores] in os/affinity_phys_caps.c), and the
 * machine as they see it in --info. */
#include <stdlib.h>
#include "rts/patch.h"
#include "base/util.h"
#include "sched/capability.h"
#include "os/affinity.h"

static const RtsUsageLine usage_lines[] = {
    { "-N", "  -N            use one capability per physical core in the CPU mask\n"
            "                (+RTS --info shows why)\n" },
    { "-qa", "  -qa           pin each capability's OS thread to a CPU: one per physical\n"
             "                core (spread over packages and NUMA nodes), then second threads\n" },
    { NULL, NULL },
};

/* For the options in force (base_cfg: --info comes after the other options are parsed). */
static void info(FILE *f, RtsInfoPut put)
{
    const Topology *t = topo_get();
    unsigned n = base_cfg->n_caps;
    size_t len = 12 * (size_t)n + 512;
    char *buf = malloc(len);
    if (buf == NULL)
        return;
    snprintf(buf, len, "logical CPUs %d (online %d), physical cores %d, packages %d, "
             "NUMA nodes %d (source %s, mask %s, root %s)", t->n_logical, t->n_online,
             t->n_physical, t->n_packages, t->n_nodes, t->source, t->mask_source,
             t->root[0] ? t->root : "/");
    put(f, "CPU topology", buf);
    put(f, "Default capabilities (-N)", affinity_explain_default(buf, len));
    if (base_cfg->n_caps_auto)
        snprintf(buf, len, "%u (-N)", n);
    else
        snprintf(buf, len, "%u (-N%u)", n, n);
    put(f, "Capabilities", buf);
    put(f, "Pin order (-qa)", affinity_format_placement(buf, len, n));
    put(f, "Pinned", base_cfg->pin_caps ? "YES (-qa)" : "NO (no -qa)");
    free(buf);
}

/* Statistics (Note [Patch statistics]): where the capabilities ran (Note [Capabilities on
 * physical cores] in os/affinity_phys_caps.c): how many, why, and the CPUs -qa pinned them
 * to. */
static void section_lines(FILE *f)
{
    size_t len = 12 * (size_t)cap_n_caps + 512;
    char *buf = malloc(len);
    if (buf == NULL)
        return;
    if (base_cfg->n_caps_auto)
        fprintf(f, "  Capabilities: -N%u, the default: %s\n", cap_n_caps,
                affinity_explain_default(buf, len));
    else
        fprintf(f, "  Capabilities: -N%u, given\n", cap_n_caps);
    if (base_cfg->pin_caps)
        fprintf(f, "  Capability -> CPU (-qa): %s\n", affinity_format_placement(buf, len, cap_n_caps));
    else
        fprintf(f, "  Capability -> CPU: not pinned (no -qa; -qa would use %s)\n",
                affinity_format_placement(buf, len, cap_n_caps));
    free(buf);
}

static const RtsStatsSection stats = {
    .lines_after = "Idle capabilities woken",
    .lines = section_lines,
};

const RtsPatch patch_phys_caps = {
    .usage_lines = usage_lines,
    .info_after = "Sanitizer",
    .info = info,
    .stats = &stats,
    .name = "phys-caps",
};
#endif
