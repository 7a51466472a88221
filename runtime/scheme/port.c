/* Ports: input from files and strings, output to files and strings, the standard streams.
 * The Scheme procedures over them are in prim_port.c.
 *
 * Note [Ports]
 * A SchPort is a malloc'd C struct, not a heap object: the reader and the printer use ports
 * from C (the driver reads a program before any Scheme runs), and a file or a growing buffer
 * has no place in a moving heap. A port object is a record of sch_rtd_port whose one field
 * is the SchPort's address as a fixnum. Closing a port releases its descriptor and buffers;
 * the struct itself, which the record still points to, is freed by the record's finalizer
 * (Note [Finalizers] in sm/finalize.h) once the GC finds the record unreachable. A port that
 * becomes unreachable while open is closed there first, as GHC's handle finalizers do: file
 * output is flushed (a failed write is reported as at exit, and exit's status becomes 1),
 * a socket's unwritten output is dropped (a peer that never reads would block the flush
 * forever). A managed port whose IO op is still in the back end's hands (a cancelled read)
 * is freed by the op's completion instead (port_op_done; SchIo.ops_pending). Ports the C
 * code makes for itself (the program file, includes, the prelude, error text) have no
 * record; the C code frees them with sch_port_free. (Before: nothing was ever freed, and
 * 60,000 connections through the HTTP server took its RSS from 3.8 MB to 102 MB.)
 * Every SchPort not yet freed is on the list all_ports, which lets sch_flush_all flush every
 * output file at exit; the list's lock is held while it is walked, and a port is taken off
 * it before it is freed.
 *
 * Capabilities run on several OS threads and may share a port (the standard streams above
 * all), so every operation holds the port's mutex. Nothing allocates in the heap while
 * holding one: an allocation may wait for a stop-the-world GC, which would wait in turn for
 * a capability blocked on the mutex.
 *
 * File input is read with read(2) into the port's own buffer and decoded from UTF-8 here
 * (malformed bytes become U+FFFD), so char-ready? knows what is buffered. File output goes
 * through stdio, UTF-8 encoded, and is buffered until a flush.
 *
 * Note [Write errors]
 * A failed write (a full disk, a pipe whose reader has gone: the runtime ignores SIGPIPE, so
 * that is EPIPE here) is kept in the port as its errno until the primitive that wrote
 * takes it (sch_port_take_error) and raises it as an error in the writing thread. stdio's
 * own error flag on stdout is left set, so a failure that no primitive saw (the final flush)
 * is still found at exit, where the runtime reports it with a non-zero exit status; a file
 * port's failure that no primitive raised (a write that ran while its thread went on, the
 * flush at exit) is reported by sch_flush_all, and exit's status becomes 1 (before: lost,
 * and `(display (make-string 100000 #\a) (open-output-file "/dev/full"))` exited 0).
 *
 * Note [Ports through the IO manager]
 * Socket ports (SOCKET: input and output at once), listening sockets (LISTENER) and the
 * file ports that open-input-file and open-output-file make are *managed*: their reads,
 * writes, accepts and connects go through the runtime's IO manager (rtslab_io.h; Note [IO
 * manager] in runtime/io/iomgr.h), so a thread that waits for one blocks alone and its
 * capability runs others. A managed port owns a SchIo: the two RtsIoOps (one to read or
 * accept, one to write or connect) and the C buffers the kernel reads into and writes from,
 * never a heap address. The primitives drive it in steps (sch_port_io_in, _out, _accept,
 * _connect), each under the port's mutex, never held while blocked: a step first takes the
 * result of an op that has completed (whoever submitted it: a thread that was interrupted
 * leaves its op's result to the next user), then says READY (enough input is buffered, or
 * the end or an error: the caller goes on as for any port), SUBMIT (the caller blocks on
 * the op with rts_io_block, and then retries: the prelude's %io-retry calls the primitive
 * again while it answers %io-again), or BUSY (another thread's op is in flight on that
 * side: the caller waits a millisecond and retries). Output is encoded into obuf and
 * written when a write primitive leaves more than IO_HIGH bytes there, or at a flush or
 * close (which write it all). A read or a write that fails keeps its errno (rerr, err)
 * for the primitive to raise, with the errno's name (ECONNRESET, EPIPE...).
 *
 * The standard streams are not managed: stdin is shared with the parent (a terminal, a
 * shell's pipe), so it stays a blocking read(2) on the capability's OS thread, and stdout
 * and stderr stay stdio, written in order with the runtime's own messages. `read` reads a
 * managed port ahead and undoes a parse that runs dry (Note [Reading a datum from a managed
 * port]); other C callers of the reader block on poll(2) when its buffer runs dry.
 *
 * Closing a socket shuts it down first, which ends an op in flight on it (a read sees the
 * end, an accept an error); if an op is still busy then, the descriptor is closed when the
 * back end gives the op back (port_op_done), never under the kernel's feet.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rtslab_io.h"
#include "rts/vm_api.h"
#include "scheme/scheme.h"

typedef enum { FILE_IN, STRING_IN, FILE_OUT, STRING_OUT, SOCKET, LISTENER } PortKind;

#define NO_PEEK  (-2)          /* SchPort.peeked: no character decoded ahead */
#define FILE_BUF 4096
#define IO_RBUF  16384         /* a managed port's reads, at most */
#define IO_WBUF  65536         /* ... and writes */
#define IO_HIGH  65536         /* a write primitive writes out what is buffered beyond this */

