/* Unit test: the topology module (runtime/os/topology.c) against the fixture trees of
 * testsuite/topology/fixtures (see make_fixtures.py there) and the real machine.
 *
 *   tests/unit/test_topology FIXTURES_DIR      (or $RTSLAB_TOPO_FIXTURES)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "os/sysfs.h"
#include "os/topology.h"
#include "unit/check.h"

static const char *fixtures;

static char *fixture(const char *name)
{
    static char path[4096];
    snprintf(path, sizeof path, "%s/%s", fixtures, name);
    return path;
}

static cpu_set_t mask_of(const char *list)
{
    cpu_set_t set;
    int n = topo_parse_cpulist(list, &set);
    CHECK(n > 0);
    return set;
}

static cpu_set_t all_cpus(void)
{
    cpu_set_t set;
    memset(&set, 0xff, sizeof set);
    return set;
}

/* The ids as a cpulist-like string, unjoined: "0,6,1,7". */
static const char *ids(const int *v, int n)
{
    static char buf[2][4096];
    static int which;
    char *b = buf[which ^= 1];
    size_t used = 0;
    b[0] = '\0';
    for (int i = 0; i < n && used < sizeof buf[0] - 16; i++)
        used += (size_t)snprintf(b + used, sizeof buf[0] - used, "%s%d", i ? "," : "", v[i]);
    return b;
}

/* Invariants of topology.h that hold for every loaded topology. */
static void check_invariants(const Topology *t)
{
    CHECK(t->n_logical >= 1 && t->n_logical <= t->n_online);
    CHECK(t->n_physical >= 1 && t->n_physical <= t->n_logical);
    CHECK(t->n_packages >= 1 && t->n_packages <= t->n_physical);
    CHECK(t->n_nodes >= 1 && t->n_nodes <= t->n_logical);
    int rank0 = 0, max_smt = 0;
    for (int k = 0; k < t->n_logical; k++) {
        const TopoCpu *c = &t->cpus[k];
        CHECK_EQ_INT(t->logical_order[k], c->id);
        if (k > 0)
            CHECK(t->cpus[k - 1].id < c->id);
        CHECK(c->core >= 0 && c->core < t->n_physical);
        CHECK(c->package >= 0 && c->package < t->n_packages);
        CHECK(c->node >= 0 && c->node < t->n_nodes);
        CHECK(topo_cpu(t, c->id) == c);
        if (c->smt_rank == 0)
            rank0++;
        if (c->smt_rank + 1 > max_smt)
            max_smt = c->smt_rank + 1;
    }
    CHECK_EQ_INT(rank0, t->n_physical);
    CHECK_EQ_INT(max_smt, t->max_smt);
    /* physical_order: each core once, by its rank-0 CPU. */
    int *seen = calloc((size_t)t->n_physical, sizeof *seen);
    for (int i = 0; i < t->n_physical; i++) {
        const TopoCpu *c = topo_cpu(t, t->physical_order[i]);
        if (!CHECK(c != NULL))
            continue;
        CHECK_EQ_INT(c->smt_rank, 0);
        seen[c->core]++;
    }
    for (int i = 0; i < t->n_physical; i++)
        CHECK_EQ_INT(seen[i], 1);
    free(seen);
    /* Dense core numbering in order of the cores' lowest CPUs. */
    int next_core = 0;
    for (int k = 0; k < t->n_logical; k++)
        if (t->cpus[k].smt_rank == 0)
            CHECK_EQ_INT(t->cpus[k].core, next_core++);
}

struct expect {
    const char *fixture;     /* under FIXTURES_DIR */
    const char *mask;        /* NULL: every CPU */
    int n_logical, n_physical, n_packages, n_nodes, n_online, max_smt;
    const char *logical_order, *physical_order;
    const char *source, *numa_source;
};

