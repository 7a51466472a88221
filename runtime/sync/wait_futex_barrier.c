#include "rtslab_config.h"
#if RTS_PATCH_FUTEX_BARRIER
/* The waits of the futex-barrier patch: sync_wait and sync_wake (Note [Futex barrier]), the
 * spin count (Note [Spinning when oversubscribed]). The build compiles this file instead of
 * sync/wait.c, the baseline's waits; the counters (sync_wait_counts) and the baseline's
 * sleep loop, to which a wait falls back (Note [When futex fails]), are
 * sync/wait_common.c's. */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "sync/wait.h"
#include "sync/spinlock.h"
#include "base/util.h"
#include "trace/eventlog.h"

/* As in sync/wait.c, whose waits these replace. */
static void add(uint64_t *p, uint64_t n) { __atomic_fetch_add(p, n, __ATOMIC_RELAXED); }

/* Note [Futex barrier]
 * ~~~~~~~~~~~~~~~~~~~~
 * A wait spins `spin_limit` times (+RTS -qw) with a CPU pause, re-checking ready() after
 * each; then it blocks in FUTEX_WAIT on the 32-bit word it names, and whoever changes that
 * word wakes it with FUTEX_WAKE. No timed sleep is left anywhere in the protocol, so a
 * sleeper runs again as soon as the kernel can schedule it, not at the end of a 10 us ..
 * 1 s nanosleep (Note [Baseline waiting]), and a waker makes no system call when nobody
 * sleeps.
 *
 * Who may sleep is announced in `sleepers[kind]`, one count per kind of wait on a cache line
 * of its own: every kind sleeps on one word of the protocol (enter: stw_sync.go; arrival:
 * stw_sync.arriving; GC done: stw_sync.done; leave: stw_sync.released), so the count is the
 * count "beside the word", and sync_wake, which names the kind, reads just that line. (Two
 * words sharing a kind, as in the unit tests, cost at worst a FUTEX_WAKE that finds nobody
 * on its word; never a lost wake-up.)
 *
 * A waiter, once its spins are spent, loops:
 *   W1. announce: sleepers[kind] += 1 (a seq_cst RMW), then a seq_cst fence;
 *   W2. recheck:  v = *word; if ready(): withdraw (sleepers[kind] -= 1) and return;
 *   W3. wait:     FUTEX_WAIT(word, v); withdraw; if ready() return, else go to W1.
 * A waker, having stored the new value of the word (the callers in sync/stw.c do that with
 * release or stronger ordering), runs
 *   K1. a seq_cst fence; K2. if sleepers[kind] == 0: return (no system call);
 *   K3. FUTEX_WAKE(word, all).
 *
 * No lost wake-up. Suppose the waker's store S makes ready() true and a waiter reaches W3.
 * The two fences are ordered in the single total order of seq_cst operations:
 *   - if the waiter's fence (W1) comes first, K2's load sees the announcement (or a later
 *     value of the count, which still includes it: a waiter withdraws only after W2 or W3),
 *     so the waker calls FUTEX_WAKE. Either the waiter is already queued on the word and is
 *     woken, or it is not yet, and then its FUTEX_WAIT, which compares *word with v
 *     atomically with queueing it, finds S (stored before K1, so before the wake) instead of
 *     v and returns at once (EAGAIN);
 *   - if the waker's fence comes first, the waiter's W2 load of the word comes after it and
 *     sees S (or later), and ready() -- which depends only on that word (the rule of
 *     wait.h) -- is true: it never calls FUTEX_WAIT.
 * v is read in W2 *before* ready() is evaluated, so v is a value for which ready() was false
 * or an older one: FUTEX_WAIT never sleeps on a value that already satisfies the waiter. A
 * value of the word that changes without making ready() true (the unit tests do that), a
 * spurious wake-up, EINTR or EAGAIN only send the waiter round the loop again.
 * The words only grow (epochs, modulo 2^30; counts) or count down to 0 and are reset once
 * the waiter has gone (stw_sync.arriving, by the leader that was its only waiter), so no
 * ABA: the word does not come back to v while someone sleeps on v. An epoch word (`go`,
 * `released`) would come back only after 2^30 more syncs, and the sync after the one a
 * waiter waits for cannot end without it (Note [Counters that wrap] in sync/stw.h).
 *
 * No system call when nobody sleeps: K2 returns when the count is 0, and the count is only
 * non-zero between W1 and the withdrawal, i.e. while a waiter has spent its spins and is
 * about to sleep or sleeping. That waiter may be waiting for a later value than the waker's
 * store gives (a waker delayed between its store and K2, its waiter already on to the next
 * round): the FUTEX_WAKE is then wasted, and one announcement can see two of them (the unit
 * test's bound, test_futex_barrier.c); never a lost one. The statistics count both outcomes of sync_wake (futex_wakes,
 * quiet_wakes) per kind, and the waiters' announcements (announced), so a test can check
 * that futex_wakes is 0 in a kind where nothing was ever announced.
 *
 * ThreadSanitizer does not see the futex, only the atomics; everything a waiter reads after
 * it returns was published by a release store it acquired in ready(), as in the baseline.
 */
