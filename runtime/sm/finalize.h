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
 *
 * Note [External resources]
 * A port object is a few words of heap holding a descriptor and kilobytes of C buffers, which
 * only its finalizer frees; counted by its heap words alone, a loop that opens files and
 * drops them made a GC every 40,000 opens at -A8m and ran out of descriptors at 1024
 * (issue 45: "Too many open files" at -A8m, 213 MB of RSS for a 1 MB heap at -A1m). So an
 * object's finalizer may say what it frees (gc_add_finalizer_held, rts_add_finalizer_held:
 * bytes of C memory, descriptors), and that counts toward the next GC, as GHC counts the
 * memory of its foreign pointers in its heap check:
 *  - registered since the last GC: when the descriptors reach the budget (a quarter of the
 *    soft RLIMIT_NOFILE when the first finalizer that holds any is registered, at least 16) or the bytes reach the nurseries' size,
 *    sm_gc_requested is set and the registering capability's heap limit brought down to
 *    its hp: its next allocation's slow path collects, as a full nursery would. Any GC
 *    answers the request;
 *  - promoted to the old table since the last major GC: their bytes count with the old
 *    generation's blocks against its limit, and their descriptors against the budget, so a
 *    major GC comes when they would have forced one had they been heap (gc_collect);
 *  - what is counted is what the object held when registered: a port closed early is still
 *    counted until its finalizer runs, which at worst makes a GC come sooner.
 * When an open fails for want of descriptors all the same (EMFILE, ENFILE: ports held by
 * old objects that no major GC has looked at yet), the primitive collects the whole heap,
 * which runs the finalizers, and tries once more (scheme/prim_port.c).
 */
#ifndef RTS_SM_FINALIZE_H
#define RTS_SM_FINALIZE_H

#include "sm/storage.h"

/* Attaches fn(data) to obj. Any capability may call it, at any time (a mutex guards the
 * table against other mutators; a GC reads it with the world stopped). Locks held: none;
 * takes the table's mutex (fin_mu in finalize.c), and no other lock while holding it. */
void gc_add_finalizer(Value obj, void (*fn)(void *data), void *data);
/* The same, for a finalizer that frees `bytes` of C memory and `fds` descriptors (Note
 * [External resources]); cap is the registering mutator's (NULL: request no GC). Locks
 * held: none; takes the table's mutex. */
void gc_add_finalizer_held(SmCap *cap, Value obj, void (*fn)(void *data), void *data,
                           size_t bytes, unsigned fds);
/* Whether what finalizers of old objects hold calls for a major GC now. Locks held: none;
 * takes the table's mutex. */
bool gc_external_wants_major(void);

/* With the world stopped, the GC threads done, from-space not yet freed: moves the entries of
 * unreachable objects to the list of finalizers to run, follows the others to their new
 * addresses. The leader calls it. Locks held: none; takes the table's mutex. */
void gc_find_dead_finalized(bool major);

/* After the GC, the world running: runs the finalizers gc_find_dead_finalized found.
 * Locks held: none; takes the table's mutex to take the list, and runs them without it. */
void gc_run_finalizers(void);

/* How many objects have finalizers attached, and how many finalizers have run (tests).
 * Locks held: none; gc_finalizers_pending takes the table's mutex. */
size_t gc_finalizers_pending(void);
uint64_t gc_finalizers_run(void);

#endif
