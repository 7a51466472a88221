/* GC stress through the C API: a random object graph, mutated (so old objects come to
 * point at young ones), kept alive through stack roots and MVars, with large objects and
 * raw objects, checked against a C-side mirror after every step. Then worker threads pass
 * a shared list through an MVar while each builds and checks a private tree.
 *
 * usage: gc_stress [steps [seed [workers [iterations]]]]
 * Prints "ok" and a checksum of the final graph (the same for every -A and -N). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab.h"

enum { NROOTS = 128, NMVARS = 8, MAXF = 7, LARGE_FIELDS = 700 };
enum { K_VEC, K_RAW };

typedef struct { int kind, n; int *f; } MNode;   /* f[i]: id of field i+1's target, 0 = #f */

static MNode *mirror;
static int n_nodes = 1, cap_nodes;
static int root_id[NROOTS], mvar_id[NMVARS];
static long steps = 4000, seed = 1, n_workers = 8, iterations = 200;
static unsigned long rng_state;
static unsigned *seen;
static unsigned epoch;
static int failures;

static unsigned long rnd(void)
{
    rng_state = rng_state * 6364136223846793005ul + 1442695040888963407ul;
    return rng_state >> 33;
}

static void fail(const char *what, int id)
{
    fprintf(stderr, "gc_stress: mismatch: %s (node %d)\n", what, id);
    if (++failures > 10) exit(2);
}

static int new_mirror(int kind, int n)
{
    if (n_nodes >= cap_nodes) {
        cap_nodes = cap_nodes ? 2 * cap_nodes : 4096;
        mirror = realloc(mirror, cap_nodes * sizeof *mirror);
    }
    mirror[n_nodes].kind = kind;
    mirror[n_nodes].n = n;
    mirror[n_nodes].f = kind == K_VEC ? calloc(n, sizeof(int)) : NULL;
    return n_nodes++;
}

static uint8_t raw_byte(int id, size_t k) { return (uint8_t)(id * 31 + k * 7); }

/* Main frame slots. */
enum { S_ROOTS, S_MVARS, S_STEP, S_TMP, S_WORKERS, S_LIST, S_PC, S_NSLOTS };

static Value root_get(RtsCap *cap, int i) { return rts_field(rts_slot(cap, S_ROOTS), i); }
static void root_set(RtsCap *cap, int i, Value v) { rts_set_field(cap, rts_slot(cap, S_ROOTS), i, v); }

/* Checks the heap graph from v against the mirror node id; returns a checksum. */
static unsigned long check_graph(Value v, int id)
{
    unsigned long sum = 0;
    static Value *stack_v;
    static int *stack_id;
    static size_t stack_cap;
    size_t sp = 0;
    if (!stack_cap) {
        stack_cap = 1024;
        stack_v = malloc(stack_cap * sizeof *stack_v);
        stack_id = malloc(stack_cap * sizeof *stack_id);
    }
    stack_v[sp] = v; stack_id[sp++] = id;
    while (sp) {
        v = stack_v[--sp]; id = stack_id[sp];
        if (id == 0) {
            if (v != RTS_FALSE) fail("expected #f", 0);
            continue;
        }
        if (!rts_is_ptr(v)) { fail("expected a pointer", id); continue; }
        if (seen[id] == epoch) continue;
        seen[id] = epoch;
        MNode *m = &mirror[id];
        sum = sum * 1000003 + (unsigned long)id;
        if (m->kind == K_RAW) {
            if (obj_type(v) != T_BYTEVECTOR || raw_len(v) != (size_t)m->n) { fail("raw object", id); continue; }
            for (size_t k = 0; k < (size_t)m->n; k++)
                if (raw_bytes(v)[k] != raw_byte(id, k)) { fail("raw bytes", id); break; }
            continue;
        }
        if (obj_type(v) != T_VECTOR || rts_vector_length(v) != (size_t)m->n + 1) { fail("vector shape", id); continue; }
        if (rts_field(v, 0) != rts_fixnum(id)) { fail("vector id", id); continue; }
        for (int k = 0; k < m->n; k++) {
            if (sp == stack_cap) {
                stack_cap *= 2;
                stack_v = realloc(stack_v, stack_cap * sizeof *stack_v);
                stack_id = realloc(stack_id, stack_cap * sizeof *stack_id);
            }
            stack_v[sp] = rts_field(v, (size_t)k + 1);
            stack_id[sp++] = m->f[k];
        }
    }
    return sum;
}