/* Note [When futex fails]
 * ~~~~~~~~~~~~~~~~~~~~~~~~
 * In normal operation a futex call fails only with EAGAIN (FUTEX_WAIT: the word is no
 * longer v), EINTR (a signal) or ETIMEDOUT (none here: no timeout is given); each sends a
 * waiter round its loop again. Any other error is for good: ENOSYS (no futex in this
 * kernel or emulator), EPERM or another errno from a seccomp filter, EFAULT, EINVAL. Left
 * alone, such an error would turn every wait into a loop of failing system calls until
 * ready(). So the first such error of either call sets `futex_failed` (to its errno), and
 * from then on a waiter that has spent its spins sleeps as the baseline's do (Note
 * [Baseline waiting] in wait.h: sync_sleep_until, the base's own loop), announcing
 * nothing, so that wakers make no system call either (K2 finds no announcement). A waiter
 * whose FUTEX_WAIT fails withdraws its announcement and polls at once. The calls that fail
 * are those made before the flag is seen: about one per thread then waiting or waking.
 * Nothing is printed when it happens (as the I/O manager's fall-back from io_uring to
 * epoll prints nothing): -s says it in the futex-barrier section, and --machine-readable
 * counts, per kind, the failed calls (`futex_errors`) and the waits that polled
 * (`polled_waits`). Not covered: a FUTEX_WAKE failing for good while FUTEX_WAIT works (both
 * name the same word with the same flags; no known cause) would leave a sleeper asleep.
 * testsuite/patches/futex-barrier/TESTS, futex_fail_*: every futex call of the runtime
 * refused (futex_fail.c, an interposed syscall()), the programs end right, with a
 * bounded number of failed calls. */
static int futex_failed;             /* atomic: the errno of the first failure for good, or 0 */

/* Whether the result r of a futex call (for a wait of kind `kind`) is a failure for good;
 * counts it and sets futex_failed (see the Note). */
