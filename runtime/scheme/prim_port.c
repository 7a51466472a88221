/* The port procedures: opening and closing, character and string I/O, read, write and
 * display, files, TCP sockets, number <-> string conversion (over port.c, read.c and
 * print.c).
 *
 * The procedures that may wait for the IO manager (Note [Ports through the IO manager] in
 * port.c) are registered as %NAME; they are called again while they answer the symbol
 * %io-again (after blocking on an op, or after a short sleep while another thread's op is
 * in flight): a primitive cannot be resumed half-way, so it is run again once the op is
 * done, and takes the op's result then. NAME is the same primitive, which the VM calls
 * again (prim_ctl.c's io_retried; Note [IO primitives called again] in vm.c), or a prelude
 * procedure that calls %NAME through %io-retry (read-bytevector, tcp-connect). */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "rtslab_io.h"
#include "scheme/scheme.h"

#define PRIM(fn) static Value fn(RtsCap *cap __attribute__((unused)),           \
                                 Value *argv __attribute__((unused)),           \
                                 int argc __attribute__((unused)))

static SchPort *port_arg(RtsCap *cap, Value v, const char *who)
{
    if (!sch_is_port(v)) sch_type_error(cap, who, "port", v);
    return sch_port_of(v);
}

/* The open port of kind `input` (else output) in argv[i], or the standard one when argc <= i. */
static SchPort *dir_port_arg(RtsCap *cap, Value *argv, int argc, int i, bool input,
                             const char *who)
{
    SchPort *p;
    if (argc <= i) {
        p = input ? sch_port_stdin() : sch_port_stdout();
        if (!sch_port_is_open(p)) sch_error(cap, who, "port is closed", 0);
        return p;
    }
    if (!sch_is_port(argv[i])
        || !(input ? sch_port_is_input(p = sch_port_of(argv[i])) : sch_port_is_output(p = sch_port_of(argv[i]))))
        sch_type_error(cap, who, input ? "input port" : "output port", argv[i]);
    /* a read that was waiting when another thread closed the port goes on, and reads the
     * end of file of a closed port */
    if (!sch_port_is_open(p) && !(input && sch_port_take_waiter_eof(p)))
        sch_error(cap, who, "port is closed", 1, argv[i]);
    return p;
}

static SchPort *in_arg(RtsCap *cap, Value *argv, int argc, int i, const char *who)
{ return dir_port_arg(cap, argv, argc, i, true, who); }

static SchPort *out_arg(RtsCap *cap, Value *argv, int argc, int i, const char *who)
{ return dir_port_arg(cap, argv, argc, i, false, who); }

/* Raises a write to p that failed (Note [Write errors] in port.c) as an error of `who`. */
static void check_written(RtsCap *cap, SchPort *p, const char *who)
{
    int e = sch_port_take_error(p);
    if (e) {
        char msg[320];
        const char *name = strerrorname_np(e);
        snprintf(msg, sizeof msg, "cannot write to %s: %s (%s)", sch_port_name(p), strerror(e),
                 name ? name : "?");
        sch_error(cap, who, msg, 0);
    }
}

/* --- waiting for the IO manager ------------------------------------------------------------ */

static Value io_again(RtsCap *cap) { return sch_intern(cap, "%io-again", 9); }

/* Raises errno e of an operation on p (or on `what`) as an error naming the errno. */
static void __attribute__((noreturn)) io_raise(RtsCap *cap, const char *who, const char *what, int e)
{
    char msg[512];
    const char *name = strerrorname_np(e);
    snprintf(msg, sizeof msg, "%s: %s (%s)", what, strerror(e), name ? name : "?");
    sch_error(cap, who, msg, 0);
}

/* The primitive's result after a step that did not say READY: blocks on op (the result is
 * then `then`), or sleeps a millisecond while another thread's op is in flight. */
static Value io_wait(RtsCap *cap, int step, RtsIoOp *op, Value then)
{
    Value again = io_again(cap);                /* may GC: before blocking */
    rts_set_result(cap, then == RTS_FALSE ? again : then);
    if (step == SCH_IO_SUBMIT)
        rts_io_block(cap, op);
    else
        rts_sleep(cap, 0.001);
    return SCH_BLOCK;
}

