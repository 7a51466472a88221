/* Ports: input from files and strings, output to files and strings, the standard streams,
 * and the port primitives.
 *
 * Note [Ports]
 * A SchPort is a malloc'd C struct, not a heap object: the reader and the printer use ports
 * from C (the driver reads a program before any Scheme runs), and a file or a growing buffer
 * has no place in a moving heap. A port object is a record of sch_rtd_port whose one field
 * is the SchPort's address as a fixnum. The GC has no finalizers, so it never frees a
 * SchPort: closing a port releases its file and buffers and leaves the small struct behind.
 * Every SchPort is on the list all_ports, which lets sch_flush_all flush every output file
 * (and shows leak checkers that the structs are still reachable).
 *
 * Capabilities run on several OS threads and may share a port (the standard streams above
 * all), so every operation holds the port's mutex. Nothing allocates in the heap while
 * holding one: an allocation may wait for a stop-the-world GC, which would wait in turn for
 * a capability blocked on the mutex.
 *
 * File input is read with read(2) into the port's own buffer and decoded from UTF-8 here
 * (malformed bytes become U+FFFD), so char-ready? knows what is buffered. File output goes
 * through stdio, UTF-8 encoded, and is buffered until a flush.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "scheme/scheme.h"
#include "rts/rts.h"

typedef enum { FILE_IN, STRING_IN, FILE_OUT, STRING_OUT } PortKind;

#define NO_PEEK  (-2)          /* SchPort.peeked: no character decoded ahead */
#define FILE_BUF 4096

struct SchPort {
    PortKind kind;
    bool open;                 /* read without the lock by the primitives' checks (atomic) */
    bool standard;             /* stdin, stdout or stderr: closing leaves the stream open */
    pthread_mutex_t lock;
    char *name;
    SchPort *next;             /* all_ports */
    int line, col;             /* input: the position of the next character */
    /* FILE_IN: the descriptor, its bytes read but not decoded, a character decoded ahead */
    int fd;
    uint8_t *bytes;
    size_t bpos, blen;
    int32_t peeked;
    /* STRING_IN: the characters and the next one's index; STRING_OUT: the characters */
    uint32_t *s;
    size_t n, pos, cap;
    FILE *f;                   /* FILE_OUT */
};

static SchPort *all_ports;
static pthread_mutex_t all_ports_lock = PTHREAD_MUTEX_INITIALIZER;

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) rts_fatal("out of memory (ports)");
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
    __atomic_store_n(&all_ports, p, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&all_ports_lock);
}

static SchPort *port_new(PortKind kind, const char *name)
{
    SchPort *p = xrealloc(NULL, sizeof *p);
    memset(p, 0, sizeof *p);
    port_init(p, kind, name);
    return p;
}

static bool is_open(SchPort *p)  { return __atomic_load_n(&p->open, __ATOMIC_ACQUIRE); }
static bool is_input(SchPort *p) { return p->kind == FILE_IN || p->kind == STRING_IN; }

/* --- the standard streams ---------------------------------------------------------------- */

static SchPort std_in, std_out, std_err;
static uint8_t std_in_bytes[FILE_BUF];
static pthread_once_t std_once = PTHREAD_ONCE_INIT;

static void std_init(void)
{
    port_init(&std_in, FILE_IN, "<stdin>");
    std_in.fd = 0;
    std_in.bytes = std_in_bytes;
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

/* Decodes one UTF-8 sequence from s[0..n), n >= 1, and sets *used. Malformed bytes give
 * U+FFFD (a bad lead byte alone; a broken sequence up to the byte that breaks it). Returns
 * -1 when s ends inside a sequence that more bytes could complete. */
static int32_t utf8_decode(const uint8_t *s, size_t n, size_t *used)
{
    uint32_t c = s[0], min;
    size_t len;
    *used = 1;
    if (c < 0x80) return (int32_t)c;
    if (c >= 0xc2 && c <= 0xdf)      len = 2, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, c &= 0x07, min = 0x10000;
    else return 0xfffd;
    for (size_t i = 1; i < len; i++) {
        if (i == n) return -1;
        if ((s[i] & 0xc0) != 0x80) { *used = i; return 0xfffd; }
        c = c << 6 | (s[i] & 0x3f);
    }
    *used = len;
    return c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ? 0xfffd : (int32_t)c;
}

SchPort *sch_port_open_utf8_in(const char *s, size_t n, const char *name)
{
    SchPort *p = port_new(STRING_IN, name);
    p->s = xrealloc(NULL, n * sizeof *p->s);
    const uint8_t *b = (const uint8_t *)s;
    for (size_t i = 0; i < n;) {
        size_t used;
        int32_t c = utf8_decode(b + i, n - i, &used);
        p->s[p->n++] = c < 0 ? 0xfffd : (uint32_t)c;
        i += c < 0 ? n - i : used;
    }
    return p;
}

SchPort *sch_port_open_file_in(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return NULL;
    }
    SchPort *p = port_new(FILE_IN, path);
    p->fd = fd;
    p->bytes = xrealloc(NULL, FILE_BUF);
    return p;
}

