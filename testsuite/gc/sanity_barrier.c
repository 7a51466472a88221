/* A missing write barrier under the sanity checker (Note [Sanity checking cost] in
 * runtime/sm/sanity.c). Builds an old generation of about OLD_MB megabytes (a list of
 * pairs) and an old box, then stores a new vector, reachable only from the box, into it, and
 * allocates GARBAGE_MB megabytes of garbage. With RTSLAB_TEST_DROP_BARRIER set under -DS, the
 * store's write barrier is dropped (runtime/sm/storage.c): the box points to a young object
 * without being remembered, the next minor GC does not keep the vector, and -DS must report
 * it, at the GC just after the store when the old generation is small (every check walks it
 * whole), at a later whole-heap check when it is big. Without the hook the vector survives
 * and the program prints "box ok".
 *
 * usage: sanity_barrier OLD_MB GARBAGE_MB */
#include <stdio.h>
#include <stdlib.h>
#include "rtslab.h"

static long old_mb = 1, garbage_mb = 16;

enum { S_OLD, S_BOX, S_NSLOTS };

#define PAIR_BYTES (3 * sizeof(Value))

static RtsStep main_code(RtsCap *cap)
{
    long pairs = old_mb * (1L << 20) / (long)PAIR_BYTES;
    rts_set_slot(cap, S_OLD, RTS_NIL);
    for (long i = 0; i < pairs; i++)
        rts_set_slot(cap, S_OLD, rts_cons(cap, rts_fixnum(i), rts_slot(cap, S_OLD)));
    rts_set_slot(cap, S_BOX, rts_make_box(cap, RTS_FALSE));
    rts_gc(cap, true);                        /* the list and the box are old now */

    Value young = rts_make_vector(cap, 2, rts_fixnum(42));
    rts_set_field(cap, rts_slot(cap, S_BOX), 0, young);
    young = RTS_FALSE;                        /* the box alone holds it */
    RtsStats st;
    rts_get_stats(&st);
    printf("stored into the old box after %llu GCs\n",
           (unsigned long long)(st.minor_gcs + st.major_gcs));
    fflush(stdout);                           /* -DS may abort */

    long garbage = garbage_mb * (1L << 20) / (long)PAIR_BYTES;
    for (long i = 0; i < garbage; i++)
        rts_cons(cap, rts_fixnum(i), RTS_NIL);

    Value v = rts_field(rts_slot(cap, S_BOX), 0);
    long n = 0;
    for (Value l = rts_slot(cap, S_OLD); l != RTS_NIL; l = rts_cdr(l))
        n++;
    bool ok = rts_has_type(v, T_VECTOR) && rts_field(v, 0) == rts_fixnum(42)
              && rts_field(v, 1) == rts_fixnum(42) && n == pairs;
    printf("box %s; %ld MB old, %ld MB of garbage\n", ok ? "ok" : "WRONG", old_mb, garbage_mb);
    if (!ok)
        rts_thread_error(cap, "the box lost its vector");
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) old_mb = atol(argv[1]);
    if (argc > 2) garbage_mb = atol(argv[2]);
    rts_run_main(main_code, S_NSLOTS);
    rts_exit(0);
}