static unsigned long check_all(RtsCap *cap)
{
    epoch++;
    unsigned long sum = 0;
    for (int i = 0; i < NROOTS; i++)
        sum = sum * 31 + check_graph(root_get(cap, i), root_id[i]);
    Value mvs = rts_slot(cap, S_MVARS);
    for (int i = 0; i < NMVARS; i++) {
        Value out;
        if (rts_mvar_try_take(cap, rts_field(mvs, i), &out)) {   /* look, then put back */
            sum = sum * 31 + check_graph(out, mvar_id[i]);
            rts_mvar_try_put(cap, rts_field(mvs, i), out);
        } else if (mvar_id[i] >= 0) {
            fail("mvar unexpectedly empty", mvar_id[i]);
        }
    }
    return sum;
}

static void op_alloc_vector(RtsCap *cap, int slot, int nfields)
{
    int id = new_mirror(K_VEC, nfields);
    Value v = rts_make_vector(cap, (size_t)nfields + 1, RTS_FALSE);
    rts_set_field(cap, v, 0, rts_fixnum(id));
    for (int k = 0; k < nfields; k++) {
        int src = (int)(rnd() % NROOTS);
        if (rnd() % 4 == 0) continue;
        rts_set_field(cap, v, (size_t)k + 1, root_get(cap, src));
        mirror[id].f[k] = root_id[src];
    }
    root_set(cap, slot, v);
    root_id[slot] = id;
}

static void op_alloc_raw(RtsCap *cap, int slot, size_t len)
{
    int id = new_mirror(K_RAW, (int)len);
    Value r = rts_make_raw(cap, T_BYTEVECTOR, len);
    for (size_t k = 0; k < len; k++)
        raw_bytes(r)[k] = raw_byte(id, k);
    root_set(cap, slot, r);
    root_id[slot] = id;
}

static void op_mutate(RtsCap *cap)
{
    int a = (int)(rnd() % NROOTS), b = (int)(rnd() % NROOTS);
    int ida = root_id[a];
    if (!ida || mirror[ida].kind != K_VEC) return;
    int k = (int)(rnd() % mirror[ida].n);
    rts_set_field(cap, root_get(cap, a), (size_t)k + 1, root_get(cap, b));
    mirror[ida].f[k] = root_id[b];
}

/* Garbage: a 20-element list dropped at once. Each cons protects the list it is given, so
 * the list needs no slot between allocations. */
static void op_garbage(RtsCap *cap)
{
    Value l = RTS_NIL;
    for (int i = 0; i < 20; i++)
        l = rts_cons(cap, rts_fixnum(i), l);
}

static void op_mvar(RtsCap *cap)
{
    int m = (int)(rnd() % NMVARS), slot = (int)(rnd() % NROOTS);
    Value mv = rts_field(rts_slot(cap, S_MVARS), m), out;
    if (mvar_id[m] < 0) {                  /* empty: stash a root there and drop it */
        if (!rts_mvar_try_put(cap, mv, root_get(cap, slot))) fail("put to an empty mvar", 0);
        mvar_id[m] = root_id[slot];
        root_set(cap, slot, RTS_FALSE);
        root_id[slot] = 0;
    } else {
        if (!rts_mvar_try_take(cap, mv, &out)) fail("take from a full mvar", 0);
        root_set(cap, slot, out);
        root_id[slot] = mvar_id[m];
        mvar_id[m] = -1;
    }
}

static void random_step(RtsCap *cap)
{
    unsigned long r = rnd() % 100;
    int slot = (int)(rnd() % NROOTS);
    if (r < 35)       op_alloc_vector(cap, slot, 1 + (int)(rnd() % MAXF));
    else if (r < 40)  op_alloc_raw(cap, slot, 1 + rnd() % 64);
    else if (r < 41)  op_alloc_vector(cap, slot, LARGE_FIELDS);          /* a large object */
    else if (r < 42)  op_alloc_raw(cap, slot, 5000 + rnd() % 20000);      /* a large raw one */
    else if (r < 70)  op_mutate(cap);
    else if (r < 80)  { root_set(cap, slot, RTS_FALSE); root_id[slot] = 0; }
    else if (r < 90)  op_garbage(cap);
    else              op_mvar(cap);
}