/* Before reading (need, n: sch_port_io_in): true to go on; false with *r the result. */
static bool in_step(RtsCap *cap, SchPort *p, int need, size_t n, const char *who, Value *r)
{
    RtsIoOp *op = NULL;
    int err = 0;
    int step = sch_port_io_in(p, need, n, &op, &err);
    if (step == SCH_IO_READY) return true;
    if (step == SCH_IO_ERROR) io_raise(cap, who, sch_port_name(p), err);
    *r = io_wait(cap, step, op, RTS_FALSE);
    return false;
}

/* After writing to a managed port: writes out what is buffered beyond the high-water mark
 * (all of it when `all`: a flush). True when nothing is left to wait for. */
static bool out_step(RtsCap *cap, SchPort *p, bool all, Value *r)
{
    RtsIoOp *op = NULL;
    int step = sch_port_io_out(p, all, &op);
    if (step == SCH_IO_READY || (step == SCH_IO_BUSY && !all)) return true;
    *r = io_wait(cap, step, op, all ? RTS_FALSE : RTS_UNSPEC);
    return false;
}

/* A write primitive's end: its error, else its result (unspecified, once any blocking
 * write is under way). */
static Value written(RtsCap *cap, SchPort *p, const char *who)
{
    check_written(cap, p, who);
    Value r;
    if (!out_step(cap, p, false, &r)) return r;
    check_written(cap, p, who);     /* an earlier write's failure, which that step took */
    return RTS_UNSPEC;
}

static void check_string(RtsCap *cap, Value v, const char *who)
{
    if (!sch_is_string(v)) sch_type_error(cap, who, "string", v);
}

/* The index argv[i] into the string argv[0] (a fixnum in 0..hi), or dflt when argc <= i. */
static size_t index_arg(RtsCap *cap, Value *argv, int argc, int i, size_t hi, size_t dflt,
                        const char *who)
{
    if (argc <= i) return dflt;
    Value v = argv[i];
    if (!rts_is_fixnum(v)) sch_type_error(cap, who, "exact integer", v);
    if (rts_fixnum_val(v) < 0 || rts_fixnum_val(v) > (intptr_t)hi)
        sch_range_error(cap, who, v, argv[0]);
    return (size_t)rts_fixnum_val(v);
}

PRIM(p_current_input_port)  { return sch_port_value(cap, sch_port_stdin()); }
PRIM(p_current_output_port) { return sch_port_value(cap, sch_port_stdout()); }
PRIM(p_current_error_port)  { return sch_port_value(cap, sch_port_stderr()); }

static Value open_file(RtsCap *cap, Value *argv, bool input, const char *who)
{
    char *path = sch_string_to_cstr(cap, argv[0], who, "file name");
    SchPort *p = input ? sch_port_open_file_in(path) : sch_port_open_file_out(path);
    int e = errno;
    if (!p && (e == EMFILE || e == ENFILE)) {
        /* Dropped ports may hold them: a major GC runs their finalizers (Note [External
         * resources] in sm/finalize.h); then once more. */
        rts_gc(cap, true);
        p = input ? sch_port_open_file_in(path) : sch_port_open_file_out(path);
        e = errno;
    }
    free(path);
    if (!p) {
        char msg[160];
        snprintf(msg, sizeof msg, "cannot open file (%s):", strerror(e));
        sch_error(cap, who, msg, 1, argv[0]);
    }
    return sch_port_value(cap, p);
}

PRIM(p_open_input_file)  { return open_file(cap, argv, true, "open-input-file"); }
PRIM(p_open_output_file) { return open_file(cap, argv, false, "open-output-file"); }

PRIM(p_open_input_string)
{
    check_string(cap, argv[0], "open-input-string");
    return sch_port_value(cap, sch_port_open_string_in(sch_string_data(argv[0]),
                                                       sch_string_len(argv[0])));
}

PRIM(p_open_output_string) { return sch_port_value(cap, sch_port_open_string_out()); }

PRIM(p_get_output_string)
{
    SchPort *p = port_arg(cap, argv[0], "get-output-string");
    if (!sch_port_is_string_out(p))
        sch_type_error(cap, "get-output-string", "string output port", argv[0]);
    size_t n;
    uint32_t *copy = sch_port_out_utf32(p, &n);     /* converted after the port's lock */
    if (!copy) sch_error(cap, "get-output-string", "port is closed", 1, argv[0]);
    Value s = sch_string_from_utf32(cap, copy, n);
    free(copy);
    return s;
}

