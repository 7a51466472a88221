/* Seed 001's "simple allocator test": W workers allocate small objects in a loop, a fixed
 * TOTAL amount of allocation split evenly over them (so ideally the elapsed time does not
 * grow with W, and falls with W up to the number of cores).
 *
 * usage: simple_alloc [total_mb [workers]]     (defaults 4000, the number of capabilities)
 *   total_mb is a plain count of MiB (no suffix); -N1 takes about 1 s on a 2.4 GHz EPYC core.
 *
 * Worker i is started on capability i (mod -N, like GHC's forkOn). Each iteration builds a
 * short list of three vectors of 1, 2 and 3 fields and drops it: 3 vectors (9 words) + 3
 * pairs (9 words) = 144 bytes. The total is total_mb MiB / 144 iterations, split evenly
 * (the first workers take the remainder). Every 4096 iterations a worker checks the list it
 * just built and returns to the scheduler (a safe point).
 *
 * Prints (bench.h conventions) the elapsed time of the work (clock from before the workers
 * are created to after the last is joined), the process CPU time over the same span, the
 * bytes allocated and the GCs it caused (rts_get_stats deltas), and the total GC pause.
 * Exits 1 if a check failed. */
#include <string.h>
#include "bench.h"

enum { ITER_BYTES = 18 * sizeof(Value), CHUNK = 4096 };

static unsigned long long total_bytes = 4000ull << 20;
static unsigned long long n_workers;             /* 0: one per capability */
static long bad;



/* --- worker ------------------------------------------------------------------------------ */

enum { W_LEFT, W_LIST, W_NSLOTS };

/* One iteration: (#(3 3 3) #(2 2) #(1)) built through the C API, kept only in a frame slot
 * (Note [GC safety in C code]) and dropped by the next iteration. */
static inline void alloc_one(RtsCap *cap)
{
    rts_set_slot(cap, W_LIST, RTS_NIL);
    for (intptr_t k = 1; k <= 3; k++) {
        Value v = rts_make_vector(cap, (size_t)k, rts_fixnum(k));
        rts_set_slot(cap, W_LIST, rts_cons(cap, v, rts_slot(cap, W_LIST)));
    }
}

static void check_list(Value l)
{
    for (intptr_t k = 3; k >= 1; k--, l = rts_cdr(l)) {
        if (!rts_is_ptr(l) || obj_type(l) != T_PAIR) { __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED); return; }
        Value v = rts_car(l);
        if (rts_vector_length(v) != (size_t)k || rts_field(v, (size_t)k - 1) != rts_fixnum(k)) {
            __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    if (l != RTS_NIL)
        __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
}

static RtsStep worker(RtsCap *cap)
{
    intptr_t left = rts_fixnum_val(rts_slot(cap, W_LEFT));
    intptr_t n = left < CHUNK ? left : CHUNK;
    for (intptr_t i = 0; i < n; i++)
        alloc_one(cap);
    if (n > 0)
        check_list(rts_slot(cap, W_LIST));
    left -= n;
    rts_set_slot(cap, W_LEFT, rts_fixnum(left));
    if (left > 0)
        return RTS_NEXT;
    rts_set_slot(cap, W_LIST, RTS_FALSE);
    rts_set_result(cap, rts_fixnum(rts_cap_no(cap)));
    return RTS_FINISH;
}

/* --- main -------------------------------------------------------------------------------- */

enum { M_T, M_I, M_NSLOTS };

static uint64_t t0, c0;
static RtsStats s0;

static RtsStep main_code(RtsCap *cap)
{
    size_t w = (size_t)n_workers;
    if (rts_slot(cap, M_T) == RTS_FALSE) {
        uint64_t iters = total_bytes / ITER_BYTES;
        bench_info_u("workers", w);
        bench_info_u("caps", rts_n_caps());
        bench_info_u("iterations", (unsigned long long)iters);
        bench_info_u("alloc_area", (unsigned long long)rts_options()->alloc_area);
        rts_gc(cap, true);                           /* start from a settled heap */
        rts_get_stats(&s0);
        c0 = bench_cpu_ns();
        t0 = bench_now_ns();
        rts_set_slot(cap, M_T, rts_make_vector(cap, w, RTS_FALSE));
        for (size_t i = 0; i < w; i++) {
            uint64_t mine = iters / w + (i < iters % w ? 1 : 0);
            Value t = rts_thread_new(cap, worker, W_NSLOTS);
            rts_set_field(cap, rts_slot(cap, M_T), i, t);
            rts_thread_set_slot(cap, t, W_LEFT, rts_fixnum((intptr_t)mine));
            rts_thread_start_on(cap, t, (unsigned)i);
        }
        rts_set_slot(cap, M_I, rts_fixnum(0));
    }
    for (intptr_t i = rts_fixnum_val(rts_slot(cap, M_I)); i < (intptr_t)w; i++) {
        rts_set_slot(cap, M_I, rts_fixnum(i));
        if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)i)))
            return RTS_BLOCK;
        if (rts_thread_killed(rts_field(rts_slot(cap, M_T), (size_t)i)))
            bad++;
    }
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
    RtsStats s1;
    rts_get_stats(&s1);
    bench_metric("simple_alloc_elapsed", (double)(t1 - t0) / 1e6, "ms");
    bench_metric("simple_alloc_cpu", (double)(c1 - c0) / 1e6, "ms");
    bench_metric("simple_alloc_bytes", (double)(s1.bytes_allocated - s0.bytes_allocated), "bytes");
    bench_metric("simple_alloc_rate", (double)(s1.bytes_allocated - s0.bytes_allocated) / 1e6
                                      / ((double)(t1 - t0) / 1e9), "MB/s");
    bench_metric("simple_alloc_minor_gcs", (double)(s1.minor_gcs - s0.minor_gcs), "GCs");
    bench_metric("simple_alloc_major_gcs", (double)(s1.major_gcs - s0.major_gcs), "GCs");
    bench_metric("simple_alloc_gc_pause", (double)(s1.gc_ns - s0.gc_ns) / 1e6, "ms");
    bench_info_u("bad", (unsigned long long)bad);
    rts_set_slot(cap, M_T, RTS_FALSE);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    total_bytes = bench_count(argc, argv, 1, 4000) << 20;
    n_workers = bench_count(argc, argv, 2, rts_n_caps());
    rts_run_main(main_code, M_NSLOTS);
    if (bad)
        fprintf(stderr, "simple_alloc: %ld checks failed\n", bad);
    rts_exit(bad ? 1 : 0);
}
