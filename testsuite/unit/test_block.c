/* Unit test: the block allocator (runtime/sm/block.c) on its own. */
#include "sm/block.h"
#include "base/util.h"
#include "unit/check.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_HEAP() do { const char *e_ = blk_check(); if (e_) fprintf(stderr, "%s\n", e_); CHECK(e_ == NULL); } while (0)

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static size_t mblocks_of(size_t n)
{
    return n <= USABLE_BLOCKS_PER_MBLOCK
         ? 1 : 1 + (n - USABLE_BLOCKS_PER_MBLOCK + BLOCKS_PER_MBLOCK - 1) / BLOCKS_PER_MBLOCK;
}

/* Blocks a group of n counts in blk_blocks_in_use(). */
static size_t accounted(size_t n)
{
    return n <= USABLE_BLOCKS_PER_MBLOCK ? n : MBGROUP_BLOCKS(mblocks_of(n));
}

/* A freshly allocated group of n blocks: its head and the descriptors of its blocks. */
static void check_group(bdescr *bd, size_t n)
{
    uintptr_t start = (uintptr_t)bd->start;
    CHECK(bd != NULL);
    CHECK(start % BLOCK_SIZE == 0);
    CHECK(bd->free == bd->start);
    CHECK_EQ_INT(bd->blocks, n > USABLE_BLOCKS_PER_MBLOCK ? MBGROUP_BLOCKS(1 + (n - USABLE_BLOCKS_PER_MBLOCK + BLOCKS_PER_MBLOCK - 1) / BLOCKS_PER_MBLOCK) : n);
    CHECK(bd->link == NULL && bd->prev == NULL);
    CHECK_EQ_INT(bd->gen, 0);
    CHECK_EQ_INT(bd->flags, n > USABLE_BLOCKS_PER_MBLOCK ? BF_MBGROUP : 0);
    CHECK(bdescr_of(bd->start) == bd);
    CHECK(blk_is_heap_address(bd->start));
    CHECK(blk_is_heap_address(bd->start + n * BLOCK_SIZE - 1));
    CHECK(bd->blocks >= n && blk_group_end(bd) == bd->start + (size_t)bd->blocks * BLOCK_SIZE);
    if (n > USABLE_BLOCKS_PER_MBLOCK) {
        CHECK(start % MBLOCK_SIZE == FIRST_USABLE_BLOCK * BLOCK_SIZE);
    } else {
        CHECK(start % MBLOCK_SIZE >= FIRST_USABLE_BLOCK * BLOCK_SIZE);
        CHECK((start & ~(uintptr_t)MBLOCK_MASK) == ((start + n * BLOCK_SIZE - 1) & ~(uintptr_t)MBLOCK_MASK));
    }
    size_t described = n > USABLE_BLOCKS_PER_MBLOCK ? USABLE_BLOCKS_PER_MBLOCK : n;
    for (size_t i = 0; i < described; i++) {
        uint8_t *p = bd->start + i * BLOCK_SIZE;
        CHECK(bdescr_of(p) == bd + i);
        CHECK(bdescr_of(p + BLOCK_SIZE - 1) == bd + i);
        if (i > 0)
            CHECK(bd[i].blocks == 0 && bd[i].link == bd);
    }
}

static void fill(bdescr *bd, size_t n, uint64_t tag)
{
    uint64_t *w = (uint64_t *)bd->start;
    for (size_t i = 0; i < n * BLOCK_SIZE / sizeof *w; i++)
        w[i] = tag;
}

static int intact(bdescr *bd, size_t n, uint64_t tag)
{
    const uint64_t *w = (const uint64_t *)bd->start;
    for (size_t i = 0; i < n * BLOCK_SIZE / sizeof *w; i++)
        if (w[i] != tag)
            return 0;
    return 1;
}

