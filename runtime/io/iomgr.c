/* The IO manager's back ends: io_uring (liburing) and epoll (Note [IO manager] in iomgr.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include "io/iomgr.h"
#include "base/util.h"
#include "rtslab_config.h"
#if HAVE_LIBURING
#include <liburing.h>
#endif

#define WAKE_TAG   ((uint64_t)1)     /* io_uring: the read of the eventfd */
#define CANCEL_TAG ((uint64_t)2)     /* io_uring: a cancellation's own completion */
/* io_uring: the deadline timer of generation g has tag g << 3 | 3 (an op's tag is its
 * address, a multiple of 8; WAKE_TAG and CANCEL_TAG are below 8) */
#define TIMER_TAG(g)    ((uint64_t)(g) << 3 | 3)
#define IS_TIMER_TAG(t) (((t) & 7) == 3)
#define URING_ENTRIES 256
#define EPOLL_EVENTS 64

typedef struct FdWaits {
    RtsIoOp *rd, *wr;           /* FIFO lists of the ops waiting to read / write (op->next) */
    uint64_t id;                /* Note [Registered once]: the descriptor's id (RtsIoOp.fd_id)
                                 * epoll has it registered under; ANON_ID: an op without one;
                                 * 0: not registered */
} FdWaits;

#define ANON_ID UINT64_MAX

struct IoBackend {
    IoKind kind;
    int efd;                    /* the eventfd io_wake writes */
    unsigned inflight;
    /* epoll */
    int epfd;
    FdWaits *fds;
    size_t nfds;
    RtsIoOp *ready_hd, *ready_tl;   /* completed, not yet handed back */
    RtsIoOp *timers;                /* RTS_IO_TIMEOUT ops, earliest first */
    RtsIoOp *dl_hd, *dl_tl;         /* waiting ops with a wait_ns, earliest deadline first
                                     * (Note [Bounded waits]) */
#if HAVE_LIBURING
    struct io_uring ring;
    uint64_t wake_buf;
    unsigned unsubmitted;
    /* the deadline timer (Note [Idle in the ring]): the deadline it is armed for (0: none
     * armed), its generation (in its tag), and the timespec the kernel reads at submission */
    uint64_t timer_deadline;
    uint64_t timer_gen;
    struct __kernel_timespec timer_ts;
#endif
};

/* --- the choice --------------------------------------------------------------------------- */

static IoKind chosen = IO_KIND_EPOLL;
static char choice_info[200] = "epoll";

const char *io_kind_name(IoKind k) { return k == IO_KIND_URING ? "io_uring" : "epoll"; }
IoKind io_chosen(void) { return chosen; }
const char *io_choice_info(void) { return choice_info; }

/* 0 when an io_uring can be set up here, else -errno. RTSLAB_IO_URING_FAIL=<errno number>
 * makes it fail as a kernel that refuses io_uring would (for the tests of the fallback). */
static int uring_probe(void)
{
#if HAVE_LIBURING
    const char *fake = getenv("RTSLAB_IO_URING_FAIL");
    if (fake && *fake)
        return -atoi(fake);
    struct io_uring r;
    int rc = io_uring_queue_init(4, &r, 0);
    if (rc == 0)
        io_uring_queue_exit(&r);
    return rc;
#else
    return -ENOSYS;
#endif
}

/* RTSLAB_TEST_IO_WAIT_DELAY=<microseconds>: every wait that may block first sleeps that long,
 * so that a wake-up written as the capability goes to sleep reaches the eventfd before the
 * wait begins (Note [Wake-ups before the wait]; the test io/wake_race_*). */
static unsigned test_wait_delay_us;