static void check_fixture(const struct expect *e)
{
    Topology t;
    char err[256];
    cpu_set_t mask = e->mask ? mask_of(e->mask) : all_cpus();
    int rc = topo_load(&t, fixture(e->fixture), &mask, err, sizeof err);
    if (!CHECK_EQ_INT(rc, 0)) {
        fprintf(stderr, "  %s: %s\n", e->fixture, err);
        return;
    }
    fprintf(stderr, "--- %s%s%s\n", e->fixture, e->mask ? " mask " : "", e->mask ? e->mask : "");
    topo_describe(&t, stderr);
    CHECK_EQ_INT(t.n_logical, e->n_logical);
    CHECK_EQ_INT(t.n_physical, e->n_physical);
    CHECK_EQ_INT(t.n_packages, e->n_packages);
    CHECK_EQ_INT(t.n_nodes, e->n_nodes);
    CHECK_EQ_INT(t.n_online, e->n_online);
    CHECK_EQ_INT(t.max_smt, e->max_smt);
    CHECK_STR(ids(t.logical_order, t.n_logical), e->logical_order);
    CHECK_STR(ids(t.physical_order, t.n_physical), e->physical_order);
    CHECK_STR(t.source, e->source);
    CHECK_STR(t.numa_source, e->numa_source);
    CHECK_STR(t.mask_source, "argument");
    check_invariants(&t);
    topo_free(&t);
    CHECK(t.cpus == NULL && t.n_logical == 0);
    topo_free(&t);                      /* idempotent */
}

static const char *seq(int from, int to)
{
    static char buf[2][4096];
    static int which;
    char *b = buf[which ^= 1];
    size_t used = 0;
    for (int i = from; i <= to; i++)
        used += (size_t)snprintf(b + used, sizeof buf[0] - used, "%s%d", i > from ? "," : "", i);
    return b;
}

