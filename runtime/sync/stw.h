/* The stop-the-world protocol (BRIEF §2, seed 001).
 *
 * It knows capabilities only by number (0 .. n-1, "members"): what interrupting one means
 * and what a follower does while the world is stopped belong to the layers above (sched/
 * and sm/), which register them as StwHooks (runtime/README.md: calls only go down).
 *
 * Note [Stop the world]
 * A capability that needs the world stopped (for a GC, or to exit) tries to become the
 * leader by a CAS on stw_sync.word, which holds the sync's epoch and kind together, so a
 * follower reads both at once. A loser follows the leader's sync instead (it was at a safe
 * point anyway) and retries afterwards.
 *   1. The leader interrupts every other capability (hooks.interrupt: the scheduler makes
 *      its next heap check trap, and wakes it with a syscall when it is idle).
 *   2. Enter barrier: each capability, at a safe point, records that it arrived (its
 *      member's `arrived` = epoch, a word on its member's own cache line, woken for the
 *      leader) and waits for `go`. The leader waits on each member's `arrived` in turn
 *      (stw_await_arrivals); no word is shared by the arrivals.
 *   3. The leader prepares the GC and publishes `go`; the followers do their part
 *      (hooks.follower_work: the GC threads among them collect in parallel and count
 *      themselves in `done`); the leader waits for them and finishes the GC.
 *   4. Leave barrier: capabilities wait until the leader publishes `released`.
 * Every wait goes through sync/wait.h. Idle capabilities take part like the others (the
 * baseline of seed 001): woken, they arrive, collect their empty nursery and sleep again
 * only once released. A sync of kind SYNC_EXIT never releases: the leader ends the process.
 * stw_stop_all returns the members that take part (StwTakingPart): the GC threads are picked
 * among them (gc.c), since a member that takes no part would never do a GC thread's work.
 * In the baseline every member takes part in every sync.
 *
 * Note [Capability states]
 * Each member's `state` word (StwMember) says what its capability is doing, as far as the
 * protocol cares: whether it is asleep, and so must be woken to take part. Its low two bits
 * are the state (STW_STATE); the bits above are free for a state that needs an epoch. States:
 *   STW_RUNNING  its OS thread runs the scheduler: at a safe point soon after an interrupt;
 *   STW_IDLE     it sleeps in the scheduler's idle wait (sched/schedule.c): the interrupt hook
 *                wakes it (a syscall, counted as an idle wake-up for GC), and other
 *                capabilities push work to it (Note [Pushing work]).
 * Transitions, and who may make them:
 *   RUNNING -> IDLE     the owner, under its idle mutex, just before it sleeps;
 *   IDLE -> RUNNING     the owner, under its idle mutex, once woken (work, a timer, a sync).
 * Only the owner writes the word (seq_cst stores); leaders and other capabilities read it.
 * Whatever the state, every member takes part in every sync: an IDLE one is woken for it.
 */
#ifndef RTS_SYNC_STW_H
#define RTS_SYNC_STW_H

#include <stdbool.h>
#include <stdint.h>
#include "rts_config.h"
#if RTS_PATCH_FUTEX_BARRIER

/* With the futex-barrier patch the leader waits on `arriving` alone, woken by the last
 * follower to arrive, instead of checking each member (Note [Futex barrier] in
 * sync/wait_futex_barrier.c); the leave barrier is `released`, a generation word the leader
 * bumps and wakes once.
 *
 * Note [Arrival count]
 * `arriving` (StwSync) is the number of members other than the leader yet to arrive: n - 1
 * between syncs (stw_init; stw_release puts it back once every follower has arrived, before
 * the next sync can start), counted down by each follower as it arrives, after its
 * `arrived`, and woken by the one that makes it 0 (stw_follow). A member that takes no part
 * in a sync (StwTakingPart: the base's stw_interrupt_all may leave members out) never
 * arrives: the leader counts those down for them once it has chosen who takes part, and
 * wakes the word if that makes it 0, as the last arrival would have, so every sync has
 * exactly one arrival wake (the patch's statistics test counts them; with members left out,
 * rtslab's tests of pairs do, testsuite/pairs/arrivals_*, in a build with the patch that
 * leaves idle members out: without this count-down its leader hangs). The count cannot
 * reach 0 before that, since the members left out are still in it. It is 32 bits, never
 * above the number of capabilities, reset by each sync (Note [Counters that wrap]). */
#endif

typedef enum { SYNC_NONE = 0, SYNC_GC = 1, SYNC_EXIT = 2 } SyncKind;