int io_choose(IoChoice want, char *why, size_t n)
{
    const char *delay = getenv("RTSLAB_TEST_IO_WAIT_DELAY");
    test_wait_delay_us = delay ? (unsigned)strtoul(delay, NULL, 10) : 0;
    if (want == IO_CHOOSE_EPOLL) {
        chosen = IO_KIND_EPOLL;
        snprintf(choice_info, sizeof choice_info, "epoll (--io-manager=epoll)");
        return 0;
    }
    if (!HAVE_LIBURING) {
        if (want == IO_CHOOSE_URING) {
            snprintf(why, n, "--io-manager=uring: this runtime was built without liburing "
                     "(configure found no liburing-dev, or --without-liburing)");
            return -1;
        }
        chosen = IO_KIND_EPOLL;
        snprintf(choice_info, sizeof choice_info, "epoll (built without liburing)");
        return 0;
    }
    int rc = uring_probe();
    if (rc == 0) {
        chosen = IO_KIND_URING;
        snprintf(choice_info, sizeof choice_info, "io_uring%s",
                 want == IO_CHOOSE_URING ? " (--io-manager=uring)" : "");
        return 0;
    }
    if (want == IO_CHOOSE_URING) {
        snprintf(why, n, "--io-manager=uring: the kernel refused io_uring "
                 "(io_uring_queue_init: %s)", strerror(-rc));
        return -1;
    }
    chosen = IO_KIND_EPOLL;
    snprintf(choice_info, sizeof choice_info,
             "epoll (io_uring_queue_init failed: %s; falling back)", strerror(-rc));
    return 0;
}

/* --- common ----------------------------------------------------------------------------- */

static void ready_push(IoBackend *b, RtsIoOp *op)
{
    op->next = NULL;
    if (b->ready_tl) b->ready_tl->next = op; else b->ready_hd = op;
    b->ready_tl = op;
}

static void hand_back(IoBackend *b, RtsIoOp *op)
{
    b->inflight--;
    __atomic_store_n(&op->busy, 0, __ATOMIC_RELEASE);
    if (op->done)
        op->done(op);
}

void io_wake(IoBackend *b)
{
    uint64_t one = 1;
    ssize_t r = write(b->efd, &one, sizeof one);
    (void)r;                     /* EAGAIN: the counter is full, so a wake-up is pending */
}

unsigned io_inflight(IoBackend *b) { return b->inflight; }

uint64_t rts_io_fd_id(void)
{
    static uint64_t last;
    return __atomic_add_fetch(&last, 1, __ATOMIC_RELAXED);
}
IoKind io_backend_kind(IoBackend *b) { return b->kind; }

/* --- epoll ------------------------------------------------------------------------------ */