static void test_fixtures(void)
{
    /* arm-160c: 0,80,1,81,...,79,159 */
    static char arm_phys[2048];
    size_t used = 0;
    for (int i = 0; i < 80; i++)
        used += (size_t)snprintf(arm_phys + used, sizeof arm_phys - used, "%s%d,%d",
                                 i ? "," : "", i, i + 80);

    const struct expect cases[] = {
        { "desktop-4c8t", NULL, 8, 4, 1, 1, 8, 2,
          "0,1,2,3,4,5,6,7", "0,1,2,3", "sysfs", "sysfs" },
        /* container-narrow: the desktop through the mask 2,3,6 (cpu2 and cpu6 share a core) */
        { "desktop-4c8t", "2,3,6", 3, 2, 1, 1, 8, 2,
          "2,3,6", "2,3", "sysfs", "sysfs" },
        /* only second threads: each is its core's rank-0 CPU */
        { "desktop-4c8t", "5-7", 3, 3, 1, 1, 8, 1,
          "5,6,7", "5,6,7", "sysfs", "sysfs" },
        { "vm-2s12c24t", NULL, 24, 12, 2, 2, 24, 2,
          seq(0, 23), "0,6,1,7,2,8,3,9,4,10,5,11", "sysfs", "sysfs" },
        /* one socket only */
        { "vm-2s12c24t", "6-11,18-23", 12, 6, 1, 1, 24, 2,
          "6,7,8,9,10,11,18,19,20,21,22,23", "6,7,8,9,10,11", "sysfs", "sysfs" },
        /* unbalanced: 1 core on socket 0, 3 on socket 1; cpu13 is cpu1's sibling */
        { "vm-2s12c24t", "13,18-20", 4, 4, 2, 2, 24, 1,
          "13,18,19,20", "13,18,19,20", "sysfs", "sysfs" },
        { "vm-2s12c24t", "1,13,7,8", 4, 3, 2, 2, 24, 2,
          "1,7,8,13", "1,7,8", "sysfs", "sysfs" },
        { "arm-160c", NULL, 160, 160, 2, 2, 160, 1,
          seq(0, 159), arm_phys, "sysfs", "sysfs" },
        /* offline cpu5, cpu6: cores {0,4} {1} {2} {3,7} */
        { "offline-cpus", NULL, 6, 4, 1, 1, 6, 2,
          "0,1,2,3,4,7", "0,1,2,3", "sysfs", "sysfs" },
        /* a mask naming offline CPUs: they are ignored */
        { "offline-cpus", "4-7", 2, 2, 1, 1, 6, 1,
          "4,7", "4,7", "sysfs", "sysfs" },
        /* cpuinfo: cores (p0,0)={0,4} (p1,0)={1,5} (p0,4)={2,6} (p1,4)={3,7} */
        { "cpuinfo-only", NULL, 8, 4, 2, 1, 8, 2,
          "0,1,2,3,4,5,6,7", "0,1,2,3", "cpuinfo", "none" },
        { "cpuinfo-only", "0,2,4,6", 4, 2, 1, 1, 8, 2,
          "0,2,4,6", "0,2", "cpuinfo", "none" },
        { "cpuinfo-arm", NULL, 4, 4, 1, 1, 4, 1,
          "0,1,2,3", "0,1,2,3", "flat", "none" },
        { "present-only", NULL, 3, 3, 1, 1, 3, 1,
          "0,1,2", "0,1,2", "sysfs", "none" },
        { "dirs-only", NULL, 4, 2, 1, 1, 4, 2,
          "0,1,2,3", "0,2", "sysfs", "none" },
        /* SMT on the two P-cores only: {0,1} {2,3} {4} {5} {6} {7} */
        { "hybrid-2p4e", NULL, 8, 6, 1, 1, 8, 2,
          "0,1,2,3,4,5,6,7", "0,2,4,5,6,7", "sysfs", "sysfs" },
        /* a simulated 2-core 2-thread machine (SMT described on a machine without it) */
        { "sim-2c4t", NULL, 4, 2, 1, 1, 4, 2,
          "0,1,2,3", "0,1", "sysfs", "sysfs" },
        /* a mixed-SMT mask: both threads of cores 0, 6 and 7, one of cores 1, 2 and 8 */
        { "vm-2s12c24t", "0-2,6-8,12,18,19", 9, 6, 2, 2, 24, 2,
          "0,1,2,6,7,8,12,18,19", "0,6,1,7,2,8", "sysfs", "sysfs" },
        /* the --numa fixtures: CPUs numbered round-robin over 2 sockets/nodes */
        { "numa-2n-interleaved", NULL, 8, 8, 2, 2, 8, 1,
          "0,1,2,3,4,5,6,7", "0,1,2,3,4,5,6,7", "sysfs", "sysfs" },
        /* 4 nodes on 2 sockets, and a node without CPUs that counts for nothing */
        { "numa-4n-2s32t", NULL, 32, 16, 2, 4, 32, 2,
          "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,"
          "30,31", "0,8,4,12,1,9,5,13,2,10,6,14,3,11,7,15", "sysfs", "sysfs" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_fixture(&cases[i]);
}

/* Per-CPU details: cores, packages, nodes, SMT ranks. */
static void test_details(void)
{
    Topology t;
    cpu_set_t all = all_cpus();
    char err[256];

    if (CHECK_EQ_INT(topo_load(&t, fixture("vm-2s12c24t"), &all, err, sizeof err), 0)) {
        const TopoCpu *c0 = topo_cpu(&t, 0), *c12 = topo_cpu(&t, 12), *c6 = topo_cpu(&t, 6),
                      *c23 = topo_cpu(&t, 23);
        if (CHECK(c0 && c12 && c6 && c23)) {
            CHECK_EQ_INT(c0->core, c12->core);
            CHECK_EQ_INT(c0->smt_rank, 0);
            CHECK_EQ_INT(c12->smt_rank, 1);
            CHECK_EQ_INT(c6->core, 6);
            CHECK_EQ_INT(c6->package, 1);
            CHECK_EQ_INT(c6->node, 1);
            CHECK_EQ_INT(c6->core_id, 0);
            CHECK_EQ_INT(c23->core, 11);
            CHECK_EQ_INT(c23->node, 1);
            CHECK_EQ_INT(c23->smt_rank, 1);
        }
        CHECK(topo_cpu(&t, 24) == NULL);
        CHECK(topo_cpu(&t, -1) == NULL);
        topo_free(&t);
    }

    cpu_set_t narrow = mask_of("2,3,6");
    if (CHECK_EQ_INT(topo_load(&t, fixture("desktop-4c8t"), &narrow, err, sizeof err), 0)) {
        CHECK_EQ_INT(topo_cpu(&t, 2)->smt_rank, 0);
        CHECK_EQ_INT(topo_cpu(&t, 3)->smt_rank, 0);
        CHECK_EQ_INT(topo_cpu(&t, 6)->smt_rank, 1);
        CHECK_EQ_INT(topo_cpu(&t, 6)->core, topo_cpu(&t, 2)->core);
        CHECK(topo_cpu(&t, 0) == NULL);
        topo_free(&t);
    }

    /* The seed-004 trap: "core id" repeats per package; (package, core id) tells them apart. */
    if (CHECK_EQ_INT(topo_load(&t, fixture("cpuinfo-only"), &all, err, sizeof err), 0)) {
        CHECK_EQ_INT(topo_cpu(&t, 0)->core_id, 0);
        CHECK_EQ_INT(topo_cpu(&t, 1)->core_id, 0);
        CHECK(topo_cpu(&t, 0)->core != topo_cpu(&t, 1)->core);
        CHECK_EQ_INT(topo_cpu(&t, 4)->core, topo_cpu(&t, 0)->core);
        CHECK_EQ_INT(topo_cpu(&t, 2)->core_id, 4);
        CHECK_EQ_INT(topo_cpu(&t, 3)->package_id, 1);
        topo_free(&t);
    }

    if (CHECK_EQ_INT(topo_load(&t, fixture("arm-160c"), &all, err, sizeof err), 0)) {
        CHECK_EQ_INT(topo_cpu(&t, 79)->node, 0);
        CHECK_EQ_INT(topo_cpu(&t, 80)->node, 1);
        CHECK_EQ_INT(topo_cpu(&t, 80)->package, 1);
        CHECK_EQ_INT(topo_cpu(&t, 159)->core, 159);
        topo_free(&t);
    }
}

/* The environment: RTSLAB_SYSFS_ROOT and RTSLAB_CPU_MASK stand for NULL arguments. */
static void test_environment(void)
{
    Topology t;
    char err[256];

    setenv("RTSLAB_SYSFS_ROOT", fixture("desktop-4c8t"), 1);
    unsetenv("RTSLAB_CPU_MASK");
    /* A fixture root with no mask: every online CPU (the real affinity means nothing there). */
    if (CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), 0)) {
        CHECK_EQ_INT(t.n_logical, 8);
        CHECK_EQ_INT(t.n_physical, 4);
        CHECK_STR(t.mask_source, "all");
        CHECK_STR(t.root, fixture("desktop-4c8t"));
        topo_free(&t);
    }
    /* container-narrow through the environment */
    setenv("RTSLAB_CPU_MASK", "2,3,6", 1);
    if (CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), 0)) {
        CHECK_EQ_INT(t.n_logical, 3);
        CHECK_EQ_INT(t.n_physical, 2);
        CHECK_STR(ids(t.logical_order, t.n_logical), "2,3,6");
        CHECK_STR(ids(t.physical_order, t.n_physical), "2,3");
        CHECK_STR(t.mask_source, "RTSLAB_CPU_MASK");
        topo_free(&t);
    }
    /* an explicit argument wins over the environment */
    cpu_set_t m = mask_of("0-7");
    if (CHECK_EQ_INT(topo_load(&t, fixture("vm-2s12c24t"), &m, err, sizeof err), 0)) {
        CHECK_EQ_INT(t.n_logical, 8);
        CHECK_EQ_INT(t.n_physical, 8);
        CHECK_STR(ids(t.physical_order, t.n_physical), "0,6,1,7,2,3,4,5");
        topo_free(&t);
    }
    /* errors: a bad or empty mask, a mask with no online CPU, a root with nothing in it */
    setenv("RTSLAB_CPU_MASK", "2-x", 1);
    CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "RTSLAB_CPU_MASK") != NULL);
    CHECK(t.cpus == NULL && t.n_logical == 0);
    setenv("RTSLAB_CPU_MASK", " ", 1);
    CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "RTSLAB_CPU_MASK") != NULL);
    setenv("RTSLAB_CPU_MASK", "8-15", 1);
    CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "none of the 8 online CPUs") != NULL);
    unsetenv("RTSLAB_CPU_MASK");
    CHECK_EQ_INT(topo_load(&t, fixture("no-such-machine"), NULL, err, sizeof err), -1);
    CHECK(strstr(err, "no CPUs found") != NULL);
    topo_free(&t);
    unsetenv("RTSLAB_SYSFS_ROOT");
}