/* Note [Counters that wrap]
 * ~~~~~~~~~~~~~~~~~~~~~~~~~
 * Every counter of the runtime that grows while it runs, its width, how fast it grows, when
 * it wraps and why that is safe (issue 32's audit; rates measured on the 2-core guest).
 *
 * Sync numbers (epochs). 30 bits: stw_sync.word is epoch << 2 | SyncKind, so that a
 * follower reads both at once, and stw_try_lead's ((w >> 2) + 1) << 2 drops the carry out
 * of bit 31: after 2^30 - 1 comes 0. `go`, `released` and each member's `arrived` hold
 * epochs too. One per stop-the-world sync: bench/micro/simple_alloc made 43,000 a second
 * at -N1 -A128k, 35,000 at -N2 (issue 32 saw 15,000), so the number wraps after 7 to 20
 * hours -- well within a server's life, so it must be safe, not merely rare. It is, because
 * every comparison is made modulo 2^30, in the width of the field (stw_epoch_reached:
 * a - b modulo 2^30 below 2^29), and the numbers compared are never more than one sync
 * apart: `go` and `released` are the sync in progress or the one before (every GC sync
 * publishes both, and a waiter waits for the sync it follows, which the next one cannot
 * begin without); every member's `arrived` is the last sync (every member arrives at every
 * sync); the leader compares with its own sync's number. Until issue 32 the comparisons were
 * (int32_t)(a - b), modulo 2^32: at the wrap, sync 0 found `go` and `released` at 2^30 - 1,
 * which looked 2^30 - 1 syncs later, and followers ran their GC work before the go and their
 * mutators inside the stopped sync (the sanity checker then found the heap corrupt).
 * Tests: stw_debug_set_sync_number (RTSLAB_TEST_SYNC_NUMBER for a whole program) starts the
 * numbers anywhere; unit/test_stw_wrap*, unit/stw_wrap_* (simple_alloc and gc_stress at -N2
 * and -N4 under -DS, started a few hundred syncs below 2^30 and 2^29) cross the wrap in
 * every build.
 *
 * Counts of the protocol (stw_sync.done): 32 bits, never above the number of capabilities,
 * reset by each sync. They count, they do not grow.
 *
 * The work-stealing deque's indices (sm/wsdeque.h: top, bottom): int64_t, one push per
 * to-space block a GC thread queues for scanning, so at most the heap's 4 KiB blocks in one
 * GC (2^28 for a 1 TiB heap); wsdeque_quiesce puts both back to 0 after every GC (the deque
 * is empty then). They never wrap: even without the reset, 2^63 pushes at 10^9 a second are
 * 292 years.
 *
 * The sleep heap's sequence numbers (sched/capability.h: sleep_seq, SleepEntry.seq):
 * uint64_t per capability, one per sleep, compared with < only between sleepers whose wake
 * times (uint64_t ns of CLOCK_MONOTONIC: 584 years of uptime) are equal. A sleep costs a
 * scheduler round trip, so fewer than 10^7 a second: 58,000 years. Were it to wrap, only
 * sleepers due at the same nanosecond would wake out of order.
 *
 * Thread ids (sched/thread.c: next_thread_id): intptr_t, a fixnum in the thread object, one
 * per thread created; at 10^8 threads a second the fixnum range (2^60 and more) lasts over
 * 300 years.
 *
 * Eventlog timestamps (trace/eventlog.c: Record.ts, TraceBuf.last_ts): uint64_t ns since
 * trace_init, 584 years. They are written as (double)ts / 1e3 microseconds: exact to the ns
 * up to 2^53 ns (104 days of tracing), then in steps of 2, 4... ns, still in order (the
 * conversion is monotonic). A buffer's record count (at most TRACE_BUF_RECORDS, emptied by
 * each flush) and span depth (at most MAX_OPEN_SPANS) are bounded.
 *
 * Statistics counters (stats/stats.c's totals; StwStats, SyncWaitStats, the spinlocks' and
 * SpinCounts' counters, the capabilities' gc_wakeups, threads_pushed and obj_lock_*, the
 * stack pools', the sanity checker's): all uint64_t, added to and read, never compared in a
 * way a wrap could mislead, and read only for -s/-S/--machine-readable output; no decision
 * of the runtime depends on them (GCs are triggered by nursery and old-generation block
 * counts, size_t and bounded by memory). The fastest are bytes: bytes allocated
 * (SmCap.bytes_allocated, summed over the capabilities at exit) grew at 6 GB a second per
 * capability in simple_alloc, so one capability's wraps after 97 years, and the sum after
 * 2^64 / (6 GB/s x N): 9 months at -N128 were every capability to allocate that fast all
 * the time; copied bytes and cumulative live bytes grow slower than that. Spin counts grow
 * by at most one per CPU pause (about 10 ns), 2^64 of them taking 5,800 / N years; waiting
 * and pause nanoseconds at most N per nanosecond, 584 / N years. The -S line's bytes since
 * the last GC is a difference in uint64_t, right across a wrap; the exit summary's totals
 * would be off by 2^64 -- a statistic, and decades away at any -N this machine can run.
 */