static SchPort *open_file_out(const char *path)
{
    FILE *f = fopen(path, "we");
    if (!f) return NULL;
    SchPort *p = port_new(FILE_OUT, path);
    p->f = f;
    return p;
}

SchPort *sch_port_open_string_out(void) { return port_new(STRING_OUT, "<string>"); }

void sch_port_close(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->open) {
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
            if (p->standard) fflush(p->f);
            else fclose(p->f);
            break;
        case STRING_IN:
        case STRING_OUT:
            free(p->s);
            p->s = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* --- input -------------------------------------------------------------------------------- */

/* Moves the undecoded bytes to the front of the buffer and reads more; false at the end of
 * the file (or on an error, which reads as the end). Caller holds the lock. */
static bool refill(SchPort *p)
{
    memmove(p->bytes, p->bytes + p->bpos, p->blen - p->bpos);
    p->blen -= p->bpos;
    p->bpos = 0;
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
        int32_t c = utf8_decode(p->bytes + p->bpos, p->blen - p->bpos, &used);
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
    if (p->kind != FILE_IN) return -1;
    if (p->peeked == NO_PEEK) p->peeked = file_decode(p);
    return p->peeked;
}

static int32_t getc_locked(SchPort *p)
{
    int32_t c = peek_locked(p);
    if (p->kind == FILE_IN) p->peeked = NO_PEEK;
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

/* Whether a character (or the end) can be read without blocking. */
static bool char_ready(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    bool ready = p->kind != FILE_IN || p->peeked != NO_PEEK || p->bpos < p->blen;
    if (!ready) {
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

/* Caller holds the lock. */
static void putc_locked(SchPort *p, uint32_t c)
{
    if (!p->open) return;
    if (p->kind == FILE_OUT) {
        char b[4];
        fwrite(b, 1, sch_utf8_encode(c, b), p->f);
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
    if (p->open && p->kind == FILE_OUT) {
        fputs(utf8, p->f);
    } else {
        const uint8_t *b = (const uint8_t *)utf8;
        size_t n = strlen(utf8);
        for (size_t i = 0; i < n;) {
            size_t used;
            int32_t c = utf8_decode(b + i, n - i, &used);
            putc_locked(p, c < 0 ? 0xfffd : (uint32_t)c);
            i += c < 0 ? n - i : used;
        }
    }
    pthread_mutex_unlock(&p->lock);
}

/* Writes s[0..n) (which may be a heap string's contents: nothing here allocates). */
static void put_utf32(SchPort *p, const uint32_t *s, size_t n)
{
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < n; i++)
        putc_locked(p, s[i]);
    pthread_mutex_unlock(&p->lock);
}

void sch_port_flush(SchPort *p)
{
    pthread_mutex_lock(&p->lock);
    if (p->open && p->kind == FILE_OUT) fflush(p->f);
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

void sch_flush_all(void)
{
    sch_port_stdout();
    for (SchPort *p = __atomic_load_n(&all_ports, __ATOMIC_ACQUIRE); p; p = p->next)
        if (p->kind == FILE_OUT)
            sch_port_flush(p);
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
    }
    return v;
}

bool sch_is_port(Value v) { return sch_is_record_of(v, sch_rtd_port); }

SchPort *sch_port_of(Value v) { return (SchPort *)(uintptr_t)rts_fixnum_val(sch_record_ref(v, 0)); }

/* --- primitives ----------------------------------------------------------------------------- */

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
        if (!is_open(p)) sch_error(cap, who, "port is closed", 0);
        return p;
    }
    if (!sch_is_port(argv[i]) || is_input(p = sch_port_of(argv[i])) != input)
        sch_type_error(cap, who, input ? "input port" : "output port", argv[i]);
    if (!is_open(p)) sch_error(cap, who, "port is closed", 1, argv[i]);
    return p;
}

static SchPort *in_arg(RtsCap *cap, Value *argv, int argc, int i, const char *who)
{ return dir_port_arg(cap, argv, argc, i, true, who); }

static SchPort *out_arg(RtsCap *cap, Value *argv, int argc, int i, const char *who)
{ return dir_port_arg(cap, argv, argc, i, false, who); }

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
    check_string(cap, argv[0], who);
    char *path = sch_string_to_utf8(argv[0], NULL);
    SchPort *p = input ? sch_port_open_file_in(path) : open_file_out(path);
    free(path);
    if (!p) sch_error(cap, who, "cannot open file", 1, argv[0]);
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
    if (p->kind != STRING_OUT)
        sch_type_error(cap, "get-output-string", "string output port", argv[0]);
    /* Copied out under the lock, converted after it (the conversion allocates). */
    pthread_mutex_lock(&p->lock);
    bool open = p->open;
    size_t n = p->n;
    uint32_t *copy = open ? xrealloc(NULL, n * sizeof *copy) : NULL;
    if (open && n) memcpy(copy, p->s, n * sizeof *copy);
    pthread_mutex_unlock(&p->lock);
    if (!open) sch_error(cap, "get-output-string", "port is closed", 1, argv[0]);
    Value s = sch_string_from_utf32(cap, copy, n);
    free(copy);
    return s;
}

PRIM(p_close_port)
{
    sch_port_close(port_arg(cap, argv[0], "close-port"));
    return RTS_UNSPEC;
}

static Value close_dir(RtsCap *cap, Value v, bool input, const char *who)
{
    SchPort *p = port_arg(cap, v, who);
    if (is_input(p) != input) sch_type_error(cap, who, input ? "input port" : "output port", v);
    sch_port_close(p);
    return RTS_UNSPEC;
}

PRIM(p_close_input_port)  { return close_dir(cap, argv[0], true, "close-input-port"); }
PRIM(p_close_output_port) { return close_dir(cap, argv[0], false, "close-output-port"); }

PRIM(p_is_input_port)  { return rts_bool(sch_is_port(argv[0]) && is_input(sch_port_of(argv[0]))); }
PRIM(p_is_output_port) { return rts_bool(sch_is_port(argv[0]) && !is_input(sch_port_of(argv[0]))); }
PRIM(p_is_port)        { return rts_bool(sch_is_port(argv[0])); }

PRIM(p_input_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "input-port-open?");
    return rts_bool(is_input(p) && is_open(p));
}