static void test_cpulist(void)
{
    cpu_set_t s;
    CHECK_EQ_INT(topo_parse_cpulist("0", &s), 1);
    CHECK(CPU_ISSET(0, &s));
    CHECK_EQ_INT(topo_parse_cpulist("0-3,8-11", &s), 8);
    CHECK(CPU_ISSET(3, &s) && CPU_ISSET(8, &s) && CPU_ISSET(11, &s) && !CPU_ISSET(4, &s));
    CHECK_EQ_INT(topo_parse_cpulist("0-3,8-11\n", &s), 8);
    CHECK_EQ_INT(topo_parse_cpulist("5,", &s), 1);
    CHECK(CPU_ISSET(5, &s));
    CHECK_EQ_INT(topo_parse_cpulist("5,\n", &s), 1);
    CHECK_EQ_INT(topo_parse_cpulist("", &s), 0);
    CHECK_EQ_INT(topo_parse_cpulist("\n", &s), 0);
    CHECK_EQ_INT(CPU_COUNT(&s), 0);
    CHECK_EQ_INT(topo_parse_cpulist("1,1,0-1", &s), 2);         /* overlaps count once */
    CHECK_EQ_INT(topo_parse_cpulist("7-7", &s), 1);
    CHECK_EQ_INT(topo_parse_cpulist("1023", &s), 1);
    CHECK_EQ_INT(topo_parse_cpulist(NULL, &s), -1);
    const char *bad[] = { "garbage", "x", ",5", "5,,6", "3-1", "0-", "-3", "1 2", "0x1",
                          "1-2-3", "1;2", ",", "2:1", "0-7:2", "1024", "99999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (!CHECK_EQ_INT(topo_parse_cpulist(bad[i], &s), -1))
            fprintf(stderr, "  accepted \"%s\"\n", bad[i]);
    CHECK_EQ_INT(CPU_COUNT(&s), 0);

    char buf[64];
    int a[] = { 0, 1, 2, 3, 8, 6, 7 };
    CHECK_STR(topo_format_cpulist(buf, sizeof buf, a, 7), "0-3,8,6-7");
    CHECK_STR(topo_format_cpulist(buf, sizeof buf, a, 0), "");
    int b[] = { 0, 80, 1, 81 };
    CHECK_STR(topo_format_cpulist(buf, sizeof buf, b, 4), "0,80,1,81");
    char small[8];
    CHECK_STR(topo_format_cpulist(small, sizeof small, b, 4), "0,80...");
}

/* The real machine: its allowed CPUs are sched_getaffinity's. */
static void test_real_machine(void)
{
    Topology t;
    char err[256];
    unsetenv("RTSLAB_SYSFS_ROOT");
    unsetenv("RTSLAB_CPU_MASK");
    cpu_set_t aff;
    if (!CHECK_EQ_INT(sched_getaffinity(0, sizeof aff, &aff), 0))
        return;
    if (!CHECK_EQ_INT(topo_load(&t, NULL, NULL, err, sizeof err), 0)) {
        fprintf(stderr, "  real machine: %s\n", err);
        return;
    }
    fprintf(stderr, "--- this machine\n");
    topo_describe(&t, stderr);
    CHECK(t.n_logical >= 1);
    CHECK_EQ_INT(t.n_logical, CPU_COUNT(&aff));
    CHECK_STR(t.mask_source, "sched_getaffinity");
    for (int k = 0; k < t.n_logical; k++)
        CHECK(CPU_ISSET(t.logical_order[k], &aff));
    check_invariants(&t);
    topo_free(&t);

    /* "" is the real root too */
    if (CHECK_EQ_INT(topo_load(&t, "", NULL, err, sizeof err), 0)) {
        CHECK_EQ_INT(t.n_logical, CPU_COUNT(&aff));
        topo_free(&t);
    }
}

/* topo_get: loaded once, the same for every thread. It reads the environment, so point it
 * at a fixture to know the answer. */
static void *get_topo(void *arg)
{
    (void)arg;
    return (void *)topo_get();
}

static void test_get(void)
{
    setenv("RTSLAB_SYSFS_ROOT", fixture("vm-2s12c24t"), 1);
    setenv("RTSLAB_CPU_MASK", "0-5,12-17", 1);
    pthread_t th[8];
    void *res[8];
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(pthread_create(&th[i], NULL, get_topo, NULL), 0);
    for (int i = 0; i < 8; i++)
        CHECK_EQ_INT(pthread_join(th[i], &res[i]), 0);
    const Topology *t = topo_get();
    for (int i = 0; i < 8; i++)
        CHECK(res[i] == t);
    CHECK_EQ_INT(t->n_logical, 12);
    CHECK_EQ_INT(t->n_physical, 6);
    CHECK_EQ_INT(t->n_nodes, 1);
    /* later changes to the environment do not matter */
    setenv("RTSLAB_CPU_MASK", "0", 1);
    CHECK(topo_get() == t);
    CHECK_EQ_INT(topo_get()->n_logical, 12);
    unsetenv("RTSLAB_SYSFS_ROOT");
    unsetenv("RTSLAB_CPU_MASK");
}

/* Note [NUMA placement] in os/topology.h: the nodes --numa=<mask> uses, each capability's
 * node (pinned by -qa or not), and a node's CPUs, on the 2- and 4-node fixtures. */
static void test_numa(void)
{
    Topology t;
    char err[256];
    int nd[TOPO_MAX_NODES];
    cpu_set_t all = all_cpus(), set;

    if (CHECK_EQ_INT(topo_load(&t, fixture("numa-4n-2s32t"), &all, err, sizeof err), 0)) {
        /* node 4 has no CPU: never in use, even when the mask names it */
        CHECK_EQ_INT(topo_numa_nodes(&t, ~0ull, nd), 4);
        CHECK_STR(ids(nd, 4), "0,1,2,3");
        CHECK_EQ_INT(topo_numa_nodes(&t, 0x1a, nd), 2);       /* nodes 1, 3, 4 */
        CHECK_STR(ids(nd, 2), "1,3");
        CHECK_EQ_INT(topo_numa_nodes(&t, 0x10, nd), 0);       /* node 4 alone: none */
        CHECK_EQ_INT(topo_numa_nodes(&t, 1ull << 63, nd), 0);
        CHECK_EQ_INT(topo_numa_nodes(&t, 0x4, nd), 1);
        CHECK_EQ_INT(nd[0], 2);

        /* all four nodes: pinned caps go to their CPU's node, sibling threads included */
        int n = topo_numa_nodes(&t, ~0ull, nd);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 0, 9), 2);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 1, 25), 2);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 2, 31), 3);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 3, 16), 0);
        /* not pinned: round-robin over the nodes in use, as GHC's --numa */
        static const int rr[] = { 0, 1, 2, 3, 0, 1, 2, 3, 0 };
        for (unsigned c = 0; c < 9; c++)
            CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, c, -1), rr[c]);
        /* -qa with cap i on cpu i, and -qa in physical_order (one capability per core first) */
        for (unsigned c = 0; c < 32; c++)
            CHECK_EQ_INT(nd[topo_numa_node_for_cap(&t, nd, n, c, t.logical_order[c])],
                         (int)(c % 16) / 4);
        static const int phys_nodes[] = { 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3, 0, 2, 1, 3 };
        for (unsigned c = 0; c < 16; c++)
            CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, c, t.physical_order[c]),
                         phys_nodes[c]);
        /* nodes 1 and 3 only: a CPU on node 2 is outside the mask, so round-robin */
        n = topo_numa_nodes(&t, 0xa, nd);
        CHECK_EQ_INT(n, 2);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 4, 9), 0);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 5, 9), 1);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 4, 13), 1);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 5, 4), 0);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, 6, 99), 0);   /* a CPU not allowed */

        CHECK_EQ_INT(topo_node_cpus(&t, 2, &set), 8);
        CHECK(CPU_EQUAL(&set, &(cpu_set_t){0}) == 0);
        cpu_set_t want = mask_of("8-11,24-27");
        CHECK(CPU_EQUAL(&set, &want));
        CHECK_EQ_INT(topo_node_cpus(&t, 4, &set), 0);
        topo_free(&t);
    }
    /* a container given node 0's CPUs only: one node in use */
    cpu_set_t m = mask_of("0-3,16-19");
    if (CHECK_EQ_INT(topo_load(&t, fixture("numa-4n-2s32t"), &m, err, sizeof err), 0)) {
        CHECK_EQ_INT(topo_numa_nodes(&t, ~0ull, nd), 1);
        CHECK_EQ_INT(nd[0], 0);
        CHECK_EQ_INT(topo_numa_nodes(&t, 0xe, nd), 0);
        CHECK_EQ_INT(topo_node_cpus(&t, 1, &set), 0);   /* node 1's CPUs are not allowed */
        topo_free(&t);
    }
    if (CHECK_EQ_INT(topo_load(&t, fixture("numa-2n-interleaved"), &all, err, sizeof err), 0)) {
        int n = topo_numa_nodes(&t, ~0ull, nd);
        CHECK_EQ_INT(n, 2);
        for (unsigned c = 0; c < 8; c++) {
            CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, c, (int)c), (int)c % 2);
            CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, n, c, t.physical_order[c]), (int)c % 2);
        }
        CHECK_EQ_INT(topo_node_cpus(&t, 1, &set), 4);
        cpu_set_t want = mask_of("1,3,5,7");
        CHECK(CPU_EQUAL(&set, &want));
        topo_free(&t);
    }
    /* the one-node machines: one node in use, whatever the mask names beside it */
    if (CHECK_EQ_INT(topo_load(&t, fixture("desktop-4c8t"), &all, err, sizeof err), 0)) {
        CHECK_EQ_INT(topo_numa_nodes(&t, ~0ull, nd), 1);
        CHECK_EQ_INT(topo_numa_nodes(&t, 0x3, nd), 1);
        CHECK_EQ_INT(topo_numa_nodes(&t, 0x2, nd), 0);
        CHECK_EQ_INT(topo_numa_node_for_cap(&t, nd, 1, 7, 5), 0);
        topo_free(&t);
    }
}