/* From a fresh allocator: neighbours coalesce whichever order they are freed in. */
static void test_coalesce(void)
{
    CHECK_EQ_INT(blk_mblocks(), 0);
    bdescr *a = blk_alloc_group(10), *b = blk_alloc_group(10), *c = blk_alloc_group(10);
    CHECK_EQ_INT(blk_mblocks(), 1);
    CHECK(b->start == a->start + 10 * BLOCK_SIZE && c->start == b->start + 10 * BLOCK_SIZE);
    CHECK_EQ_INT(blk_blocks_in_use(), 30);
    CHECK_EQ_INT(blk_blocks_free(), USABLE_BLOCKS_PER_MBLOCK - 30);
    CHECK_HEAP();
    blk_free_group(a);
    CHECK_HEAP();
    blk_free_group(c);
    CHECK_HEAP();
    /* b now has free groups on both sides; a 20-block request cannot be met below it. */
    bdescr *d = blk_alloc_group(20);
    CHECK(d->start == c->start);
    CHECK_HEAP();
    blk_free_group(d);
    blk_free_group(b);
    CHECK_HEAP();
    CHECK_EQ_INT(blk_blocks_in_use(), 0);
    CHECK_EQ_INT(blk_blocks_free(), USABLE_BLOCKS_PER_MBLOCK);
    bdescr *whole = blk_alloc_group(USABLE_BLOCKS_PER_MBLOCK);
    check_group(whole, USABLE_BLOCKS_PER_MBLOCK);
    CHECK(whole->start == a->start);
    CHECK_EQ_INT(blk_mblocks(), 1);
    blk_free_group(whole);
    CHECK_HEAP();
}

static void test_single_blocks(void)
{
    enum { N = 1000 };
    static bdescr *bds[N];
    size_t before = blk_blocks_in_use();
    for (size_t i = 0; i < N; i++) {
        bds[i] = blk_alloc();
        check_group(bds[i], 1);
        fill(bds[i], 1, 0xB10C000000000000ull + i);
    }
    CHECK_EQ_INT(blk_blocks_in_use(), before + N);
    CHECK_HEAP();
    for (size_t i = 0; i < N; i++)
        CHECK(intact(bds[i], 1, 0xB10C000000000000ull + i));
    for (size_t i = N - 1; i > 0; i--) {        /* free in a random order */
        size_t j = next_rand() % (i + 1);
        bdescr *t = bds[i]; bds[i] = bds[j]; bds[j] = t;
    }
    for (size_t i = 0; i < N; i++) {
        blk_free_group(bds[i]);
        if (i % 50 == 0)
            CHECK_HEAP();
    }
    CHECK_HEAP();
    CHECK_EQ_INT(blk_blocks_in_use(), before);
}

static void test_group_sizes(void)
{
    static const size_t sizes[] = { 1, 2, 3, 7, 8, 9, 63, 64, 65, 100, 127, 128, 129, 200, 251, 252 };
    enum { NS = sizeof sizes / sizeof sizes[0] };
    bdescr *bds[NS];
    for (size_t i = 0; i < NS; i++) {
        bds[i] = blk_alloc_group(sizes[i]);
        check_group(bds[i], sizes[i]);
        fill(bds[i], sizes[i], i + 1);
        CHECK_HEAP();
    }
    for (size_t i = 0; i < NS; i++)
        CHECK(intact(bds[i], sizes[i], i + 1));
    for (size_t i = 0; i < NS; i += 2)
        blk_free_group(bds[i]);
    CHECK_HEAP();
    for (size_t i = 1; i < NS; i += 2)
        blk_free_group(bds[i]);
    CHECK_HEAP();
}