/* Note [Ports through the IO manager] */
typedef struct SchIo {
    RtsIoOp rd, wr;            /* rd: read or accept; wr: write or connect */
    bool rd_out, wr_out;       /* submitted, and its result not yet taken */
    size_t wlen, woff;         /* wbuf[woff..wlen) is still to be written */
    size_t wsize;              /* wbuf's size: what the largest write needed, 4 KiB at least,
                                * IO_WBUF at most (a small answer needs no 64 KiB) */
    uint8_t *rbuf, *wbuf;      /* IO_RBUF, wsize bytes, made when first needed; freed at
                                * close once no op is busy (the SchIo itself stays, as the
                                * SchPort does: a late port_op_done may still look at it) */
    unsigned ops_pending;      /* ops submitted whose port_op_done has not yet run */
    bool orphaned;             /* finalized with ops_pending: the last port_op_done frees */
} SchIo;

struct SchPort {
    PortKind kind;
    bool open;                 /* read without the lock by the primitives' checks (atomic) */
    bool standard;             /* stdin, stdout or stderr: closing leaves the stream open */
    pthread_mutex_t lock;
    char *name;
    SchPort *next, *prev;      /* all_ports */
    int line, col;             /* input: the position of the next character */
    /* FILE_IN: the descriptor, its bytes read but not decoded, a character decoded ahead */
    int fd;
    uint8_t *bytes;
    size_t bpos, blen;
    int32_t peeked;
    /* STRING_IN: the characters and the next one's index; STRING_OUT: the characters */
    uint32_t *s;
    size_t n, pos, cap;
    FILE *f;                   /* FILE_OUT, not managed */
    int err;                   /* FILE_OUT, SOCKET: errno of a failed write not yet reported, or 0 */
    /* managed ports (Note [Ports through the IO manager]) */
    bool managed;
    bool eof;                  /* a read returned 0, not yet delivered */
    bool close_deferred;       /* closed with an op busy: port_op_done closes fd */
    bool waiter_eof;           /* closed while a read waited on it: that read sees the end */
    /* Note [Reading a datum from a managed port]: a read in progress that may be undone */
    bool spec;                 /* the reader reads ahead: nothing is compacted or blocked on */
    bool dry;                  /* ... and it ran out of input that had come (sticky) */
    size_t spec_pos;           /* where it began: bpos, peeked, line and col */
    int32_t spec_peeked;
    int spec_line, spec_col;
    int rerr;                  /* errno of a failed read not yet raised, or 0 */
    size_t bsize;              /* the size of bytes (managed input: it grows) */
    size_t nl_scanned;         /* bytes[bpos, nl_scanned) hold no newline (read-line's wait
                                * looks only at what came after: once quadratic, 20 s for a
                                * 98 MB line); moved with bytes, 0 when bpos goes back */
    size_t cc_from, cc_to, cc_n;  /* read-string's wait: bytes[cc_from, cc_to) decode to cc_n
                                * characters, valid while cc_from == bpos (only what came
                                * after cc_to is decoded next: once quadratic, 11.6 s for
                                * 16 MB); moved with bytes */
    uint64_t scanned;          /* bytes the waits of read-line and read-string have looked at
                                * (%port-scanned: the test that they stay linear) */
    bool line_too_long;        /* a line being waited for outgrew -M: read-line raises */
    uint64_t write_timeout_ns; /* managed output: a write that moves no byte for this long
                                * fails with ETIMEDOUT (RtsIoOp.wait_ns); 0: no limit */
    uint8_t *obuf;             /* output encoded and not yet written */
    size_t olen, osize;
    SchIo *io;
};

static SchPort *all_ports;
static pthread_mutex_t all_ports_lock = PTHREAD_MUTEX_INITIALIZER;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) rtv_fatal("out of memory (ports)");
    return p;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

static void port_init(SchPort *p, PortKind kind, const char *name)
{
    p->kind = kind;
    p->open = true;
    pthread_mutex_init(&p->lock, NULL);
    p->name = xstrdup(name);
    p->line = p->col = 1;
    p->fd = -1;
    p->peeked = NO_PEEK;
    pthread_mutex_lock(&all_ports_lock);
    p->next = all_ports;
    p->prev = NULL;
    if (all_ports)
        all_ports->prev = p;
    all_ports = p;
    pthread_mutex_unlock(&all_ports_lock);
}

static SchPort *port_new(PortKind kind, const char *name)
{
    SchPort *p = xrealloc(NULL, sizeof *p);
    memset(p, 0, sizeof *p);
    port_init(p, kind, name);
    return p;
}

bool sch_port_is_open(SchPort *p)       { return __atomic_load_n(&p->open, __ATOMIC_ACQUIRE); }
bool sch_port_is_input(SchPort *p)
{ return p->kind == FILE_IN || p->kind == STRING_IN || p->kind == SOCKET; }
bool sch_port_is_output(SchPort *p)
{ return p->kind == FILE_OUT || p->kind == STRING_OUT || p->kind == SOCKET; }
bool sch_port_is_listener(SchPort *p)   { return p->kind == LISTENER; }
bool sch_port_is_socket(SchPort *p)     { return p->kind == SOCKET; }
int  sch_port_fd(SchPort *p)            { return p->fd; }
bool sch_port_is_string_out(SchPort *p) { return p->kind == STRING_OUT; }
bool sch_port_is_file_in(SchPort *p) { return p->kind == FILE_IN && !p->standard; }

/* A flag of p that says something once: its value, cleared. */
static bool take_flag(SchPort *p, bool *flag)
{
    pthread_mutex_lock(&p->lock);
    bool r = *flag;
    *flag = false;
    pthread_mutex_unlock(&p->lock);
    return r;
}

bool sch_port_take_line_too_long(SchPort *p) { return take_flag(p, &p->line_too_long); }

bool sch_port_set_write_timeout(SchPort *p, uint64_t ns)
{
    pthread_mutex_lock(&p->lock);
    bool ok = p->managed && p->kind != LISTENER && p->kind != FILE_IN;
    if (ok)
        p->write_timeout_ns = ns;
    pthread_mutex_unlock(&p->lock);
    return ok;
}

uint64_t sch_port_scanned(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    uint64_t n = p->scanned;
    pthread_mutex_unlock(&p->lock);
    return n;
}
bool sch_port_take_waiter_eof(SchPort *p)    { return take_flag(p, &p->waiter_eof); }

