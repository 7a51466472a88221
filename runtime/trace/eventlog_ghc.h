/* GHC's binary eventlog format, as rtslab writes it (the default of -l; eventlog_ghc.c).
 *
 * Note [GHC eventlog format]
 * The facts are from GHC's user's guide ("Eventlog encodings") and its
 * rts/include/rts/EventLogFormat.h, and what the ghc-events library (0.17, Debian 12's)
 * parses; the code is rtslab's own. Everything is big-endian.
 *   file   := "hdrb" "hetb" type* "hete" "hdre" "datb" block* 0xffff (Word16)
 *   type   := "etb\0" Word16 num, Int16 size (of the payload; -1: variable, each event then
 *             carries a Word16 payload size after its timestamp), Word32 n, n bytes of
 *             description, Word32 0 (no extra information), "ete\0"
 *   event  := Word16 num, Word64 timestamp (ns since the eventlog started), payload
 *   block  := a BLOCK_MARKER event (Word32 the block's size in bytes, its marker included;
 *             Word64 the time of its last event; Word16 its capability, 0xffff for the
 *             process-wide events), then its events
 * Each capability fills blocks of its own (TRACE_GHC_BLOCK bytes at most), so timestamps
 * never decrease within a capability's blocks; blocks of different capabilities interleave
 * in the file in the order they filled. The first block (capability 0xffff, time 0) says
 * what GHC's RTS says at start-up: the process's capability set (CAPSET_CREATE, type OS
 * process), RTS_IDENTIFIER "rtslab-<version>", OSPROCESS_PID, and per capability CAP_CREATE
 * and CAPSET_ASSIGN_CAP; the last (at the end's time) CAP_DELETE per capability and
 * CAPSET_DELETE. The header declares every type rtslab writes, and USER_MARKER and
 * HACK_BUG_T9003, which rtslab never writes but GHC declares: ghc-events reads STOP_THREAD's
 * status the way GHC 7.8.3 and later write it only when both are declared.
 *
 * Our events as GHC's (Note [Eventlog] in eventlog.h), payloads in brackets:
 *   mutator begin / end       RUN_THREAD [thread] / STOP_THREAD [thread, Word16 status, 0]
 *   stw request begin / end   REQUEST_PAR_GC (REQUEST_SEQ_GC at one capability) /
 *                             GC_GLOBAL_SYNC (every capability has stopped)
 *   minor GC begin / end      GC_START / GC_END
 *   major GC begin / end      RTSLAB_MAJOR_GC then GC_START / GC_END
 *   gc work begin / end       GC_WORK / GC_DONE
 *   gc idle, gc resume        GC_IDLE, GC_WORK (inside gc work: out of work, work found)
 *   thread create, runnable   CREATE_THREAD [thread], THREAD_RUNNABLE [thread]
 *   thread wakeup, migrate    THREAD_WAKEUP [thread, Word16 cap], MIGRATE_THREAD [same]
 *   gc stats (the leader)     GC_STATS_GHC [capset 0, Word16 gen, copied, slop 0, frag 0,
 *                             Word32 GC threads, max copied by a thread, copied, balanced
 *                             copied], HEAP_ALLOCATED, HEAP_SIZE, HEAP_LIVE [capset 0, bytes]
 * and as rtslab's own (numbers from 2000, far above GHC's, each declared in the header with
 * its size and a description, so that a reader that does not know one skips it):
 *   enter barrier, await gc threads, leave barrier, sleep, idle: a begin and an end each,
 *   no payload; wake [Word8 0 work, 1 gc]; spin [Word64 spins, the lock's name], variable.
 * Threads are Word32, capabilities Word16, capability sets Word32, sizes Word64.
 * testsuite/trace/ghc_eventlog.py reads this format (any GHC eventlog, in fact) and turns
 * rtslab's back into the JSON of eventlog_chrome.c, event for event; it keeps its own copy
 * of the numbers below, which testsuite/trace/TESTS checks against this file.
 */
#ifndef RTS_TRACE_EVENTLOG_GHC_H
#define RTS_TRACE_EVENTLOG_GHC_H

#include "rts_config.h"

/* GHC's event numbers (EventLogFormat.h) */
#define EV_CREATE_THREAD        0
#define EV_RUN_THREAD           1
#define EV_STOP_THREAD          2
#define EV_THREAD_RUNNABLE      3
#define EV_MIGRATE_THREAD       4
#define EV_THREAD_WAKEUP        8
#define EV_GC_START             9
#define EV_GC_END               10
#define EV_REQUEST_SEQ_GC       11
#define EV_REQUEST_PAR_GC       12
#define EV_BLOCK_MARKER         18
#define EV_GC_IDLE              20
#define EV_GC_WORK              21
#define EV_GC_DONE              22
#define EV_CAPSET_CREATE        25
#define EV_CAPSET_DELETE        26
#define EV_CAPSET_ASSIGN_CAP    27
#define EV_RTS_IDENTIFIER       29
#define EV_OSPROCESS_PID        32
#define EV_CAP_CREATE           45
#define EV_CAP_DELETE           46
#define EV_HEAP_ALLOCATED       49
#define EV_HEAP_SIZE            50
#define EV_HEAP_LIVE            51
#define EV_GC_STATS_GHC         53
#define EV_GC_GLOBAL_SYNC       54
#define EV_USER_MARKER          58
#define EV_HACK_BUG_T9003       59

/* rtslab's own */
#define EV_RTSLAB_ENTER_BARRIER         2000
#define EV_RTSLAB_ENTER_BARRIER_END     2001
#define EV_RTSLAB_AWAIT_GC_THREADS      2002
#define EV_RTSLAB_AWAIT_GC_THREADS_END  2003
#define EV_RTSLAB_LEAVE_BARRIER         2004
#define EV_RTSLAB_LEAVE_BARRIER_END     2005
#define EV_RTSLAB_SLEEP                 2006
#define EV_RTSLAB_SLEEP_END             2007
#define EV_RTSLAB_IDLE                  2008
#define EV_RTSLAB_IDLE_END              2009
#define EV_RTSLAB_MAJOR_GC              2010
#define EV_RTSLAB_WAKE                  2011
#define EV_RTSLAB_SPIN                  2012
#if RTS_PATCH_IDLE_OPTOUT
/* Note [Idle opt-out] in sync/stw.h: an idle capability opts out of a GC at its go (no
 * payload); it rejoins (Word8 1 when it waited for the GC's release, else 0). */
#define EV_RTSLAB_OPT_OUT               2013
#define EV_RTSLAB_REJOIN                2014
#endif

#define CAPSET_TYPE_OSPROCESS   2
#define EV_NO_CAP               0xffff   /* the capability of the process-wide block */

#endif
