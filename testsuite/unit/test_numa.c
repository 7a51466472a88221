/* Unit test: the NUMA-local heap (Note [NUMA-local heap] in runtime/os/numa.h) on the machine
 * it runs on, read back with get_mempolicy(MPOL_F_ADDR):
 *
 *     test_numa bound|unbound +RTS --numa ... -RTS
 *
 * "bound": every capability's nursery blocks, its young large objects and, after a minor and
 * a major GC, every to-space block of the old generation have MPOL_PREFERRED on their heap
 * node's kernel id (on a one-node machine the tests set RTSLAB_TEST_NUMA_BIND=1 for it);
 * "unbound": none has a policy (MPOL_DEFAULT), as with one node and no knob, or no --numa.
 * It ends "numa: N capabilities, M blocks checked". */
#include "rtslab.h"
#include "rtslab_config.h"
#include "unit/check.h"

#include <stdio.h>
#include <string.h>

#if HAVE_LIBNUMA
#include <numaif.h>
#include "os/numa.h"
#include "sm/storage.h"

static bool want_bound;
static unsigned long checked;

/* The page of p has heap node `node`'s policy, or none when unbound. */
static void check_policy(const void *p, unsigned node, const char *what)
{
    int mode = -1, id = -1;
    if (!CHECK_EQ_INT(numa_policy_of(p, &mode, &id), 0))
        return;
    checked++;
    if (want_bound) {
        if (!CHECK_EQ_INT(mode, MPOL_PREFERRED) || !CHECK_EQ_INT(id, numa_bind_id(node)))
            fprintf(stderr, "%s %p: mode %d node %d, want preferred node %d\n", what, p, mode,
                    id, numa_bind_id(node));
    } else if (!CHECK_EQ_INT(mode, MPOL_DEFAULT)) {
        fprintf(stderr, "%s %p: mode %d, want the default\n", what, p, mode);
    }
    CHECK_EQ_INT(blk_node_of(p), node);
}

static void check_nurseries(void)
{
    for (unsigned i = 0; i < sm_n_caps; i++) {
        SmCap *c = sm_caps[i];
        unsigned node = numa_cap_node(c->no);
        CHECK(node < numa_heap_nodes());
        for (bdescr *bd = c->nursery; bd; bd = bd->link)
            check_policy(bd->start, node, "nursery block");
        for (bdescr *bd = c->large_young; bd; bd = bd->link)
            check_policy(bd->start, node, "large object");
    }
}

enum { M_LIST, M_BIG, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    /* Live data for the GCs to copy into to-space, and a large object. */
    rts_set_slot(cap, M_LIST, RTS_NIL);
    for (intptr_t i = 0; i < 50000; i++)
        rts_set_slot(cap, M_LIST, rts_cons(cap, rts_fixnum(i), rts_slot(cap, M_LIST)));
    rts_set_slot(cap, M_BIG, rts_make_vector(cap, 100000, RTS_FALSE));
    check_nurseries();
    rts_gc(cap, false);
    rts_gc(cap, true);
    check_nurseries();
    /* Every old-generation block was a GC thread's to-space; with one GC thread per
     * capability and every capability on a node, its node is one of theirs, and (one node
     * in use here) the one of capability 0. */
    size_t old = 0;
    for (bdescr *bd = sm_old_gen.blocks; bd; bd = bd->link, old++)
        check_policy(bd->start, blk_node_of(bd->start), "to-space block");
    for (bdescr *bd = sm_old_gen.large; bd; bd = bd->link)
        check_policy(bd->start, blk_node_of(bd->start), "old large object");
    CHECK(old > 100);                  /* 50 000 pairs of 24 bytes: about 300 blocks */
    CHECK(sm_old_gen.large != NULL);
    intptr_t n = 0;
    for (Value l = rts_slot(cap, M_LIST); l != RTS_NIL; l = rts_field(l, 1))
        CHECK_EQ_INT(rts_fixnum_val(rts_field(l, 0)), 49999 - n++);
    CHECK_EQ_INT(n, 50000);
    if (want_bound)
        CHECK(numa_bound_mblocks() > 0);
    else
        CHECK_EQ_INT(numa_bound_mblocks(), 0);
    CHECK_EQ_INT(numa_bind_failures(), 0);
    printf("numa: %u capabilities, %lu blocks checked\n", rts_n_caps(), checked);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc != 2 || (strcmp(argv[1], "bound") != 0 && strcmp(argv[1], "unbound") != 0)) {
        fprintf(stderr, "usage: %s bound|unbound +RTS --numa ... -RTS\n", argv[0]);
        return 2;
    }
    want_bound = strcmp(argv[1], "bound") == 0;
    CHECK_EQ_INT(numa_binding(), want_bound);
    CHECK_EQ_INT(rts_run_main(main_code, M_NSLOTS), 0);
    rts_exit(check_done());
}
#else
int main(void)
{
    fprintf(stderr, "test_numa: this build has no libnuma (its tests need=libnuma)\n");
    return 1;
}
#endif
