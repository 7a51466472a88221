/* The collector's roots: see roots.h. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include "sm/roots.h"
#include "base/util.h"

static Value **global_roots;
static size_t n_global_roots, cap_global_roots;
/* Mutators on any capability may add roots (the Scheme layer does, for its compiled code);
 * a GC reads the table only with the world stopped, when no mutator holds this lock. */
static pthread_mutex_t roots_mu = PTHREAD_MUTEX_INITIALIZER;

void gc_add_root(Value *root)
{
    pthread_mutex_lock(&roots_mu);
    if (n_global_roots == cap_global_roots) {
        cap_global_roots = cap_global_roots ? 2 * cap_global_roots : 64;
        global_roots = realloc(global_roots, cap_global_roots * sizeof *global_roots);
        if (!global_roots) base_fatal("out of memory (roots)");
    }
    global_roots[n_global_roots++] = root;
    pthread_mutex_unlock(&roots_mu);
}

void rts_add_root(Value *root) { gc_add_root(root); }

static GcClient client;

void gc_set_client(const GcClient *c) { client = *c; }
unsigned gc_thread_cap(Value t) { return client.thread_cap ? client.thread_cap(t) : UINT_MAX; }

void gc_client_after_gc(void)
{
    if (client.after_gc)
        client.after_gc();
}

void gc_for_each_cap_root(SmCap *c, GcRootFn f, void *env)
{
    if (client.cap_roots)
        client.cap_roots(c->no, f, env);
    for (unsigned k = 0; k < c->nsave; k++)
        f(&c->save[k], env);
}

void gc_for_each_global_root(GcRootFn f, void *env)
{
    for (size_t i = 0; i < n_global_roots; i++)
        f(global_roots[i], env);
}

void gc_for_each_root(GcRootFn f, void *env)
{
    for (unsigned i = 0; i < sm_n_caps; i++)
        gc_for_each_cap_root(sm_caps[i], f, env);
    gc_for_each_global_root(f, env);
}