static void test_mbgroups(void)
{
    size_t n = 3 * BLOCKS_PER_MBLOCK;              /* 3 MiB: needs 4 megablocks */
    size_t k = mblocks_of(n);
    CHECK_EQ_INT(k, 4);
    size_t mb0 = blk_mblocks(), used0 = blk_blocks_in_use(), free0 = blk_blocks_free();

    bdescr *g = blk_alloc_group(n);
    check_group(g, n);
    CHECK(blk_mblocks() <= mb0 + k);
    CHECK_EQ_INT(blk_blocks_in_use(), used0 + MBGROUP_BLOCKS(k));
    fill(g, n, 0x3333333333333333ull);
    CHECK_HEAP();
    bdescr *s = blk_alloc();                       /* never inside the megablock group */
    CHECK(s->start + BLOCK_SIZE <= g->start || s->start >= g->start + n * BLOCK_SIZE);
    CHECK(intact(g, n, 0x3333333333333333ull));
    blk_free_group(s);
    blk_free_group(g);
    CHECK_HEAP();
    size_t mb1 = blk_mblocks();
    CHECK_EQ_INT(blk_blocks_in_use(), used0);
    CHECK_EQ_INT(blk_blocks_free(), free0 + (mb1 - mb0) * USABLE_BLOCKS_PER_MBLOCK);

    /* Its k contiguous megablocks are reused, whole or split into ordinary groups. */
    g = blk_alloc_group(n);
    check_group(g, n);
    CHECK_EQ_INT(blk_mblocks(), mb1);
    blk_free_group(g);
    CHECK_HEAP();
    bdescr *wholes[4];
    for (size_t i = 0; i < k; i++)
        wholes[i] = blk_alloc_group(USABLE_BLOCKS_PER_MBLOCK);
    CHECK_EQ_INT(blk_mblocks(), mb1);
    CHECK_HEAP();
    for (size_t i = 0; i < k; i++)
        blk_free_group(wholes[i]);
    CHECK_HEAP();

    /* The smallest megablock group, and one just past a whole number of megablocks. */
    bdescr *a = blk_alloc_group(USABLE_BLOCKS_PER_MBLOCK + 1);
    check_group(a, USABLE_BLOCKS_PER_MBLOCK + 1);
    bdescr *b = blk_alloc_group(MBGROUP_BLOCKS(3) + 1);
    check_group(b, MBGROUP_BLOCKS(3) + 1);
    fill(a, a->blocks, 1);
    fill(b, b->blocks, 2);
    CHECK(intact(a, a->blocks, 1));
    CHECK_HEAP();
    blk_free_group(b);
    blk_free_group(a);
    CHECK_HEAP();
}

static void test_free_chain(void)
{
    size_t used0 = blk_blocks_in_use();
    bdescr *chain = NULL;
    for (size_t i = 1; i <= 20; i++) {
        bdescr *bd = blk_alloc_group(i * 13 % 300 + 1);
        bd->link = chain;
        chain = bd;
    }
    CHECK(blk_blocks_in_use() > used0);
    blk_free_chain(chain);
    CHECK_EQ_INT(blk_blocks_in_use(), used0);
    CHECK_HEAP();
}

static void test_heap_address(void)
{
    int local = 0;
    char *m = malloc(64);
    CHECK(!blk_is_heap_address(&local));
    CHECK(!blk_is_heap_address(m));
    CHECK(!blk_is_heap_address(NULL));
    CHECK(!blk_is_heap_address((void *)test_heap_address));
    free(m);
    bdescr *bd = blk_alloc();
    CHECK(blk_is_heap_address(bd));
    CHECK(blk_is_heap_address(bd->start + BLOCK_SIZE / 2));
    blk_free_group(bd);
}

/* Note [Returning megablocks] in sm/block.h: a group shrunk keeps its first blocks intact and
 * frees the rest (whole megablocks of a megablock group become free megablocks); free
 * megablocks beyond `keep` are unmapped, forgotten by blk_is_heap_address, and the record
 * still finds every megablock that stays (deletion from the hash set keeps its clusters). */
