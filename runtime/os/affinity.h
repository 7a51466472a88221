/* How many capabilities -N means, and where -qa pins them. The baseline counts the allowed
 * logical CPUs and pins capability i to the i-th of them (topology's logical_order, wrapping
 * round), as GHC's -N and -qa do. Both decisions live here, side by side, so that a variant
 * that counts physical cores instead changes them in one place. */
#ifndef RTS_OS_AFFINITY_H
#define RTS_OS_AFFINITY_H

#include "rts_config.h"

/* The number of capabilities `-N` with no number means (at least 1). */
unsigned affinity_default_caps(void);
/* The CPU capability `cap_no` is pinned to under -qa. */
int  affinity_cpu_for_cap(unsigned cap_no);
/* Pins the calling OS thread to that CPU (a warning if the OS refuses). */
void affinity_pin_self(unsigned cap_no);

#if RTS_PATCH_PHYS_CAPS
/* Note [Capabilities on physical cores] in os/affinity_phys_caps.c.
 *
 * The decisions above, as pure functions of a topology and a CPU count limit, so that --info, -s
 * and the tests can show them for any machine:
 *   - affinity_pin_order fills out[0..t->n_logical-1]: every allowed CPU once; first the
 *     smt_rank-0 CPU of every core in t->physical_order (spread over packages and nodes),
 *     then the smt_rank-1 CPUs of the cores that have one, in the same order of cores, and
 *     so on. Capability i is pinned to out[i % n_logical].
 *   - affinity_default_caps_of = t->n_physical, never below 1.
 * The process's answers (affinity_default_caps, affinity_cpu_for_cap) are these for
 * topo_get(), computed once. */
#include <stddef.h>
#include "os/topology.h"

void     affinity_pin_order(const Topology *t, int *out);
unsigned affinity_default_caps_of(const Topology *t);
/* The process's answers, computed once: affinity_default_caps_of(topo_get()), which
 * affinity_default_caps starts from, and what affinity_cpu_for_cap returns (out[cap_no %
 * n_logical] of topo_get()'s pin order). */
unsigned affinity_phys_default_caps(void);
int      affinity_phys_cpu_for_cap(unsigned cap_no);

/* Why -N means what it means, for people: "4 (4 physical cores of 8 logical CPUs)" (the
 * first number affinity_default_caps(), which something else may have lowered and then
 * says why); returns buf. */
char *affinity_explain_default(char *buf, size_t len);
/* The CPUs that capabilities 0..n_caps-1 get under -qa, joined by commas ("0,1,2,0"), or
 * truncated with "..."; returns buf. */
char *affinity_format_placement(char *buf, size_t len, unsigned n_caps);

#endif
#endif
