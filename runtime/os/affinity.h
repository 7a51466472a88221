/* Pinning capabilities to CPUs (-qa). The baseline pins capability i to the i-th allowed
 * logical CPU (topology's logical_order, wrapping round), as GHC's -qa does; the phys-caps
 * patch picks one CPU per physical core instead. */
#ifndef RTS_OS_AFFINITY_H
#define RTS_OS_AFFINITY_H

/* The CPU capability `cap_no` is pinned to under -qa. */
int  affinity_cpu_for_cap(unsigned cap_no);
/* Pins the calling OS thread to that CPU (a warning if the OS refuses). */
void affinity_pin_self(unsigned cap_no);

#endif
