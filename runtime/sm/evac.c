/* Evacuation and scavenging: copying live objects into a GC thread's to-space and scanning
 * them (Cheney). See Note [To-space] and Note [Racing for an object] in gc.h.
 * Entry points run on a GC thread with the world stopped; they take no lock: to-space blocks
 * come from gc_alloc_block, which holds sm_lock. */
#include <string.h>
#include "sm/gc.h"
#include "sched/thread.h"
#include "rts/rts.h"
#include "sync/spinlock.h"

static bdescr *new_todo_block(GCThread *gct)
{
    bdescr *bd = blk_alloc();
    if (!bd) sm_heap_overflow();
    bd->gen = 1;
    bd->flags = 0;
    bd->scan = bd->start;
    bd->link = NULL;
    if (gct->copied_tl) gct->copied_tl->link = bd; else gct->copied_hd = bd;
    gct->copied_tl = bd;
    if (!gct->scan_bd) gct->scan_bd = bd;
    gct->n_copied_blocks++;
    return bd;
}

static inline Value *gct_alloc(GCThread *gct, size_t words)
{
    bdescr *bd = gct->copied_tl;
    size_t bytes = words * sizeof(Value);
    if (!bd || bd->free + bytes > bd->start + BLOCK_SIZE)
        bd = new_todo_block(gct);
    Value *p = (Value *)bd->free;
    bd->free += bytes;
    return p;
}

static void evacuate_large(GCThread *gct, bdescr *bd)
{
    uint16_t old = __atomic_fetch_or(&bd->flags, (uint16_t)BF_EVACUATED, __ATOMIC_ACQ_REL);
    if (old & BF_EVACUATED)
        return;
    bd->prev = gct->large_pending;
    gct->large_pending = bd;
}

Value gc_evacuate(GCThread *gct, Value v)
{
    if (!rts_is_ptr(v))
        return v;
    Value *p = obj_ptr(v);
    bdescr *bd = bdescr_of(p);
    if (!(bd->flags & BF_FROM))
        return v;
    if (bd->flags & BF_LARGE) {
        evacuate_large(gct, bd);
        return v;
    }
    Value h = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    for (;;) {
        if (!hdr_is_header(h)) {
            if (h != OBJ_BUSY)
                return h;                       /* already forwarded */
            cpu_relax();
            h = __atomic_load_n(p, __ATOMIC_ACQUIRE);
            continue;
        }
        if (__atomic_compare_exchange_n(p, &h, OBJ_BUSY, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
            break;
    }
    size_t words = hdr_size(h) + 1;
    Value *to = gct_alloc(gct, words);
    to[0] = h & ~OBJ_DIRTY;
    memcpy(to + 1, p + 1, (words - 1) * sizeof(Value));
    gct->copied_words += words;
    __atomic_store_n(p, (Value)to, __ATOMIC_RELEASE);
    return (Value)to;
}

static inline void evac_range(GCThread *gct, Value *from, Value *to)
{
    for (Value *q = from; q < to; q++)
        if (rts_is_ptr(*q))
            *q = gc_evacuate(gct, *q);
}

void gc_scavenge_object(GCThread *gct, Value obj)
{
    Value h = obj_header(obj);
    Value *pl = obj_payload(obj);
    switch (obj_type_layout(hdr_type(h))) {
    case LAYOUT_PTRS:
        evac_range(gct, pl, pl + hdr_size(h));
        break;
    case LAYOUT_RAW:
        break;
    case LAYOUT_STACK:
        evac_range(gct, pl + STACK_SLOTS, pl + STACK_SLOTS + stack_sp(obj));
        break;
    }
}

/* Scans to-space until no copied object and no evacuated large object is left unscanned. */
void gc_scavenge_loop(GCThread *gct)
{
    for (;;) {
        bool did = false;
        for (bdescr *bd = gct->scan_bd; bd; bd = bd->link) {
            gct->scan_bd = bd;
            while (bd->scan < bd->free) {
                Value obj = (Value)bd->scan;
                bd->scan += (hdr_size(obj_header(obj)) + 1) * sizeof(Value);
                gc_scavenge_object(gct, obj);
                did = true;
            }
        }
        while (gct->large_pending) {
            bdescr *bd = gct->large_pending;
            gct->large_pending = bd->prev;
            bd->prev = NULL;
            gc_scavenge_object(gct, (Value)bd->start);
            did = true;
        }
        if (!did)
            return;
    }
}