/* Writes TEXT as the whole of PATH; false (and a failed check) if it cannot. */
static bool write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!CHECK(f != NULL))
        return false;
    bool ok = fputs(text, f) >= 0;
    return CHECK(fclose(f) == 0 && ok);
}

/* os/sysfs.h: a regular file whole, anything else (too long, a directory, a FIFO, a missing
 * file) unreadable, without blocking. */
static void test_sysfs_read(void)
{
    char dir[] = "/tmp/rtslab-sysfs-XXXXXX", path[64], buf[8];
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    snprintf(path, sizeof path, "%s/f", dir);
    if (write_text(path, "0-6\n")) {                /* 4 bytes: fits in 8 */
        CHECK(sysfs_read_small(path, buf, sizeof buf));
        CHECK_STR(buf, "0-6\n");
    }
    if (write_text(path, "0-3,8-9")) {              /* 7 bytes: exactly len - 1 */
        CHECK(sysfs_read_small(path, buf, sizeof buf));
        CHECK_STR(buf, "0-3,8-9");
    }
    if (write_text(path, "0-3,8-11")) {             /* 8: one too many, not a cut "0-3,8-1" */
        CHECK(!sysfs_read_small(path, buf, sizeof buf));
        CHECK_STR(buf, "");
    }
    if (write_text(path, "")) {                     /* empty */
        CHECK(sysfs_read_small(path, buf, sizeof buf));
        CHECK_STR(buf, "");
    }
    CHECK(!sysfs_read_small(dir, buf, sizeof buf));          /* a directory */
    unlink(path);
    CHECK(!sysfs_read_small(path, buf, sizeof buf));         /* missing */
    if (CHECK(mkfifo(path, 0600) == 0))                      /* a FIFO: refused, not waited on */
        CHECK(!sysfs_read_small(path, buf, sizeof buf));
    unlink(path);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    fixtures = argc > 1 ? argv[1] : getenv("RTSLAB_TOPO_FIXTURES");
    if (fixtures == NULL) {
        fprintf(stderr, "usage: %s FIXTURES_DIR (testsuite/topology/fixtures)\n", argv[0]);
        return 2;
    }
    test_sysfs_read();
    test_cpulist();
    test_fixtures();
    test_details();
    test_environment();
    test_real_machine();
    test_get();
    test_numa();
    return check_done();
}
