/* Live data on one capability (seed 000's ghc --make pattern): a "keeper" thread on
 * capability 0 builds and keeps a large live structure, replacing part of it step by step,
 * while a "churner" thread on capability 1 allocates only short-lived garbage. Run at -N2 with
 * -s: the parallel GC's work balance and the time to stop the world are what it is for. In the
 * baseline a minor GC shares no work (each GC thread copies only what its own capability's
 * roots reach), so the keeper's GC thread copies everything young and the churner's nothing;
 * major GCs steal work.
 *
 * usage: skewed_live [live_mb [steps [trees]]]     (defaults 48, 128, 16; plain counts)
 *
 * The keeper holds `trees` binary trees in a vector, together about live_mb MiB (each tree has
 * 2^d leaves: a leaf is a 2-field vector (3 words), an inner node a pair (3 words), so about
 * 48 bytes per leaf; d is the largest that keeps the total within live_mb). It first builds
 * all of them, then replaces one per step, round robin, for `steps` steps: each step
 * allocates one tree, which survives its minor GCs (and is promoted), and drops the oldest, so
 * the old generation grows and major GCs run about every `trees` steps (-F2). Trees are built
 * bottom up in a work vector (a large object) so no Value lives in a C local across an
 * allocation. Every tree is checked (leaf count and sum) when it is built and at the end.
 * The churner runs simple_alloc's loop (a list of three small vectors, 144 bytes, dropped)
 * until the keeper is done.
 *
 * Prints (bench.h conventions) the elapsed time of the keeper's work, the process CPU time,
 * the churner's allocation, GCs, GC pauses and bytes copied (rts_get_stats deltas). The work
 * balance and stop-the-world times are in the -s summary. Exits 1 if a check failed. */
#include "bench.h"

enum { LEAF_BYTES = 6 * sizeof(Value), CHUNK = 4096 };

static unsigned long long live_mb = 48, n_steps = 128, n_trees = 16;
static unsigned depth;                 /* each tree has 2^depth leaves */
static long bad;
static int keeper_done;                /* atomic: the churner stops when set */
static uint64_t churn_iters;



static void fail(const char *what)
{
    __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "skewed_live: %s\n", what);
}

/* --- the keeper ------------------------------------------------------------------------- */

enum { K_TREES, K_WORK, K_STEP, K_NSLOTS };

/* Leaf i of the tree built at step s holds s * 2^depth + i in both fields. */
static intptr_t leaf_value(uint64_t step, size_t i) { return (intptr_t)((step << depth) + i); }

static void tree_sum(Value t, unsigned d, uint64_t *leaves, uint64_t *sum)
{
    if (d == 0) {
        if (!rts_is_ptr(t) || obj_type(t) != T_VECTOR || rts_vector_length(t) != 2
            || rts_field(t, 0) != rts_field(t, 1) || !rts_is_fixnum(rts_field(t, 0))) {
            *leaves += 1u << 30;           /* spoils the count */
            return;
        }
        *leaves += 1;
        *sum += (uint64_t)rts_fixnum_val(rts_field(t, 0));
        return;
    }
    if (!rts_is_ptr(t) || obj_type(t) != T_PAIR) {
        *leaves += 1u << 30;
        return;
    }
    tree_sum(rts_car(t), d - 1, leaves, sum);
    tree_sum(rts_cdr(t), d - 1, leaves, sum);
}

static void check_tree(Value t, uint64_t step)
{
    uint64_t leaves = 0, sum = 0, n = 1ull << depth;
    tree_sum(t, depth, &leaves, &sum);
    if (leaves != n || sum != n * (step << depth) + n * (n - 1) / 2)
        fail("a tree is wrong");
}

/* Builds the tree of `step` into the keeper's work vector and returns its root (valid until
 * the next allocation). */
static Value build_tree(RtsCap *cap, uint64_t step)
{
    size_t n = (size_t)1 << depth;
    for (size_t i = 0; i < n; i++) {
        Value leaf = rts_make_vector(cap, 2, rts_fixnum(leaf_value(step, i)));
        rts_set_field(cap, rts_slot(cap, K_WORK), i, leaf);
    }
    for (size_t width = n; width > 1; width /= 2)
        for (size_t j = 0; j < width / 2; j++) {
            Value w = rts_slot(cap, K_WORK);
            Value node = rts_cons(cap, rts_field(w, 2 * j), rts_field(w, 2 * j + 1));
            rts_set_field(cap, rts_slot(cap, K_WORK), j, node);
        }
    return rts_field(rts_slot(cap, K_WORK), 0);
}

static RtsStep keeper(RtsCap *cap)
{
    if (rts_slot(cap, K_TREES) == RTS_FALSE) {
        rts_set_slot(cap, K_TREES, rts_make_vector(cap, (size_t)n_trees, RTS_FALSE));
        rts_set_slot(cap, K_WORK, rts_make_vector(cap, (size_t)1 << depth, RTS_FALSE));
        rts_set_slot(cap, K_STEP, rts_fixnum(0));
    }
    uint64_t step = (uint64_t)rts_fixnum_val(rts_slot(cap, K_STEP));
    uint64_t total = n_trees + n_steps;
    if (step < total) {
        Value root = build_tree(cap, step);
        check_tree(root, step);
        rts_set_field(cap, rts_slot(cap, K_TREES), (size_t)(step % n_trees), root);
        rts_set_slot(cap, K_STEP, rts_fixnum((intptr_t)step + 1));
        return RTS_NEXT;
    }
    /* Done: tree k was last built at the largest step < total that is k mod n_trees. */
    for (uint64_t k = 0; k < n_trees; k++) {
        uint64_t s = total - 1 - ((total - 1 - k) % n_trees);
        check_tree(rts_field(rts_slot(cap, K_TREES), (size_t)k), s);
    }
    __atomic_store_n(&keeper_done, 1, __ATOMIC_RELEASE);
    rts_set_slot(cap, K_TREES, RTS_FALSE);
    rts_set_slot(cap, K_WORK, RTS_FALSE);
    rts_set_result(cap, rts_fixnum(rts_cap_no(cap)));
    return RTS_FINISH;
}