static void test_shrink_and_return(void)
{
    size_t used0 = blk_blocks_in_use();

    /* An ordinary group shrunk: the remainder coalesces with the free group after it. */
    bdescr *a = blk_alloc_group(100);
    fill(a, 100, 0x5151515151515151ull);
    blk_shrink_group(a, 10);
    CHECK_EQ_INT(a->blocks, 10);
    CHECK(intact(a, 10, 0x5151515151515151ull));
    CHECK_EQ_INT(blk_blocks_in_use(), used0 + 10);
    CHECK_HEAP();
    blk_free_group(a);
    CHECK_HEAP();

    /* A 9-megablock group shrunk to 3 megablocks, then to part of its first megablock. */
    size_t n = MBGROUP_BLOCKS(9);
    bdescr *g = blk_alloc_group(n);
    fill(g, n, 0x6262626262626262ull);
    size_t free_mb = blk_free_mblocks();
    blk_shrink_group(g, MBGROUP_BLOCKS(2) + 1);
    CHECK_EQ_INT(g->blocks, MBGROUP_BLOCKS(3));
    CHECK_EQ_INT(blk_free_mblocks(), free_mb + 6);
    CHECK_EQ_INT(blk_blocks_in_use(), used0 + MBGROUP_BLOCKS(3));
    CHECK(intact(g, MBGROUP_BLOCKS(3), 0x6262626262626262ull));
    CHECK_HEAP();
    blk_shrink_group(g, 40);
    CHECK_EQ_INT(g->blocks, 40);
    CHECK(!(g->flags & BF_MBGROUP));
    CHECK_EQ_INT(blk_free_mblocks(), free_mb + 8);
    CHECK_EQ_INT(blk_blocks_in_use(), used0 + 40);
    CHECK(intact(g, 40, 0x6262626262626262ull));
    for (size_t i = 1; i < 40; i++)
        CHECK(bdescr_of(g->start + i * BLOCK_SIZE) == g + i && g[i].link == g);
    CHECK_HEAP();

    /* Return all free megablocks but those a `keep` allows; what stays is still found. */
    bdescr *held[12];
    for (int i = 0; i < 12; i++)
        held[i] = blk_alloc_group(USABLE_BLOCKS_PER_MBLOCK);
    uint8_t *gone = NULL;
    for (int i = 0; i < 12; i += 2) {              /* every other one, so runs are short */
        if (!gone || held[i]->start > gone)
            gone = held[i]->start;
        blk_free_group(held[i]);
    }
    CHECK_HEAP();
    size_t mb = blk_mblocks(), fm = blk_free_mblocks();
    uint64_t returned0 = blk_mblocks_returned();
    CHECK(fm >= 6);
    CHECK_EQ_INT(blk_return_mblocks(mb - 3), 3);   /* three of them */
    CHECK_EQ_INT(blk_mblocks(), mb - 3);
    CHECK_EQ_INT(blk_free_mblocks(), fm - 3);
    CHECK_EQ_INT(blk_mblocks_returned(), returned0 + 3);
    CHECK_HEAP();
    CHECK_EQ_INT(blk_return_mblocks(0), fm - 3);   /* then every free one */
    CHECK_EQ_INT(blk_free_mblocks(), 0);
    CHECK_EQ_INT(blk_mblocks(), mb - fm);
    CHECK(!blk_is_heap_address(gone));             /* the highest went first */
    CHECK_HEAP();
    CHECK_EQ_INT(blk_return_mblocks(0), 0);
    for (int i = 1; i < 12; i += 2) {
        CHECK(blk_is_heap_address(held[i]->start));
        CHECK(bdescr_of(held[i]->start) == held[i]);
    }
    CHECK(blk_is_heap_address(g->start));
    CHECK(intact(g, 40, 0x6262626262626262ull));
    CHECK_EQ_INT(blk_mblocks_peak() >= mb, 1);

    /* Memory is mapped again when needed. */
    bdescr *again = blk_alloc_group(MBGROUP_BLOCKS(4));
    fill(again, MBGROUP_BLOCKS(4), 7);
    CHECK(intact(again, MBGROUP_BLOCKS(4), 7));
    CHECK_HEAP();
    blk_free_group(again);
    for (int i = 1; i < 12; i += 2)
        blk_free_group(held[i]);
    blk_free_group(g);
    CHECK_EQ_INT(blk_blocks_in_use(), used0);
    CHECK_HEAP();
}

