/* The spin-yield patch's rule, deterministically (Note [Spin-wait yields] in
 * runtime/sync/spinwait.h): a thread that waits for a spinlock whose holder is off the CPU
 * yields every -qy spins.
 *
 *   test_spin_yield N
 *     The holder takes a SpinLock and keeps it until the waiter has spent 20 ms of its own
 *     CPU time (its thread CPU clock) inside spin_lock: that time can only go to spinning,
 *     however busy the machine is, so the wait is long by construction, not by luck. Then,
 *     with -qy<N> parsed (rts_options_parse_word): the lock counted yields, at least one, and exactly one
 *     per N spins (yields = spins / N, rounded down); the waiter's spin_wait loop is the
 *     one every spin of the runtime goes through, header locks and the GC's waits included.
 *     N = 0: no -qy parsed, as before the options are parsed; the default applies.
 *
 * Built in every build (as every C file of testsuite/patches/PATCH/); the baseline's spin-waits never yield
 * (and count no yields), so there it fails, as a test of the patch must. */
#include "rts_config.h"
#include "base/util.h"
#include "sync/spinlock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static SpinLock lock = SPINLOCK_INIT("test");
static int held;                           /* atomic: the holder has the lock */
static clockid_t waiter_clock;
static struct timespec waiter_cpu_at_start;

static double seconds(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec / 1e9; }

static void *holder(void *arg)
{
    (void)arg;
    spin_lock(&lock);
    clock_gettime(waiter_clock, &waiter_cpu_at_start);
    __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
    struct timespec wall0, now, cpu;
    clock_gettime(CLOCK_MONOTONIC, &wall0);
    for (;;) {
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
        clock_gettime(waiter_clock, &cpu);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (seconds(cpu) - seconds(waiter_cpu_at_start) >= 0.020)
            break;
        if (seconds(now) - seconds(wall0) > 60) {
            fprintf(stderr, "test_spin_yield: the waiter got no 20 ms of CPU in 60 s\n");
            exit(2);
        }
    }
    spin_unlock(&lock);
    return NULL;
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 1000;
#if RTS_PATCH_SPIN_YIELD
    if (n) {                             /* -qy<n>: a row of the patch's (rts/patch_spin_yield.c) */
        RtsOptions o;
        char word[32], err[256];
        rts_options_defaults(&o);
        snprintf(word, sizeof word, "-qy%u", n);
        if (rts_options_parse_word(&o, word, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            return 2;
        }
    }
#endif
    if (pthread_getcpuclockid(pthread_self(), &waiter_clock) != 0) {
        fprintf(stderr, "test_spin_yield: no thread CPU clock\n");
        return 2;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, holder, NULL) != 0)
        return 2;
    while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
        sched_yield();
    spin_lock(&lock);                      /* spins until the holder lets go */
    spin_unlock(&lock);
    pthread_join(t, NULL);

    /* N = 0 parses no -qy, as before the options are parsed: the default applies then
     * (before: every spin yielded) */
#if RTS_PATCH_SPIN_YIELD
    unsigned every = n ? n : (unsigned)RTS_SPIN_YIELD_SPINS;
    uint64_t yields = lock.yields;
#else
    unsigned every = n ? n : 1000;
    uint64_t yields = 0;                   /* the baseline counts none */
#endif
    uint64_t spins = lock.spins;
    bool ok = yields >= 1 && yields == spins / every;
    printf("spin-yield every %u: %llu spins, %llu yields: %s\n", n, (unsigned long long)spins,
           (unsigned long long)yields, ok ? "ok" : "WRONG");
    return ok ? 0 : 1;
}