/* --- the standard streams ---------------------------------------------------------------- */

static SchPort std_in, std_out, std_err;
static uint8_t std_in_bytes[FILE_BUF];
static pthread_once_t std_once = PTHREAD_ONCE_INIT;

static void std_init(void)
{
    port_init(&std_in, FILE_IN, "<stdin>");
    std_in.fd = 0;
    std_in.bytes = std_in_bytes;
    std_in.bsize = FILE_BUF;
    port_init(&std_out, FILE_OUT, "<stdout>");
    std_out.f = stdout;
    port_init(&std_err, FILE_OUT, "<stderr>");
    std_err.f = stderr;
    std_in.standard = std_out.standard = std_err.standard = true;
}

SchPort *sch_port_stdin(void)  { pthread_once(&std_once, std_init); return &std_in; }
SchPort *sch_port_stdout(void) { pthread_once(&std_once, std_init); return &std_out; }
SchPort *sch_port_stderr(void) { pthread_once(&std_once, std_init); return &std_err; }

/* --- opening and closing ---------------------------------------------------------------- */

SchPort *sch_port_open_string_in(const uint32_t *s, size_t n)
{
    SchPort *p = port_new(STRING_IN, "<string>");
    p->s = xrealloc(NULL, n * sizeof *s);
    if (n) memcpy(p->s, s, n * sizeof *s);
    p->n = n;
    return p;
}

SchPort *sch_port_open_utf8_in(const char *s, size_t n, const char *name)
{
    SchPort *p = port_new(STRING_IN, name);
    p->s = xrealloc(NULL, n * sizeof *p->s);
    const uint8_t *b = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        size_t used;
        int32_t c = sch_utf8_decode(b + i, n - i, &used);
        p->s[p->n++] = c < 0 ? 0xfffd : (uint32_t)c;
        i += c < 0 ? n - i : used;
    }
    return p;
}

static void port_op_done(RtsIoOp *op);

/* A managed port's SchIo (Note [Ports through the IO manager]). */
static SchIo *io_new(SchPort *p)
{
    SchIo *io = xrealloc(NULL, sizeof *io);
    memset(io, 0, sizeof *io);
    io->rd.data = io->wr.data = p;
    io->rd.done = io->wr.done = port_op_done;
    return io;
}

static void managed_init(SchPort *p, int fd, bool input)
{
    p->fd = fd;
    p->managed = true;
    p->io = io_new(p);
    p->io->rd.fd_id = p->io->wr.fd_id = rts_io_fd_id();   /* Note [Registered once] */
    if (input) {
        p->bsize = FILE_BUF;
        p->bytes = xrealloc(NULL, p->bsize);
    }
}

SchPort *sch_port_open_fd(int fd, bool listener, const char *name)
{
    SchPort *p = port_new(listener ? LISTENER : SOCKET, name);
    managed_init(p, fd, !listener);
    return p;
}

SchPort *sch_port_open_file_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return NULL;
    }
    SchPort *p = port_new(FILE_IN, path);
    managed_init(p, fd, true);
    return p;
}

SchPort *sch_port_open_file_out(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0666);
    if (fd < 0) return NULL;
    SchPort *p = port_new(FILE_OUT, path);
    managed_init(p, fd, false);
    return p;
}

SchPort *sch_port_open_string_out(void) { return port_new(STRING_OUT, "<string>"); }

static bool op_busy(RtsIoOp *op) { return __atomic_load_n(&op->busy, __ATOMIC_ACQUIRE); }

/* Closes a managed port's descriptor, now or when its ops are given back. Caller holds the
 * lock. */
static void io_free_buffers(SchIo *io)
{
    free(io->rbuf);
    free(io->wbuf);
    io->rbuf = io->wbuf = NULL;
    io->wsize = 0;
}

static void managed_close(SchPort *p)
{
    /* A thread blocked in a read on it, woken by the shutdown below, calls its primitive
     * again: that call sees the end of file, as docs/scheme.md says (before: "port is
     * closed"); sch_port_take_waiter_eof. */
    if (p->kind != LISTENER && p->io->rd_out)
        p->waiter_eof = true;
    if (p->kind == SOCKET || p->kind == LISTENER)
        shutdown(p->fd, SHUT_RDWR);          /* ends an op in flight on it */
    if (op_busy(&p->io->rd) || op_busy(&p->io->wr)) {
        p->close_deferred = true;
    } else {
        close(p->fd);
        p->fd = -1;
        io_free_buffers(p->io);
    }
    free(p->bytes);
    p->bytes = NULL;
    p->bpos = p->blen = p->bsize = p->nl_scanned = 0;
    p->cc_from = p->cc_to = p->cc_n = 0;
    free(p->obuf);
    p->obuf = NULL;
    p->olen = p->osize = 0;
}

/* The back end gave op back (on the capability that submitted it; no heap is touched). */
static void port_free(SchPort *p);

static void port_op_done(RtsIoOp *op)
{
    SchPort *p = op->data;
    pthread_mutex_lock(&p->lock);
    if (p->close_deferred && !op_busy(&p->io->rd) && !op_busy(&p->io->wr)) {
        p->close_deferred = false;
        close(p->fd);
        p->fd = -1;
        io_free_buffers(p->io);
    }
    bool last = --p->io->ops_pending == 0 && p->io->orphaned;
    pthread_mutex_unlock(&p->lock);
    if (last)
        port_free(p);                         /* Note [Ports]: its finalizer left it to us */
}