PRIM(p_close_port)
{
    SchPort *p = port_arg(cap, argv[0], "close-port");
    Value r;
    if (sch_port_is_open(p) && sch_port_is_output(p) && !out_step(cap, p, true, &r))
        return r;                               /* written out first */
    sch_port_close(p);
    if (sch_port_is_output(p))
        check_written(cap, p, "close-port");
    return RTS_UNSPEC;
}

static Value close_dir(RtsCap *cap, Value v, bool input, const char *who)
{
    SchPort *p = port_arg(cap, v, who);
    if (input ? !sch_port_is_input(p) : !sch_port_is_output(p))
        sch_type_error(cap, who, input ? "input port" : "output port", v);
    Value r;
    if (!input && sch_port_is_open(p) && !out_step(cap, p, true, &r))
        return r;
    sch_port_close(p);
    if (!input)
        check_written(cap, p, who);
    return RTS_UNSPEC;
}

PRIM(p_close_input_port)  { return close_dir(cap, argv[0], true, "close-input-port"); }
PRIM(p_close_output_port) { return close_dir(cap, argv[0], false, "close-output-port"); }

PRIM(p_is_input_port)  { return rts_bool(sch_is_port(argv[0]) && sch_port_is_input(sch_port_of(argv[0]))); }
PRIM(p_is_output_port) { return rts_bool(sch_is_port(argv[0]) && sch_port_is_output(sch_port_of(argv[0]))); }
PRIM(p_is_port)        { return rts_bool(sch_is_port(argv[0])); }

PRIM(p_input_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "input-port-open?");
    return rts_bool(sch_port_is_input(p) && sch_port_is_open(p));
}

PRIM(p_output_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "output-port-open?");
    return rts_bool(sch_port_is_output(p) && sch_port_is_open(p));
}

PRIM(p_eof_object)    { return RTS_EOF; }
PRIM(p_is_eof_object) { return rts_bool(argv[0] == RTS_EOF); }

static Value char_or_eof(int32_t c) { return c < 0 ? RTS_EOF : rts_char((uint32_t)c); }

PRIM(p_read_char)
{
    SchPort *p = in_arg(cap, argv, argc, 0, "read-char");
    Value r;
    if (!in_step(cap, p, SCH_NEED_CHAR, 1, "read-char", &r)) return r;
    return char_or_eof(sch_port_getc(p));
}

PRIM(p_peek_char)
{
    SchPort *p = in_arg(cap, argv, argc, 0, "peek-char");
    Value r;
    if (!in_step(cap, p, SCH_NEED_CHAR, 1, "peek-char", &r)) return r;
    return char_or_eof(sch_port_peekc(p));
}
PRIM(p_char_ready) { return rts_bool(sch_port_char_ready(in_arg(cap, argv, argc, 0, "char-ready?"))); }

/* A string of what sch_port_read_chars reads, or the eof object when the input had ended. */
/* A line that outgrew the heap's limit (sch_port_take_line_too_long): a catchable error, not a
 * heap overflow after C buffers of several times -M. */
static __attribute__((noreturn)) void line_too_long(RtsCap *cap)
{
    sch_error(cap, "read-line", "the line is longer than the heap may be (+RTS -M)", 0);
}

static Value read_chars(RtsCap *cap, SchPort *p, size_t max, bool line)
{
    size_t n;
    uint32_t *buf = sch_port_read_chars(p, max, line, &n);
    if (!buf) return RTS_EOF;
    if (line && sch_port_take_line_too_long(p)) {
        free(buf);
        line_too_long(cap);
    }
    Value s = sch_string_from_utf32(cap, buf, n);
    free(buf);
    return s;
}

PRIM(p_read_line)
{
    SchPort *p = in_arg(cap, argv, argc, 0, "read-line");
    Value r;
    if (!in_step(cap, p, SCH_NEED_LINE, 0, "read-line", &r)) return r;
    if (sch_port_take_line_too_long(p))
        line_too_long(cap);
    return read_chars(cap, p, SIZE_MAX, true);
}