/* --- workers -------------------------------------------------------------------------- */

enum { W_ID, W_I, W_TREE, W_HOLD, W_WAITING, W_SHARED, W_COMMON, W_NSLOTS };
enum { NCOMMON = 64 };

/* Every worker also holds the same vector of NCOMMON lists (list k = k, k-1, ..., 0), and
 * reads it as it goes: GC threads of different capabilities race to evacuate it. */
static void check_common(Value common, long w)
{
    for (int k = 0; k < NCOMMON; k++) {
        Value l = rts_field(common, (size_t)k);
        for (intptr_t x = k; x >= 0; x--, l = rts_cdr(l))
            if (!rts_is_ptr(l) || rts_car(l) != rts_fixnum(x)) {
                fail("common vector", (int)w);
                return;
            }
    }
}

/* Each iteration takes the shared list from its MVar, conses (w . i) onto it and puts it
 * back, and conses (i . bytevector) onto a private list kept in its frame. */
static RtsStep worker(RtsCap *cap)
{
    for (;;) {
        intptr_t i = rts_fixnum_val(rts_slot(cap, W_I));
        intptr_t w = rts_fixnum_val(rts_slot(cap, W_ID));
        if (i % 50 == 0)
            check_common(rts_slot(cap, W_COMMON), w);
        if (i == iterations) {
            Value l = rts_slot(cap, W_TREE);
            for (intptr_t k = iterations - 1; k >= 0; k--, l = rts_cdr(l)) {
                Value item = rts_car(l);
                if (rts_car(item) != rts_fixnum(k) || raw_len(rts_cdr(item)) != 16
                    || raw_bytes(rts_cdr(item))[3] != (uint8_t)(w + k))
                    fail("worker private list", (int)w);
            }
            rts_set_result(cap, rts_fixnum(w));
            return RTS_FINISH;
        }
        Value list;
        if (rts_slot(cap, W_WAITING) == RTS_FALSE) {
            if (!rts_mvar_take(cap, rts_slot(cap, W_SHARED), &list)) {
                rts_set_slot(cap, W_WAITING, RTS_TRUE);
                return RTS_BLOCK;          /* resumes with the list in the result register */
            }
        } else {
            list = rts_result(cap);
            rts_set_slot(cap, W_WAITING, RTS_FALSE);
        }
        rts_set_slot(cap, W_HOLD, list);
        Value node = rts_cons(cap, rts_fixnum(w), rts_fixnum(i));
        rts_set_slot(cap, W_HOLD, rts_cons(cap, node, rts_slot(cap, W_HOLD)));
        if (!rts_mvar_put(cap, rts_slot(cap, W_SHARED), rts_slot(cap, W_HOLD)))
            fail("put after take blocked", (int)w);
        rts_set_slot(cap, W_HOLD, RTS_FALSE);
        Value raw = rts_make_raw(cap, T_BYTEVECTOR, 16);
        raw_bytes(raw)[3] = (uint8_t)(w + i);
        Value item = rts_cons(cap, rts_fixnum(i), raw);
        rts_set_slot(cap, W_TREE, rts_cons(cap, item, rts_slot(cap, W_TREE)));
        rts_set_slot(cap, W_I, rts_fixnum(i + 1));
        op_garbage(cap);
        if (i % 3 == 0)
            return RTS_YIELD;
    }
}