/* Tries op on its descriptor without blocking: true with op->res set when it is done. */
static bool try_op(RtsIoOp *op)
{
    for (;;) {
        ssize_t r;
        switch (op->kind) {
        case RTS_IO_READ:
            r = read(op->fd, op->buf, op->len);
            break;
        case RTS_IO_WRITE:
            r = write(op->fd, op->buf, op->len);
            break;
        case RTS_IO_ACCEPT: {
            socklen_t l = sizeof op->addr;
            r = accept4(op->fd, (struct sockaddr *)&op->addr, &l, SOCK_CLOEXEC | SOCK_NONBLOCK);
            op->addrlen = l;
            break;
        }
        case RTS_IO_CONNECT: {     /* in progress: readiness for writing says it ended */
            int err = 0;
            socklen_t l = sizeof err;
            if (getsockopt(op->fd, SOL_SOCKET, SO_ERROR, &err, &l) != 0)
                err = errno;
            if (err == EINPROGRESS || err == EALREADY)
                return false;
            op->res = -err;
            return true;
        }
        default:
            return false;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return false;
        op->res = r < 0 ? -errno : r;
        return true;
    }
}

static FdWaits *fd_waits(IoBackend *b, int fd)
{
    if ((size_t)fd >= b->nfds) {
        size_t n = b->nfds ? b->nfds : 64;
        while (n <= (size_t)fd) n *= 2;
        FdWaits *f = realloc(b->fds, n * sizeof *f);
        if (!f) base_fatal("out of memory (IO manager)");
        memset(f + b->nfds, 0, (n - b->nfds) * sizeof *f);
        b->fds = f;
        b->nfds = n;
    }
    return &b->fds[fd];
}

/* Note [Registered once]
 * The epoll back end registers a descriptor once, edge-triggered, for input and output at
 * once (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET), the first time an op on it has to wait,
 * and leaves it registered while it has no waiters: an edge that finds no waiter is
 * harmless, since an op always tries its descriptor before it waits (epoll_submit), and
 * every waiter is tried again at every edge (fd_ready) until it would block, so no readiness
 * is lost. Before, each wait cost an EPOLL_CTL_ADD and, when it ended, an EPOLL_CTL_DEL.
 * The registration ends with the descriptor: closing it removes it from every epoll set
 * (the kernel's rule once no other reference to the open file is left). The back end's
 * table, indexed by descriptor number, cannot see a close, so it keeps the id the owner gave
 * the open descriptor (RtsIoOp.fd_id, from rts_io_fd_id: both ops of a port carry the
 * port's) and registers again when an op comes with another id: a descriptor number reused
 * for a new socket is a new registration, never mistaken for the closed one's. A stale
 * registration of an open file still alive elsewhere (a forked child's copy) is a different
 * epoll key (file, fd): at worst it reports an edge that finds no waiter.
 * The cost: a thread that moves to another capability takes its descriptor's waits with
 * it, and the registration it leaves behind reports that descriptor's edges here too, for
 * nothing, until it is closed (an idle capability wakes for them, and sleeps again). It
 * cannot be dropped then: only the descriptor's user may touch it (an EPOLL_CTL_DEL from
 * here would race with a close by the port's thread on another capability, and could hit a
 * new socket that reused the number: ThreadSanitizer reports it), and EPOLLONESHOT, which
 * would silence it, costs an EPOLL_CTL_MOD at every wait. An op whose owner gives no id
 * (fd_id 0) is registered as before, and dropped as soon as the descriptor has no waiters
 * here (while its last waiter is still busy, so the descriptor cannot have been closed).
 *
 * Registers fd for op's descriptor, unless it is registered already; false when epoll
 * refuses the descriptor (a regular file: EPERM). */
static bool fd_register(IoBackend *b, int fd, uint64_t fd_id)
{
    FdWaits *w = fd_waits(b, fd);
    uint64_t id = fd_id ? fd_id : ANON_ID;
    if (w->id == id)
        return true;
    struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                              .data.fd = fd };
    int rc = epoll_ctl(b->epfd, EPOLL_CTL_ADD, fd, &ev);
    if (rc != 0 && errno == EEXIST)   /* the same open file, registered under another id */
        rc = epoll_ctl(b->epfd, EPOLL_CTL_MOD, fd, &ev);
    if (rc != 0) {
        if (errno != EPERM)
            base_fatal("epoll_ctl(%d): %s", fd, strerror(errno));
        return false;
    }
    w->id = id;
    return true;
}

/* Drops fd's registration (only while an op on it is busy: its descriptor is open). */
static void fd_drop(IoBackend *b, int fd)
{
    FdWaits *w = fd_waits(b, fd);
    if (!w->id)
        return;
    struct epoll_event ev = { 0 };
    (void)epoll_ctl(b->epfd, EPOLL_CTL_DEL, fd, &ev);
    w->id = 0;
}

static void list_append(RtsIoOp **hd, RtsIoOp *op)
{
    op->next = NULL;
    while (*hd) hd = &(*hd)->next;
    *hd = op;
}

static bool list_remove(RtsIoOp **hd, RtsIoOp *op)
{
    for (; *hd; hd = &(*hd)->next)
        if (*hd == op) {
            *hd = op->next;
            return true;
        }
    return false;
}

static void deadline_unlink(IoBackend *b, RtsIoOp *op);

/* An edge on fd: completes what can be completed of its waiters, in order (Note
 * [Registered once]). */
static void fd_ready(IoBackend *b, int fd)
{
    FdWaits *w = fd_waits(b, fd);
    while (w->rd && try_op(w->rd)) {
        RtsIoOp *op = w->rd;
        w->rd = op->next;
        deadline_unlink(b, op);
        ready_push(b, op);
    }
    while (w->wr && try_op(w->wr)) {
        RtsIoOp *op = w->wr;
        w->wr = op->next;
        deadline_unlink(b, op);
        ready_push(b, op);
    }
    if (w->id == ANON_ID && !w->rd && !w->wr)
        fd_drop(b, fd);
}