PRIM(p_read_string)
{
    if (!rts_is_fixnum(argv[0]) || rts_fixnum_val(argv[0]) < 0)
        sch_type_error(cap, "read-string", "non-negative exact integer", argv[0]);
    SchPort *p = in_arg(cap, argv, argc, 1, "read-string");
    Value r;
    if (!in_step(cap, p, SCH_NEED_CHARS, (size_t)rts_fixnum_val(argv[0]), "read-string", &r))
        return r;
    return read_chars(cap, p, (size_t)rts_fixnum_val(argv[0]), false);
}

PRIM(p_write_char)
{
    if (!rts_is_char(argv[0])) sch_type_error(cap, "write-char", "character", argv[0]);
    SchPort *p = out_arg(cap, argv, argc, 1, "write-char");
    sch_port_putc(p, rts_char_val(argv[0]));
    return written(cap, p, "write-char");
}

PRIM(p_write_string)
{
    check_string(cap, argv[0], "write-string");
    SchPort *p = out_arg(cap, argv, argc, 1, "write-string");
    size_t len = sch_string_len(argv[0]);
    size_t end = index_arg(cap, argv, argc, 3, len, len, "write-string");
    size_t start = index_arg(cap, argv, argc, 2, end, 0, "write-string");
    sch_port_put_utf32(p, sch_string_data(argv[0]) + start, end - start);
    return written(cap, p, "write-string");
}

PRIM(p_newline)
{
    SchPort *p = out_arg(cap, argv, argc, 0, "newline");
    sch_port_putc(p, '\n');
    return written(cap, p, "newline");
}

PRIM(p_display)
{
    SchPort *p = out_arg(cap, argv, argc, 1, "display");
    sch_print(p, argv[0], false);
    return written(cap, p, "display");
}

PRIM(p_write)
{
    SchPort *p = out_arg(cap, argv, argc, 1, "write");
    sch_print(p, argv[0], true);
    return written(cap, p, "write");
}

PRIM(p_flush_output_port)
{
    SchPort *p = out_arg(cap, argv, argc, 0, "flush-output-port");
    Value r;
    if (!out_step(cap, p, true, &r)) return r;
    sch_port_flush(p);
    check_written(cap, p, "flush-output-port");
    return RTS_UNSPEC;
}

/* (%read [port]): a datum; on a managed port without blocking its OS thread (Note [Reading
 * a datum from a managed port] in port.c): a parse that runs dry is undone, and the thread
 * waits for more input through the IO manager (%io-again), or parses again if more came. */
PRIM(p_read)
{
    SchPort *p = in_arg(cap, argv, argc, 0, "read");
    Value r;
    if (!in_step(cap, p, SCH_NEED_CHAR, 0, "read", &r)) return r;
    DArena *a;
    SchReadError err;
    Datum *d;
    for (;;) {
        a = datum_arena_new();
        sch_port_read_ahead(p);
        d = sch_read(a, p, &err);
        size_t had;
        if (!sch_port_read_done(p, &had))
            break;
        datum_arena_free(a);
        if (!in_step(cap, p, SCH_NEED_MORE, had, "read", &r)) return r;
    }
    if (!d) {
        datum_arena_free(a);
        if (!err.msg[0]) return RTS_EOF;
        char msg[sizeof err.msg + 300];
        snprintf(msg, sizeof msg, "%s:%d:%d: %s", sch_port_name(p), err.line, err.col, err.msg);
        sch_error(cap, "read", msg, 0);
    }
    Value v = sch_datum_to_value(cap, d);
    datum_arena_free(a);
    return v;
}

/* --- bytevector IO ------------------------------------------------------------------------- */

PRIM(p_read_bytevector)
{
    if (!rts_is_fixnum(argv[0]) || rts_fixnum_val(argv[0]) < 0)
        sch_type_error(cap, "read-bytevector", "non-negative exact integer", argv[0]);
    SchPort *p = in_arg(cap, argv, argc, 1, "read-bytevector");
    size_t k = (size_t)rts_fixnum_val(argv[0]), n;
    Value r;
    if (!in_step(cap, p, SCH_NEED_BYTES, k, "read-bytevector", &r)) return r;
    if (k == 0) return rts_make_raw(cap, T_BYTEVECTOR, 0);
    uint8_t *b = sch_port_read_bytes(p, k, &n);
    if (!b) return RTS_EOF;
    Value v = rts_make_raw(cap, T_BYTEVECTOR, n);
    memcpy(raw_bytes(v), b, n);
    free(b);
    return v;
}

