/* rtslab: IO operations that a lightweight thread blocks on (the IO manager: Note [IO manager]
 * in runtime/io/iomgr.h).
 *
 * An RtsIoOp is a C struct that its owner (a port, in the Scheme layer) keeps outside the
 * heap, with the buffer the kernel reads into or writes from: the GC moves heap objects, so
 * no heap address is ever handed to the kernel. The owner fills in kind, fd, buf/len (and
 * addr for a connect), then rts_io_block(cap, op) submits it to the current capability's
 * back end and blocks the current thread (the step returns RTS_BLOCK, as after an MVar take
 * that returned false). When the operation completes, res holds its result (bytes
 * transferred, the accepted descriptor, 0 for a connect or a timeout; -errno on failure) and
 * the thread is runnable again. The op, and its buffer, must stay allocated and untouched
 * while `busy` is set: a killed or interrupted thread leaves its op busy until the kernel
 * has given it back.
 */
#ifndef RTSLAB_IO_H
#define RTSLAB_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

typedef enum {
    RTS_IO_READ,       /* read(fd, buf, len) */
    RTS_IO_WRITE,      /* write(fd, buf, len) */
    RTS_IO_ACCEPT,     /* accept4(fd, addr, &addrlen, SOCK_CLOEXEC | SOCK_NONBLOCK) */
    RTS_IO_CONNECT,    /* connect(fd, addr, addrlen): fd must be non-blocking */
    RTS_IO_TIMEOUT,    /* completes after timeout_ns, with res 0 */
} RtsIoKind;

typedef struct RtsIoOp RtsIoOp;
struct RtsIoOp {
    /* filled in by the owner */
    RtsIoKind kind;
    int       fd;
    void     *buf;
    size_t    len;
    struct sockaddr_storage addr;  /* connect: the peer; accept: the peer, on completion */
    socklen_t addrlen;
    uint64_t  timeout_ns;          /* RTS_IO_TIMEOUT: relative */
    uint64_t  wait_ns;             /* optional, RTS_IO_READ and RTS_IO_WRITE: an op that has not
                                    * completed this long after it was submitted (no byte moved)
                                    * completes with -ETIMEDOUT; 0: no limit (Note [Bounded
                                    * waits] in runtime/io/iomgr.c) */
    void    (*done)(RtsIoOp *op);      /* optional: called when the back end gives op back (busy
                                        * cleared), on the submitting capability's OS thread,
                                        * possibly while it is idle: it must not touch the heap */
    void     *data;                /* the owner's */
    uint64_t  fd_id;               /* optional: the open descriptor's id (rts_io_fd_id), the
                                    * same on every op on it until it is closed; lets the epoll
                                    * back end register it once (Note [Registered once] in
                                    * runtime/io/iomgr.c); 0: none */
    /* set by the manager */
    void     *tag;                 /* the back end gives it back with the completion */
    int64_t   res;                 /* the result: >= 0, or -errno */
    int       busy;                /* atomic: submitted and not yet given back by the kernel */
    int       cancelled;           /* its thread stopped waiting (killed, interrupted) */
    /* the back end's own */
    uint64_t  deadline_ns;         /* epoll: RTS_IO_TIMEOUT's absolute time, or when a waiting
                                    * op with a wait_ns times out */
    int64_t   kts[2];              /* io_uring: RTS_IO_TIMEOUT's __kernel_timespec */
    RtsIoOp  *next;                /* epoll: the ops waiting on one descriptor, or timers */
    RtsIoOp  *dnext, *dprev;       /* epoll: the waiting ops with a wait_ns, by deadline */
    bool      in_deadlines;        /* epoll: on that list (its deadline in deadline_ns) */
    void     *owner;               /* the back end that holds it */
};

/* Submits op to the current capability's back end and blocks the current thread until it
 * completes (or the thread is interrupted: op->cancelled); the step must return RTS_BLOCK.
 * The result register is left as it was. */
struct Capability;
void rts_io_block(struct Capability *cap, RtsIoOp *op);

/* A new id for an open descriptor (RtsIoOp.fd_id): never 0, never given twice. */
uint64_t rts_io_fd_id(void);

#endif