PRIM(p_output_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "output-port-open?");
    return rts_bool(!is_input(p) && is_open(p));
}

PRIM(p_eof_object)    { return RTS_EOF; }
PRIM(p_is_eof_object) { return rts_bool(argv[0] == RTS_EOF); }

static Value char_or_eof(int32_t c) { return c < 0 ? RTS_EOF : rts_char((uint32_t)c); }

PRIM(p_read_char) { return char_or_eof(sch_port_getc(in_arg(cap, argv, argc, 0, "read-char"))); }
PRIM(p_peek_char) { return char_or_eof(sch_port_peekc(in_arg(cap, argv, argc, 0, "peek-char"))); }
PRIM(p_char_ready) { return rts_bool(char_ready(in_arg(cap, argv, argc, 0, "char-ready?"))); }

/* Reads up to max characters, stopping after a newline if `line`; the line's "\n" (or
 * "\r\n") is dropped. Returns the string, or the eof object when nothing was left. */
static Value read_chars(RtsCap *cap, SchPort *p, size_t max, bool line)
{
    size_t n = 0, size = 80;
    uint32_t *buf = xrealloc(NULL, size * sizeof *buf);
    bool any = false;
    pthread_mutex_lock(&p->lock);
    while (n < max) {
        int32_t c = getc_locked(p);
        if (c < 0) break;
        any = true;
        if (line && c == '\n') {
            if (n && buf[n - 1] == '\r') n--;
            break;
        }
        if (n == size) {
            size *= 2;
            buf = xrealloc(buf, size * sizeof *buf);
        }
        buf[n++] = (uint32_t)c;
    }
    pthread_mutex_unlock(&p->lock);
    Value s = any || max == 0 ? sch_string_from_utf32(cap, buf, n) : RTS_EOF;
    free(buf);
    return s;
}

