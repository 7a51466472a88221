/* Two ways for a futex barrier's waker to know whether anyone sleeps (issue 32, section 3).
 *
 *   count:     rtslab's futex-barrier (Note [Futex barrier] in
 *              runtime/sync/wait_futex_barrier.c). A waiter that has spent its spins
 *              announces itself in a count on a cache line of its own (a seq_cst RMW and a
 *              seq_cst fence), re-reads the word and sleeps in FUTEX_WAIT; the waker stores
 *              the word, then a seq_cst fence and a load of the count, and calls FUTEX_WAKE
 *              only when it is not 0.
 *   contested: OCaml 5.3's barrier (runtime/platform.c, caml_plat_barrier_flip and
 *              latchlike_wait): the word itself has a "someone blocks" bit. A waiter that
 *              has spent its spins sets it with a compare-and-swap and sleeps on the word
 *              with the bit set; the waker replaces the word with an atomic exchange and
 *              calls FUTEX_WAKE only when the old value had the bit.
 *
 * Both are written here from those descriptions, not copied. The benchmark is the
 * stop-the-world pattern reduced to its barrier: T threads meet R times; in each round
 * every thread busy-waits `work_ns` (its share of a GC), adds itself to an arrival count,
 * and the last to arrive resets the count and opens the next epoch (the word); the others
 * wait for it, spinning `spins` times with a CPU pause before they sleep. Prints the time
 * per round and the futex calls per round.
 *
 *   usage: wake_protocols count|contested THREADS SPINS ROUNDS [WORK_NS]
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Code layout as a factor (Note [Code layout as a factor] in tools/layout.py): the runner
 * builds this file several times with LAYOUT_PAD bytes of padding before the code below
 * (with -fno-toplevel-reorder, which keeps it first). */
#ifdef LAYOUT_PAD
#define STR_(x) #x
#define STR(x) STR_(x)
__asm__(".text\n.skip " STR(LAYOUT_PAD) ", 0x90\n");
#endif

#define LINE 64
#define CONTESTED 1u                       /* the word: epoch << 1 | CONTESTED */

static int contested_protocol;
static unsigned n_threads, spins;
static uint64_t rounds, work_ns;

static struct { _Alignas(LINE) uint32_t n; } arrived;
static struct { _Alignas(LINE) uint32_t v; } word;
static struct { _Alignas(LINE) uint32_t n; } sleepers;     /* the count protocol's */
static struct { _Alignas(LINE) uint64_t waits, wakes; } calls;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void futex_wait(uint32_t *w, uint32_t v)
{
    syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake_all(uint32_t *w)
{
    syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Epochs are 31 bits; a run stays far below the wrap. */
static inline int reached(uint32_t w, uint32_t epoch) { return (w >> 1) >= epoch; }

static void wait_count(uint32_t epoch, uint64_t *waits)
{
    for (;;) {
        __atomic_fetch_add(&sleepers.n, 1, __ATOMIC_SEQ_CST);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        uint32_t v = __atomic_load_n(&word.v, __ATOMIC_SEQ_CST);
        if (reached(v, epoch)) {
            __atomic_fetch_sub(&sleepers.n, 1, __ATOMIC_RELEASE);
            return;
        }
        futex_wait(&word.v, v);
        ++*waits;
        __atomic_fetch_sub(&sleepers.n, 1, __ATOMIC_RELEASE);
        if (reached(__atomic_load_n(&word.v, __ATOMIC_ACQUIRE), epoch))
            return;
    }
}

static void wake_count(uint32_t epoch, uint64_t *wakes)
{
    __atomic_store_n(&word.v, epoch << 1, __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sleepers.n, __ATOMIC_SEQ_CST)) {
        futex_wake_all(&word.v);
        ++*wakes;
    }
}

static void wait_contested(uint32_t epoch, uint64_t *waits)
{
    for (;;) {
        uint32_t v = __atomic_load_n(&word.v, __ATOMIC_ACQUIRE);
        if (reached(v, epoch))
            return;
        if (!(v & CONTESTED)) {
            if (!__atomic_compare_exchange_n(&word.v, &v, v | CONTESTED, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
                continue;                 /* the word changed: look again */
            v |= CONTESTED;
        }
        futex_wait(&word.v, v);
        ++*waits;
    }
}

static void wake_contested(uint32_t epoch, uint64_t *wakes)
{
    if (__atomic_exchange_n(&word.v, epoch << 1, __ATOMIC_ACQ_REL) & CONTESTED) {
        futex_wake_all(&word.v);
        ++*wakes;
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    uint64_t waits = 0, wakes = 0;
    for (uint64_t r = 1; r <= rounds; r++) {
        uint64_t until = now_ns() + work_ns;
        while (work_ns && now_ns() < until)
            cpu_relax();
        uint32_t epoch = (uint32_t)r;
        if (__atomic_fetch_add(&arrived.n, 1, __ATOMIC_ACQ_REL) == n_threads - 1) {
            __atomic_store_n(&arrived.n, 0, __ATOMIC_RELAXED);   /* published by the wake */
            if (contested_protocol) wake_contested(epoch, &wakes);
            else wake_count(epoch, &wakes);
            continue;
        }
        unsigned k = 0;
        for (; k < spins; k++) {
            if (reached(__atomic_load_n(&word.v, __ATOMIC_ACQUIRE), epoch))
                break;
            cpu_relax();
        }
        if (k < spins)
            continue;
        if (contested_protocol) wait_contested(epoch, &waits);
        else wait_count(epoch, &waits);
    }
    __atomic_fetch_add(&calls.waits, waits, __ATOMIC_RELAXED);
    __atomic_fetch_add(&calls.wakes, wakes, __ATOMIC_RELAXED);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "count") && strcmp(argv[1], "contested"))) {
        fprintf(stderr, "usage: %s count|contested THREADS SPINS ROUNDS [WORK_NS]\n", argv[0]);
        return 2;
    }
    contested_protocol = !strcmp(argv[1], "contested");
    n_threads = (unsigned)strtoul(argv[2], NULL, 10);
    spins = (unsigned)strtoul(argv[3], NULL, 10);
    rounds = strtoull(argv[4], NULL, 10);
    work_ns = argc > 5 ? strtoull(argv[5], NULL, 10) : 0;
    if (n_threads < 2 || n_threads > 64 || rounds == 0 || rounds >= (1u << 30)) {
        fprintf(stderr, "%s: 2-64 threads, 1 to 2^30 - 1 rounds\n", argv[0]);
        return 2;
    }
    pthread_t t[64];
    uint64_t t0 = now_ns();
    for (unsigned i = 0; i < n_threads; i++)
        if (pthread_create(&t[i], NULL, thread_main, NULL)) {
            perror("pthread_create");
            return 1;
        }
    for (unsigned i = 0; i < n_threads; i++)
        pthread_join(t[i], NULL);
    double ns = (double)(now_ns() - t0);
    if (__atomic_load_n(&word.v, __ATOMIC_RELAXED) >> 1 != (uint32_t)rounds) {
        fprintf(stderr, "%s: the barrier ended at epoch %u, not %llu\n", argv[0],
                word.v >> 1, (unsigned long long)rounds);
        return 1;
    }
    printf("protocol=%s threads=%u spins=%u work_ns=%llu rounds=%llu ns_per_round=%.0f "
           "futex_waits_per_round=%.3f futex_wakes_per_round=%.3f\n",
           argv[1], n_threads, spins, (unsigned long long)work_ns,
           (unsigned long long)rounds, ns / (double)rounds,
           (double)calls.waits / (double)rounds, (double)calls.wakes / (double)rounds);
    return 0;
}