/* A sync's number (its epoch) is the 30 bits above the kind in stw_sync.word, and counts
 * modulo 2^30 (Note [Counters that wrap]). */
#define STW_EPOCH_BITS 30
#define STW_EPOCH_MASK ((1u << STW_EPOCH_BITS) - 1)

/* Whether sync number a is b or later: a - b, modulo 2^30, is less than 2^29. Comparing in
 * the width of the field, so right across the wrap; the numbers compared are never more
 * than one sync apart (Note [Counters that wrap]). */
static inline bool stw_epoch_reached(uint32_t a, uint32_t b)
{
    return ((a - b) & (1u << (STW_EPOCH_BITS - 1))) == 0;
}

/* What the layers above do for the protocol; registered once by stw_init. */
typedef struct StwHooks {
    /* Makes capability `no` reach a safe point soon, waking it if it sleeps. Called by the
     * leader for every other capability; must not block. */
    void (*interrupt)(unsigned no);
    /* A follower's part of the GC of this sync, run between `go` and its release; returns
     * true when it was one of the GC threads (which stw_gc_thread_done counts). */
    bool (*follower_work)(unsigned no);
} StwHooks;

/* A capability's words in the protocol, on a cache line of their own: the follower writes
 * `arrived` once per sync, the leader polls it; `state` is Note [Capability states]. */
typedef struct StwMember {
    _Alignas(RTS_CACHE_LINE) uint32_t arrived;   /* epoch of the last sync it arrived at */
    uint32_t state;          /* atomic: STW_RUNNING, STW_IDLE... (Note [Capability states]) */
} StwMember;

/* Note [Capability states]: the state in a member's `state` word. */
enum { STW_RUNNING = 0, STW_IDLE = 1 };
#define STW_STATE(w) ((w) & 3u)
#if RTS_PATCH_IDLE_OPTOUT
/* -qi<n>: the GCs an idle capability takes part in before it opts out; 0: never (set by its
 * row in rts/patch_idle_optout.c while the options are parsed; read-only after). */
extern unsigned stw_idle_optout_gcs;