/* --- the churner ------------------------------------------------------------------------- */

enum { C_LIST, C_NSLOTS };

static RtsStep churner(RtsCap *cap)
{
    for (int i = 0; i < CHUNK; i++) {
        rts_set_slot(cap, C_LIST, RTS_NIL);
        for (intptr_t k = 1; k <= 3; k++) {
            Value v = rts_make_vector(cap, (size_t)k, rts_fixnum(k));
            rts_set_slot(cap, C_LIST, rts_cons(cap, v, rts_slot(cap, C_LIST)));
        }
    }
    churn_iters += CHUNK;
    Value l = rts_slot(cap, C_LIST);
    for (intptr_t k = 3; k >= 1; k--, l = rts_cdr(l))
        if (!rts_is_ptr(l) || obj_type(l) != T_PAIR || rts_vector_length(rts_car(l)) != (size_t)k) {
            fail("a churner list is wrong");
            break;
        }
    if (!__atomic_load_n(&keeper_done, __ATOMIC_ACQUIRE))
        return RTS_NEXT;
    rts_set_slot(cap, C_LIST, RTS_FALSE);
    rts_set_result(cap, rts_fixnum(rts_cap_no(cap)));
    return RTS_FINISH;
}

/* --- main -------------------------------------------------------------------------------- */

enum { M_K, M_C, M_PC, M_NSLOTS };

static uint64_t t0, c0;
static RtsStats s0;

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    if (pc == 0) {
        bench_info_u("caps", rts_n_caps());
        bench_info_u("tree_leaves", 1ull << depth);
        bench_info_u("trees", n_trees);
        bench_info_u("live_bytes", (unsigned long long)(n_trees << depth) * LEAF_BYTES);
        bench_info_u("steps", n_steps);
        rts_gc(cap, true);
        rts_get_stats(&s0);
        c0 = bench_cpu_ns();
        t0 = bench_now_ns();
        Value k = rts_thread_new(cap, keeper, K_NSLOTS);
        rts_set_slot(cap, M_K, k);
        rts_thread_start_on(cap, k, 0);
        Value c = rts_thread_new(cap, churner, C_NSLOTS);
        rts_set_slot(cap, M_C, c);
        rts_thread_start_on(cap, c, 1);
        rts_set_slot(cap, M_PC, rts_fixnum(pc = 1));
    }
    if (pc == 1) {
        if (!rts_thread_join(cap, rts_slot(cap, M_K)))
            return RTS_BLOCK;
        bench_info_u("keeper_cap", (unsigned long long)rts_fixnum_val(rts_result(cap)));
        rts_set_slot(cap, M_PC, rts_fixnum(pc = 2));
    }
    if (!rts_thread_join(cap, rts_slot(cap, M_C)))
        return RTS_BLOCK;
    bench_info_u("churner_cap", (unsigned long long)rts_fixnum_val(rts_result(cap)));
    if (rts_thread_killed(rts_slot(cap, M_K)) || rts_thread_killed(rts_slot(cap, M_C)))
        fail("a thread was killed");
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
    RtsStats s1;
    rts_get_stats(&s1);
    bench_metric("skewed_live_elapsed", (double)(t1 - t0) / 1e6, "ms");
    bench_metric("skewed_live_cpu", (double)(c1 - c0) / 1e6, "ms");
    bench_metric("skewed_live_churn", (double)churn_iters * 144 / 1e6, "MB");
    bench_metric("skewed_live_bytes", (double)(s1.bytes_allocated - s0.bytes_allocated), "bytes");
    bench_metric("skewed_live_copied", (double)(s1.bytes_copied - s0.bytes_copied), "bytes");
    bench_metric("skewed_live_minor_gcs", (double)(s1.minor_gcs - s0.minor_gcs), "GCs");
    bench_metric("skewed_live_major_gcs", (double)(s1.major_gcs - s0.major_gcs), "GCs");
    bench_metric("skewed_live_minor_pause", (double)(s1.minor_gc_ns - s0.minor_gc_ns) / 1e6, "ms");
    bench_metric("skewed_live_major_pause", (double)(s1.major_gc_ns - s0.major_gc_ns) / 1e6, "ms");
    bench_metric("skewed_live_max_pause", (double)s1.max_pause_ns / 1e6, "ms");
    bench_info_u("max_live_bytes", (unsigned long long)s1.max_live_bytes);
    bench_info_u("bad", (unsigned long long)bad);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    live_mb = bench_count(argc, argv, 1, live_mb);
    n_steps = bench_count(argc, argv, 2, n_steps);
    n_trees = bench_count(argc, argv, 3, n_trees);
    uint64_t leaves = (live_mb << 20) / n_trees / LEAF_BYTES;
    if (leaves < 2) {
        fprintf(stderr, "skewed_live: %llu MiB is too little for %llu trees\n", live_mb, n_trees);
        return 2;
    }
    while ((2ull << depth) <= leaves)
        depth++;
    rts_run_main(main_code, M_NSLOTS);
    rts_exit(bad ? 1 : 0);
}