static bool failed_for_good(long r, SyncWaitKind kind)
{
    if (r != -1)
        return false;
    int e = errno;
    if (e == EAGAIN || e == EINTR || e == ETIMEDOUT)
        return false;
    int none = 0;
    __atomic_compare_exchange_n(&futex_failed, &none, e ? e : ENOSYS, false,
                                __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    add(&sync_wait_counts[kind].futex_errors, 1);
    return true;
}

int sync_futex_failed(void) { return __atomic_load_n(&futex_failed, __ATOMIC_RELAXED); }

/* Note [Spinning when oversubscribed]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
 * A waiter spins in the hope that what it waits for happens within the spins, on another
 * CPU. With more capabilities than the CPUs the process may use (the patch's resolve, in
 * rts/patch_futex_barrier.c, compares -N with the
 * allowed CPUs of os/topology), what it waits for is usually a capability that has no CPU at
 * that moment, possibly the very one the spinner holds: spinning then only delays it. So
 * without -qw the default is RTS_DEFAULT_WAIT_SPINS (1000) when every capability can have a
 * CPU, and RTS_OVERSUB_WAIT_SPINS (30) when they cannot; -qw<n> sets it either way.
 * Measured on 2 cores, quiet (experiments/futex-barrier/, "The spin count"): at -N4 and
 * -N8, 0-100 spins took simple_alloc and busy_one 0.58-0.94x the time of 1000, with no
 * clear order among 0, 30 and 100; at -N2, 1000 spins took 0.90-0.93x the time of 0-100
 * (a futex sleep and wake-up costs more than the wait). Load from other processes is not
 * seen: -N2 on 2 loaded cores keeps 1000 (say -qw yourself there). */
static unsigned spin_limit = RTS_DEFAULT_WAIT_SPINS;

/* Announced sleepers per kind of wait (see the Note). */
static struct { _Alignas(RTS_CACHE_LINE) uint32_t n; } sleepers[WAIT_NKINDS];

void sync_set_spins(unsigned spins) { __atomic_store_n(&spin_limit, spins, __ATOMIC_RELAXED); }
unsigned sync_spins(void) { return __atomic_load_n(&spin_limit, __ATOMIC_RELAXED); }

/* 0, or -1 with errno: EAGAIN (the word is no longer v) or EINTR, after which the caller
 * re-checks, or a failure for good (Note [When futex fails]). */
static long futex_wait(uint32_t *word, uint32_t v)
{
    return syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static long futex_wake_all(uint32_t *word)
{
    return syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void sync_wait(uint32_t *word, bool (*ready)(void *arg), void *arg, SyncWaitKind kind)
{
    if (ready(arg))
        return;
    uint64_t t0 = base_now_ns(), spins = 0, sleeps = 0, announced = 0;
    uint64_t limit = __atomic_load_n(&spin_limit, __ATOMIC_RELAXED);
    for (; spins < limit; spins++) {
        cpu_relax();
        if (ready(arg))
            goto done;
    }
    uint32_t *n = &sleepers[kind].n;
    while (!__atomic_load_n(&futex_failed, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(n, 1, __ATOMIC_SEQ_CST);                 /* W1 */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        announced++;
        uint32_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);       /* W2 */
        if (ready(arg)) {
            __atomic_fetch_sub(n, 1, __ATOMIC_RELEASE);
            goto done;
        }
        trace_begin(SPAN_SLEEP, 0);
        long r = futex_wait(word, v);                               /* W3 */
        trace_end(SPAN_SLEEP);
        sleeps++;
        __atomic_fetch_sub(n, 1, __ATOMIC_RELEASE);
        if (ready(arg))
            goto done;
        if (failed_for_good(r, kind))
            break;
    }
    /* futex has failed for good: as the baseline (Note [When futex fails]) */
    add(&sync_wait_counts[kind].polled, 1);
    sync_sleep_until(ready, arg);
done:
    add(&sync_wait_counts[kind].waits, 1);
    add(&sync_wait_counts[kind].spins, spins);
    add(&sync_wait_counts[kind].sleeps, sleeps);
    add(&sync_wait_counts[kind].announced, announced);
    add(&sync_wait_counts[kind].wait_ns, base_now_ns() - t0);
}

void sync_wake(uint32_t *word, SyncWaitKind kind)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);                        /* K1 */
    if (__atomic_load_n(&sleepers[kind].n, __ATOMIC_SEQ_CST) == 0) {   /* K2 */
        add(&sync_wait_counts[kind].quiet_wakes, 1);
        return;
    }
    failed_for_good(futex_wake_all(word), kind);                    /* K3 */
    add(&sync_wait_counts[kind].futex_wakes, 1);
}
#endif