/* Note [Idle opt-out]
 * ("OCaml 5 performance part 2": every OCaml 5 minor GC wakes and waits for every domain,
 * busy or idle, and an open issue asks that idle domains opt out; GHC's -qi keeps idle capabilities out of the
 * parallel GC.) With +RTS -qi<n> (default 1; -qi0 turns it off at run time) a capability
 * that has taken part in n GCs since it went idle opts out of the later ones: their leaders
 * neither wake it nor wait for it. The GC itself needs nothing from it: the leader resets
 * every capability's nursery and hands every capability's roots -- its remembered set, its
 * run and sleep queues and inbox (threads sleeping on a timer, threads woken from an MVar or
 * a join), its local roots -- to a GC thread that takes part (collect, gc.c). One GC is the
 * condition because an idle capability allocates nothing: the first GC after it went idle
 * empties its nursery, so later ones would wake it only for a GC thread with nothing of its
 * own to copy. Two states join those of Note [Capability states]; they, and IDLE, carry an
 * epoch e in the bits above the state (STW_EPOCH; IDLE@e: the last GC leader that counted on
 * it):
 *   STW_OPTED_OUT@e  asleep in the idle wait, left out of syncs; e is the last sync that left
 *                    it out, or the one in whose GC it opted out: it may not touch the heap
 *                    before e is released. Nothing but its owner and a leader writes it.
 *   STW_WAKING@e     its owner has left the idle wait (work pushed to it, a sleeper due, an
 *                    exit) and waits until sync e is released before it touches the heap.
 * Transitions, and who may make them:
 *   IDLE@e -> IDLE@E            the leader of GC sync E, by CAS, in stw_stop_all: it counts
 *                               on the member (interrupts it, waits for it), which must not
 *                               opt out before it has followed E;
 *   IDLE@e -> OPTED_OUT@E'      the owner, by CAS, taking part in its n-th GC since it went
 *                               idle (sync E'), once it sees that GC's go (stw_follow_idle),
 *                               and only if e <= E': E''s leader has chosen who takes part,
 *                               and no later leader counts on it yet. (A follower may see
 *                               a go late, after the release, when the next leader has
 *                               already stamped it IDLE@E: then it stays IDLE and follows
 *                               that sync too.) It does its part of the GC and sleeps on
 *                               without waiting for the release (stw_follow), so that no
 *                               later sync finds it in E''s leave barrier (a wait that
 *                               sleeps in the kernel counts on every waiter of a release
 *                               having left before the next release);
 *   OPTED_OUT@e -> OPTED_OUT@E  the leader of GC sync E, by CAS, in stw_stop_all: the member
 *                               takes no part in E (not interrupted, not waited
 *                               for, not a GC thread);
 *   OPTED_OUT@e -> WAKING@e     the owner, once woken, by CAS (stw_rejoin): losing to a
 *                               leader's CAS, it retries with that leader's epoch;
 *   WAKING@e -> RUNNING         the owner, once stw_sync.released has reached e.
 * A leader leaves out only a member it finds OPTED_OUT, with a CAS; the owner leaves that
 * state only with a CAS. So either the leader's CAS came first (the owner's then carries the
 * leader's epoch, and the owner waits out that sync) or the owner's did (the leader finds it
 * WAKING or RUNNING, which take part like RUNNING: interrupted, waited for). Leaders are
 * serialised, so OPTED_OUT@e with sync e released is simply opted out. A sync of kind
 * SYNC_EXIT leaves nobody out: the interrupt hook wakes opted-out members too, and they
 * rejoin and follow it. Counters: opt-outs and rejoins (per member, its owner's), rejoins
 * that waited for a GC, syncs that left members out and members left out (the leaders').
 * A member left out never arrives: whatever counts arrivals must count it down (another
 * patch of rtslab's counts them, and does; its Note [Arrival count] and rtslab's tests of
 * pairs, testsuite/pairs/, run the two together).
 */
/* The epochs in the states wrap with the sync number, and are compared modulo 2^30 too
 * (Note [Counters that wrap]); they are kept within one sync of it: a capability going idle
 * is IDLE@(the sync in progress or the last one) (stw_set_state), each GC leader re-stamps
 * an IDLE or OPTED_OUT member with its own epoch, and a leader that leaves a member out
 * stores its epoch in the member's `arrived` (as if it had arrived), so that a member left
 * out of a billion syncs still has an `arrived` within one sync of the number when it
 * rejoins, for the leader's arrival check and its own stw_follow. */
enum { STW_OPTED_OUT = 2, STW_WAKING = 3 };
#define STW_EPOCH(w) ((w) >> 2)
#endif

/* The members that take part in the sync in progress, as stw_stop_all returns them: the
 * leader first, then the others by number. The array is the protocol's, valid until the
 * next stw_stop_all. */
typedef struct StwTakingPart {
    unsigned n;
    const unsigned *no;
} StwTakingPart;

/* The sync in progress. Written by the leader (and `done` by GC threads), read by all. */
typedef struct StwSync {
    _Alignas(RTS_CACHE_LINE) uint32_t word;      /* epoch << 2 | SyncKind; every safe point reads it */
    _Alignas(RTS_CACHE_LINE) uint32_t go;        /* epoch whose GC threads may start */
    uint32_t released;       /* epoch whose sync is over */
    unsigned leader;         /* the leader's capability number */
    bool major;              /* the GC of this sync is a major one (set before go) */
    /* Whether the leader runs on (Note [Deferred GC requests] in sm/gc.h): set by the leader
     * (stw_defer), cleared when it waits (stw_await_arrivals); a follower that sees it once
     * it has arrived interrupts the leader, so that it looks again. */
    uint32_t deferred;
#if RTS_PATCH_FUTEX_BARRIER
    /* Members other than the leader yet to arrive (Note [Arrival count]) */
    _Alignas(RTS_CACHE_LINE) uint32_t arriving;
#endif
    _Alignas(RTS_CACHE_LINE) uint32_t done;      /* GC threads (other than the leader's) finished */
} StwSync;

extern StwSync stw_sync;

typedef struct StwStats {
    uint64_t syncs, stw_ns_total, stw_ns_max;
    /* syncs whose leader ran on while they waited (stw_defer), and the time from their
     * request to their last arrival, summed (stw_ns_* count only the leader's wait) */
    uint64_t deferred_syncs, deferred_ns_total;
} StwStats;

