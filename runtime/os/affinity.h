/* How many capabilities -N means, and where -qa pins them. The baseline counts the allowed
 * logical CPUs and pins capability i to the i-th of them (topology's logical_order, wrapping
 * round), as GHC's -N and -qa do; the phys-caps patch counts physical cores and picks one CPU
 * per physical core instead. Both decisions live here, side by side. */
#ifndef RTS_OS_AFFINITY_H
#define RTS_OS_AFFINITY_H

/* The number of capabilities `-N` with no number means (at least 1). */
unsigned affinity_default_caps(void);
/* The CPU capability `cap_no` is pinned to under -qa. */
int  affinity_cpu_for_cap(unsigned cap_no);
/* Pins the calling OS thread to that CPU (a warning if the OS refuses). */
void affinity_pin_self(unsigned cap_no);

#endif