static void check_shared_list(Value l)
{
    long *last = malloc((size_t)n_workers * sizeof *last);
    for (long w = 0; w < n_workers; w++) last[w] = iterations;
    long n = 0;
    for (; l != RTS_NIL; l = rts_cdr(l), n++) {
        long w = rts_fixnum_val(rts_car(rts_car(l))), i = rts_fixnum_val(rts_cdr(rts_car(l)));
        if (w < 0 || w >= n_workers || i != last[w] - 1) { fail("shared list order", (int)w); break; }
        last[w] = i;
    }
    if (n != n_workers * iterations) fail("shared list length", (int)n);
    free(last);
}

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, S_PC);               /* #f on the first call */
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    switch (pc) {
    case 0:
        rts_set_slot(cap, S_ROOTS, rts_make_vector(cap, NROOTS, RTS_FALSE));
        rts_set_slot(cap, S_MVARS, rts_make_vector(cap, NMVARS, RTS_FALSE));
        for (int i = 0; i < NMVARS; i++) {
            Value mv = rts_new_mvar(cap);
            rts_set_field(cap, rts_slot(cap, S_MVARS), (size_t)i, mv);
            mvar_id[i] = -1;
        }
        rts_set_slot(cap, S_STEP, rts_fixnum(0));
        rts_set_slot(cap, S_PC, rts_fixnum(1));
        return RTS_NEXT;
    case 1: {                            /* the random graph, 50 steps per safe point */
        intptr_t s = rts_fixnum_val(rts_slot(cap, S_STEP));
        for (int k = 0; k < 50 && s < steps; k++, s++) {
            random_step(cap);
            check_all(cap);
        }
        rts_set_slot(cap, S_STEP, rts_fixnum(s));
        if (s < steps) return RTS_NEXT;
        rts_gc(cap, true);
        unsigned long sum = check_all(cap);
        printf("graph ok: %ld steps, %d nodes made, checksum %lu\n", steps, n_nodes - 1, sum);
        rts_set_slot(cap, S_PC, rts_fixnum(2));
        return RTS_NEXT;
    }
    case 2: {                            /* fork the workers around one shared MVar */
        Value mv = rts_new_mvar(cap);
        rts_set_slot(cap, S_LIST, mv);
        rts_mvar_try_put(cap, mv, RTS_NIL);
        rts_set_slot(cap, S_TMP, rts_make_vector(cap, NCOMMON, RTS_NIL));
        for (int k = 0; k < NCOMMON; k++) {
            Value l = RTS_NIL;
            for (intptr_t x = 0; x <= k; x++)
                l = rts_cons(cap, rts_fixnum(x), l);
            rts_set_field(cap, rts_slot(cap, S_TMP), (size_t)k, l);
        }
        rts_set_slot(cap, S_WORKERS, rts_make_vector(cap, (size_t)n_workers, RTS_FALSE));
        for (long w = 0; w < n_workers; w++) {
            Value t = rts_thread_new(cap, worker, W_NSLOTS);
            rts_set_field(cap, rts_slot(cap, S_WORKERS), (size_t)w, t);
            rts_thread_set_slot(cap, t, W_ID, rts_fixnum(w));
            rts_thread_set_slot(cap, t, W_I, rts_fixnum(0));
            rts_thread_set_slot(cap, t, W_TREE, RTS_NIL);
            rts_thread_set_slot(cap, t, W_SHARED, rts_slot(cap, S_LIST));
            rts_thread_set_slot(cap, t, W_COMMON, rts_slot(cap, S_TMP));
            rts_thread_start(cap, t);
        }
        rts_set_slot(cap, S_STEP, rts_fixnum(0));
        rts_set_slot(cap, S_PC, rts_fixnum(3));
        return RTS_NEXT;
    }
    case 3: {                            /* join them in order */
        intptr_t j = rts_fixnum_val(rts_slot(cap, S_STEP));
        for (; j < n_workers; j++) {
            rts_set_slot(cap, S_STEP, rts_fixnum(j));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, S_WORKERS), (size_t)j)))
                return RTS_BLOCK;
            if (rts_result(cap) != rts_fixnum(j)) fail("worker result", (int)j);
        }
        Value l;
        if (!rts_mvar_try_take(cap, rts_slot(cap, S_LIST), &l)) fail("shared list missing", 0);
        else check_shared_list(l);
        check_common(rts_slot(cap, S_TMP), -1);
        rts_set_slot(cap, S_TMP, RTS_FALSE);
        unsigned long sum = check_all(cap);
        printf("threads ok: %ld workers x %ld iterations, checksum %lu\n", n_workers, iterations, sum);
        return RTS_FINISH;
    }
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) steps = atol(argv[1]);
    if (argc > 2) seed = atol(argv[2]);
    if (argc > 3) n_workers = atol(argv[3]);
    if (argc > 4) iterations = atol(argv[4]);
    rng_state = (unsigned long)seed;
    seen = calloc((size_t)steps * 2 + 64, sizeof *seen);
    rts_run_main(main_code, S_NSLOTS);
    if (failures) {
        printf("FAILED: %d mismatches\n", failures);
        rts_exit(1);
    }
    printf("ok\n");
    rts_exit(0);
}