/* Locks held: none of the protocol's functions below takes or expects a lock (its words are
 * atomics: Note [Stop the world]), but stw_set_state, which Note [Capability states] has its
 * owner call under its idle mutex (sched/capability.h: idle_mu). The ones marked "Leader:"
 * are called by the capability whose stw_try_lead succeeded, with its sync in progress
 * (RTS_ASSERT, Note [Assertions] in base/util.h, checks what the Notes state there). */
void stw_init(unsigned n_caps, const StwHooks *hooks);

static inline bool stw_pending(void)
{
    return (__atomic_load_n(&stw_sync.word, __ATOMIC_ACQUIRE) & 3) != SYNC_NONE;
}

/* Tries to start a sync of `kind` with capability `me` as leader. */
bool stw_try_lead(unsigned me, SyncKind kind);
/* Leader: interrupt and wake everyone, then wait until every capability that takes part has
 * arrived. Returns the time the world took to stop (ns), and the members that take part in
 * *part (which may be NULL). It is stw_interrupt_all and stw_await_arrivals. */
uint64_t stw_stop_all(unsigned leader, StwTakingPart *part);
/* Leader, in two steps: interrupt (and wake) every member that takes part, which go into
 * *part (may be NULL); then wait until they have all arrived, and return how long the
 * leader waited (ns). In between, stw_all_arrived says, without waiting, whether they have,
 * and a leader that runs on meanwhile says so with stw_defer (Note [Deferred GC requests]
 * in sm/gc.h). */
void stw_interrupt_all(unsigned leader, StwTakingPart *part);
bool stw_all_arrived(void);
uint64_t stw_await_arrivals(void);
/* Leader: it runs on (the arrivals interrupt it) until stw_await_arrivals. */
void stw_defer(void);
/* Leader: let the GC threads start; then wait for n_followers of them to call
 * stw_gc_thread_done. */
void stw_start_gc(bool major);
void stw_await_gc_threads(unsigned n_followers);
void stw_gc_thread_done(void);
/* Leader: end the sync; everyone returns to work. */
void stw_release(void);
/* At a safe point of capability `me`: take part in the sync in progress, if any; returns
 * when released. */
void stw_follow(unsigned me);
bool stw_is_leader(unsigned me);
/* Member `no`'s state word (Note [Capability states]): read by anyone; set by its owner.
 * stw_set_state: Locks held: the owner's idle mutex (idle_mu), for RUNNING <-> IDLE. */
uint32_t stw_state(unsigned no);
void stw_set_state(unsigned no, uint32_t state);
/* Whether member `no` sleeps in the idle wait (for the scheduler, which pushes work to it). */
bool stw_idle(unsigned no);
#if RTS_PATCH_IDLE_OPTOUT
/* The kind of the sync in progress (SYNC_NONE: none). */
static inline SyncKind stw_pending_kind(void)
{
    return (SyncKind)(__atomic_load_n(&stw_sync.word, __ATOMIC_ACQUIRE) & 3);
}
/* Note [Idle opt-out]: stw_follow for an owner `me` asleep in the idle wait (IDLE); with
 * opt_out, it opts out of later syncs once this one's GC starts. Returns whether it is opted
 * out. stw_rejoin: the owner, woken while opted out, waits out the sync that left it out, if
 * any, and is RUNNING again. */
bool stw_follow_idle(unsigned me, bool opt_out);
void stw_rejoin(unsigned me);
/* Note [Idle opt-out]: GC syncs that left members out, members left out (summed over
 * syncs); opt-outs, rejoins, rejoins that waited for a GC (summed over members). */
typedef struct StwOptoutStats {
    uint64_t optout_syncs, opted_out, opt_outs, rejoins, rejoin_waits;
} StwOptoutStats;
void stw_optout_stats(StwOptoutStats *out);
/* sync/stw_idle_optout.h: the patch's hooks in sync/stw.c, private to the two files. */
#endif
/* Totals over the leaders' syncs (read at exit). */
void stw_stats(StwStats *out);
/* For tests: makes n (modulo 2^30, the width of a sync number) the number of the last sync,
 * so that the next one is n + 1 -- to run across the wrap without waiting for it (Note
 * [Counters that wrap]). Call after stw_init, before any member runs. stw_init calls it with
 * RTSLAB_TEST_SYNC_NUMBER, when that is set (a number, strtoul's base 0: 0x3fffff00). */
void stw_debug_set_sync_number(uint32_t n);

#endif
