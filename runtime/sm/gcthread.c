/* Per-GC-thread state: see gcthread.h. */
#include <stdlib.h>
#include <string.h>
#include "sm/gcthread.h"
#include "base/util.h"

GCThread **gc_threads;
unsigned n_gc_threads;
struct GcBusyLine gc_busy_line;

void gc_init(unsigned n_caps)
{
    gc_threads = calloc(n_caps, sizeof *gc_threads);
    if (!gc_threads) rts_fatal("out of memory (GC threads)");
}

void gc_thread_init(SmCap *cap)
{
    GCThread *gct = aligned_alloc(RTS_CACHE_LINE, sizeof *gct);
    if (!gct) rts_fatal("out of memory (GC thread)");
    memset(gct, 0, sizeof *gct);
    gct->cap = cap;
    wsdeque_init(&gct->deque, 1024);
    cap->gct = gct;
}