void sch_port_close(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->managed) {
        __atomic_store_n(&p->open, false, __ATOMIC_RELEASE);
        managed_close(p);
    } else if (p->open) {
        __atomic_store_n(&p->open, false, __ATOMIC_RELEASE);
        switch (p->kind) {
        case FILE_IN:
            if (!p->standard) {
                close(p->fd);
                free(p->bytes);
                p->bytes = NULL;
            }
            break;
        case FILE_OUT:
            if (p->standard ? fflush(p->f) != 0 : fclose(p->f) != 0)
                p->err = errno ? errno : EIO;
            break;
        case STRING_IN:
        case STRING_OUT:
            free(p->s);
            p->s = NULL;
            break;
        default:
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* --- input -------------------------------------------------------------------------------- */

/* Moves the undecoded bytes to the front of the buffer and reads more; false at the end of
 * the file (or on an error, which reads as the end). Caller holds the lock. */
static bool managed_refill(SchPort *p);

/* The bytes from bpos on are about to move to the front of the buffer: what the waits of
 * read-line and read-string have scanned moves with them. Caller holds the lock. */
static void scans_moved(SchPort *p)
{
    p->nl_scanned = p->nl_scanned > p->bpos ? p->nl_scanned - p->bpos : 0;
    if (p->cc_from == p->bpos) {
        p->cc_to -= p->bpos;
        p->cc_from = 0;
    } else {
        p->cc_from = p->cc_to = p->cc_n = 0;
    }
}

static bool refill(SchPort *p)
{
    if (!p->spec) {            /* a read ahead keeps every byte where it is */
        memmove(p->bytes, p->bytes + p->bpos, p->blen - p->bpos);
        p->blen -= p->bpos;
        scans_moved(p);
        p->bpos = 0;
    }
    if (p->managed)
        return managed_refill(p);
    for (;;) {
        ssize_t k = read(p->fd, p->bytes + p->blen, FILE_BUF - p->blen);
        if (k > 0) { p->blen += (size_t)k; return true; }
        if (k < 0 && errno == EINTR) continue;
        return false;
    }
}

static int32_t file_decode(SchPort *p)
{
    for (;;) {
        if (p->bpos == p->blen && !refill(p)) return -1;
        size_t used;
        int32_t c = sch_utf8_decode(p->bytes + p->bpos, p->blen - p->bpos, &used);
        if (c >= 0) { p->bpos += used; return c; }
        if (!refill(p)) { p->bpos = p->blen; return 0xfffd; }   /* cut short by the end */
    }
}

/* The next character without taking it, or -1. Caller holds the lock. An end of file seen
 * by a peek is kept for the next read; after that read, reading tries the file again (a
 * terminal can go on after an end of file). */
static int32_t peek_locked(SchPort *p)
{
    if (!p->open) return -1;
    if (p->kind == STRING_IN) return p->pos < p->n ? (int32_t)p->s[p->pos] : -1;
    if (p->kind != FILE_IN && p->kind != SOCKET) return -1;
    if (p->peeked == NO_PEEK) p->peeked = file_decode(p);
    return p->peeked;
}

static int32_t getc_locked(SchPort *p)
{
    int32_t c = peek_locked(p);
    if (p->kind == FILE_IN || p->kind == SOCKET) p->peeked = NO_PEEK;
    if (c < 0) return -1;
    if (p->kind == STRING_IN) p->pos++;
    if (c == '\n') {
        if (p->line < INT_MAX) p->line++;
        p->col = 1;
    } else if (p->col < INT_MAX) {
        p->col++;
    }
    return c;
}

int32_t sch_port_getc(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    int32_t c = getc_locked(p);
    pthread_mutex_unlock(&p->lock);
    return c;
}

int32_t sch_port_peekc(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    int32_t c = peek_locked(p);
    pthread_mutex_unlock(&p->lock);
    return c;
}

uint32_t *sch_port_read_chars(SchPort *p, size_t max, bool line, size_t *n)
{
    size_t k = 0, size = 80;
    uint32_t *buf = xrealloc(NULL, size * sizeof *buf);
    bool any = false;
    pthread_mutex_lock(&p->lock);
    while (k < max) {
        int32_t c = getc_locked(p);
        if (c < 0) break;
        any = true;
        if (line && c == '\n') {
            if (k && buf[k - 1] == '\r') k--;
            break;
        }
        if (line && rtv_max_heap() && k >= rtv_max_heap() / sizeof(uint32_t)) {
            p->line_too_long = true;           /* as in input_ready: its string passes -M */
            break;
        }
        if (k == size) {
            size *= 2;
            buf = xrealloc(buf, size * sizeof *buf);
        }
        buf[k++] = (uint32_t)c;
    }
    pthread_mutex_unlock(&p->lock);
    if (!any && max) {
        free(buf);
        return NULL;
    }
    *n = k;
    return buf;
}

bool sch_port_char_ready(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    bool fd_in = p->kind == FILE_IN || p->kind == SOCKET;
    bool ready = !fd_in || !p->open || p->peeked != NO_PEEK || p->bpos < p->blen || p->eof || p->rerr;
    if (!ready && p->managed && p->io->rd_out) {
        ready = false;           /* an op in flight holds what comes next */
    } else if (!ready) {
        struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
        ready = poll(&pfd, 1, 0) > 0;
    }
    pthread_mutex_unlock(&p->lock);
    return ready;
}

int sch_port_line(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    int line = p->line;
    pthread_mutex_unlock(&p->lock);
    return line;
}

int sch_port_col(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    int col = p->col;
    pthread_mutex_unlock(&p->lock);
    return col;
}

const char *sch_port_name(SchPort *p) { return p->name; }

/* --- output ------------------------------------------------------------------------------- */

/* After a stdio write or flush of a FILE_OUT port that failed: the failure is kept (Note
 * [Write errors]; errno was cleared before the call). Caller holds the lock. */
static void note_error(SchPort *p)
{
    if (!p->err) {
        p->err = errno ? errno : EIO;
        if (p == &std_out)
            rts_note_stdout_error(p->err);
    }
}

int sch_port_take_error(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    int e = p->err;
    p->err = 0;
    if (e && p->open && p->kind == FILE_OUT && !p->standard && !p->managed)
        clearerr(p->f);
    pthread_mutex_unlock(&p->lock);
    return e;
}

/* Caller holds the lock. */
static void out_append(SchPort *p, const void *b, size_t n)
{
    if (p->olen + n > p->osize) {
        p->osize = p->osize ? 2 * p->osize : 4096;
        while (p->olen + n > p->osize) p->osize *= 2;
        p->obuf = xrealloc(p->obuf, p->osize);
    }
    memcpy(p->obuf + p->olen, b, n);
    p->olen += n;
}

static void putc_locked(SchPort *p, uint32_t c)
{
    if (!p->open) return;
    if (p->managed) {
        char b[4];
        out_append(p, b, sch_utf8_encode(c, b));
    } else if (p->kind == FILE_OUT) {
        char b[4];
        size_t n = sch_utf8_encode(c, b);
        errno = 0;
        if (fwrite(b, 1, n, p->f) != n)
            note_error(p);
    } else if (p->kind == STRING_OUT) {
        if (p->n == p->cap) {
            p->cap = p->cap ? 2 * p->cap : 64;
            p->s = xrealloc(p->s, p->cap * sizeof *p->s);
        }
        p->s[p->n++] = c;
    }
}

void sch_port_putc(SchPort *p, uint32_t c)
{
    pthread_mutex_lock(&p->lock);
    putc_locked(p, c);
    pthread_mutex_unlock(&p->lock);
}

void sch_port_puts(SchPort *p, const char *utf8)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->managed) {
        out_append(p, utf8, strlen(utf8));
    } else if (p->open && p->kind == FILE_OUT) {
        errno = 0;
        if (fputs(utf8, p->f) == EOF)
            note_error(p);
    } else {
        const uint8_t *b = (const uint8_t *)utf8;
        size_t n = strlen(utf8);
        for (size_t i = 0; i < n;) {
            size_t used;
            int32_t c = sch_utf8_decode(b + i, n - i, &used);
            putc_locked(p, c < 0 ? 0xfffd : (uint32_t)c);
            i += c < 0 ? n - i : used;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

void sch_port_put_utf32(SchPort *p, const uint32_t *s, size_t n)
{
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < n; i++)
        putc_locked(p, s[i]);
    pthread_mutex_unlock(&p->lock);
}

static void managed_flush_blocking(SchPort *p);

void sch_port_flush(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->managed) {
        managed_flush_blocking(p);
    } else if (p->open && p->kind == FILE_OUT) {
        errno = 0;
        if (fflush(p->f) != 0)
            note_error(p);
    }
    pthread_mutex_unlock(&p->lock);
}

char *sch_port_out_utf8(SchPort *p, size_t *n)
{
    pthread_mutex_lock(&p->lock);
    size_t len = p->kind == STRING_OUT && p->open ? p->n : 0;
    char *out = xrealloc(NULL, 4 * len + 1);
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        k += sch_utf8_encode(p->s[i], out + k);
    pthread_mutex_unlock(&p->lock);
    out[k] = 0;
    if (n) *n = k;
    return out;
}

uint32_t *sch_port_out_utf32(SchPort *p, size_t *n)
{
    pthread_mutex_lock(&p->lock);
    uint32_t *copy = NULL;
    if (p->open) {
        *n = p->n;
        copy = xrealloc(NULL, p->n * sizeof *copy);
        if (p->n) memcpy(copy, p->s, p->n * sizeof *copy);
    }
    pthread_mutex_unlock(&p->lock);
    return copy;
}

static bool lost_write;          /* atomic: a finalized port's write failed (Note [Ports]) */

/* A file port's write error no primitive raised, reported; false if there was one. */
static bool report_write_error(SchPort *p)
{
    int e = sch_port_take_error(p);
    if (e)
        fprintf(stderr, "rtslab: cannot write to %s: %s\n", p->name, strerror(e));
    return !e;
}

bool sch_flush_all(void)
{
    sch_port_stdout();
    bool ok = !__atomic_load_n(&lost_write, __ATOMIC_RELAXED);
    pthread_mutex_lock(&all_ports_lock);
    for (SchPort *p = all_ports; p; p = p->next) {
        /* Threads the main thread forked may still be closing ports (they run until the
         * process exits), and a port's open flag sits beside its kind: the compiler may read
         * kind and standard with one load that spans it, so they are read under the lock
         * that sch_port_close writes open under (TSan saw the wide load race at exit). */
        pthread_mutex_lock(&p->lock);
        PortKind kind = p->kind;
        bool standard = p->standard;
        pthread_mutex_unlock(&p->lock);
        if (kind != FILE_OUT && kind != SOCKET)
            continue;
        sch_port_flush(p);
        if (kind != FILE_OUT || standard)         /* stdout's own: rts_exit reports it */
            continue;
        ok &= report_write_error(p);
    }
    pthread_mutex_unlock(&all_ports_lock);
    return ok;
}

/* Note [Ports]: the struct and everything it owns, once nothing can reach it. */
static void port_free(SchPort *p)
{
    pthread_mutex_lock(&all_ports_lock);
    if (p->prev)
        p->prev->next = p->next;
    else
        all_ports = p->next;
    if (p->next)
        p->next->prev = p->prev;
    pthread_mutex_unlock(&all_ports_lock);
    if (p->io) {
        io_free_buffers(p->io);
        free(p->io);
    }
    free(p->bytes);
    free(p->obuf);
    free(p->s);
    free(p->name);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

void sch_port_free(SchPort *p)
{
    sch_port_close(p);
    port_free(p);
}

/* The finalizer of a port object (Note [Ports]). */
static void port_finalize(void *data)
{
    SchPort *p = data;
    if (p->kind == FILE_OUT && sch_port_is_open(p)) {
        sch_port_flush(p);
        if (!report_write_error(p))
            __atomic_store_n(&lost_write, true, __ATOMIC_RELAXED);
    }
    sch_port_close(p);
    pthread_mutex_lock(&p->lock);
    bool later = p->io && p->io->ops_pending;
    if (later)
        p->io->orphaned = true;
    pthread_mutex_unlock(&p->lock);
    if (!later)
        port_free(p);
}

/* --- managed ports: the steps (Note [Ports through the IO manager]) ---------------------------- */

/* Takes the result of a completed read into the input buffer. Caller holds the lock. */
static void take_read(SchPort *p)
{
    SchIo *io = p->io;
    if (!io->rd_out || op_busy(&io->rd) || io->rd.kind != RTS_IO_READ)
        return;
    io->rd_out = false;
    int64_t r = io->rd.res;
    if (r > 0) {
        if (p->blen + (size_t)r > p->bsize) {
            if (p->bpos && !p->spec) {
                memmove(p->bytes, p->bytes + p->bpos, p->blen - p->bpos);
                p->blen -= p->bpos;
                scans_moved(p);
                p->bpos = 0;
            }
            while (p->blen + (size_t)r > p->bsize) p->bsize *= 2;
            p->bytes = xrealloc(p->bytes, p->bsize);
        }
        memcpy(p->bytes + p->blen, io->rbuf, (size_t)r);
        p->blen += (size_t)r;
    } else if (r == 0) {
        p->eof = true;
    } else if (r != -ECANCELED) {
        p->rerr = (int)-r;
    }
}

/* The reader's refill (Note [Ports through the IO manager]): what has come, else a read
 * that blocks this OS thread; in a read ahead (Note [Reading a datum from a managed port])
 * what has come only, else the end, with `dry` set. */
static bool managed_refill(SchPort *p)
{
    if (p->spec && p->dry) return false;
    size_t before = p->blen;
    take_read(p);
    if (p->blen > before) return true;
    if (p->eof) { p->eof = false; return false; }
    if (p->rerr) return false;
    if (p->io->rd_out) { p->dry = p->spec; return false; }
    for (;;) {
        if (p->blen == p->bsize) {
            p->bsize *= 2;
            p->bytes = xrealloc(p->bytes, p->bsize);
        }
        ssize_t k = read(p->fd, p->bytes + p->blen, p->bsize - p->blen);
        if (k > 0) { p->blen += (size_t)k; return true; }
        if (k == 0) return false;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (p->spec) { p->dry = true; return false; }
            struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
            poll(&pfd, 1, -1);
            continue;
        }
        if (errno != EINTR) { p->rerr = errno; return false; }
    }
}

/* Note [Reading a datum from a managed port]
 * `read` parses with the C reader, which takes characters one by one (sch_port_getc) and
 * cannot stop half-way to let its thread block. So on a managed port it reads ahead: from
 * sch_port_read_ahead on, the port neither compacts its buffer nor blocks; when the reader
 * needs input that has not come, the refill says "end" and marks the port dry, and from then
 * on every refill says so. sch_port_read_done then tells whether the parse ran dry: if so
 * whatever it made is thrown away, the port is put back where the read began (position,
 * character peeked, line and column), and the primitive waits through the IO manager for
 * more than the bytes there were (SCH_NEED_MORE) and parses again from the start (a datum
 * that comes in k pieces is parsed k times). A parse that did not run dry is the answer,
 * the end of file and errors included, as on any port. One thread at a time reads a port
 * (docs/scheme.md): a second one taking characters during a read ahead would see them
 * again after it is undone. */
void sch_port_read_ahead(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->managed) {
        p->spec = true;
        p->dry = false;
        p->spec_pos = p->bpos;
        p->spec_peeked = p->peeked;
        p->spec_line = p->line;
        p->spec_col = p->col;
    }
    pthread_mutex_unlock(&p->lock);
}

