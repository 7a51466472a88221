/* GC time of minor GCs taken while the running thread's stack is deep.
 *
 * usage: deep_stack_gc [depth [gcs]]     (defaults 10000 and 100; k/m suffixes are x1024)
 *   (1M frames need a stack of 32 MiB, in a 64 MiB stack object while it doubles:
 *    run with +RTS -K1g -RTS)
 *
 * A recursion `depth` frames deep, each frame with 2 slots (a pair it allocated, and its
 * program counter), so 4 words of stack per frame. At the bottom: one untimed major GC (all
 * of it old now; the old generation's limit is reset so no timed GC turns major), one
 * untimed minor GC, then `gcs` times: allocate a pair (kept on a list, so each GC copies a
 * little) and rts_gc(cap, false). The total of those GCs' pauses (the minor_gc_ns delta of
 * rts_get_stats) is reported, and per GC. On the way back up every frame checks its pair.
 *
 * This is the baseline that chunked stacks (seed 002) are measured against: the stack is one
 * contiguous object, dirty whenever its thread runs, so every minor GC scans all of it, and
 * the cost grows linearly with the depth even though nothing deep in it changed. */
#include "bench.h"
#include "rts_config.h"
#include "sched/thread.h"

enum { F_OBJ, F_PC, F_NSLOTS };
enum { M_PC, M_NSLOTS };

static unsigned long long depth = 10000, n_gcs = 100;
static unsigned long long level;     /* frames pushed so far */
static unsigned long long bad;
static Value keep = RTS_NIL;         /* what the measured loop allocates; a global root */
static int failed;

static void measure(RtsCap *cap)
{
    bench_info_u("depth", depth);
    bench_info_u("stack_frames", (unsigned long long)rts_stack_depth(cap));
    bench_info_u("gcs", n_gcs);
    /* The frames' words (slots + code + size), whatever the stack's representation. */
    bench_metric("stack_used_bytes",
                 (double)((depth * (F_NSLOTS + 2) + M_NSLOTS + 2) * sizeof(Value)), "bytes");
#if !RTS_PATCH_STACK_CHUNKS
    /* The baseline's one contiguous stack object, with its unused room. */
    Value s = tso_stack(rts_current_thread(cap));
    if (stack_sp(s) * sizeof(Value) != (depth * (F_NSLOTS + 2) + M_NSLOTS + 2) * sizeof(Value)) {
        fprintf(stderr, "deep_stack_gc: unexpected stack size\n");
        failed = 1;
    }
    bench_metric("stack_object_bytes", (double)((obj_size(s) + 1) * sizeof(Value)), "bytes");
#endif

    rts_gc(cap, true);
    rts_gc(cap, false);

    RtsStats s0, s1;
    rts_get_stats(&s0);
    uint64_t t0 = bench_now_ns();
    for (unsigned long long i = 0; i < n_gcs; i++) {
        keep = rts_cons(cap, rts_fixnum((intptr_t)i), keep);
        rts_gc(cap, false);
    }
    uint64_t t1 = bench_now_ns();
    rts_get_stats(&s1);
    if (s1.minor_gcs - s0.minor_gcs != n_gcs || s1.major_gcs != s0.major_gcs) {
        fprintf(stderr, "deep_stack_gc: expected %llu minor GCs and no major one, got %llu and %llu\n",
                n_gcs, (unsigned long long)(s1.minor_gcs - s0.minor_gcs),
                (unsigned long long)(s1.major_gcs - s0.major_gcs));
        failed = 1;
    }
    double gc_ns = (double)(s1.minor_gc_ns - s0.minor_gc_ns);
    bench_metric("gc_total_ms", gc_ns / 1e6, "ms");
    bench_metric("gc_per_gc_us", gc_ns / 1e3 / (double)n_gcs, "us");
    bench_metric("loop_wall_ms", (double)(t1 - t0) / 1e6, "ms");
    bench_metric("gc_copied_per_gc", (double)(s1.bytes_copied - s0.bytes_copied) / (double)n_gcs,
                 "bytes");
}

/* A frame: on entry allocate its pair and call the next frame (or, at the bottom, measure);
 * when the callee returns, check the pair and return. */
static RtsStep rec(RtsCap *cap)
{
    if (rts_slot(cap, F_PC) == RTS_FALSE) {
        intptr_t n = (intptr_t)level++;
        rts_set_slot(cap, F_OBJ, rts_cons(cap, rts_fixnum(n), RTS_NIL));
        rts_set_slot(cap, F_PC, rts_fixnum(1));
        if (level < depth) {
            rts_push_frame(cap, rec, F_NSLOTS);
            return RTS_NEXT;
        }
        measure(cap);
    }
    Value obj = rts_slot(cap, F_OBJ);
    level--;
    if (!rts_has_type(obj, T_PAIR) || rts_car(obj) != rts_fixnum((intptr_t)level))
        bad++;
    rts_pop_frame(cap);
    return RTS_NEXT;
}

static RtsStep main_code(RtsCap *cap)
{
    if (rts_slot(cap, M_PC) == RTS_FALSE) {
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        rts_push_frame(cap, rec, F_NSLOTS);
        return RTS_NEXT;
    }
    unsigned long long n = 0;
    for (Value l = keep; l != RTS_NIL; l = rts_cdr(l))
        n++;
    if (bad || level != 0 || n != n_gcs) {
        fprintf(stderr, "deep_stack_gc: %llu frames lost their object (kept %llu of %llu)\n",
                bad, n, n_gcs);
        failed = 1;
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    depth = bench_arg(argc, argv, 1, depth);
    n_gcs = bench_arg(argc, argv, 2, n_gcs);
    rts_add_root(&keep);
    rts_run_main(main_code, M_NSLOTS);
    rts_exit(failed ? 1 : 0);
}