/* Note [Bounded waits]
 * A read or a write with a wait_ns (RtsIoOp) that has not completed that long after it was
 * submitted completes with -ETIMEDOUT, as nginx's send_timeout closes a connection whose
 * write has made no progress for a while: the owner's thread, blocked in the op, wakes with
 * the error. The bound is per op, and an op ends as soon as it moves a byte (a short write
 * completes), so it bounds a wait without progress, not a whole transfer: a port's next op
 * has the full time again. Before there was none, and a request server's thread writing to
 * a client that never reads waited for ever, holding its connection slot (issue 45, item 1;
 * the server's write timeout is built on it).
 * The epoll back end tries the op at once; only an op that has to wait goes on its list of
 * deadlines (doubly linked, by deadline; all an owner's ops have the same bound, so a new
 * one goes at or near the tail), which it leaves when it completes or is cancelled. The
 * wait's deadline is the earliest of them; an op past it is taken off its descriptor's
 * waiters (after the edges of that wait have been tried, so an op that became ready does
 * complete) and completed with -ETIMEDOUT. The io_uring back end links an
 * IORING_OP_LINK_TIMEOUT to the op's SQE: when it fires the kernel cancels the op, whose
 * completion (-ECANCELED, unless its thread cancelled it: op->cancelled) is -ETIMEDOUT. */
static void deadline_link(IoBackend *b, RtsIoOp *op)
{
    op->deadline_ns = base_now_ns() + op->wait_ns;
    RtsIoOp *after = b->dl_tl;
    while (after && after->deadline_ns > op->deadline_ns)
        after = after->dprev;
    op->dprev = after;
    op->dnext = after ? after->dnext : b->dl_hd;
    if (op->dnext) op->dnext->dprev = op; else b->dl_tl = op;
    if (after) after->dnext = op; else b->dl_hd = op;
    op->in_deadlines = true;
}

static void deadline_unlink(IoBackend *b, RtsIoOp *op)
{
    if (!op->in_deadlines)
        return;
    if (op->dprev) op->dprev->dnext = op->dnext; else b->dl_hd = op->dnext;
    if (op->dnext) op->dnext->dprev = op->dprev; else b->dl_tl = op->dprev;
    op->dnext = op->dprev = NULL;
    op->in_deadlines = false;
}

static void epoll_submit(IoBackend *b, RtsIoOp *op)
{
    if (op->kind == RTS_IO_TIMEOUT) {
        op->deadline_ns = base_now_ns() + op->timeout_ns;
        RtsIoOp **p = &b->timers;
        while (*p && (*p)->deadline_ns <= op->deadline_ns) p = &(*p)->next;
        op->next = *p;
        *p = op;
        return;
    }
    if (op->kind == RTS_IO_CONNECT) {
        int r;
        do r = connect(op->fd, (struct sockaddr *)&op->addr, op->addrlen);
        while (r < 0 && errno == EINTR);
        if (r == 0 || (errno != EINPROGRESS && errno != EAGAIN)) {
            op->res = r == 0 ? 0 : -errno;
            ready_push(b, op);
            return;
        }
    } else if (try_op(op)) {
        ready_push(b, op);
        return;
    }
    FdWaits *w = fd_waits(b, op->fd);
    bool reading = op->kind == RTS_IO_READ || op->kind == RTS_IO_ACCEPT;
    list_append(reading ? &w->rd : &w->wr, op);
    if (!fd_register(b, op->fd, op->fd_id)) {
        /* A regular file: always ready, never EAGAIN, so try_op above has done it. Only a
         * descriptor that is neither pollable nor ready gets here: fail the op. */
        list_remove(reading ? &w->rd : &w->wr, op);
        op->res = -EPERM;
        ready_push(b, op);
        return;
    }
    if (op->wait_ns && (op->kind == RTS_IO_READ || op->kind == RTS_IO_WRITE))
        deadline_link(b, op);
}

/* Note [Bounded waits]: the waiting ops past their deadline, completed with -ETIMEDOUT. */
static void deadlines_expire(IoBackend *b)
{
    if (!b->dl_hd)
        return;
    uint64_t now = base_now_ns();
    while (b->dl_hd && b->dl_hd->deadline_ns <= now) {
        RtsIoOp *op = b->dl_hd;
        deadline_unlink(b, op);
        FdWaits *w = fd_waits(b, op->fd);
        if (list_remove(&w->rd, op) || list_remove(&w->wr, op)) {
            if (w->id == ANON_ID && !w->rd && !w->wr)
                fd_drop(b, op->fd);
            op->res = -ETIMEDOUT;
            ready_push(b, op);
        }
    }
}