bool sch_port_read_done(SchPort *p, size_t *had)
{
    pthread_mutex_lock(&p->lock);
    bool dry = p->spec && p->dry;
    if (dry) {
        p->bpos = p->spec_pos;
        p->nl_scanned = 0;                 /* bpos went back: scan it all again */
        p->peeked = p->spec_peeked;
        p->line = p->spec_line;
        p->col = p->spec_col;
        *had = p->blen - p->bpos;
    }
    p->spec = p->dry = false;
    pthread_mutex_unlock(&p->lock);
    return dry;
}

/* Whether what is buffered answers a read of kind `need` (n: characters for SCH_NEED_CHARS). */
static bool input_ready(SchPort *p, int need, size_t n)
{
    if (p->eof || p->rerr) return true;
    size_t avail = p->blen - p->bpos, used;
    const uint8_t *b = p->bytes + p->bpos;
    switch (need) {
    case SCH_NEED_MORE:          /* more than n bytes (and a character held ahead) */
        return avail > n;
    case SCH_NEED_CHAR:
        return p->peeked != NO_PEEK || (avail && sch_utf8_decode(b, avail, &used) >= 0);
    case SCH_NEED_LINE: {
        if (p->peeked == '\n')
            return true;
        size_t from = p->nl_scanned > p->bpos ? p->nl_scanned : p->bpos;
        p->scanned += p->blen - from;
        if (from < p->blen && memchr(p->bytes + from, '\n', p->blen - from))
            return true;
        p->nl_scanned = p->blen;
        /* Its string would pass -M too (a byte makes a character at most, which takes 4 bytes
         * in the heap): stop here, before the C buffers do (a 98 MB line under -M100m took
         * 480 MB of them before the heap said no). */
        if (rtv_max_heap() && avail > rtv_max_heap() / sizeof(uint32_t)) {
            p->line_too_long = true;
            return true;
        }
        return false;
    }
    case SCH_NEED_CHARS: {
        /* counted on from where the last wait stopped, when it began at this bpos */
        if (p->cc_from != p->bpos || p->cc_to < p->bpos || p->cc_to > p->blen) {
            p->cc_from = p->cc_to = p->bpos;
            p->cc_n = 0;
        }
        size_t k = p->cc_n, i = p->cc_to - p->bpos, start = i;
        size_t held = p->peeked != NO_PEEK;
        while (k + held < n && i < avail && sch_utf8_decode(b + i, avail - i, &used) >= 0) {
            i += used;
            k++;
        }
        p->scanned += i - start;
        p->cc_to = p->bpos + i;
        p->cc_n = k;
        return k + held >= n;
    }
    default:                     /* SCH_NEED_BYTES */
        return avail > 0 || n == 0;
    }
}