/* Random allocations and frees, every byte tagged, the invariants checked after each step. */
static void test_stress(void)
{
    enum { OPS = 4000, MAX_LIVE = 400 };
    static struct { bdescr *bd; size_t n; uint64_t tag; } live[MAX_LIVE];
    size_t nlive = 0, expect_used = blk_blocks_in_use();
    for (int op = 0; op < OPS; op++) {
        uint64_t r = next_rand();
        if (nlive < MAX_LIVE && (nlive == 0 || r % 100 < 55)) {
            size_t n, kind = (r >> 8) % 100;
            if (kind < 60)
                n = 1 + (r >> 16) % 8;
            else if (kind < 90)
                n = 1 + (r >> 16) % 64;
            else if (kind < 98)
                n = 1 + (r >> 16) % USABLE_BLOCKS_PER_MBLOCK;
            else
                n = USABLE_BLOCKS_PER_MBLOCK + 1 + (r >> 16) % (2 * BLOCKS_PER_MBLOCK);
            bdescr *bd = blk_alloc_group(n);
            check_group(bd, n);
            uint64_t tag = next_rand() | 1;
            fill(bd, n, tag);
            size_t i = nlive++;
            live[i].bd = bd;
            live[i].n = n;
            live[i].tag = tag;
            expect_used += accounted(n);
        } else {
            size_t i = (r >> 8) % nlive;
            bdescr *bd = live[i].bd;
            CHECK(intact(bd, live[i].n, live[i].tag));
            size_t b = (r >> 24) % (live[i].n > USABLE_BLOCKS_PER_MBLOCK ? USABLE_BLOCKS_PER_MBLOCK : live[i].n);
            uint8_t *p = bd->start + b * BLOCK_SIZE + (r >> 40) % BLOCK_SIZE;
            CHECK(bdescr_of(p) == bd + b);
            CHECK(b == 0 || bdescr_of(p)->link == bd);
            blk_free_group(bd);
            expect_used -= accounted(live[i].n);
            live[i] = live[--nlive];
        }
        CHECK_HEAP();
        CHECK_EQ_INT(blk_blocks_in_use(), expect_used);
    }
    for (size_t i = 0; i < nlive; i++) {
        CHECK(intact(live[i].bd, live[i].n, live[i].tag));
        blk_free_group(live[i].bd);
    }
    CHECK_HEAP();
}

/* Note [Megablocks on NUMA nodes] in sm/block.c: three heap nodes (no memory policy: none
 * is set without numa_init). Groups come from their node's megablocks only; a freed group
 * goes back to its node's lists, so the next allocation on that node reuses it and one on
 * another node never does; megablock groups, freed, become free megablocks of their node. */
static void test_nodes(void)
{
    enum { NODES = 3, PER = 40 };
    blk_set_nodes(NODES);
    CHECK_EQ_INT(blk_heap_nodes(), NODES);
    bdescr *bd[NODES][PER];
    for (int i = 0; i < PER; i++)
        for (unsigned node = 0; node < NODES; node++) {
            size_t n = 1 + (size_t)(next_rand() % 20);
            bd[node][i] = blk_alloc_group_on(n, node);
            check_group(bd[node][i], n);
            CHECK_EQ_INT(blk_node_of(bd[node][i]->start), node);
            CHECK_EQ_INT(blk_node_of(bd[node][i]->start + n * BLOCK_SIZE - 1), node);
        }
    CHECK_HEAP();
    /* A freed single block on node 1 is what node 1's next single block is (the lists are
     * LIFO), and node 0 and 2 never get it. */
    bdescr *one = blk_alloc_on(1);
    uint8_t *addr = one->start;
    blk_free_group(one);
    bdescr *on0 = blk_alloc_on(0), *on2 = blk_alloc_on(2);
    CHECK(on0->start != addr && on2->start != addr);
    CHECK_EQ_INT(blk_node_of(on0->start), 0);
    CHECK_EQ_INT(blk_node_of(on2->start), 2);
    bdescr *again = blk_alloc_on(1);
    CHECK(again->start == addr);
    blk_free_group(on0);
    blk_free_group(on2);
    blk_free_group(again);
    /* Megablock groups on a node; freed, their megablocks serve that node again. */
    size_t big = 2 * BLOCKS_PER_MBLOCK;
    bdescr *g2 = blk_alloc_group_on(big, 2);
    check_group(g2, big);
    CHECK_EQ_INT(blk_node_of(g2->start), 2);
    uint8_t *g2addr = g2->start;
    size_t mb = blk_mblocks();
    blk_free_group(g2);
    CHECK_HEAP();
    bdescr *g0 = blk_alloc_group_on(big, 0);     /* never node 2's free megablocks */
    CHECK(g0->start != g2addr);
    CHECK_EQ_INT(blk_node_of(g0->start), 0);
    mb = blk_mblocks();
    bdescr *g2b = blk_alloc_group_on(big, 2);    /* node 2's free megablocks, whole again */
    CHECK(g2b->start == g2addr);
    CHECK_EQ_INT(blk_mblocks(), mb);
    /* Each continuation megablock of a freed group is a free megablock of the group's node
     * (its descriptor 0 held payload): split again, it serves node 2 only. */
    memset(g2b->start, 0, big * BLOCK_SIZE);     /* scribble over the payload: node 0 */
    blk_free_group(g2b);
    blk_free_group(g0);
    CHECK_HEAP();
    bdescr *g2c = blk_alloc_group_on(big, 2);    /* both megablocks are node 2's again */
    CHECK(g2c->start == g2addr);
    CHECK_EQ_INT(blk_mblocks(), mb);
    blk_free_group(g2c);
    for (int i = 0; i < 3 * (int)USABLE_BLOCKS_PER_MBLOCK; i++) {
        bdescr *b = blk_alloc_on(2);
        CHECK_EQ_INT(blk_node_of(b->start), 2);
        b->link = bd[2][0]->link;                /* keep it: a chain off a node-2 group */
        bd[2][0]->link = b;
    }
    CHECK_HEAP();
    for (unsigned node = 0; node < NODES; node++)
        for (int i = 0; i < PER; i++) {
            if (node == 2 && i == 0) {
                blk_free_chain(bd[2][0]);
                continue;
            }
            blk_free_group(bd[node][i]);
        }
    CHECK_HEAP();
}

