/* Evacuation and scavenging (evac.c): copying live objects into a GC thread's to-space and
 * scanning them (Note [To-space] in gcthread.h, Note [Racing for an object] in gc.h).
 * Every entry point runs on a GC thread of the GC in progress, with the world stopped.
 * Locks held: none on entry; a new to-space block takes sm_lock around the block allocator
 * (new_todo_block), a GC thread's deque takes none (wsdeque.h), objects are claimed by CAS. */
#ifndef RTS_SM_EVAC_H
#define RTS_SM_EVAC_H

#include "sm/storage.h"
#include "sm/gcthread.h"

/* Copies v's object to gct's to-space, if it is in from-space and not yet copied, and
 * returns its new address (v itself when it does not move). */
Value gc_evacuate(GCThread *gct, Value v);
/* Scans an object of to-space: evacuates what its fields point to. */
void  gc_scavenge_object(GCThread *gct, Value obj);
#if RTS_PATCH_GEN0_STEAL
/* gc_scavenge_object, but a big pointer object's fields beyond the first chunk go on the
 * deque in chunks, for any GC thread to scan (Note [Minor GC stealing] in gc.h). Only in a
 * stealing minor GC. */
void  gc_scavenge_shared(GCThread *gct, Value obj);
/* Yields of idle GC threads in the GCs that balance by the patch's rule, minor [0] and major
 * [1] (Note [Yielding look for work] in evac.c). */
extern uint64_t gc_work_yields[2];
#endif
/* Scans an old object of a remembered set in a minor GC, and remembers it again if it points
 * to an aged object then (Note [Aging] in storage.h). */
void  gc_scavenge_remembered(GCThread *gct, Value obj);
/* Scavenges until no GC thread has work left (in a stealing GC, stealing when idle). */
void  gc_scavenge_loop(GCThread *gct);
/* The GC threads' spin-waits that are not on a lock (-s prints them with the spinlocks):
 * looking for work to steal (gc_scavenge_loop), waiting for another GC thread to finish
 * copying an object (gc_evacuate). */
extern SpinCount gc_work_wait, gc_copy_wait;

#endif
