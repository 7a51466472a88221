/* Finalizers: see Note [Finalizers] in finalize.h. */
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include "sm/finalize.h"
#include "base/util.h"

typedef struct {
    Value obj;
    void (*fn)(void *data);
    void *data;
    size_t bytes;                /* C memory and descriptors fn frees (Note [External */
    unsigned fds;                /* resources] in finalize.h) */
} Finalizer;

typedef struct {
    Finalizer *v;
    size_t n, cap;
} FinTable;

static FinTable young, old, to_run;
static pthread_mutex_t fin_mu = PTHREAD_MUTEX_INITIALIZER;   /* young and old, to_run */
static uint64_t n_run;                                       /* atomic */

static void table_add(FinTable *t, Finalizer f)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        Finalizer *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            base_fatal("out of memory (the table of %zu finalizers)", cap);
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = f;
}

/* Note [External resources]: under fin_mu. */
static size_t new_bytes, new_fds;    /* registered since the last GC */
static size_t promoted_bytes, promoted_fds;   /* moved to `old` since the last major GC */

/* The descriptor budget: read once, when first asked (RLIMIT_NOFILE). Locks held: fin_mu. */
static size_t fd_budget(void)
{
    static size_t budget;            /* 0: not read yet */
    if (!budget) {
        struct rlimit rl;
        rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
        if (n == RLIM_INFINITY || n > ((rlim_t)1 << 22))
            n = (rlim_t)1 << 22;
        budget = n / 4 > 16 ? (size_t)(n / 4) : 16;
    }
    return budget;
}

static size_t nursery_bytes(void)
{
    size_t blocks = 0;
    for (unsigned i = 0; i < sm_n_caps; i++)
        blocks += sm_caps[i]->nursery_blocks;
    return blocks * BLOCK_SIZE;
}

void gc_add_finalizer_held(SmCap *cap, Value obj, void (*fn)(void *data), void *data,
                           size_t bytes, unsigned fds)
{
    Finalizer f = { obj, fn, data, bytes, fds };
    pthread_mutex_lock(&fin_mu);
    table_add(bdescr_of(obj_ptr(obj))->gen == 0 ? &young : &old, f);
    new_bytes += bytes;
    new_fds += fds;
    bool due = (fds && new_fds >= fd_budget()) || (bytes && new_bytes >= nursery_bytes());
    pthread_mutex_unlock(&fin_mu);
    if (due && cap) {
        /* At cap's next allocation, as a full nursery would: its heap check fails (the limit
         * at hp, as -DG does) and sm_alloc_slow collects. Not NULL, which the VM takes for
         * a safe point that it passes (restoring the limit) without a GC; nor over a NULL
         * that the timer or a GC leader stored, whose trap must stay. */
        __atomic_store_n(&sm_gc_requested, true, __ATOMIC_RELAXED);
        Value *lim = __atomic_load_n(&cap->hplim, __ATOMIC_RELAXED);
        if (lim)
            __atomic_compare_exchange_n(&cap->hplim, &lim, cap->hp, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
}

void gc_add_finalizer(Value obj, void (*fn)(void *data), void *data)
{
    gc_add_finalizer_held(NULL, obj, fn, data, 0, 0);
}

void rts_add_finalizer(Value obj, void (*fn)(void *data), void *data)
{
    gc_add_finalizer(obj, fn, data);
}

void rts_add_finalizer_held(RtsCap *cap, Value obj, void (*fn)(void *data), void *data,
                            size_t bytes, unsigned fds)
{
    gc_add_finalizer_held(sm_cap(cap), obj, fn, data, bytes, fds);
}

bool gc_external_wants_major(void)
{
    pthread_mutex_lock(&fin_mu);
    bool due = (promoted_fds && promoted_fds >= fd_budget())
        || sm_old_gen.n_blocks + sm_old_gen.n_large_blocks + promoted_bytes / BLOCK_SIZE
           >= sm_old_gen.limit_blocks;
    pthread_mutex_unlock(&fin_mu);
    return due;
}

/* Where obj is after the GC, or 0 if it was unreachable (Note [Finalizers]). */
static Value survivor(Value obj)
{
    Value *p = obj_ptr(obj);
    bdescr *bd = bdescr_of(p);
    uint16_t flags = __atomic_load_n(&bd->flags, __ATOMIC_RELAXED);
    if (!(flags & BF_FROM))
        return obj;
    if (flags & BF_LARGE)
        return flags & BF_EVACUATED ? obj : 0;
    Value h = __atomic_load_n(p, __ATOMIC_ACQUIRE);
    return hdr_is_header(h) ? 0 : h;
}

/* The entries of t: the unreachable to to_run; the others followed, and those that are old
 * now moved to `old` (t itself when t is old). */
static void sweep(FinTable *t)
{
    size_t keep = 0;
    for (size_t i = 0; i < t->n; i++) {
        Finalizer f = t->v[i];
        Value now = survivor(f.obj);
        if (!now) {
            table_add(&to_run, f);
            continue;
        }
        /* Copied: its to-space block's gen says whether it is old or aged (Note [Aging] in
         * storage.h). A large object keeps its group, still marked from-space here, whose
         * gen the sweep of large objects sets after this: it is old now. */
        bdescr *bd = bdescr_of(obj_ptr(now));
        bool is_old = (bd->flags & BF_FROM) || bd->gen != 0;
        f.obj = now;
        if (t == &young && is_old) {
            table_add(&old, f);
            promoted_bytes += f.bytes;
            promoted_fds += f.fds;
        } else
            t->v[keep++] = f;
    }
    t->n = keep;
}

void gc_find_dead_finalized(bool major)
{
    /* The world is stopped, so no mutator is inside gc_add_finalizer (it has no safe point);
     * the lock orders this with the last one's writes. */
    pthread_mutex_lock(&fin_mu);
    if (major) {
        sweep(&old);
        promoted_bytes = promoted_fds = 0;
    }
    sweep(&young);
    new_bytes = new_fds = 0;
    __atomic_store_n(&sm_gc_requested, false, __ATOMIC_RELAXED);   /* this GC answers it */
    pthread_mutex_unlock(&fin_mu);
}

void gc_run_finalizers(void)
{
    pthread_mutex_lock(&fin_mu);
    FinTable mine = to_run;
    to_run = (FinTable){ 0 };
    pthread_mutex_unlock(&fin_mu);
    if (!mine.n)
        return;
    for (size_t i = 0; i < mine.n; i++)
        mine.v[i].fn(mine.v[i].data);
    __atomic_fetch_add(&n_run, mine.n, __ATOMIC_RELAXED);
    free(mine.v);
}

size_t gc_finalizers_pending(void)
{
    pthread_mutex_lock(&fin_mu);
    size_t n = young.n + old.n;
    pthread_mutex_unlock(&fin_mu);
    return n;
}

uint64_t gc_finalizers_run(void) { return __atomic_load_n(&n_run, __ATOMIC_RELAXED); }