static void false_assertion(void)
{
    RTS_ASSERT(1 + 1 == 3);
}

/* A group freed twice: its second blk_free_group finds it free (neighbours allocated, so the
 * first free made it a free group of its own). */
static void double_free(void)
{
    bdescr *a = blk_alloc(), *b = blk_alloc(), *c = blk_alloc();
    blk_free_group(b);
    blk_free_group(b);
    (void)a;
    (void)c;
}

/* Note [Assertions] in base/util.h: RTS_ASSERT evaluates its condition in a debug build
 * (--enable-debug: make check-sanitize's build) and only there; a false one is fatal there,
 * naming the condition, and nothing otherwise. The block allocator's checks are RTS_ASSERTs:
 * a debug build catches a group freed twice. */
static void test_assertions(void)
{
    int evaluated = 0;
    RTS_ASSERT(++evaluated == 1);
    CHECK_EQ_INT(evaluated, RTS_DEBUG);

    char err[1024];
    int status = check_in_child(false_assertion, err, sizeof err);
    if (RTS_DEBUG) {
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
        CHECK(strstr(err, "rtslab: fatal: assertion failed: 1 + 1 == 3 (") != NULL);
        CHECK(strstr(err, "test_block.c") != NULL && strstr(err, "false_assertion") != NULL);
        status = check_in_child(double_free, err, sizeof err);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
        CHECK(strstr(err, "assertion failed: bd->blocks > 0 && !(bd->flags & BF_FREE)") != NULL);
    } else {
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK_STR(err, "");
    }
}

int main(void)
{
    blk_init();
    blk_init();                                    /* idempotent */
    CHECK_HEAP();
    test_assertions();
    test_coalesce();
    test_single_blocks();
    test_group_sizes();
    test_mbgroups();
    test_free_chain();
    test_heap_address();
    test_stress();
    test_nodes();
    test_shrink_and_return();

    /* Everything freed: all blocks free, and a whole megablock needs no new one. */
    CHECK_EQ_INT(blk_blocks_in_use(), 0);
    CHECK_EQ_INT(blk_blocks_free(), blk_mblocks() * USABLE_BLOCKS_PER_MBLOCK);
    size_t mb = blk_mblocks();
    bdescr *whole = blk_alloc_group(USABLE_BLOCKS_PER_MBLOCK);
    CHECK(whole != NULL);
    CHECK_EQ_INT(blk_mblocks(), mb);
    blk_free_group(whole);
    CHECK_HEAP();
    return check_done();
}
