/* Test: Note [Poisoned from-space] (runtime/sm/sanity.h). Under -DS or -DG<n> a GC overwrites
 * the from-space it leaves behind with SANITY_POISON, under -DG the nursery's used blocks go
 * behind its unused ones (so later allocations do not write over the poison at once), and
 * sanity_check_value reports a stale pointer; without either none of it happens.
 * testsuite/unit/TESTS runs it with -DG1000000, which turns the rotation on and collects no
 * more often, and without options.
 *
 *   test_stale check    a pair and a large vector, each held by a C local with no root
 *                       (the bug the Note is about) and a copy of the pair's address in a
 *                       global root; after a minor GC the pair has moved, its copy is whole
 *                       and passes sanity_check_value, and the old pair and the dead vector
 *                       read SANITY_POISON under -DS or -DG (not without), also after 1000 more
 *                       allocations (the rotation); prints "stale: ok" or fails checks
 *   test_stale report   then hands the old pair's address to sanity_check_value, as an
 *                       error path does with what it reports: poisoned, it aborts, naming
 *                       the stale pointer
 */
#include "rtslab.h"
#include "sm/gc.h"
#include "sm/sanity.h"
#include "unit/check.h"

#include <stdio.h>
#include <string.h>

static bool report;
static Value kept;                   /* a global root: the GC updates it */

static RtsStep main_code(RtsCap *cap)
{
    bool ds = rts_options()->sanity || rts_options()->gc_stress;     /* sanity_poisons() */
    Value pair = rts_cons(cap, rts_fixnum(1), rts_fixnum(2));
    kept = pair;
    Value vec = rts_make_vector(cap, RTS_LARGE_OBJECT_BYTES / sizeof(Value), rts_fixnum(7));
    rts_gc(cap, false);              /* pair and vec are now stale: neither is a root */
    CHECK(kept != pair);
    CHECK_EQ_INT(rts_fixnum_val(rts_car(kept)), 1);
    CHECK_EQ_INT(rts_fixnum_val(rts_cdr(kept)), 2);
    sanity_check_value(kept, "test_stale (a live pair)");
    CHECK_EQ_INT(obj_header(pair) == SANITY_POISON, ds);
    CHECK_EQ_INT(rts_car(pair) == SANITY_POISON, ds);
    CHECK_EQ_INT(obj_header(vec) == SANITY_POISON, ds);
    for (int i = 0; i < 1000; i++)   /* 24 KB, 6 of the -A1m nursery's 256 blocks */
        rts_cons(cap, RTS_NIL, RTS_NIL);
    CHECK_EQ_INT(obj_header(pair) == SANITY_POISON, ds);
    if (report) {
        fflush(stdout);
        sanity_check_value(pair, "test_stale");
        printf("stale: not reported\n");
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    report = argc > 1 && strcmp(argv[1], "report") == 0;
    rts_add_root(&kept);
    CHECK_EQ_INT(rts_run_main(main_code, 1), 0);
    int failed = check_done();
    if (!failed)
        printf("stale: ok\n");
    rts_exit(failed);
}