PRIM(p_read_line) { return read_chars(cap, in_arg(cap, argv, argc, 0, "read-line"), SIZE_MAX, true); }

PRIM(p_read_string)
{
    if (!rts_is_fixnum(argv[0]) || rts_fixnum_val(argv[0]) < 0)
        sch_type_error(cap, "read-string", "non-negative exact integer", argv[0]);
    SchPort *p = in_arg(cap, argv, argc, 1, "read-string");
    return read_chars(cap, p, (size_t)rts_fixnum_val(argv[0]), false);
}

PRIM(p_write_char)
{
    if (!rts_is_char(argv[0])) sch_type_error(cap, "write-char", "character", argv[0]);
    sch_port_putc(out_arg(cap, argv, argc, 1, "write-char"), rts_char_val(argv[0]));
    return RTS_UNSPEC;
}

PRIM(p_write_string)
{
    check_string(cap, argv[0], "write-string");
    SchPort *p = out_arg(cap, argv, argc, 1, "write-string");
    size_t len = sch_string_len(argv[0]);
    size_t end = index_arg(cap, argv, argc, 3, len, len, "write-string");
    size_t start = index_arg(cap, argv, argc, 2, end, 0, "write-string");
    put_utf32(p, sch_string_data(argv[0]) + start, end - start);
    return RTS_UNSPEC;
}

PRIM(p_newline)
{
    sch_port_putc(out_arg(cap, argv, argc, 0, "newline"), '\n');
    return RTS_UNSPEC;
}

PRIM(p_display)
{
    sch_print(out_arg(cap, argv, argc, 1, "display"), argv[0], false);
    return RTS_UNSPEC;
}

PRIM(p_write)
{
    sch_print(out_arg(cap, argv, argc, 1, "write"), argv[0], true);
    return RTS_UNSPEC;
}

PRIM(p_flush_output_port)
{
    sch_port_flush(out_arg(cap, argv, argc, 0, "flush-output-port"));
    return RTS_UNSPEC;
}

PRIM(p_read)
{
    SchPort *p = in_arg(cap, argv, argc, 0, "read");
    DArena *a = datum_arena_new();
    SchReadError err;
    Datum *d = sch_read(a, p, &err);
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

PRIM(p_file_exists)
{
    check_string(cap, argv[0], "file-exists?");
    char *path = sch_string_to_utf8(argv[0], NULL);
    bool exists = access(path, F_OK) == 0;
    free(path);
    return rts_bool(exists);
}

PRIM(p_delete_file)
{
    check_string(cap, argv[0], "delete-file");
    char *path = sch_string_to_utf8(argv[0], NULL);
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
    { "close-port",          p_close_port,          1, 1 },
    { "close-input-port",    p_close_input_port,    1, 1 },
    { "close-output-port",   p_close_output_port,   1, 1 },
    { "input-port?",         p_is_input_port,       1, 1 },
    { "output-port?",        p_is_output_port,      1, 1 },
    { "port?",               p_is_port,             1, 1 },
    { "textual-port?",       p_is_port,             1, 1 },   /* every port is textual */
    { "input-port-open?",    p_input_port_open,     1, 1 },
    { "output-port-open?",   p_output_port_open,    1, 1 },
    { "eof-object",          p_eof_object,          0, 0 },
    { "eof-object?",         p_is_eof_object,       1, 1 },
    { "read-char",           p_read_char,           0, 1 },
    { "peek-char",           p_peek_char,           0, 1 },
    { "read-line",           p_read_line,           0, 1 },
    { "read-string",         p_read_string,         1, 2 },
    { "char-ready?",         p_char_ready,          0, 1 },
    { "write-char",          p_write_char,          1, 2 },
    { "write-string",        p_write_string,        1, 4 },
    { "newline",             p_newline,             0, 1 },
    { "display",             p_display,             1, 2 },
    { "write",               p_write,               1, 2 },
    { "write-shared",        p_write,               1, 2 },
    { "write-simple",        p_write,               1, 2 },
    { "flush-output-port",   p_flush_output_port,   0, 1 },
    { "read",                p_read,                0, 1 },
    { "file-exists?",        p_file_exists,         1, 1 },
    { "delete-file",         p_delete_file,         1, 1 },
    { "number->string",      p_number_to_string,    1, 2 },
    { "string->number",      p_string_to_number,    1, 2 },
    { NULL, NULL, 0, 0 },
};
