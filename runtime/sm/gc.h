/* The collector: driver (gc.c, here), per-GC-thread state (gcthread.h, wsdeque.h), the roots
 * (roots.h), evacuation and scavenging (evac.h), sanity checking (sanity.h).
 *
 * Note [GC threads]
 * A GC runs with the world stopped (sync/stw.h) on one GC thread per participating
 * capability: all of them by default, -qn<n> for fewer, -qg for one. The leader prepares
 * (from-space marking) and finishes (freeing from-space, sizing the old generation) alone;
 * in between every GC thread evacuates the roots of the capabilities assigned to it (its
 * own, and those of capabilities that take no part) and scavenges what it copied.
 * Work balance in the baseline: a minor GC shares no work (each GC thread scans only what
 * it copied); a major GC lets idle GC threads steal full to-space blocks (GHC's -qb1).
 *
 * Note [Racing for an object]
 * Two GC threads may reach one object. The winner swaps its header for OBJ_BUSY with a CAS,
 * copies it, then publishes the forwarding address (release); a loser seeing OBJ_BUSY waits
 * for the address. So no object, mutable or not, is ever copied twice.
 *
 * Note [Deferred GC requests]
 * A GC stops every capability, so a program that GCs often runs at the pace of its slowest
 * capability to stop. On a quiet machine that is microseconds; beside a busy process (or with
 * more capabilities than CPUs) one capability's OS thread is often waiting for a CPU, and the
 * others, each stopped at its next GC to wait for it, go in lockstep with it: two allocating
 * workers beside one busy process on 2 cores ran at 2.0-2.3x their time alone, where the OS
 * gives them 1.5x (issue 43, experiments/external-load/). So a capability whose nursery is
 * full does not wait (gc_nursery_full): it leads the sync as before (stw_try_lead, then
 * stw_interrupt_all), and, unless everyone has already arrived, runs on in more nursery
 * blocks, taken from the block allocator under one sm_lock per extension (as many as it holds
 * already, two the first time: extend_nursery) and chained to its nursery
 * (sm_extend_nursery; SmCap.nursery_extra counts them), up to --sync-defer bytes (default
 * 8m; 0 is the old behaviour: wait at once). When all have arrived it collects as before;
 * the GC frees the extra blocks with the nursery (sm_reset_nursery). It looks at every
 * nursery block it fills, and is told sooner: while it runs on, stw_sync.deferred is set
 * (stw_defer, until it waits), and every follower that arrives interrupts it (its heap
 * limit, so that its next heap check, call or allocation traps: gc_safe_point). The flag and
 * the arrival are each stored and fenced before the other side's word is read, so either the
 * leader sees the last arrival or that follower sees the flag. It stops running on and
 * collects at once when
 * it leaves its thread (the scheduler's loop calls gc_safe_point with `stop`: a block, a
 * switch, an idle wait), when the budget or -M is reached, when the OS refuses a block, when
 * it calls gc_collect itself (a large object, rts_gc: gc_collect finishes the request first),
 * and at an exit (gc_stop_deferred only waits for the arrivals). Under -DG no request defers.
 * Invariants: only the leader of the sync in progress defers (so the extra memory is at most
 * --sync-defer in all); cap->gc_deferred is its owner's; a follower at its barrier holds no
 * lock (objects' locks and ports' mutexes are never held across a safe point: sched/objlock.h,
 * scheme/port.c), so the leader's mutator cannot wait on it.
 * What it costs: a follower that arrives waits for the leader's next trap (a call or an
 * allocation: nanoseconds) instead of the leader waiting for it; the GC comes later by what
 * the leader allocated meanwhile, which the GC's copying does not pay for (it copies what is
 * live); -A is no longer the exact allocation between two GCs (-S shows each GC's). -s says
 * how many requests were deferred, for how long and how many blocks they took.
 * GHC and OCaml 5 wait at once (GHC's requestSync/acquireAllCapabilities, OCaml's
 * caml_try_run_on_all_domains); this is rtslab's own.
 */
#ifndef RTS_SM_GC_H
#define RTS_SM_GC_H

#include "sm/storage.h"
#include "sm/gcthread.h"
#include "sm/roots.h"
#include "trace/eventlog.h"           /* GcRecord */
#if RTS_PATCH_GEN0_STEAL

