/* Capabilities: a virtual CPU = an OS worker thread + a run queue of lightweight threads +
 * a nursery + a remembered set (+ a GC thread's state, in sm/gc.h).
 *
 * Invariants:
 *  - hp lies in cur_block: cur_block->start <= hp <= hplim_real, and the nursery blocks
 *    before cur_block on the ->link chain are full (their ->free is final); cur_block->free
 *    is only brought up to date (= hp) at a GC or a block switch.
 *  - hplim is either hplim_real or NULL: another OS thread (the timer) stores NULL to make
 *    the next heap check fail and so reach a safe point (GHC's HpLim trick).
 *  - every object in remset is old (generation 1), mutable and has OBJ_DIRTY set; an old
 *    object with OBJ_DIRTY is in some capability's remset.
 *  - a lightweight thread is on at most one queue (run queue, sleep queue, an MVar's queue,
 *    a thread's joiners) at a time, linked through its TSO_LINK field.
 */
#ifndef RTS_SCHED_CAPABILITY_H
#define RTS_SCHED_CAPABILITY_H

#include <setjmp.h>
#include <stdint.h>
#include "rtslab.h"
#include "sm/block.h"

#define CAP_SAVE_MAX 8

typedef struct Capability Capability;

struct Capability {
    /* mutator fast path */
    Value   *hp;               /* next free word of the current nursery block */
    Value   *hplim;            /* end of it, or NULL when the heap check must trap */
    Value   *hplim_real;
    bdescr  *cur_block;
    bdescr  *nursery;          /* chain of nursery blocks (gen 0, BF_NURSERY) */
    size_t   nursery_blocks;
    size_t   large_blocks_since_gc;  /* young large objects count against the nursery */
    bdescr  *large_young;      /* young large objects allocated here */

    int      context_switch;   /* set by the timer: switch threads at the next safe point */

    Value    current;          /* the running thread, RTS_FALSE when none */
    Value    run_hd, run_tl;   /* run queue (threads linked by TSO_LINK) */
    Value    sleep_q;          /* sleeping threads, earliest wake-up first */

    Value   *remset;           /* remembered set: old mutable objects written since a GC */
    size_t   remset_n, remset_cap;

    Value    save[CAP_SAVE_MAX];  /* values an allocating call protects across a GC */
    unsigned nsave;

    jmp_buf *thread_exit;      /* where rts_thread_error unwinds to */
    unsigned no;

    uint64_t bytes_allocated;  /* in nursery blocks already left behind, and large objects */
};

extern Capability *caps;
extern unsigned n_caps;

void cap_init(Capability *cap, unsigned no);
void cap_remember(Capability *cap, Value obj);

#endif
