/* The collector's roots: the client's (the layer above's, through GcClient) and the
 * registered global roots. Read by the GC threads (gc.c), the copying code (evac.c, for a
 * thread's capability) and the sanity checker (sanity.c), none of which need the others.
 *
 * Note [GC roots from above]
 * The scheduler's state (threads, run queues, the language's local roots) lies in the layer
 * above; it hands the GC its roots through a GcClient that the start-up layer registers, as
 * GHC's storage manager calls markCapabilities.
 */
#ifndef RTS_SM_ROOTS_H
#define RTS_SM_ROOTS_H

#include "sm/storage.h"

typedef void (*GcRootFn)(Value *root, void *env);

typedef struct GcClient {
    /* Applies f to every root slot that capability `no` holds outside the heap. */
    void (*cap_roots)(unsigned no, GcRootFn f, void *env);
    /* Runs with the world still stopped after the GC: the capabilities' running threads
     * will write their TSO and stack, which may be old now (Note [Dirty stacks]). */
    void (*after_gc)(void);
    /* The capability that runs thread t (a T_THREAD object being copied or scanned: only
     * its fields are read), for Note [To-space by capability] in gcthread.h; UINT_MAX when
     * none. */
    unsigned (*thread_cap)(Value t);
} GcClient;

/* At start-up, before any GC. */
void  gc_set_client(const GcClient *client);
/* The client's thread_cap (UINT_MAX without one). On a GC thread, the world stopped. */
unsigned gc_thread_cap(Value t);
/* The client's after_gc, if any. The leader, the world stopped. */
void  gc_client_after_gc(void);

/* Registers a C global the GC updates (rts_add_root). Any mutator, at any time.
 * Locks held: none on entry; takes the roots' mutex. */
void  gc_add_root(Value *root);
/* The root slots of capability c: what the client gives and the values an allocating call
 * protects (SmCap.save). The world stopped; no lock. */
void  gc_for_each_cap_root(SmCap *c, GcRootFn f, void *env);
/* The registered global roots (the scheduler's main thread among them). The world stopped
 * (no mutator then holds the roots' mutex, so none is taken). */
void  gc_for_each_global_root(GcRootFn f, void *env);
/* Every root slot outside the heap: every capability's, then the globals. (Remembered sets
 * are the driver's, gc.c.) The sanity checker walks them; the GC threads share them out
 * (gc_thread_work in gc.c). The world stopped. */
void  gc_for_each_root(GcRootFn f, void *env);

#endif