/* Note [Minor GC stealing]
 * With gen0-steal, -qb<gen> picks the lowest generation whose GCs steal (gc_steals in
 * gc.c): -qb0 makes minor GCs steal as major ones do; -qb1 is the baseline's policy.
 * Without -qb<gen> the patch decides as GHC does (RtsFlags.c, GHC #9221): minor GCs steal
 * when the allocation area is at least 32 MB (-A32m), which no cache holds, and not below
 * it, where the thread that copied an object scanning it while it is still in its cache is
 * worth more than balance (base_cfg->balance_gen; --info and -s say which applies).
 * A stealing minor GC uses the same deques, look-for-work loop and termination as the
 * baseline's major GC (gc_scavenge_loop in evac.c). What the patch adds runs in stealing
 * minor GCs (steals_young in evac.c), and its yield and counters in the major GCs of the
 * same runs (steals_by_patch): under -qb1 every GC runs the baseline's code (scavenge_local
 * is compiled twice), the patch's costing a test of a flag per remembered object, per large
 * object evacuated and per look for work. In stealing minor GCs only:
 *  - large objects' scan work goes on the deques too (a thief scavenges a stolen large
 *    object in place: the deque holds its group's bdescr, told apart by BF_LARGE);
 *  - big pointer objects are scanned in chunks of 512 fields that go on the deque, each a
 *    single word (the object's block-aligned address, the chunk's number, a tag bit;
 *    gc_scavenge_shared), so nothing is allocated. Chunks matter for the remembered set: a
 *    minor GC scans each capability's remembered objects on the GC thread that took its
 *    roots (gc.c), and one big old vector of young objects (skewed_live's work vector, a
 *    compiler's symbol table) is then all the work there is; split into chunks, it is
 *    shared like to-space blocks. A chunk's fields are written by the one thread that took
 *    it, so chunks of one object need no synchronisation (their scanners read the object's
 *    destination, bd->dest, which the pusher wrote before the deque's release published
 *    them: Note [To-space by capability] in gcthread.h).
 * In every stealing GC of a run whose minor GCs steal, major GCs too:
 *  - a look for work that finds none gives up the CPU (sched_yield), as GHC's any_work does
 *    after every failed poll (Note [Yielding look for work] in evac.c). With more GC threads
 *    than free cores (-N4 on 2 cores, or a busy machine) the thread holding the work is
 *    often the one without a CPU, and a thief that spins keeps it from running: alone at -N4
 *    on 2 cores the patch without this cost the suite +95 % elapsed;
 *  - counters: every call of steal() is a try, every block it returns a steal, summed into
 *    the GcRecord, and the yields; -s reports them per GC kind.
 * In the baseline one GC thread copies everything that its capability's roots reach,
 * however big, which is what "Scaling ghc --make" showed of ghc --make (balance 22%).
 */
#endif

/* Called by the leader after every GC, with the world stopped, with the GC's one record
 * (GcRecord, trace/eventlog.h). At start-up. */
void  gc_on_done(void (*fn)(const GcRecord *r));

/* Collects (leading the sync, or following another capability's); called by a mutator at
 * a safe point (an allocation or rts_gc). A GC request of cap's that waits (Note [Deferred
 * GC requests]) is finished first.
 * Locks held: none (a safe point: Note [Deferred GC requests]); the GC takes sm_lock. */
void  gc_collect(SmCap *cap, bool force_major);
/* The allocation path's GC, when cap's nursery is full: collects, or asks for the GC and runs
 * on in one more nursery block while the others stop (Note [Deferred GC requests]).
 * Locks held: none; takes sm_lock for a nursery block. */
void  gc_nursery_full(SmCap *cap);
/* A safe point of cap: takes part in the sync in progress, or, when it is cap's own deferred
 * request, collects once every member has arrived, or at once when `stop` (the capability
 * is about to leave its thread: block, switch, sleep or exit). Locks held: none. */
void  gc_safe_point(SmCap *cap, bool stop);
/* For an exit: a deferred request of cap's waits for its members to arrive, no GC.
 * Locks held: none. */
void  gc_stop_deferred(SmCap *cap);
/* A follower's part of a GC (the StwHooks.follower_work of sync/stw.h): returns true when
 * capability `no` is one of its GC threads (and did its work). Locks held: none (the world
 * stopped for the leader's GC). */
bool  gc_follower_work(unsigned no);

#endif
