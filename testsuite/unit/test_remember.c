/* Test: Note [The GC's remember list] (runtime/sm/evac.c). A minor GC in which many old
 * objects come to point to aged ones lists them in blocks of the block allocator and calls
 * neither malloc nor realloc: the program is linked with -Wl,--wrap=malloc,--wrap=realloc
 * (Makefile.am), so every call from the runtime goes through the counters below. 3000 old
 * boxes, each given a fresh pair by the write barrier (which remembers the box, growing the
 * capability's remembered set before the GC); the GC ages the pairs, so each box is listed
 * again (12 blocks of 256 entries) and is remembered and dirty after it. Before the list
 * was in blocks, that GC called realloc (remember_old grew a C array).
 *
 *   test_remember   prints "remember: 3000 remembered, 0 malloc, 0 realloc in the GC"
 */
#include "rtslab.h"
#include "sm/gc.h"
#include "unit/check.h"

#include <stdio.h>
#include <stdlib.h>

#define N_BOXES 3000

static int counting;                 /* atomic: set around the GC measured */
static unsigned long n_malloc, n_realloc;

void *__real_malloc(size_t n);
void *__real_realloc(void *p, size_t n);

void *__wrap_malloc(size_t n)
{
    if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_fetch_add(&n_malloc, 1, __ATOMIC_RELAXED);
    return __real_malloc(n);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (__atomic_load_n(&counting, __ATOMIC_RELAXED))
        __atomic_fetch_add(&n_realloc, 1, __ATOMIC_RELAXED);
    return __real_realloc(p, n);
}

static Value boxes;                  /* a global root: a vector of N_BOXES boxes */

static bool is_old(Value v)   { return bdescr_of(obj_ptr(v))->gen != 0; }
static bool is_dirty(Value v) { return (obj_header(v) & OBJ_DIRTY) != 0; }

static RtsStep main_code(RtsCap *cap)
{
    boxes = rts_make_vector(cap, N_BOXES, RTS_FALSE);
    for (size_t i = 0; i < N_BOXES; i++) {
        Value b = rts_make_box(cap, RTS_FALSE);
        rts_set_field(cap, boxes, i, b);
    }
    rts_gc(cap, false);
    rts_gc(cap, false);                 /* the boxes are old, and clean */
    size_t clean = 0;
    for (size_t i = 0; i < N_BOXES; i++) {
        Value b = rts_field(boxes, i);
        clean += is_old(b) && !is_dirty(b);
    }
    CHECK_EQ_INT(clean, N_BOXES);
    for (size_t i = 0; i < N_BOXES; i++)     /* each box remembered by the write barrier */
        rts_set_field(cap, rts_field(boxes, i), 0, rts_cons(cap, rts_fixnum((intptr_t)i), RTS_NIL));
    CHECK(sm_caps[0]->remset_n >= N_BOXES);

    __atomic_store_n(&counting, 1, __ATOMIC_SEQ_CST);
    rts_gc(cap, false);                 /* the pairs are aged: every box listed again */
    __atomic_store_n(&counting, 0, __ATOMIC_SEQ_CST);

    size_t remembered = 0, right = 0;
    for (size_t i = 0; i < N_BOXES; i++) {
        Value b = rts_field(boxes, i), p = rts_field(b, 0);
        remembered += is_dirty(b) && !is_old(p);
        right += rts_fixnum_val(rts_car(p)) == (intptr_t)i;
    }
    CHECK_EQ_INT(remembered, N_BOXES);
    CHECK_EQ_INT(right, N_BOXES);
    CHECK(sm_caps[0]->remset_n >= N_BOXES);
    printf("remember: %zu remembered, %lu malloc, %lu realloc in the GC\n", remembered,
           __atomic_load_n(&n_malloc, __ATOMIC_RELAXED),
           __atomic_load_n(&n_realloc, __ATOMIC_RELAXED));
    CHECK_EQ_INT(n_malloc, 0);
    CHECK_EQ_INT(n_realloc, 0);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    boxes = RTS_FALSE;
    rts_add_root(&boxes);
    CHECK_EQ_INT(rts_run_main(main_code, 1), 0);
    rts_exit(check_done());
}