/* (%port-scanned port): the bytes the waits of read-line and read-string on port have looked
 * at, over its life (the tests' check that those waits stay linear in what arrives). */
PRIM(p_port_scanned)
{
    return rts_fixnum((intptr_t)sch_port_scanned(port_arg(cap, argv[0], "%port-scanned")));
}

/* (%file-input-port? [port]): whether read-bytevector reads it to k bytes (a file) or to what
 * has arrived (a socket, stdin): the prelude's read-bytevector. */
PRIM(p_file_input_port_p)
{
    return rts_bool(sch_port_is_file_in(in_arg(cap, argv, argc, 0, "read-bytevector")));
}

PRIM(p_write_bytevector)
{
    if (!sch_is_bytevector(argv[0])) sch_type_error(cap, "write-bytevector", "bytevector", argv[0]);
    SchPort *p = out_arg(cap, argv, argc, 1, "write-bytevector");
    size_t len = raw_len(argv[0]);
    size_t end = index_arg(cap, argv, argc, 3, len, len, "write-bytevector");
    size_t start = index_arg(cap, argv, argc, 2, end, 0, "write-bytevector");
    sch_port_put_bytes(p, raw_bytes(argv[0]) + start, end - start);
    return written(cap, p, "write-bytevector");
}

/* --- TCP sockets (docs/scheme.md, "Sockets") --------------------------------------------------- */

/* The address number `which` (0: the first) of host:port (argv[0], argv[1]), in the order
 * getaddrinfo gives them; *more says whether one follows it. A `which` past the last is the
 * last (tcp-connect never asks for one). */
static void resolve_nth(RtsCap *cap, Value *argv, bool passive, const char *who, long which,
                        struct sockaddr_storage *addr, socklen_t *len, char *name, size_t nlen,
                        bool *more)
{
    if (!sch_is_string(argv[0])) sch_type_error(cap, who, "string", argv[0]);
    if (!rts_is_fixnum(argv[1]) || rts_fixnum_val(argv[1]) < 0 || rts_fixnum_val(argv[1]) > 65535)
        sch_type_error(cap, who, "port number (0..65535)", argv[1]);
    char *host = sch_string_to_cstr(cap, argv[0], who, "host name"), service[24];
    snprintf(service, sizeof service, "%ld", (long)rts_fixnum_val(argv[1]));
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0) }, *res;
    int rc = getaddrinfo(host, service, &hints, &res);
    snprintf(name, nlen, "%s%s%s:%s", strchr(host, ':') ? "[" : "", host,
             strchr(host, ':') ? "]" : "", service);
    free(host);
    if (rc != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "%s: %s", name, gai_strerror(rc));
        sch_error(cap, who, msg, 0);
    }
    struct addrinfo *a = res;
    for (long k = 0; k < which && a->ai_next; k++)
        a = a->ai_next;
    memcpy(addr, a->ai_addr, a->ai_addrlen);
    *len = a->ai_addrlen;
    if (more)
        *more = a->ai_next != NULL;
    freeaddrinfo(res);
}

/* The address of host:port (argv[0], argv[1]), as getaddrinfo gives it first. */
static void resolve(RtsCap *cap, Value *argv, bool passive, const char *who,
                    struct sockaddr_storage *addr, socklen_t *len, char *name, size_t nlen)
{
    resolve_nth(cap, argv, passive, who, 0, addr, len, name, nlen, NULL);
}

static int new_socket(RtsCap *cap, int family, const char *who, const char *name)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
        rts_gc(cap, true);                  /* as open_file does */
        fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    if (fd < 0) io_raise(cap, who, name, errno);
    return fd;
}

/* (tcp-listen host port [backlog]): a listening socket, SO_REUSEADDR set. */
PRIM(p_tcp_listen)
{
    struct sockaddr_storage addr;
    socklen_t len;
    char name[300], pname[320];
    resolve(cap, argv, true, "tcp-listen", &addr, &len, name, sizeof name);
    int backlog = 128;
    if (argc > 2) {
        if (!rts_is_fixnum(argv[2]) || rts_fixnum_val(argv[2]) < 1 || rts_fixnum_val(argv[2]) > 65535)
            sch_type_error(cap, "tcp-listen", "backlog (1..65535)", argv[2]);
        backlog = (int)rts_fixnum_val(argv[2]);
    }
    int fd = new_socket(cap, addr.ss_family, "tcp-listen", name), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&addr, len) != 0 || listen(fd, backlog) != 0) {
        int e = errno;
        close(fd);
        io_raise(cap, "tcp-listen", name, e);
    }
    snprintf(pname, sizeof pname, "<tcp-listener %s>", name);
    return sch_port_value(cap, sch_port_open_fd(fd, true, pname));
}

