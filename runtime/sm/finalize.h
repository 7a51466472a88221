/* Finalizers: C code that runs once the GC finds an object unreachable.
 *
 * Note [Finalizers]
 * A finalizer is a C function and a datum attached to a heap object (rts_add_finalizer in
 * rtslab.h): when a GC finds the object unreachable, the function is called with the datum,
 * once, after that GC, on the thread that led it, with the world running again and outside
 * any lock of the collector. It must not touch the heap (the object is gone) nor allocate in
 * it; it may take locks and make system calls (a port's finalizer flushes and closes a file).
 * This is how the language layer frees the C structures behind heap objects (Note [Ports] in
 * scheme/port.c), as GHC's foreign pointers and OCaml's custom blocks do.
 *
 * The table is split by age, as GHC keeps weak pointers per generation: a minor GC looks only
 * at the entries registered since the last GC (young), a major GC at every entry. After the
 * GC threads are done and before from-space is freed, the leader looks at each entry it
 * covers: an object outside from-space has not moved (an old object in a minor GC, or one
 * in a nursery the GC left alone); a small object in from-space whose header is a forwarding
 * address has moved there; a large one has survived if the GC marked its group evacuated;
 * any other object in from-space is unreachable, and its entry leaves the table for the
 * list of finalizers to run. Survivors of a minor GC are old, so their entries join the old
 * table. A finalizer does not keep its object alive (there are no weak pointers to revive it
 * from), and the objects it refers to are not kept either: it holds C data only.
 *
 * Invariant: every entry's object is a valid, reachable-or-unswept heap object at the start
 * of a GC; an entry is in the young table only while its object is in generation 0.
 */
#ifndef RTS_SM_FINALIZE_H
#define RTS_SM_FINALIZE_H

#include "sm/storage.h"

/* Attaches fn(data) to obj. Any capability may call it, at any time (a mutex guards the
 * table against other mutators; a GC reads it with the world stopped). */
void gc_add_finalizer(Value obj, void (*fn)(void *data), void *data);

/* With the world stopped, the GC threads done, from-space not yet freed: moves the entries of
 * unreachable objects to the list of finalizers to run, follows the others to their new
 * addresses. The leader calls it. */
void gc_find_dead_finalized(bool major);

/* After the GC, the world running: runs the finalizers gc_find_dead_finalized found. */
void gc_run_finalizers(void);

/* How many objects have finalizers attached, and how many finalizers have run (tests). */
size_t gc_finalizers_pending(void);
uint64_t gc_finalizers_run(void);

#endif
