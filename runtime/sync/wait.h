/* Every wait of the stop-the-world protocol goes through here, so that a variant that waits
 * another way (with futexes, say) differs from the baseline in one place: sync_wait and
 * sync_wake are sync/wait.c's, which such a variant replaces whole (the build compiles one
 * file of waits); what every build's waits share is sync/wait_common.c's.
 *
 * Note [Baseline waiting]
 * As in OCaml 5.2 (seed 001): a waiter spins SYNC_SPINS times with a CPU pause, then sleeps
 * with nanosleep, starting at 10 us and growing x1.25 up to 1 s, re-checking after each
 * sleep. Nobody is woken: sync_wake is a no-op and the sleeper finds out by polling, which
 * is the latency seed 001 measured.
 *
 * A waiter names the 32-bit word whose change can make its condition true; whoever changes
 * that word calls sync_wake on it afterwards, naming the kind of the waits it may end.
 *
 * The rule a futex relies on (hold it at every call site): a waiter's ready() depends only on
 * the word it names, so that a value of that word for which ready() is false stays a correct
 * thing to sleep on until the word changes.
 */
#ifndef RTS_SYNC_WAIT_H
#define RTS_SYNC_WAIT_H

#include <stdbool.h>
#include <stdint.h>
#include "rts_config.h"
#if RTS_PATCH_FUTEX_BARRIER

/* With the futex-barrier patch a waiter spins, then sleeps in FUTEX_WAIT on its word, and
 * sync_wake wakes it when someone announced a sleep (Note [Futex barrier] in
 * sync/wait_futex_barrier.c, which holds both, and which the build compiles instead of
 * sync/wait.c). */
#endif

#define SYNC_SPINS         1000
#define SYNC_SLEEP_MIN_NS  10000ull         /* 10 us */
#define SYNC_SLEEP_MAX_NS  1000000000ull    /* 1 s */

typedef enum {
    WAIT_ENTER,        /* a follower waiting for the leader to start the GC */
    WAIT_ARRIVAL,      /* the leader waiting for a capability to arrive */
    WAIT_GC_DONE,      /* the leader waiting for the GC threads to finish */
    WAIT_LEAVE,        /* a follower waiting for the leader to release it */
    WAIT_NKINDS
} SyncWaitKind;

typedef struct SyncWaitStats {
    uint64_t waits, spins, sleeps, wait_ns;
#if RTS_PATCH_FUTEX_BARRIER
    /* sleeps counts the FUTEX_WAIT calls; announced: times a waiter announced that it would
     * sleep (each followed by one FUTEX_WAIT, unless its recheck found it ready);
     * futex_wakes: sync_wake calls that made a FUTEX_WAKE call (someone had announced);
     * quiet_wakes: sync_wake calls that made none (nobody had); futex_errors: futex calls
     * that failed for good (Note [When futex fails]); polled: waits that ended polling
     * because of such a failure, as the baseline's do (their nanosleeps are not sleeps,
     * which stay the FUTEX_WAIT calls). */
    uint64_t announced, futex_wakes, quiet_wakes, futex_errors, polled;
#endif
} SyncWaitStats;

/* The counters of sync_wait_stats, per kind (sync/wait_common.c, which reads each field by
 * its name): only the waits write them, adding with relaxed atomics. */
extern SyncWaitStats sync_wait_counts[WAIT_NKINDS];

/* Waits until ready(arg); *word is what changes when it may have become true. */
void sync_wait(uint32_t *word, bool (*ready)(void *arg), void *arg, SyncWaitKind kind);
/* Called after changing *word; `kind` is the wait that sleeps on it (for the statistics). */
void sync_wake(uint32_t *word, SyncWaitKind kind);
#if RTS_PATCH_FUTEX_BARRIER

/* -qw's default: spins before a barrier wait sleeps (Note [Spinning when oversubscribed] in
 * sync/wait_futex_barrier.c; what -qw comes to is resolved in rts/patch_futex_barrier.c). */
#define RTS_DEFAULT_WAIT_SPINS     1000
/* Spins before a wait sleeps in the kernel (+RTS -qw<n>; RTS_DEFAULT_WAIT_SPINS until set).
 * Set at start-up, before any wait. */
void sync_set_spins(unsigned spins);
unsigned sync_spins(void);
/* The errno of the first futex call that failed for good, 0 if none (Note [When futex
 * fails] in sync/wait_futex_barrier.c). */
int sync_futex_failed(void);
#endif

/* Sleeps until ready(arg) as the baseline's waits do after their spins (Note [Baseline
 * waiting]: nanosleep from 10 us, x1.25 up to 1 s, re-checking after each); returns how many
 * sleeps it took. */
uint64_t sync_sleep_until(bool (*ready)(void *arg), void *arg);

/* Per kind, summed over the capabilities (read at exit). */
void sync_wait_stats(SyncWaitKind kind, SyncWaitStats *out);
const char *sync_wait_kind_name(SyncWaitKind kind);

#endif