static SchPort *listener_arg(RtsCap *cap, Value v, const char *who)
{
    SchPort *p = port_arg(cap, v, who);
    if (!sch_port_is_listener(p)) sch_type_error(cap, who, "TCP listener", v);
    if (!sch_port_is_open(p)) sch_error(cap, who, "port is closed", 1, v);
    return p;
}

static SchPort *socket_arg(RtsCap *cap, Value v, const char *who)
{
    SchPort *p = port_arg(cap, v, who);
    if (!sch_port_is_socket(p) && !sch_port_is_listener(p)) sch_type_error(cap, who, "socket port", v);
    if (!sch_port_is_open(p)) sch_error(cap, who, "port is closed", 1, v);
    return p;
}

/* (tcp-accept listener): the next connection, a socket port (%tcp-accept: see above). */
PRIM(p_tcp_accept)
{
    SchPort *l = listener_arg(cap, argv[0], "tcp-accept");
    RtsIoOp *op = NULL;
    int fd = -1, err = 0;
    struct sockaddr_storage peer;
    int step = sch_port_io_accept(l, &op, &fd, &peer, &err);
    if (step == SCH_IO_ERROR) io_raise(cap, "tcp-accept", sch_port_name(l), err);
    if (step != SCH_IO_READY) return io_wait(cap, step, op, RTS_FALSE);
    /* The name is the address the accept gave: getpeername fails (ENOTCONN) for a peer that
     * has already reset the connection, and its sockaddr was then read uninitialised
     * (valgrind: "Conditional jump or move depends on uninitialised value(s)"). */
    char host[INET6_ADDRSTRLEN + 2] = "?", name[96];
    int port = 0;
    if (peer.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&peer;
        inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
        port = ntohs(a->sin6_port);
    } else if (peer.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&peer;
        inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
        port = ntohs(a->sin_port);
    }
    snprintf(name, sizeof name, "<tcp %s%s%s:%d>", peer.ss_family == AF_INET6 ? "[" : "", host,
             peer.ss_family == AF_INET6 ? "]" : "", port);
    return sch_port_value(cap, sch_port_open_fd(fd, false, name));
}

/* The address number argv[i] of tcp-connect (a fixnum >= 0). */
static long address_no(RtsCap *cap, Value *argv, int i)
{
    if (!rts_is_fixnum(argv[i]) || rts_fixnum_val(argv[i]) < 0)
        sch_type_error(cap, "tcp-connect", "address number", argv[i]);
    return (long)rts_fixnum_val(argv[i]);
}

/* (%tcp-socket host port i): an unconnected socket port for tcp-connect, for the family of
 * host's address number i. */
PRIM(p_tcp_socket)
{
    struct sockaddr_storage addr;
    socklen_t len;
    char name[300], pname[320];
    resolve_nth(cap, argv, false, "tcp-connect", address_no(cap, argv, 2), &addr, &len, name,
                sizeof name, NULL);
    int fd = new_socket(cap, addr.ss_family, "tcp-connect", name);
    snprintf(pname, sizeof pname, "<tcp %s>", name);
    return sch_port_value(cap, sch_port_open_fd(fd, false, pname));
}

/* (%tcp-connect socket host port i): connects the socket of %tcp-socket to host's address
 * number i; returns it. On an error the socket is closed; then, if host has another
 * address, the answer is %tcp-next (tcp-connect tries that one with a new socket: "localhost"
 * may be ::1 and 127.0.0.1, and a server listen on only one), else the error is raised. */
PRIM(p_tcp_connect)
{
    SchPort *p = socket_arg(cap, argv[0], "tcp-connect");
    struct sockaddr_storage addr;
    socklen_t len;
    char name[300];
    bool more = false;
    resolve_nth(cap, argv + 1, false, "tcp-connect", address_no(cap, argv, 3), &addr, &len,
                name, sizeof name, &more);
    RtsIoOp *op = NULL;
    int err = 0;
    int step = sch_port_io_connect(p, &addr, len, &op, &err);
    if (step == SCH_IO_ERROR) {
        sch_port_close(p);
        if (more)
            return sch_intern(cap, "%tcp-next", 9);
        io_raise(cap, "tcp-connect", name, err);
    }
    if (step != SCH_IO_READY) return io_wait(cap, step, op, RTS_FALSE);
    return argv[0];
}

