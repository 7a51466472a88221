/* The cost of idle capabilities (seed 001): ONE busy thread allocating a fixed amount while
 * every other capability has nothing to do. Ideally the elapsed and CPU time do not depend on
 * -N; in the baseline every GC wakes every idle capability, which joins both barriers.
 *
 * usage: busy_one [total_mb]     (default 2000; a plain count of MiB, no suffix)
 *
 * The busy thread is started on capability 0 and runs the loop of simple_alloc.c: each
 * iteration builds a list of three vectors of 1, 2 and 3 fields (144 bytes) and drops it;
 * every 4096 iterations it checks the list and returns to the scheduler. The main thread
 * waits in a join meanwhile.
 *
 * Prints (bench.h conventions) the elapsed time (from before the thread is created to after
 * it is joined), the process CPU time (user + system, all OS threads) over the same span, the
 * bytes allocated, the GCs and the total GC pause (rts_get_stats deltas). The number of idle
 * capabilities woken for GC is in the -s summary. Exits 1 if a check failed. */
#include "bench.h"

enum { ITER_BYTES = 18 * sizeof(Value), CHUNK = 4096 };

static unsigned long long total_bytes = 2000ull << 20;
static long bad;



/* --- the busy thread ---------------------------------------------------------------------- */

enum { W_LEFT, W_LIST, W_NSLOTS };

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
        if (!rts_is_ptr(l) || obj_type(l) != T_PAIR) { bad++; return; }
        Value v = rts_car(l);
        if (rts_vector_length(v) != (size_t)k || rts_field(v, (size_t)k - 1) != rts_fixnum(k)) {
            bad++;
            return;
        }
    }
    if (l != RTS_NIL)
        bad++;
}

static RtsStep busy(RtsCap *cap)
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

enum { M_T, M_NSLOTS };

static uint64_t t0, c0;
static RtsStats s0;

static RtsStep main_code(RtsCap *cap)
{
    if (rts_slot(cap, M_T) == RTS_FALSE) {
        uint64_t iters = total_bytes / ITER_BYTES;
        bench_info_u("caps", rts_n_caps());
        bench_info_u("iterations", (unsigned long long)iters);
        bench_info_u("alloc_area", (unsigned long long)rts_options()->alloc_area);
        rts_gc(cap, true);
        rts_get_stats(&s0);
        c0 = bench_cpu_ns();
        t0 = bench_now_ns();
        Value t = rts_thread_new(cap, busy, W_NSLOTS);
        rts_set_slot(cap, M_T, t);
        rts_thread_set_slot(cap, t, W_LEFT, rts_fixnum((intptr_t)iters));
        rts_thread_start_on(cap, t, 0);
    }
    if (!rts_thread_join(cap, rts_slot(cap, M_T)))
        return RTS_BLOCK;
    if (rts_thread_killed(rts_slot(cap, M_T)))
        bad++;
    uint64_t t1 = bench_now_ns(), c1 = bench_cpu_ns();
    RtsStats s1;
    rts_get_stats(&s1);
    bench_info_u("ran_on_cap", (unsigned long long)rts_fixnum_val(rts_result(cap)));
    bench_metric("busy_one_elapsed", (double)(t1 - t0) / 1e6, "ms");
    bench_metric("busy_one_cpu", (double)(c1 - c0) / 1e6, "ms");
    bench_metric("busy_one_bytes", (double)(s1.bytes_allocated - s0.bytes_allocated), "bytes");
    bench_metric("busy_one_minor_gcs", (double)(s1.minor_gcs - s0.minor_gcs), "GCs");
    bench_metric("busy_one_major_gcs", (double)(s1.major_gcs - s0.major_gcs), "GCs");
    bench_metric("busy_one_gc_pause", (double)(s1.gc_ns - s0.gc_ns) / 1e6, "ms");
    bench_info_u("bad", (unsigned long long)bad);
    rts_set_slot(cap, M_T, RTS_FALSE);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    total_bytes = bench_count(argc, argv, 1, 2000) << 20;
    rts_run_main(main_code, M_NSLOTS);
    if (bad)
        fprintf(stderr, "busy_one: %ld checks failed\n", bad);
    rts_exit(bad ? 1 : 0);
}
