/* Allocation rate of a tight allocate-and-drop loop.
 *
 * usage: alloc_rate [bytes]        (default 1g; k/m/g suffixes)
 *
 * Two loops, each allocating `bytes` bytes of pairs (3 words: header, car, cdr) and dropping
 * every one at once, so each minor GC finds an empty nursery:
 *   alloc_rate       through the inline fast path: sm_alloc (sm/storage.h) + header writes,
 *                    as compiled code would do it;
 *   alloc_rate_cons  through the C API call rts_cons (out of line, protects its arguments).
 * Each reports MB/s (10^6 bytes per second of the loop's elapsed time, GCs included), the
 * rate over mutator time only (GC time, from rts_get_stats, subtracted), and the number of
 * minor GCs the loop caused. Run it at different -A to see the nursery size's effect. */
#include "bench.h"
#include "sm/storage.h"

static unsigned long long total_bytes = 1ull << 30;

enum { PAIR_WORDS = 3 };

static void report(const char *name, uint64_t ns, const RtsStats *s0, const RtsStats *s1,
                   uint64_t bytes)
{
    double secs = (double)ns / 1e9;
    double gc_secs = (double)(s1->gc_ns - s0->gc_ns) / 1e9;
    char m[64];
    bench_metric(name, (double)bytes / 1e6 / secs, "MB/s");
    snprintf(m, sizeof m, "%s_mut", name);
    bench_metric(m, secs > gc_secs ? (double)bytes / 1e6 / (secs - gc_secs) : 0, "MB/s");
    snprintf(m, sizeof m, "%s_minor_gcs", name);
    bench_metric(m, (double)(s1->minor_gcs - s0->minor_gcs), "GCs");
    snprintf(m, sizeof m, "%s_gc_ms", name);
    bench_metric(m, gc_secs * 1e3, "ms");
    snprintf(m, sizeof m, "%s_ns_per_obj", name);
    bench_metric(m, (double)ns / ((double)bytes / (PAIR_WORDS * sizeof(Value))), "ns");
    snprintf(m, sizeof m, "%s_bytes_counted", name);
    bench_info_u(m, (unsigned long long)(s1->bytes_allocated - s0->bytes_allocated));
    snprintf(m, sizeof m, "%s_major_gcs", name);
    bench_info_u(m, (unsigned long long)(s1->major_gcs - s0->major_gcs));
}

/* The inline fast path: a bump of cap->hp, a limit check, three stores. */
static __attribute__((noinline)) void alloc_loop_inline(RtsCap *cap, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        Value *p = sm_alloc(sm_cap(cap), PAIR_WORDS);
        p[0] = obj_make_header(T_PAIR, 2);
        p[1] = rts_fixnum((intptr_t)i);
        p[2] = RTS_NIL;
    }
}

static __attribute__((noinline)) void alloc_loop_cons(RtsCap *cap, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        (void)rts_cons(cap, rts_fixnum((intptr_t)i), RTS_NIL);
}

static RtsStep main_code(RtsCap *cap)
{
    const size_t obj_bytes = PAIR_WORDS * sizeof(Value);
    uint64_t n = total_bytes / obj_bytes;
    uint64_t bytes = n * obj_bytes;
    RtsStats s0, s1;

    bench_info_u("bytes", (unsigned long long)bytes);
    bench_info_u("alloc_area", (unsigned long long)rts_options()->alloc_area);

    /* Warm up: touch the nursery's pages and let the old generation settle. */
    size_t warm = 4 * rts_options()->alloc_area;
    if (warm < (8u << 20)) warm = 8u << 20;
    alloc_loop_inline(cap, warm / obj_bytes);
    rts_gc(cap, true);

    rts_get_stats(&s0);
    uint64_t t0 = bench_now_ns();
    alloc_loop_inline(cap, n);
    uint64_t t1 = bench_now_ns();
    rts_get_stats(&s1);
    report("alloc_rate", t1 - t0, &s0, &s1, bytes);

    rts_gc(cap, true);
    rts_get_stats(&s0);
    t0 = bench_now_ns();
    alloc_loop_cons(cap, n);
    t1 = bench_now_ns();
    rts_get_stats(&s1);
    report("alloc_rate_cons", t1 - t0, &s0, &s1, bytes);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    total_bytes = bench_arg(argc, argv, 1, total_bytes);
    rts_run_main(main_code, 1);
    rts_exit(0);
}
