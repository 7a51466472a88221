/* Per-GC-thread state: see gcthread.h. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include "sm/gcthread.h"
#include "base/util.h"

GCThread **gc_threads;
unsigned gc_n_threads;
unsigned gc_n_dests;

/* A closure's fields are set only as it is made (letrec's SETFREE): set! boxes. A symbol (a
 * global variable) is read at every reference and written only by define and set!. */
const uint8_t gc_type_class[T_NTYPES] = {
    [T_CLOSURE] = GC_READ_MOSTLY, [T_FLONUM] = GC_READ_MOSTLY, [T_CODE] = GC_READ_MOSTLY,
    [T_SYMBOL] = GC_READ_MOSTLY | GC_OWN_DEST, [T_THREAD] = GC_OWN_DEST,
};
struct GcBusyLine gc_busy_line;

void gc_init(unsigned n_caps)
{
    gc_threads = calloc(n_caps, sizeof *gc_threads);
    if (!gc_threads) base_fatal("out of memory (GC threads)");
    gc_n_dests = n_caps + 1;                /* GC_DEST_SHARED last */
}

void gc_thread_init(SmCap *cap)
{
    GCThread *gct = aligned_alloc(RTS_CACHE_LINE, sizeof *gct);
    if (!gct) base_fatal("out of memory (GC thread)");
    memset(gct, 0, sizeof *gct);
    gct->cap = cap;
    /* Read at every copy, written at every new block, by the owner only: lines of their own
     * (Note [To-space by capability], and Layout above). */
    size_t bytes = (GC_TODO_SLOTS * sizeof(bdescr *) + RTS_CACHE_LINE - 1)
                   / RTS_CACHE_LINE * RTS_CACHE_LINE;
    gct->todo = aligned_alloc(RTS_CACHE_LINE, bytes);
    gct->aged_todo = aligned_alloc(RTS_CACHE_LINE, bytes);
    if (!gct->todo || !gct->aged_todo) base_fatal("out of memory (GC thread)");
    memset(gct->todo, 0, bytes);
    memset(gct->aged_todo, 0, bytes);
    gct->dest = cap->no;
    wsdeque_init(&gct->deque, 1024);
    cap->gct = gct;
}

/* Note [Out of memory in a GC] in gcthread.h. */
static size_t gc_refused;                    /* atomic; 0 when none */
__thread jmp_buf *gc_abort_point;

void gc_out_of_memory(GCThread *gct, size_t refused)
{
    size_t none = 0;
    __atomic_compare_exchange_n(&gc_refused, &none, refused ? refused : 1, false,
                                __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    if (gct->steal)
        __atomic_fetch_sub(&gc_busy, 1, __ATOMIC_ACQ_REL);
    longjmp(*gc_abort_point, 1);
}

size_t gc_refused_bytes(void)
{
    return __atomic_load_n(&gc_refused, __ATOMIC_ACQUIRE);
}