static void epoll_cancel(IoBackend *b, RtsIoOp *op)
{
    bool found;
    if (op->kind == RTS_IO_TIMEOUT) {
        found = list_remove(&b->timers, op);
    } else {
        if ((size_t)op->fd >= b->nfds) return;
        FdWaits *w = &b->fds[op->fd];
        found = list_remove(&w->rd, op) || list_remove(&w->wr, op);
        if (found)
            deadline_unlink(b, op);
        if (found && w->id == ANON_ID && !w->rd && !w->wr)
            fd_drop(b, op->fd);
    }
    if (found) {                 /* else it is done already, on the ready list */
        op->res = -ECANCELED;
        ready_push(b, op);
    }
}

static void epoll_poll(IoBackend *b, uint64_t deadline_ns)
{
    if (b->ready_hd)
        deadline_ns = 0;
    if (b->timers && b->timers->deadline_ns < deadline_ns)
        deadline_ns = b->timers->deadline_ns;
    if (b->dl_hd && b->dl_hd->deadline_ns < deadline_ns)
        deadline_ns = b->dl_hd->deadline_ns;
    int ms = 0;
    if (deadline_ns == UINT64_MAX) {
        ms = -1;
    } else if (deadline_ns) {    /* rounded up: never wakes before the deadline */
        uint64_t now = base_now_ns();
        uint64_t left = deadline_ns > now ? deadline_ns - now : 0;
        ms = left / 1000000u > 3600000u ? 3600000 : (int)((left + 999999u) / 1000000u);
    }
    struct epoll_event evs[EPOLL_EVENTS];
    int n = epoll_wait(b->epfd, evs, EPOLL_EVENTS, ms);
    if (n < 0 && errno != EINTR)
        base_fatal("epoll_wait: %s", strerror(errno));
    for (int i = 0; i < n; i++) {
        int fd = evs[i].data.fd;
        if (fd == b->efd) {
            uint64_t v;
            ssize_t r = read(b->efd, &v, sizeof v);
            (void)r;
            continue;
        }
        fd_ready(b, fd);
    }
    deadlines_expire(b);
    uint64_t now = base_now_ns();
    while (b->timers && b->timers->deadline_ns <= now) {
        RtsIoOp *op = b->timers;
        b->timers = op->next;
        op->res = 0;
        ready_push(b, op);
    }
}

/* --- io_uring --------------------------------------------------------------------------- */

#if HAVE_LIBURING
static struct io_uring_sqe *uring_sqe(IoBackend *b)
{
    struct io_uring_sqe *sqe = io_uring_get_sqe(&b->ring);
    if (!sqe) {                  /* the submission queue is full: hand it to the kernel */
        io_uring_submit(&b->ring);
        b->unsubmitted = 0;
        sqe = io_uring_get_sqe(&b->ring);
        if (!sqe) base_fatal("io_uring: no submission queue entry");
    }
    b->unsubmitted++;
    return sqe;
}

static void uring_arm_wake(IoBackend *b)
{
    struct io_uring_sqe *sqe = uring_sqe(b);
    io_uring_prep_read(sqe, b->efd, &b->wake_buf, sizeof b->wake_buf, 0);
    io_uring_sqe_set_data64(sqe, WAKE_TAG);
}

