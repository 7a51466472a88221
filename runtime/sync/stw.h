/* The stop-the-world protocol (BRIEF §2, seed 001).
 *
 * Note [Stop the world]
 * A capability that needs the world stopped (for a GC, or to exit) tries to become the
 * leader by a CAS on stw.word, which holds the sync's epoch and kind together, so a
 * follower reads both at once. A loser follows the leader's sync instead (it was at a safe
 * point anyway) and retries afterwards.
 *   1. The leader interrupts every running capability (its hplim becomes NULL, so its next
 *      heap check traps; a thread's next RTS_NEXT checks too) and wakes every idle one with
 *      a syscall (cap_wake).
 *   2. Enter barrier: each capability, at a safe point, records that it arrived (its
 *      stw_arrived = epoch) and waits for `go`. The leader checks each capability in turn.
 *   3. The leader prepares the GC and publishes `go`; the GC threads collect in parallel and
 *      count themselves in `done`; the leader waits for them and finishes the GC.
 *   4. Leave barrier: capabilities wait until the leader publishes `released`.
 * Every wait goes through sync/wait.h. Idle capabilities take part like the others (the
 * baseline of seed 001): woken, they arrive, collect their empty nursery and sleep again
 * only once released. A sync of kind SYNC_EXIT never releases: the leader ends the process.
 */
#ifndef RTS_SYNC_STW_H
#define RTS_SYNC_STW_H

#include <stdbool.h>
#include <stdint.h>
#include "sched/capability.h"

typedef enum { SYNC_NONE = 0, SYNC_GC = 1, SYNC_EXIT = 2 } SyncKind;

typedef struct Stw {
    uint32_t word;           /* epoch << 2 | SyncKind */
    uint32_t go;             /* epoch whose GC threads may start */
    uint32_t done;           /* GC threads (other than the leader's) finished this sync */
    uint32_t released;       /* epoch whose sync is over */
    Capability *leader;
    bool major;              /* the GC of this sync is a major one (set before go) */
    /* statistics, written by leaders */
    uint64_t syncs, stw_ns_total, stw_ns_max;
} Stw;

extern Stw stw;

static inline bool stw_pending(void)
{
    return (__atomic_load_n(&stw.word, __ATOMIC_ACQUIRE) & 3) != SYNC_NONE;
}

/* Tries to start a sync of `kind` with cap as leader. */
bool stw_try_lead(Capability *cap, SyncKind kind);
/* Leader: interrupt and wake everyone, then wait until every capability has arrived.
 * Returns the time the world took to stop (ns). */
uint64_t stw_stop_all(Capability *leader);
/* Leader: let the GC threads start; then wait for n_followers of them to call
 * stw_gc_thread_done. */
void stw_start_gc(bool major);
void stw_await_gc_threads(unsigned n_followers);
void stw_gc_thread_done(void);
/* Leader: end the sync; everyone returns to work. */
void stw_release(void);
/* At a safe point: take part in the sync in progress, if any; returns when released. */
void stw_follow(Capability *cap);
bool stw_is_leader(Capability *cap);

#endif
