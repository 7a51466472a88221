/* The IO manager's back end: one instance per capability, one interface over two
 * implementations (io_uring through liburing, and epoll), chosen once at start-up.
 *
 * Note [IO manager]
 * A lightweight thread that reads, writes, accepts or connects (the Scheme layer's socket and
 * file ports) fills in an RtsIoOp (rtslab_io.h) that its port owns, outside the heap, with
 * a C buffer that the op owns: the GC moves heap objects, so no heap address ever reaches the
 * kernel. rts_io_block (sched/) submits the op to the back end of the thread's own
 * capability and blocks the thread (TS_BLOCKED_IO); the capability runs other threads. The
 * thread itself is kept, while blocked, in its capability's table of IO waiters
 * (Capability.io_waiters, a GC root that the collector updates in place); the op's tag is
 * the index of that entry, so the completion finds the thread without a heap address ever
 * leaving the heap. Completions are collected by the capability's own OS thread only: at
 * every scheduling point without blocking (io_wait with deadline 0), and, when the capability
 * is idle, by sleeping in io_wait (Note [Idle in the ring]). io_wait only hands back the ops
 * that completed; the scheduler wakes their threads after it has left the idle state, so
 * nothing touches the heap while a collection may run.
 *
 * Who owns what: the op and its buffer belong to the port; between io_submit and the op's
 * completion (busy set) they belong to the back end (and the kernel), and nobody may free,
 * move or reuse them. A thread that stops waiting (interrupted by a signal, or its port closed)
 * has its op cancelled (io_cancel): the completion still comes (-ECANCELED, or the result if
 * the kernel finished first), and only then is the op free again.
 *
 * The io_uring back end submits each op as the matching SQE (read, write, accept, connect,
 * timeout) and keeps a read of its eventfd in flight. The epoll back end tries each op at
 * once on the (non-blocking) descriptor and, on EAGAIN, waits for readiness (edge-triggered,
 * one registration per descriptor for all its waiters, made once while the descriptor is
 * open: Note [Registered once] in iomgr.c); a regular file, which epoll refuses
 * and which is always ready, is read or written at once. If io_uring cannot be set up (no
 * liburing, or the kernel refuses: EPERM or ENOSYS under a seccomp profile) the automatic
 * choice is epoll, and `+RTS --info` says why.
 *
 * Note [Idle in the ring]
 * An idle capability always sleeps in its back end's wait (io_uring_enter, epoll_wait), with
 * or without IO in flight, never on a condition variable: whatever may end its idle time
 * reaches it there. A completion of one of its ops does by itself. Everything else goes
 * through cap_wake, which writes the back end's eventfd when the capability sleeps there
 * (Capability.io_sleeping, under its idle mutex): work in its inbox, a stop-the-world leader
 * (cap_interrupt, for every member that takes part in its sync: one that takes no part is not
 * woken, and sleeps on in the ring through the GC), a signal for the main thread, the exit. The
 * io_uring back end keeps a read of the eventfd in flight; the epoll back end has it in its
 * interest set. Sleeping threads (`sleep`, Note [Sleepers] in sched/schedule.c) stay on the
 * capability's sleep heap, the source of truth; the idle wait's deadline is the earliest
 * sleeper's time. The io_uring back end keeps one IORING_OP_TIMEOUT armed for that deadline
 * (absolute, IORING_TIMEOUT_ABS, on CLOCK_MONOTONIC as base_now_ns; re-armed only when the
 * deadline changes: the old one is removed, and its completion, told apart by the timer's
 * generation in its tag, ignored); the epoll back end gives epoll_wait the time left, rounded
 * up to the millisecond, so it never wakes early (a sleep may end up to 1 ms late). A timer
 * left armed for a sleeper that was woken otherwise (an interrupted main thread) fires once,
 * a spurious wake-up that the idle loop absorbs. The cost of a cross-capability wake-up is
 * one eventfd write and one context switch of the woken OS thread, where the condition
 * variable's wake cost about two (the futex wake, then the waker's mutex).
 *
 * A read or a write may carry a bound (RtsIoOp.wait_ns): one that has not completed that long
 * after its submission completes with -ETIMEDOUT (Note [Bounded waits] in iomgr.c; a port's
 * write timeout, port-write-timeout!).
 *
 * Invariants: an op is in at most one back end at a time; io_wait, io_submit and io_cancel
 * are called only by the owning capability's OS thread; io_wake may be called from any thread.
 */
#ifndef RTS_IO_IOMGR_H
#define RTS_IO_IOMGR_H

#include <stddef.h>
#include <stdint.h>
#include "rtslab_io.h"

typedef enum { IO_CHOOSE_AUTO, IO_CHOOSE_URING, IO_CHOOSE_EPOLL } IoChoice;
typedef enum { IO_KIND_URING, IO_KIND_EPOLL } IoKind;

typedef struct IoBackend IoBackend;

/* Decides, once, which back end every capability gets: for IO_CHOOSE_URING, fails (returns
 * -1 with the reason in why) when io_uring cannot be had; for IO_CHOOSE_AUTO falls back to
 * epoll and keeps the reason (io_choice_info). */
int io_choose(IoChoice want, char *why, size_t n);
/* The back end chosen, and a line for --info ("io_uring", "epoll (io_uring: ...)"). */
IoKind io_chosen(void);
const char *io_choice_info(void);
const char *io_kind_name(IoKind k);

/* A back end of the chosen kind (fatal if it cannot be made). */
IoBackend *io_backend_new(void);
void io_backend_free(IoBackend *b);
IoKind io_backend_kind(IoBackend *b);

/* Starts op; its completion carries `tag`. */
void io_submit(IoBackend *b, RtsIoOp *op, void *tag);
/* Asks for op to end early; its completion still comes. */
void io_cancel(IoBackend *b, RtsIoOp *op);
/* Waits until deadline_ns at the latest (on the monotonic clock, as base_now_ns; 0 or a time
 * past: just looks; UINT64_MAX: no limit) for completions or a wake-up, and gives back up to max completed ops (op->res set, op->busy cleared, op->done called),
 * putting their tags in tags: the tag is read before busy is cleared, since from then on
 * the op is its owner's, who may submit it again (with another tag). Returns how many. A
 * wake-up (io_wake) makes it return, with 0 if none completed. */
int io_wait(IoBackend *b, uint64_t timeout_ns, void **tags, int max);
/* Wakes the back end's io_wait (any thread; async-signal-safe: a write to an eventfd). */
void io_wake(IoBackend *b);
/* Ops submitted and not yet handed back by io_wait. */
unsigned io_inflight(IoBackend *b);

#endif
