/* A deep stack under GC: a recursion DEPTH frames deep (default 100 000) where every frame
 * allocates an object it keeps in a slot, and garbage on the way down and up, so GCs run
 * (and the stack grows by doubling) while the stack is deep. On the way back each frame
 * checks that its object survived with the right contents.
 *
 * usage: gc_deep [depth] */
#include <stdio.h>
#include <stdlib.h>
#include "rtslab.h"

static long depth = 100000;
static long bad;

enum { F_N, F_OBJ, F_PC, F_NSLOTS };

static void garbage(RtsCap *cap)
{
    for (int i = 0; i < 3; i++)
        rts_cons(cap, rts_fixnum(i), RTS_NIL);
}

/* Each frame: obj = #(n (n . "bytes")); recurse on n-1; then check obj and return the
 * sum of n over the frames below and this one. */
static RtsStep rec(RtsCap *cap)
{
    intptr_t n = rts_fixnum_val(rts_slot(cap, F_N));
    if (rts_slot(cap, F_PC) == RTS_FALSE) {
        Value raw = rts_make_raw(cap, T_BYTEVECTOR, 8);
        raw_bytes(raw)[0] = (uint8_t)n;
        Value pair = rts_cons(cap, rts_fixnum(n), raw);
        Value obj = rts_make_vector(cap, 2, pair);
        rts_set_field(cap, obj, 0, rts_fixnum(n));
        rts_set_slot(cap, F_OBJ, obj);
        garbage(cap);
        if (n == 0) {
            rts_gc(cap, false);
            rts_gc(cap, true);
            rts_gc(cap, false);
            printf("bottom reached: %zu frames on the stack\n", rts_stack_depth(cap));
            rts_set_result(cap, rts_fixnum(0));
            rts_pop_frame(cap);
            return RTS_NEXT;
        }
        rts_set_slot(cap, F_PC, rts_fixnum(1));
        rts_push_frame(cap, rec, F_NSLOTS);
        rts_set_slot(cap, F_N, rts_fixnum(n - 1));
        return RTS_NEXT;
    }
    Value obj = rts_slot(cap, F_OBJ);
    Value pair = rts_field(obj, 1);
    if (rts_field(obj, 0) != rts_fixnum(n) || rts_car(pair) != rts_fixnum(n)
        || raw_bytes(rts_cdr(pair))[0] != (uint8_t)n)
        bad++;
    intptr_t sum = rts_fixnum_val(rts_result(cap)) + n;
    garbage(cap);
    rts_set_result(cap, rts_fixnum(sum));
    rts_pop_frame(cap);
    return RTS_NEXT;
}

enum { M_PC, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    if (rts_slot(cap, M_PC) == RTS_FALSE) {
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        rts_push_frame(cap, rec, F_NSLOTS);
        rts_set_slot(cap, F_N, rts_fixnum(depth));
        return RTS_NEXT;
    }
    intptr_t sum = rts_fixnum_val(rts_result(cap));
    printf("sum %ld (expected %ld), %ld bad frames\n", (long)sum, depth * (depth + 1) / 2, bad);
    if (sum != depth * (depth + 1) / 2 || bad)
        rts_thread_error(cap, "deep stack check failed");
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) depth = atol(argv[1]);
    rts_run_main(main_code, M_NSLOTS);
    RtsStats s;
    rts_get_stats(&s);
    printf("ok (%s GCs)\n", s.minor_gcs + s.major_gcs > 3 ? "several" : "few");
    rts_exit(0);
}
