/* The time of one minor GC, with an empty nursery and with ~1 MB of live young data.
 *
 * usage: minor_gc [empty_gcs [rounds [live_bytes]]]     (defaults 1000, 50, 1m)
 *   (needs -A larger than live_bytes, e.g. +RTS -A4m -RTS, so the live data fits the nursery)
 *
 * empty: rts_gc(cap, false) called back to back, so each finds nothing live in the nursery:
 *        the fixed cost of a minor GC (roots, the running thread's stack and TSO, resetting
 *        the -A nursery).
 * 1 MB:  each round first runs an untimed major GC (so the old generation holds nothing and
 *        no timed GC turns major), then builds a fresh list of vectors of `live_bytes` bytes
 *        in total, reachable from a frame slot and so all young, then times one
 *        rts_gc(cap, false), which copies it all into the old generation. The list is checked
 *        after the GC. The first 3 rounds are warm-up and not counted.
 * A GC's time is its pause as the runtime measures it (the minor_gc_ns delta of
 * rts_get_stats); the clock around the rts_gc call is reported too (*_wall_*). Every timed
 * GC is checked to be minor; the program exits 1 if one was not. */
#include "bench.h"

enum { VEC_FIELDS = 14 };                 /* a vector: 15 words with its header, + a 3-word pair */
enum { WARMUP_ROUNDS = 3 };
enum { S_LIVE, S_NSLOTS };

static unsigned long long n_empty = 1000, n_rounds = 50, live_bytes = 1u << 20;
static int failed;

static void report(const char *name, double *gc_us, double *wall_us, size_t n)
{
    char m[64];
    double mean = bench_mean(gc_us, n), wall_mean = bench_mean(wall_us, n);
    double med = bench_median(gc_us, n);          /* sorts */
    double wall_med = bench_median(wall_us, n);
    snprintf(m, sizeof m, "%s_median", name); bench_metric(m, med, "us");
    snprintf(m, sizeof m, "%s_mean", name);   bench_metric(m, mean, "us");
    snprintf(m, sizeof m, "%s_min", name);    bench_metric(m, gc_us[0], "us");
    snprintf(m, sizeof m, "%s_max", name);    bench_metric(m, gc_us[n - 1], "us");
    snprintf(m, sizeof m, "%s_wall_median", name); bench_metric(m, wall_med, "us");
    snprintf(m, sizeof m, "%s_wall_mean", name);   bench_metric(m, wall_mean, "us");
}

/* One timed minor GC: its pause (stats) and wall time in µs, and the bytes it copied. */
static void timed_minor_gc(RtsCap *cap, double *gc_us, double *wall_us, uint64_t *copied)
{
    RtsStats s0, s1;
    rts_get_stats(&s0);
    uint64_t t0 = bench_now_ns();
    rts_gc(cap, false);
    uint64_t t1 = bench_now_ns();
    rts_get_stats(&s1);
    if (s1.minor_gcs != s0.minor_gcs + 1 || s1.major_gcs != s0.major_gcs) {
        fprintf(stderr, "minor_gc: a timed rts_gc(cap, false) was not one minor GC\n");
        failed = 1;
    }
    *gc_us = (double)(s1.minor_gc_ns - s0.minor_gc_ns) / 1e3;
    *wall_us = (double)(t1 - t0) / 1e3;
    *copied = s1.bytes_copied - s0.bytes_copied;
}

static RtsStep main_code(RtsCap *cap)
{
    const size_t elt_bytes = (VEC_FIELDS + 1 + 3) * sizeof(Value);
    const size_t n_elts = (live_bytes + elt_bytes - 1) / elt_bytes;
    size_t n = n_empty > n_rounds ? n_empty : n_rounds;
    double *gc_us = malloc(n * sizeof *gc_us), *wall_us = malloc(n * sizeof *wall_us);
    uint64_t copied, copied_total = 0;

    bench_info_u("alloc_area", (unsigned long long)rts_options()->alloc_area);
    bench_info_u("live_bytes", (unsigned long long)(n_elts * elt_bytes));
    if (n_elts * elt_bytes / 8 * 9 > rts_options()->alloc_area) {   /* + block-tail waste */
        fprintf(stderr, "minor_gc: %zu live bytes do not fit a %zu-byte nursery; use +RTS -A4m -RTS\n",
                n_elts * elt_bytes, rts_options()->alloc_area);
        rts_exit(2);
    }

    /* Empty nursery. */
    rts_gc(cap, true);
    for (int i = 0; i < 10; i++)
        rts_gc(cap, false);
    for (size_t i = 0; i < n_empty; i++) {
        timed_minor_gc(cap, &gc_us[i], &wall_us[i], &copied);
        copied_total += copied;
    }
    report("minor_gc_empty", gc_us, wall_us, n_empty);
    bench_metric("minor_gc_empty_copied", (double)copied_total / (double)n_empty, "bytes");

    /* 1 MB live. */
    copied_total = 0;
    for (size_t r = 0; r < WARMUP_ROUNDS + n_rounds; r++) {
        rts_set_slot(cap, S_LIVE, RTS_FALSE);
        rts_gc(cap, true);
        RtsStats s0, s1;
        rts_get_stats(&s0);
        rts_set_slot(cap, S_LIVE, RTS_NIL);
        for (size_t k = 0; k < n_elts; k++) {
            Value v = rts_make_vector(cap, VEC_FIELDS, rts_fixnum((intptr_t)k));
            rts_set_slot(cap, S_LIVE, rts_cons(cap, v, rts_slot(cap, S_LIVE)));
        }
        rts_get_stats(&s1);
        if (s1.minor_gcs + s1.major_gcs != s0.minor_gcs + s0.major_gcs) {
            fprintf(stderr, "minor_gc: a GC ran while building the live data; use a larger -A\n");
            failed = 1;
        }
        double g, w;
        timed_minor_gc(cap, &g, &w, &copied);
        if (r >= WARMUP_ROUNDS) {
            gc_us[r - WARMUP_ROUNDS] = g;
            wall_us[r - WARMUP_ROUNDS] = w;
            copied_total += copied;
        }
        /* The list survived, whole and in order. */
        size_t k = n_elts;
        for (Value l = rts_slot(cap, S_LIVE); l != RTS_NIL; l = rts_cdr(l)) {
            Value v = rts_car(l);
            if (k == 0 || rts_vector_length(v) != VEC_FIELDS
                || rts_field(v, VEC_FIELDS - 1) != rts_fixnum((intptr_t)(k - 1))) {
                fprintf(stderr, "minor_gc: the live list is wrong after the GC\n");
                failed = 1;
                break;
            }
            k--;
        }
        if (k != 0) {
            fprintf(stderr, "minor_gc: the live list is short by %zu after the GC\n", k);
            failed = 1;
        }
    }
    report("minor_gc_1mb", gc_us, wall_us, n_rounds);
    bench_metric("minor_gc_1mb_copied", (double)copied_total / (double)n_rounds, "bytes");
    rts_set_slot(cap, S_LIVE, RTS_FALSE);
    free(gc_us);
    free(wall_us);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    n_empty = bench_arg(argc, argv, 1, n_empty);
    n_rounds = bench_arg(argc, argv, 2, n_rounds);
    live_bytes = bench_arg(argc, argv, 3, live_bytes);
    rts_run_main(main_code, S_NSLOTS);
    rts_exit(failed ? 1 : 0);
}
