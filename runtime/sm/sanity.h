/* The sanity checker (sanity.c, -DS): its checks, and from-space poisoning (-DS and -DG).
 * Every entry point runs with the world stopped, on the GC's leader, but
 * sanity_check_value (any mutator, on an error path). */
#ifndef RTS_SM_SANITY_H
#define RTS_SM_SANITY_H

#include "sm/storage.h"

typedef enum { SANITY_BEFORE_GC, SANITY_AFTER_GC } SanityWhen;

/* Checks the heap with the world stopped (-DS): the leader, before and after each GC (`major`
 * says which kind), every GC's two checks in turn (Note [Sanity checking cost] in sanity.c).
 * Locks held: none; the world stopped (it takes sm_lock to read the block allocator). */
void  sanity_check(SanityWhen when, bool major);

/* What the sanity checker did (-DS), for -s (docs/stats.md): checks run, of which walked the
 * whole heap, and the words it walked (objects' words, headers included, and root slots). */
typedef struct SanityCounts {
    uint64_t checks, full_checks, words_walked;
} SanityCounts;
void  sanity_counts(SanityCounts *out);

/* Note [Poisoned from-space]
 * A C function that holds a heap value in a local variable across an allocation, without a
 * local root, keeps the object's old address when a GC moves it (issue 33: the interrupt
 * handler's `raise` closure). Unchecked, the old copy still reads like the object for a
 * while, until the nursery is refilled over it, so such a bug shows as a rare wrong answer.
 * Under -DS or -DG<n> (the GC stress mode, Note [GC stress] in storage.h) the collector
 * makes it show at once:
 *  - every word of from-space that a GC leaves behind (each collected nursery's objects,
 *    dead large objects, a major GC's old blocks) is overwritten with SANITY_POISON: an
 *    immediate that is no header, so an object read through a stale pointer has a bad header
 *    and its fields are no pointers;
 *  - under -DG<n>, the nursery is rotated, its used blocks moved behind the unused ones
 *    (sm_reset_nursery), so that the poison is not overwritten by the very next
 *    allocations: under -DG1 (a GC at every allocation) every object is allocated at the
 *    start of a nursery block, and stays poisoned for as many GCs as the nursery has
 *    blocks. (Without -DG the nursery is refilled from its first block, as always, so a
 *    poisoned block k lasts k blocks of allocation, and -DS's reports of a missing write
 *    barrier stay what testsuite/gc's drop_barrier tests expect.)
 *  - a stale pointer stored into the heap or a root is a pointer "past its block's objects"
 *    or to a bad header at the next check; one used as a value reaches an error path (a
 *    type error, a call of a non-procedure), where sanity_check_value names it as stale.
 * Its cost is a store per word of from-space (a GC's own order) and, under -DG, a walk of
 * the nursery's block list per GC. -DG1 is the mode that finds these bugs: `make check`
 * runs every program of testsuite/scheme under it (testsuite/driver.py, "stress");
 * testsuite/unit/test_stale.c checks the mechanism, scheme/deadlock_gc_stress the
 * interrupt handler's case. */
#define SANITY_POISON ((Value)0xdeadbeefdeadbee2u)
static inline bool sanity_poisons(void) { return base_cfg->sanity || base_cfg->gc_stress; }
/* Overwrites [start, end) with SANITY_POISON. */
void  sanity_poison(void *start, void *end);
/* When sanity_poisons(): a value about to be reported in an error is checked; a pointer to
 * poisoned from-space (Note [Poisoned from-space]) is a runtime bug, reported and aborted as
 * the checker's findings are. */
void  sanity_check_value(Value v, const char *where);

#endif
