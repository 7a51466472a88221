/* Test: Note [Aging] (runtime/sm/storage.h). With aging (the default) a minor GC copies a
 * nursery survivor into an aged block, young still, and the next minor GC promotes it; an old
 * object that points to an aged one after a GC is dirty and remembered, and is no longer
 * once its referent is old; a young large object is promoted at its first GC, remembered
 * when it points to an aged object; a major GC leaves no aged block. Under --aging=0 a
 * survivor is old after one minor GC. testsuite/unit/TESTS runs it both ways, and under -DS,
 * whose checker also checks every remembered set against the heap after each GC.
 *
 *   test_aging    prints "aging: ok (aging on)" or "aging: ok (aging off)", or fails checks
 */
#include "rtslab.h"
#include "sm/gc.h"
#include "unit/check.h"

#include <stdio.h>

static Value pair, box, vec;         /* global roots: the GC updates them */

static bool is_old(Value v)     { return bdescr_of(obj_ptr(v))->gen != 0; }
static bool is_nursery(Value v) { return (bdescr_of(obj_ptr(v))->flags & BF_NURSERY) != 0; }
static bool is_dirty(Value v)   { return (obj_header(v) & OBJ_DIRTY) != 0; }

static bool remembered(Value v)
{
    for (unsigned i = 0; i < sm_n_caps; i++)
        for (size_t k = 0; k < sm_caps[i]->remset_n; k++)
            if (sm_caps[i]->remset[k] == v)
                return true;
    return false;
}

static RtsStep main_code(RtsCap *cap)
{
    bool aging = rts_options()->aging;

    /* a survivor: aged after one minor GC, old after two */
    pair = rts_cons(cap, rts_fixnum(1), rts_fixnum(2));
    CHECK(is_nursery(pair) && !is_old(pair));
    rts_gc(cap, false);
    CHECK(!is_nursery(pair));
    CHECK_EQ_INT(is_old(pair), !aging);
    CHECK_EQ_INT(sm_aged.n_blocks > 0, aging);
    rts_gc(cap, false);
    CHECK(is_old(pair));
    CHECK_EQ_INT(rts_fixnum_val(rts_car(pair)), 1);
    CHECK_EQ_INT(rts_fixnum_val(rts_cdr(pair)), 2);

    /* an old box that points to a young pair: remembered while the pair is aged */
    box = rts_make_box(cap, RTS_FALSE);
    rts_gc(cap, false);
    rts_gc(cap, false);
    CHECK(is_old(box) && !is_dirty(box));
    Value young = rts_cons(cap, rts_fixnum(3), RTS_NIL);
    rts_set_field(cap, box, 0, young);          /* the write barrier remembers the box */
    CHECK(is_dirty(box) && remembered(box));
    rts_gc(cap, false);                          /* the pair is aged: the box stays remembered */
    CHECK_EQ_INT(is_old(rts_field(box, 0)), !aging);
    CHECK_EQ_INT(is_dirty(box), aging);
    CHECK_EQ_INT(remembered(box), aging);
    rts_gc(cap, false);                          /* the pair is old: the box is clean */
    CHECK(is_old(rts_field(box, 0)));
    CHECK(!is_dirty(box) && !remembered(box));
    CHECK_EQ_INT(rts_fixnum_val(rts_car(rts_field(box, 0))), 3);

    /* a young large object that points to a nursery pair: promoted at once, and remembered
     * while its pair is aged */
    vec = rts_make_vector(cap, 2 * BLOCK_SIZE / sizeof(Value), RTS_FALSE);  /* fits no block */
    CHECK(bdescr_of(obj_ptr(vec))->flags & BF_LARGE);
    Value p2 = rts_cons(cap, rts_fixnum(4), RTS_NIL);
    rts_set_field(cap, vec, 5, p2);
    CHECK(!is_old(vec));
    rts_gc(cap, false);
    CHECK(is_old(vec));
    CHECK_EQ_INT(is_old(rts_field(vec, 5)), !aging);
    CHECK_EQ_INT(is_dirty(vec) && remembered(vec), aging);
    rts_gc(cap, false);
    CHECK(is_old(rts_field(vec, 5)) && !is_dirty(vec));
    CHECK_EQ_INT(rts_fixnum_val(rts_car(rts_field(vec, 5))), 4);

    /* a major GC promotes what is aged */
    pair = rts_cons(cap, rts_fixnum(5), RTS_NIL);
    rts_gc(cap, false);
    CHECK_EQ_INT(sm_aged.n_blocks > 0, aging);
    rts_gc(cap, true);
    CHECK(is_old(pair));
    CHECK_EQ_INT(sm_aged.n_blocks, 0);
    CHECK_EQ_INT(rts_fixnum_val(rts_car(pair)), 5);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    pair = box = vec = RTS_FALSE;
    rts_add_root(&pair);
    rts_add_root(&box);
    rts_add_root(&vec);
    CHECK_EQ_INT(rts_run_main(main_code, 1), 0);
    int failed = check_done();
    if (!failed)
        printf("aging: ok (aging %s)\n", rts_options()->aging ? "on" : "off");
    rts_exit(failed);
}