static void uring_submit(IoBackend *b, RtsIoOp *op)
{
    /* Note [Bounded waits]: the op and its link timeout go to the kernel in one submission
     * (a link does not span two), so both entries are had first */
    bool bounded = op->wait_ns && (op->kind == RTS_IO_READ || op->kind == RTS_IO_WRITE);
    if (bounded && io_uring_sq_space_left(&b->ring) < 2) {
        io_uring_submit(&b->ring);
        b->unsubmitted = 0;
    }
    struct io_uring_sqe *sqe = uring_sqe(b);
    switch (op->kind) {
    case RTS_IO_READ:
        io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, (uint64_t)-1);
        break;
    case RTS_IO_WRITE:
        io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)op->len, (uint64_t)-1);
        break;
    case RTS_IO_ACCEPT:
        op->addrlen = sizeof op->addr;
        io_uring_prep_accept(sqe, op->fd, (struct sockaddr *)&op->addr, &op->addrlen,
                             SOCK_CLOEXEC | SOCK_NONBLOCK);
        break;
    case RTS_IO_CONNECT:
        io_uring_prep_connect(sqe, op->fd, (struct sockaddr *)&op->addr, op->addrlen);
        break;
    case RTS_IO_TIMEOUT:
        op->kts[0] = (int64_t)(op->timeout_ns / 1000000000u);
        op->kts[1] = (int64_t)(op->timeout_ns % 1000000000u);
        io_uring_prep_timeout(sqe, (struct __kernel_timespec *)op->kts, 0, 0);
        break;
    }
    io_uring_sqe_set_data(sqe, op);
    if (bounded) {
        sqe->flags |= IOSQE_IO_LINK;
        op->kts[0] = (int64_t)(op->wait_ns / 1000000000u);
        op->kts[1] = (int64_t)(op->wait_ns % 1000000000u);
        sqe = uring_sqe(b);
        io_uring_prep_link_timeout(sqe, (struct __kernel_timespec *)op->kts, 0);
        io_uring_sqe_set_data64(sqe, CANCEL_TAG);      /* its own completion is ignored */
    }
}

static void uring_cancel(IoBackend *b, RtsIoOp *op)
{
    struct io_uring_sqe *sqe = uring_sqe(b);
    io_uring_prep_cancel(sqe, op, 0);
    io_uring_sqe_set_data64(sqe, CANCEL_TAG);
}

/* Takes the completions there are; true if one was the eventfd's (a wake-up). */
static bool uring_reap(IoBackend *b)
{
    struct io_uring_cqe *cqe;
    bool woken = false;
    while (io_uring_peek_cqe(&b->ring, &cqe) == 0) {
        uint64_t tag = cqe->user_data;
        int res = cqe->res;
        io_uring_cqe_seen(&b->ring, cqe);
        if (tag == WAKE_TAG) {
            uring_arm_wake(b);
            woken = true;
            continue;
        }
        if (tag == CANCEL_TAG)
            continue;
        if (IS_TIMER_TAG(tag)) {     /* the deadline timer fired (or was removed) */
            if (tag == TIMER_TAG(b->timer_gen))
                b->timer_deadline = 0;
            continue;
        }
        RtsIoOp *op = (RtsIoOp *)(uintptr_t)tag;
        if (op->kind == RTS_IO_TIMEOUT && res == -ETIME)
            res = 0;
        /* Note [Bounded waits]: cancelled by its link timeout, not by its thread */
        if (res == -ECANCELED && op->wait_ns && !op->cancelled
            && (op->kind == RTS_IO_READ || op->kind == RTS_IO_WRITE))
            res = -ETIMEDOUT;
        op->res = res;
        ready_push(b, op);
    }
    return woken;
}

/* Note [Idle in the ring]: keeps one timeout SQE armed for `deadline` (absolute, on the
 * monotonic clock, as base_now_ns), replacing the one armed for another deadline. */
static void uring_arm_timer(IoBackend *b, uint64_t deadline)
{
    if (b->timer_deadline == deadline)
        return;
    struct io_uring_sqe *sqe;
    if (b->timer_deadline) {     /* its completion (-ECANCELED, or -ETIME) is ignored */
        sqe = uring_sqe(b);
        io_uring_prep_timeout_remove(sqe, TIMER_TAG(b->timer_gen), 0);
        io_uring_sqe_set_data64(sqe, CANCEL_TAG);
    }
    b->timer_gen++;
    b->timer_ts.tv_sec = (long long)(deadline / 1000000000u);
    b->timer_ts.tv_nsec = (long long)(deadline % 1000000000u);
    sqe = uring_sqe(b);
    io_uring_prep_timeout(sqe, &b->timer_ts, 0, IORING_TIMEOUT_ABS);
    io_uring_sqe_set_data64(sqe, TIMER_TAG(b->timer_gen));
    b->timer_deadline = deadline;
}