/* (tcp-nodelay! socket on?): TCP_NODELAY (no Nagle delay for small writes). */
PRIM(p_tcp_nodelay)
{
    SchPort *p = socket_arg(cap, argv[0], "tcp-nodelay!");
    int on = argv[1] != RTS_FALSE;
    if (setsockopt(sch_port_fd(p), IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0)
        io_raise(cap, "tcp-nodelay!", sch_port_name(p), errno);
    return RTS_UNSPEC;
}

/* (port-write-timeout! port seconds): a write to port (a socket, or a file opened with
 * open-output-file) that moves no byte for that long fails with ETIMEDOUT, an error of the
 * primitive that waited (write-string, flush-output-port, close-port...); #f: no limit, the
 * default (Note [Bounded waits] in runtime/io/iomgr.c). */
PRIM(p_port_write_timeout)
{
    SchPort *p = port_arg(cap, argv[0], "port-write-timeout!");
    double secs = 0;
    if (rts_is_fixnum(argv[1])) secs = (double)rts_fixnum_val(argv[1]);
    else if (sch_is_flonum(argv[1])) secs = rts_flonum_val(argv[1]);
    else if (argv[1] != RTS_FALSE)
        sch_type_error(cap, "port-write-timeout!", "positive real number or #f", argv[1]);
    if (argv[1] != RTS_FALSE && !(secs > 0))
        sch_error(cap, "port-write-timeout!", "the timeout must be positive, got", 1, argv[1]);
    /* more than a year: no limit (and no overflow of the nanoseconds) */
    uint64_t ns = secs > 3.2e7 ? 0 : (uint64_t)(secs * 1e9);
    if (argv[1] != RTS_FALSE && ns == 0 && secs <= 3.2e7)
        ns = 1;
    if (!sch_port_set_write_timeout(p, ns))
        sch_type_error(cap, "port-write-timeout!", "socket or file output port", argv[0]);
    return RTS_UNSPEC;
}

/* (tcp-port-number socket): the local port (of a listener on port 0: the one the OS chose). */
PRIM(p_tcp_port_number)
{
    SchPort *p = socket_arg(cap, argv[0], "tcp-port-number");
    struct sockaddr_storage a;
    socklen_t len = sizeof a;
    if (getsockname(sch_port_fd(p), (struct sockaddr *)&a, &len) != 0)
        io_raise(cap, "tcp-port-number", sch_port_name(p), errno);
    return rts_fixnum(ntohs(a.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&a)->sin6_port
                                                     : ((struct sockaddr_in *)&a)->sin_port));
}

PRIM(p_is_tcp_listener) { return rts_bool(sch_is_port(argv[0]) && sch_port_is_listener(sch_port_of(argv[0]))); }
PRIM(p_is_socket_port)  { return rts_bool(sch_is_port(argv[0]) && sch_port_is_socket(sch_port_of(argv[0]))); }

PRIM(p_file_exists)
{
    char *path = sch_string_to_cstr(cap, argv[0], "file-exists?", "file name");
    bool exists = access(path, F_OK) == 0;
    free(path);
    return rts_bool(exists);
}

PRIM(p_delete_file)
{
    char *path = sch_string_to_cstr(cap, argv[0], "delete-file", "file name");
    int r = unlink(path);
    free(path);
    if (r != 0) sch_error(cap, "delete-file", "cannot delete file", 1, argv[0]);
    return RTS_UNSPEC;
}

static int radix_arg(RtsCap *cap, Value *argv, int argc, const char *who)
{
    if (argc < 2) return 10;
    Value r = argv[1];
    if (r != rts_fixnum(2) && r != rts_fixnum(8) && r != rts_fixnum(10) && r != rts_fixnum(16))
        sch_error(cap, who, "radix must be 2, 8, 10 or 16, got", 1, r);
    return (int)rts_fixnum_val(r);
}

