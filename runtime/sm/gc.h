/* The collector: driver (gc.c), per-GC-thread state and evacuation/scavenging (evac.c),
 * sanity checking (sanity.c).
 *
 * Note [To-space]
 * A GC thread copies into blocks of its own (GCThread.todo): the one it bumps into is the
 * last of its `copied` chain. Its Cheney scan walks that chain in order (bdescr.scan is
 * each block's scan pointer), so copying and scanning need no lock. Large objects are not
 * copied: evacuating one sets BF_EVACUATED on its group and queues it (on ->prev) to be
 * scavenged in place.
 *
 * Note [Racing for an object]
 * Two GC threads may reach one object. The winner swaps its header for OBJ_BUSY with a CAS,
 * copies it, then publishes the forwarding address (release); a loser seeing OBJ_BUSY waits
 * for the address. So no object, mutable or not, is ever copied twice.
 */
#ifndef RTS_SM_GC_H
#define RTS_SM_GC_H

#include "sm/storage.h"

typedef struct GCThread {
    bdescr  *copied_hd, *copied_tl;  /* to-space blocks, in allocation order; tl is bumped */
    bdescr  *scan_bd;                /* the block the Cheney scan is in */
    bdescr  *large_pending;          /* evacuated large objects not yet scavenged (->prev) */
    bdescr  *large_done;             /* scavenged large objects (->link) */
    size_t   copied_words;
    size_t   n_copied_blocks;
    bool     major;
} GCThread;

typedef enum { SANITY_BEFORE_GC, SANITY_AFTER_GC } SanityWhen;

/* Collects; called by a mutator at a safe point (an allocation or rts_gc). */
void  gc_collect(Capability *cap, bool force_major);
Value gc_evacuate(GCThread *gct, Value v);
void  gc_scavenge_object(GCThread *gct, Value obj);
void  gc_scavenge_loop(GCThread *gct);
void  gc_add_root(Value *root);
void  gc_for_each_root(void (*f)(Value *root, void *env), void *env);
void  sanity_check(SanityWhen when);

#endif