/* Note [Wake-ups before the wait]: a wake-up written to the eventfd after the capability
 * decided to sleep (io_sleeping set, idle_mu released) but before this call may already have
 * completed the eventfd's read. Reaping it here consumes the wake-up, so the wait must not
 * begin: without that, the capability slept on with work in its inbox until some other
 * completion came (seen as 1-2 s stalls of the request server under wrk at -N2). */
static void uring_poll(IoBackend *b, uint64_t deadline_ns)
{
    if (uring_reap(b) || b->ready_hd)
        deadline_ns = 0;
    if (deadline_ns != UINT64_MAX && deadline_ns && deadline_ns <= base_now_ns())
        deadline_ns = 0;
    if (deadline_ns == 0) {
        if (b->unsubmitted) {
            io_uring_submit(&b->ring);
            b->unsubmitted = 0;
            uring_reap(b);
        }
        return;
    }
    if (deadline_ns != UINT64_MAX)
        uring_arm_timer(b, deadline_ns);
    int rc = io_uring_submit_and_wait(&b->ring, 1);
    b->unsubmitted = 0;
    if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
        base_fatal("io_uring_enter: %s", strerror(-rc));
    uring_reap(b);
}
#endif

/* --- the interface ------------------------------------------------------------------------ */

IoBackend *io_backend_new(void)
{
    IoBackend *b = calloc(1, sizeof *b);
    if (!b) base_fatal("out of memory (IO manager)");
    b->kind = chosen;
    b->epfd = -1;
    b->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (b->efd < 0) base_fatal("eventfd: %s", strerror(errno));
#if HAVE_LIBURING
    if (b->kind == IO_KIND_URING) {
        int rc = io_uring_queue_init(URING_ENTRIES, &b->ring, 0);
        if (rc < 0) base_fatal("io_uring_queue_init: %s", strerror(-rc));
        uring_arm_wake(b);
        return b;
    }
#endif
    b->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (b->epfd < 0) base_fatal("epoll_create1: %s", strerror(errno));
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = b->efd };
    if (epoll_ctl(b->epfd, EPOLL_CTL_ADD, b->efd, &ev) != 0)
        base_fatal("epoll_ctl(eventfd): %s", strerror(errno));
    return b;
}

void io_backend_free(IoBackend *b)
{
#if HAVE_LIBURING
    if (b->kind == IO_KIND_URING)
        io_uring_queue_exit(&b->ring);
#endif
    if (b->epfd >= 0) close(b->epfd);
    close(b->efd);
    free(b->fds);
    free(b);
}

void io_submit(IoBackend *b, RtsIoOp *op, void *tag)
{
    op->tag = tag;
    op->owner = b;
    op->res = 0;
    __atomic_store_n(&op->busy, 1, __ATOMIC_RELAXED);
    b->inflight++;
#if HAVE_LIBURING
    if (b->kind == IO_KIND_URING) {
        uring_submit(b, op);
        return;
    }
#endif
    epoll_submit(b, op);
}

void io_cancel(IoBackend *b, RtsIoOp *op)
{
    if (!__atomic_load_n(&op->busy, __ATOMIC_ACQUIRE))
        return;
#if HAVE_LIBURING
    if (b->kind == IO_KIND_URING) {
        uring_cancel(b, op);
        return;
    }
#endif
    epoll_cancel(b, op);
}

int io_wait(IoBackend *b, uint64_t deadline_ns, void **tags, int max)
{
    if (deadline_ns && test_wait_delay_us)
        usleep(test_wait_delay_us);
#if HAVE_LIBURING
    if (b->kind == IO_KIND_URING)
        uring_poll(b, deadline_ns);
    else
#endif
        epoll_poll(b, deadline_ns);
    int n = 0;
    while (n < max && b->ready_hd) {
        RtsIoOp *op = b->ready_hd;
        b->ready_hd = op->next;
        if (!b->ready_hd) b->ready_tl = NULL;
        op->next = NULL;
        tags[n++] = op->tag;     /* before hand_back: then the op is its owner's again */
        hand_back(b, op);
    }
    return n;
}