PRIM(p_number_to_string)
{
    if (!sch_is_number(argv[0])) sch_type_error(cap, "number->string", "number", argv[0]);
    int radix = radix_arg(cap, argv, argc, "number->string");
    if (radix != 10 && !rts_is_fixnum(argv[0]))
        sch_error(cap, "number->string", "an inexact number needs radix 10, got", 1, argv[0]);
    char buf[80];
    size_t n = sch_format_number(argv[0], radix, buf, sizeof buf);
    return sch_string_from_utf8(cap, buf, n);
}

PRIM(p_string_to_number)
{
    check_string(cap, argv[0], "string->number");
    int radix = radix_arg(cap, argv, argc, "string->number");
    intptr_t fix;
    double flo;
    switch (sch_parse_number(sch_string_data(argv[0]), sch_string_len(argv[0]), radix, &fix, &flo)) {
    case 1:  return rts_fixnum(fix);
    case 2:  return rts_make_flonum(cap, flo);
    default: return RTS_FALSE;
    }
}

const SchPrimDef sch_prims_port[] = {
    { "current-input-port",  p_current_input_port,  0, 0 },
    { "current-output-port", p_current_output_port, 0, 0 },
    { "current-error-port",  p_current_error_port,  0, 0 },
    { "open-input-file",     p_open_input_file,     1, 1 },
    { "open-output-file",    p_open_output_file,    1, 1 },
    { "open-input-string",   p_open_input_string,   1, 1 },
    { "open-output-string",  p_open_output_string,  0, 0 },
    { "get-output-string",   p_get_output_string,   1, 1 },
    { "%close-port",         p_close_port,          1, 1 },   /* called again (see the top) ... */
    { "close-input-port",    p_close_input_port,    1, 1 },
    { "%close-output-port",  p_close_output_port,   1, 1 },
    { "input-port?",         p_is_input_port,       1, 1 },
    { "output-port?",        p_is_output_port,      1, 1 },
    { "port?",               p_is_port,             1, 1 },
    { "textual-port?",       p_is_port,             1, 1 },   /* every port is textual */
    { "input-port-open?",    p_input_port_open,     1, 1 },
    { "output-port-open?",   p_output_port_open,    1, 1 },
    { "eof-object",          p_eof_object,          0, 0 },
    { "eof-object?",         p_is_eof_object,       1, 1 },
    { "%read-char",          p_read_char,           0, 1 },   /* ... and these */
    { "%peek-char",          p_peek_char,           0, 1 },
    { "%read-line",          p_read_line,           0, 1 },
    { "%read-string",        p_read_string,         1, 2 },
    { "%read-bytevector",    p_read_bytevector,     1, 2 },
    { "%file-input-port?",   p_file_input_port_p,   0, 1 },
    { "%port-scanned",       p_port_scanned,        1, 1 },
    { "write-bytevector",    p_write_bytevector,    1, 4 },
    { "tcp-listen",          p_tcp_listen,          2, 3 },
    { "%tcp-accept",         p_tcp_accept,          1, 1 },
    { "%tcp-socket",         p_tcp_socket,          3, 3 },
    { "%tcp-connect",        p_tcp_connect,         4, 4 },
    { "tcp-nodelay!",        p_tcp_nodelay,         2, 2 },
    { "tcp-port-number",     p_tcp_port_number,     1, 1 },
    { "port-write-timeout!", p_port_write_timeout,  2, 2 },
    { "tcp-listener?",       p_is_tcp_listener,     1, 1 },
    { "socket-port?",        p_is_socket_port,      1, 1 },
    { "char-ready?",         p_char_ready,          0, 1 },
    { "write-char",          p_write_char,          1, 2 },
    { "write-string",        p_write_string,        1, 4 },
    { "newline",             p_newline,             0, 1 },
    { "display",             p_display,             1, 2 },
    { "write",               p_write,               1, 2 },
    { "write-shared",        p_write,               1, 2 },
    { "write-simple",        p_write,               1, 2 },
    { "%flush-output-port",  p_flush_output_port,   0, 1 },
    { "%read",               p_read,                0, 1 },
    { "file-exists?",        p_file_exists,         1, 1 },
    { "delete-file",         p_delete_file,         1, 1 },
    { "number->string",      p_number_to_string,    1, 2 },
    { "string->number",      p_string_to_number,    1, 2 },
    { NULL, NULL, 0, 0 },
};