static uint8_t *rbuf_of(SchIo *io)
{
    if (!io->rbuf) io->rbuf = xrealloc(NULL, IO_RBUF);
    return io->rbuf;
}

/* Room for k bytes in wbuf (k <= IO_WBUF); only while no write is in flight. The buffer grows
 * by doubling from 4 KiB: a connection that writes short answers keeps 4 KiB, not 64 (with
 * thousands of connections open at once, 60 MB less per thousand). */
static uint8_t *wbuf_for(SchIo *io, size_t k)
{
    if (io->wsize < k) {
        size_t n = io->wsize ? io->wsize : 4096;
        while (n < k)
            n *= 2;
        io->wbuf = xrealloc(io->wbuf, n < IO_WBUF ? n : IO_WBUF);
        io->wsize = n < IO_WBUF ? n : IO_WBUF;
    }
    return io->wbuf;
}

int sch_port_io_in(SchPort *p, int need, size_t n, RtsIoOp **op, int *err)
{
    pthread_mutex_lock(&p->lock);
    int r = SCH_IO_READY;
    if (p->open && p->managed && p->kind != LISTENER) {
        take_read(p);
        if (input_ready(p, need, n)) {
            bool none = p->peeked == NO_PEEK && p->bpos == p->blen;
            if (p->rerr && none) {
                *err = p->rerr;
                p->rerr = 0;
                r = SCH_IO_ERROR;
            }
        } else if (p->io->rd_out) {
            r = SCH_IO_BUSY;
        } else {
            SchIo *io = p->io;
            io->rd.kind = RTS_IO_READ;
            io->rd.fd = p->fd;
            io->rd.buf = rbuf_of(io);
            io->rd.len = IO_RBUF;
            io->rd_out = true;
            *op = &io->rd;
            r = SCH_IO_SUBMIT;
            io->ops_pending++;             /* port_op_done counts it back */
        }
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

/* Takes the result of a completed write; submits the next part when asked to. Caller holds
 * the lock. */
static void take_write(SchPort *p)
{
    SchIo *io = p->io;
    if (!io->wr_out || op_busy(&io->wr) || io->wr.kind != RTS_IO_WRITE)
        return;
    io->wr_out = false;
    int64_t r = io->wr.res;
    if (r >= 0) {
        io->woff += (size_t)r;
    } else if (r != -ECANCELED) {
        if (!p->err) p->err = (int)-r;
        io->woff = io->wlen = 0;           /* what failed is dropped, as stdio does */
        p->olen = 0;
    }
}

/* Fills the write op with what is next to write; false when nothing is. */
static bool next_write(SchPort *p)
{
    SchIo *io = p->io;
    if (io->woff == io->wlen) {
        if (!p->olen) return false;
        size_t k = p->olen < IO_WBUF ? p->olen : IO_WBUF;
        memcpy(wbuf_for(io, k), p->obuf, k);
        memmove(p->obuf, p->obuf + k, p->olen - k);
        p->olen -= k;
        io->woff = 0;
        io->wlen = k;
    }
    io->wr.kind = RTS_IO_WRITE;
    io->wr.fd = p->fd;
    io->wr.buf = io->wbuf + io->woff;
    io->wr.len = io->wlen - io->woff;
    io->wr.wait_ns = p->write_timeout_ns;
    return true;
}

int sch_port_io_out(SchPort *p, bool all, RtsIoOp **op)
{
    pthread_mutex_lock(&p->lock);
    int r = SCH_IO_READY;
    if (p->open && p->managed && p->kind != LISTENER) {
        SchIo *io = p->io;
        take_write(p);
        size_t left = p->olen + (io->wlen - io->woff);
        if (p->err || (all ? left == 0 : p->olen <= IO_HIGH)) {
            r = SCH_IO_READY;
        } else if (io->wr_out) {
            r = SCH_IO_BUSY;
        } else if (next_write(p)) {
            io->wr_out = true;
            *op = &io->wr;
            r = SCH_IO_SUBMIT;
            io->ops_pending++;             /* port_op_done counts it back */
        }
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

/* At exit, or from C: writes what is buffered, blocking this OS thread. Caller holds the
 * lock. */
static void managed_flush_blocking(SchPort *p)
{
    SchIo *io = p->io;
    if (!p->managed || p->kind == LISTENER)
        return;
    take_write(p);         /* a write that completed since (its error, if any, is kept) */
    if (io->wr_out || p->err) return;
    while (next_write(p)) {
        ssize_t k = write(p->fd, io->wbuf + io->woff, io->wlen - io->woff);
        if (k >= 0) { io->woff += (size_t)k; continue; }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd pfd = { .fd = p->fd, .events = POLLOUT };
            uint64_t t = p->write_timeout_ns;
            int ms = !t ? -1 : t >= (uint64_t)INT_MAX * 1000000u ? INT_MAX
                   : (int)((t + 999999u) / 1000000u);
            if (poll(&pfd, 1, ms) != 0)
                continue;
            errno = ETIMEDOUT;           /* as a write through the IO manager would */
        }
        p->err = errno;
        io->woff = io->wlen = 0;
        p->olen = 0;
        return;
    }
}

int sch_port_io_accept(SchPort *p, RtsIoOp **op, int *fd, struct sockaddr_storage *peer, int *err)
{
    pthread_mutex_lock(&p->lock);
    int r;
    SchIo *io = p->io;
    if (io->rd_out && !op_busy(&io->rd) && io->rd.res != -ECANCELED) {
        io->rd_out = false;
        if (io->rd.res >= 0) {
            *fd = (int)io->rd.res;
            memset(peer, 0, sizeof *peer);
            if (io->rd.addrlen <= sizeof *peer)
                memcpy(peer, &io->rd.addr, io->rd.addrlen);
            r = SCH_IO_READY;
        } else {
            *err = (int)-io->rd.res;
            r = SCH_IO_ERROR;
        }
    } else if (io->rd_out && op_busy(&io->rd)) {
        r = SCH_IO_BUSY;
    } else {
        io->rd.kind = RTS_IO_ACCEPT;
        io->rd.fd = p->fd;
        io->rd_out = true;
        *op = &io->rd;
        r = SCH_IO_SUBMIT;
        io->ops_pending++;             /* port_op_done counts it back */
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

int sch_port_io_connect(SchPort *p, const void *addr, socklen_t len, RtsIoOp **op, int *err)
{
    pthread_mutex_lock(&p->lock);
    int r;
    SchIo *io = p->io;
    if (io->wr_out && !op_busy(&io->wr) && io->wr.res != -ECANCELED) {
        io->wr_out = false;
        *err = (int)-io->wr.res;
        r = io->wr.res == 0 ? SCH_IO_READY : SCH_IO_ERROR;
    } else if (io->wr_out && op_busy(&io->wr)) {
        r = SCH_IO_BUSY;
    } else {
        io->wr.kind = RTS_IO_CONNECT;
        io->wr.fd = p->fd;
        io->wr.wait_ns = 0;
        memcpy(&io->wr.addr, addr, len);
        io->wr.addrlen = len;
        io->wr_out = true;
        *op = &io->wr;
        r = SCH_IO_SUBMIT;
        io->ops_pending++;             /* port_op_done counts it back */
    }
    pthread_mutex_unlock(&p->lock);
    return r;
}

uint8_t *sch_port_read_bytes(SchPort *p, size_t max, size_t *n)
{
    pthread_mutex_lock(&p->lock);
    uint8_t *out = NULL;
    size_t k = 0;
    bool fd_in = p->open && (p->kind == FILE_IN || p->kind == SOCKET);
    if (fd_in && max) {
        char peek[4];
        bool some = true;
        if (p->peeked >= 0) {                /* a character peeked at comes first */
            k = sch_utf8_encode((uint32_t)p->peeked, peek);
            p->peeked = NO_PEEK;
        } else if (p->peeked == -1) {
            p->peeked = NO_PEEK;             /* an end seen by a peek */
            some = false;
        } else if (p->bpos == p->blen && !refill(p)) {
            some = false;
        }
        if (some) {
            /* what is buffered, up to max: never a buffer of max bytes, which a program may
             * ask for by the billion (before: "fatal: out of memory (ports)" for 2^36) */
            size_t avail = p->blen - p->bpos, want = max > k ? max - k : 0;
            size_t take = avail < want ? avail : want;
            out = xrealloc(NULL, k + take + 1);
            memcpy(out, peek, k);
            memcpy(out + k, p->bytes + p->bpos, take);
            p->bpos += take;
            k += take;
        }
    }
    pthread_mutex_unlock(&p->lock);
    *n = k;
    return out;
}

void sch_port_put_bytes(SchPort *p, const uint8_t *b, size_t n)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->managed) {
        out_append(p, b, n);
    } else if (p->open && p->kind == FILE_OUT) {
        errno = 0;
        if (fwrite(b, 1, n, p->f) != n)
            note_error(p);
    } else {
        for (size_t i = 0; i < n; i++)     /* a string port: bytes as Latin-1 */
            putc_locked(p, b[i]);
    }
    pthread_mutex_unlock(&p->lock);
}

/* --- port objects ------------------------------------------------------------------------- */

/* The standard ports' objects are made once, so (eq? (current-output-port)
 * (current-output-port)); GC roots from then on. */
static Value std_values[3];
static pthread_mutex_t std_values_lock = PTHREAD_MUTEX_INITIALIZER;

Value sch_port_value(RtsCap *cap, SchPort *p)
{
    int i = p == &std_in ? 0 : p == &std_out ? 1 : p == &std_err ? 2 : -1;
    if (i >= 0) {
        Value v = __atomic_load_n(&std_values[i], __ATOMIC_ACQUIRE);
        if (v) return v;
    }
    Value field = rts_fixnum((intptr_t)p);
    Value v = sch_make_record(cap, sch_rtd_port, 1, &field);
    if (i >= 0) {
        /* Another capability may have got here first; keep its object. No GC can run
         * inside this section: nothing in it allocates. */
        pthread_mutex_lock(&std_values_lock);
        if (std_values[i]) {
            v = std_values[i];
        } else {
            rts_add_root(&std_values[i]);
            __atomic_store_n(&std_values[i], v, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&std_values_lock);
    } else {
        /* What the finalizer will free counts toward the next GC (Note [External resources]
         * in sm/finalize.h): the structs, the input buffer or a string's characters, and a
         * descriptor. No other thread has p yet. */
        size_t bytes = sizeof *p + (p->io ? sizeof *p->io : 0) + p->bsize
                     + (p->kind == STRING_IN ? p->n * sizeof *p->s : 0);
        rts_add_finalizer_held(cap, v, port_finalize, p, bytes, p->managed && p->fd >= 0);
    }
    return v;
}

bool sch_is_port(Value v) { return sch_is_record_of(v, sch_rtd_port); }

SchPort *sch_port_of(Value v) { return (SchPort *)(uintptr_t)rts_fixnum_val(sch_record_ref(v, 0)); }
