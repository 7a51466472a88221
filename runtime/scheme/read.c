/* The reader: R7RS datum syntax from a port to datums (datum.c) with source positions, and
 * number syntax.
 *
 * Note [Reader without recursion]
 * The reader must survive any input (it is fuzzed), so it keeps the lists, vectors,
 * abbreviations ('x) and datum comments (#;) that are open on an explicit stack, not on
 * the C stack. MAX_DEPTH still bounds that stack: the expander, the compiler and
 * sch_datum_to_value recurse on the nesting of the datums read.
 *
 * Every datum carries the line and column of its first character; a list cell carries the
 * position of its car, except a list's first cell, which carries the '('. The empty list is
 * always the shared DNIL (without a position), so code may test for it by pointer.
 *
 * Extensions to R7RS: [ ] as parentheses, n/d read as the quotient (exact when it divides,
 * else a flonum: there are no rationals), and a "#!" line at the very start (a script's
 * interpreter line) read as a comment.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "rts/vm_api.h"
#include "scheme/scheme.h"

#define MAX_DEPTH 10000

typedef enum { F_LIST, F_VECTOR, F_BYTEVECTOR, F_ABBREV, F_DCOMMENT } FrameKind;

/* An open datum: what the tokens read next belong to. */
typedef struct Frame {
    FrameKind kind;
    int line, col;             /* of the opening token */
    uint32_t close;            /* F_LIST: ')' or ']' */
    int dot;                   /* F_LIST: 0, 1 just after a '.', 2 after the datum after it */
    Datum *head, *tail;        /* the elements so far, as list cells */
    const char *sym;           /* F_ABBREV: the interned quote, quasiquote, ... */
    const char *text;          /* F_ABBREV, F_DCOMMENT: the token, for messages */
} Frame;

typedef struct Reader {
    DArena *a;
    SchPort *in;
    const char *file;          /* the port's name, copied into the arena */
    SchReadError *err;
    Frame *stack;
    size_t depth, stack_size;
    uint32_t *buf;             /* the characters of the token being read */
    size_t len, buf_size;
} Reader;

typedef enum { TK_DATUM, TK_OPEN, TK_CLOSE, TK_DOT, TK_END, TK_SKIP, TK_ERROR } Token;

/* Records a syntax error (the first one wins); returns TK_ERROR for the callers' tails. */
__attribute__((format(printf, 4, 5)))
static Token fail(Reader *r, int line, int col, const char *fmt, ...)
{
    if (!r->err->msg[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err->msg, sizeof r->err->msg, fmt, ap);
        va_end(ap);
        r->err->line = line;
        r->err->col = col;
    }
    return TK_ERROR;
}

static void buf_add(Reader *r, uint32_t c)
{
    if (r->len == r->buf_size) {
        r->buf_size = r->buf_size ? 2 * r->buf_size : 64;
        r->buf = realloc(r->buf, r->buf_size * sizeof *r->buf);
        if (!r->buf) rtv_fatal("out of memory (reader)");
    }
    r->buf[r->len++] = c;
}

/* The token text as UTF-8 (at most size - 1 bytes, for messages and symbol names). */
static size_t buf_utf8(Reader *r, char *out, size_t size)
{
    size_t k = 0;
    for (size_t i = 0; i < r->len && k + 5 <= size; i++)
        k += sch_utf8_encode(r->buf[i], out + k);
    out[k] = 0;
    return k;
}

static bool is_space(int32_t c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* What ends an identifier, a number or a character name. The printer (print.c) writes a
 * symbol between bars when its name holds one of these. */
static bool is_delimiter(int32_t c)
{
    return c <= 0 || is_space(c) || (c < 0x80 && strchr("()[]\";'`,|", (int)c));
}

static bool is_digit(uint32_t c) { return c >= '0' && c <= '9'; }

/* Whether an atom must be a number: it starts with a digit, or a sign or '.' and a digit.
 * (print.c uses the same rule to decide which symbols need bars.) */
static bool looks_numeric(const uint32_t *s, size_t n)
{
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i < n && s[i] == '.') i++;
    return i < n && is_digit(s[i]);
}

static Datum *new_datum(Reader *r, DatumKind k, int line, int col)
{
    Datum *d = datum_new(r->a, k, line, col);
    d->file = r->file;
    return d;
}

static Datum *new_symbol(Reader *r, const char *name, size_t n, int line, int col)
{
    Datum *d = new_datum(r, D_SYM, line, col);
    d->u.sym = datum_intern(name, n);
    return d;
}

/* Reads the rest of an atom (up to a delimiter) into the token buffer. */
static void read_subsequent(Reader *r)
{
    while (!is_delimiter(sch_port_peekc(r->in)))
        buf_add(r, (uint32_t)sch_port_getc(r->in));
}

static void skip_line(Reader *r)
{
    int32_t c;
    do c = sch_port_getc(r->in); while (c >= 0 && c != '\n');
}

static Token skip_block_comment(Reader *r, int line, int col)
{
    size_t depth = 1;
    for (;;) {
        int32_t c = sch_port_getc(r->in);
        if (c < 0) return fail(r, line, col, "unterminated block comment");
        if (c == '|' && sch_port_peekc(r->in) == '#') {
            sch_port_getc(r->in);
            if (--depth == 0) return TK_SKIP;
        } else if (c == '#' && sch_port_peekc(r->in) == '|') {
            sch_port_getc(r->in);
            depth++;
        }
    }
}

/* --- strings, |symbols| and characters ---------------------------------------------------- */

static int hex_val(int32_t c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static bool valid_code_point(uint32_t c) { return c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff); }

/* The escape after a backslash in a string or |symbol| (what: "string" or "|symbol|",
 * opened at line:col). Returns the character, -1 for a line continuation (nothing), or
 * -2 after an error. */
static int32_t read_escape(Reader *r, const char *what, int line, int col)
{
    int eline = sch_port_line(r->in), ecol = sch_port_col(r->in) - 1;   /* the backslash */
    int32_t c = sch_port_getc(r->in);
    switch (c) {
    case 'a':  return 7;
    case 'b':  return 8;
    case 't':  return '\t';
    case 'n':  return '\n';
    case 'r':  return '\r';
    case '"': case '\\': case '|': return c;
    case -1:
        fail(r, line, col, "unterminated %s", what);
        return -2;
    case 'x': case 'X': {
        uint32_t v = 0;
        int ndigits = 0;
        for (; hex_val(c = sch_port_getc(r->in)) >= 0; ndigits++)
            if (v <= 0x10ffff) v = v * 16 + (uint32_t)hex_val(c);
        if (c != ';' || ndigits == 0 || !valid_code_point(v)) {
            fail(r, eline, ecol, "bad \\x escape in %s (\\x<hex digits>; expected)", what);
            return -2;
        }
        return (int32_t)v;
    }
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        /* \ <spaces> <line end> <spaces>: nothing */
        while (c == ' ' || c == '\t')
            c = sch_port_getc(r->in);
        if (c == '\r' && sch_port_peekc(r->in) == '\n')
            c = sch_port_getc(r->in);
        if (c != '\n' && c != '\r') {
            fail(r, eline, ecol, "bad line continuation in %s", what);
            return -2;
        }
        while ((c = sch_port_peekc(r->in)) == ' ' || c == '\t')
            sch_port_getc(r->in);
        return -1;
    }
    char name[8] = "";
    if (c > ' ') name[sch_utf8_encode((uint32_t)c, name)] = 0;
    fail(r, eline, ecol, "bad escape \\%s in %s", name, what);
    return -2;
}

/* The characters up to the closing `close` into the token buffer. */
static bool read_delimited(Reader *r, int32_t close, const char *what, int line, int col)
{
    r->len = 0;
    for (;;) {
        int32_t c = sch_port_getc(r->in);
        if (c < 0) {
            fail(r, line, col, "unterminated %s", what);
            return false;
        }
        if (c == close) return true;
        if (c == '\\') {
            c = read_escape(r, what, line, col);
            if (c == -2) return false;
            if (c == -1) continue;
        }
        buf_add(r, (uint32_t)c);
    }
}

static Token read_string(Reader *r, Datum **out, int line, int col)
{
    if (!read_delimited(r, '"', "string", line, col)) return TK_ERROR;
    Datum *d = new_datum(r, D_STR, line, col);
    d->u.str.n = r->len;
    d->u.str.s = datum_alloc(r->a, (r->len + 1) * sizeof(uint32_t));
    if (r->len) memcpy(d->u.str.s, r->buf, r->len * sizeof(uint32_t));
    *out = d;
    return TK_DATUM;
}

/* A symbol's name from the token buffer, as UTF-8. */
static Datum *symbol_from_buf(Reader *r, int line, int col)
{
    char *name = malloc(4 * r->len + 1);
    if (!name) rtv_fatal("out of memory (reader)");
    size_t n = buf_utf8(r, name, 4 * r->len + 1);
    Datum *d = new_symbol(r, name, n, line, col);
    free(name);
    return d;
}

static Token read_bar_symbol(Reader *r, Datum **out, int line, int col)
{
    if (!read_delimited(r, '|', "|symbol|", line, col)) return TK_ERROR;
    *out = symbol_from_buf(r, line, col);
    return TK_DATUM;
}

static const struct { const char *name; uint32_t c; } char_names[] = {
    { "alarm", 7 }, { "backspace", 8 }, { "delete", 0x7f }, { "escape", 0x1b },
    { "newline", '\n' }, { "linefeed", '\n' }, { "null", 0 }, { "nul", 0 },
    { "return", '\r' }, { "space", ' ' }, { "tab", '\t' },
};

/* After "#\": a character, a character name or #\x<hex>. */
static Token read_char(Reader *r, Datum **out, int line, int col)
{
    int32_t c = sch_port_getc(r->in);
    if (c < 0) return fail(r, line, col, "unexpected end of input after #\\");
    r->len = 0;
    buf_add(r, (uint32_t)c);
    if (!is_delimiter(c)) read_subsequent(r);
    uint32_t ch = (uint32_t)c;
    if (r->len > 1) {
        char name[64];
        buf_utf8(r, name, sizeof name);
        size_t i, nnames = sizeof char_names / sizeof *char_names;
        for (i = 0; i < nnames && strcmp(name, char_names[i].name) != 0; i++) {}
        if (i < nnames && r->len == strlen(name)) {   /* (a NUL in the token ends `name`) */
            ch = char_names[i].c;
        } else {
            bool hex = (c == 'x' || c == 'X') && r->len <= 9;
            uint32_t v = 0;
            for (size_t k = 1; hex && k < r->len; k++) {
                int h = hex_val((int32_t)r->buf[k]);
                hex = h >= 0;
                v = v * 16 + (uint32_t)(hex ? h : 0);
            }
            if (!hex || !valid_code_point(v))
                return fail(r, line, col, "bad character name #\\%s", name);
            ch = v;
        }
    }
    Datum *d = new_datum(r, D_CHAR, line, col);
    d->u.ch = ch;
    *out = d;
    return TK_DATUM;
}

/* --- atoms -------------------------------------------------------------------------------- */

/* The token buffer as a number datum in *out: TK_DATUM; TK_ERROR for an exact integer
 * beyond the fixnums (never read as a flonum instead); TK_SKIP when it is not a number. */
static Token buf_number(Reader *r, Datum **out, int line, int col)
{
    intptr_t fix;
    double flo;
    switch (sch_parse_number(r->buf, r->len, 10, &fix, &flo)) {
    case 1:
        *out = new_datum(r, D_FIX, line, col);
        (*out)->u.fix = fix;
        return TK_DATUM;
    case 2:
        *out = new_datum(r, D_FLO, line, col);
        (*out)->u.flo = flo;
        return TK_DATUM;
    case 3: {
        char text[64];
        buf_utf8(r, text, sizeof text);
        return fail(r, line, col, "integer %s is beyond the fixnum range (%" PRIdPTR " to %" PRIdPTR
                    ")", text, (intptr_t)RTS_FIXNUM_MIN, (intptr_t)RTS_FIXNUM_MAX);
    }
    }
    return TK_SKIP;
}

static Token bad_number(Reader *r, int line, int col)
{
    char text[64];
    buf_utf8(r, text, sizeof text);
    return fail(r, line, col, "bad number syntax %s", text);
}

static Token read_atom(Reader *r, int32_t first, Datum **out, int line, int col)
{
    r->len = 0;
    buf_add(r, (uint32_t)first);
    read_subsequent(r);
    Token num = buf_number(r, out, line, col);
    if (num != TK_SKIP) return num;
    if (looks_numeric(r->buf, r->len)) return bad_number(r, line, col);
    *out = symbol_from_buf(r, line, col);
    return TK_DATUM;
}

static bool buf_is(Reader *r, const char *s)
{
    size_t n = strlen(s);
    if (r->len != n) return false;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = r->buf[i];
        if ((c >= 'A' && c <= 'Z' ? c + 32 : c) != (uint32_t)s[i]) return false;
    }
    return true;
}

/* After '#': comments, vectors, bytevectors, characters, booleans, prefixed numbers. */
static Token read_hash(Reader *r, Datum **out, Frame *f, int line, int col)
{
    switch (sch_port_peekc(r->in)) {
    case '|':
        sch_port_getc(r->in);
        return skip_block_comment(r, line, col);
    case ';':
        sch_port_getc(r->in);
        f->kind = F_DCOMMENT;
        f->text = "#;";
        return TK_OPEN;
    case '(':
        sch_port_getc(r->in);
        f->kind = F_VECTOR;
        return TK_OPEN;
    case '\\':
        sch_port_getc(r->in);
        return read_char(r, out, line, col);
    case '!':
        if (line == 1 && col == 1) {
            skip_line(r);
            return TK_SKIP;
        }
        break;
    case -1:
        return fail(r, line, col, "unexpected end of input after #");
    }
    r->len = 0;
    buf_add(r, '#');
    read_subsequent(r);
    if (buf_is(r, "#t") || buf_is(r, "#true") || buf_is(r, "#f") || buf_is(r, "#false")) {
        Datum *d = new_datum(r, D_BOOL, line, col);
        d->u.b = r->buf[1] == 't' || r->buf[1] == 'T';
        *out = d;
        return TK_DATUM;
    }
    if (buf_is(r, "#u8") && sch_port_peekc(r->in) == '(') {
        sch_port_getc(r->in);
        f->kind = F_BYTEVECTOR;
        return TK_OPEN;
    }
    if (r->len > 1 && r->buf[1] < 0x80 && r->buf[1] && strchr("xXbBoOdDeEiI", (int)r->buf[1]))
    {
        Token num = buf_number(r, out, line, col);
        return num != TK_SKIP ? num : bad_number(r, line, col);
    }
    char text[64];
    buf_utf8(r, text, sizeof text);
    return fail(r, line, col, "bad # syntax %s", text);
}

static Token abbrev(Frame *f, const char *sym, const char *text)
{
    f->kind = F_ABBREV;
    f->sym = datum_intern(sym, strlen(sym));
    f->text = text;
    return TK_OPEN;
}

/* The next token after whitespace and comments; *f gets its position (and the frame it
 * opens, for TK_OPEN; the closing character for TK_CLOSE). */
static Token next_token(Reader *r, Datum **out, Frame *f)
{
    for (;;) {
        f->line = sch_port_line(r->in);
        f->col = sch_port_col(r->in);
        int32_t c = sch_port_getc(r->in);
        Token t;
        switch (c) {
        case -1:
            return TK_END;
        case 0:        /* never part of a symbol: a binary file, or a stray byte */
            return fail(r, f->line, f->col, "NUL character (byte 0) outside a string");
        case ';':
            skip_line(r);
            continue;
        case '(': case '[':
            f->kind = F_LIST;
            f->close = c == '(' ? ')' : ']';
            return TK_OPEN;
        case ')': case ']':
            f->close = (uint32_t)c;
            return TK_CLOSE;
        case '\'':
            return abbrev(f, "quote", "'");
        case '`':
            return abbrev(f, "quasiquote", "`");
        case ',':
            if (sch_port_peekc(r->in) != '@') return abbrev(f, "unquote", ",");
            sch_port_getc(r->in);
            return abbrev(f, "unquote-splicing", ",@");
        case '"':
            return read_string(r, out, f->line, f->col);
        case '|':
            return read_bar_symbol(r, out, f->line, f->col);
        case '#':
            t = read_hash(r, out, f, f->line, f->col);
            if (t == TK_SKIP) continue;
            return t;
        case '.':
            if (is_delimiter(sch_port_peekc(r->in))) return TK_DOT;
            return read_atom(r, c, out, f->line, f->col);
        default:
            if (is_space(c)) continue;
            return read_atom(r, c, out, f->line, f->col);
        }
    }
}

/* --- the stack of open datums ----------------------------------------------------------- */

static bool push(Reader *r, const Frame *f)
{
    if (r->depth == MAX_DEPTH) {
        fail(r, f->line, f->col, "nesting too deep (more than %d levels)", MAX_DEPTH);
        return false;
    }
    if (r->depth == r->stack_size) {
        r->stack_size = r->stack_size ? 2 * r->stack_size : 32;
        r->stack = realloc(r->stack, r->stack_size * sizeof *r->stack);
        if (!r->stack) rtv_fatal("out of memory (reader)");
    }
    r->stack[r->depth++] = *f;
    return true;
}

static void append(Reader *r, Frame *f, Datum *d, int line, int col)
{
    Datum *cell = datum_cons(r->a, d, DNIL);
    cell->file = r->file;
    cell->line = line;
    cell->col = col;
    if (f->head) f->tail->u.pair.cdr = cell;
    else f->head = cell;
    f->tail = cell;
}

/* The datum that the closing `close` (at *line:*col) completes, or NULL after an error;
 * *line:*col get the datum's position. */
static Datum *close_frame(Reader *r, uint32_t close, int *linep, int *colp)
{
    int line = *linep, col = *colp;
    if (!r->depth) {
        fail(r, line, col, "unexpected '%c'", (char)close);
        return NULL;
    }
    Frame *f = &r->stack[r->depth - 1];
    if (f->kind == F_ABBREV || f->kind == F_DCOMMENT) {
        fail(r, line, col, "unexpected '%c' after %s", (char)close, f->text);
        return NULL;
    }
    uint32_t want = f->kind == F_LIST ? f->close : ')';
    if (close != want) {
        fail(r, line, col, "unexpected '%c' (the '%c' at %d:%d wants '%c')", (char)close,
             want == ')' ? '(' : '[', f->line, f->col, (char)want);
        return NULL;
    }
    if (f->kind == F_LIST && f->dot == 1) {
        fail(r, line, col, "bad dot syntax");
        return NULL;
    }
    Datum *d, *elems = f->head ? f->head : DNIL;
    if (f->kind == F_LIST) {
        d = elems;
        if (f->head) {
            d->file = r->file;
            d->line = f->line;
            d->col = f->col;
        }
    } else {
        size_t n = datum_list_length(elems), i = 0;
        if (f->kind == F_VECTOR) {
            d = new_datum(r, D_VEC, f->line, f->col);
            d->u.vec.n = n;
            d->u.vec.items = datum_alloc(r->a, (n + 1) * sizeof(Datum *));
            for (Datum *p = elems; datum_is_pair(p); p = dcdr(p))
                d->u.vec.items[i++] = dcar(p);
        } else {
            d = new_datum(r, D_BYTEVEC, f->line, f->col);
            d->u.bv.n = n;
            d->u.bv.bytes = datum_alloc(r->a, n + 1);
            for (Datum *p = elems; datum_is_pair(p); p = dcdr(p))
                d->u.bv.bytes[i++] = (uint8_t)dcar(p)->u.fix;
        }
    }
    *linep = f->line;
    *colp = f->col;
    r->depth--;
    return d;
}

/* Hands the complete datum d (at line:col) to the open frames. Returns false on an error;
 * sets *done when d is the whole datum being read. */
static bool deliver(Reader *r, Datum *d, int line, int col, Datum **done)
{
    while (r->depth) {
        Frame *f = &r->stack[r->depth - 1];
        switch (f->kind) {
        case F_ABBREV: {
            Datum *sym = new_datum(r, D_SYM, f->line, f->col);
            sym->u.sym = f->sym;
            Datum *arg = datum_cons(r->a, d, DNIL);
            arg->file = r->file;
            arg->line = line;
            arg->col = col;
            d = datum_cons(r->a, sym, arg);
            line = f->line;
            col = f->col;
            r->depth--;
            continue;
        }
        case F_DCOMMENT:
            r->depth--;
            return true;
        case F_LIST:
            if (f->dot == 2) {
                fail(r, line, col, "bad dot syntax (one datum after '.', then ')')");
                return false;
            }
            if (f->dot == 1) {
                f->tail->u.pair.cdr = d;
                f->dot = 2;
            } else {
                append(r, f, d, line, col);
            }
            return true;
        case F_VECTOR:
            append(r, f, d, line, col);
            return true;
        case F_BYTEVECTOR:
            if (d->kind != D_FIX || d->u.fix < 0 || d->u.fix > 255) {
                fail(r, line, col, "bad bytevector element (an integer 0..255 expected)");
                return false;
            }
            append(r, f, d, line, col);
            return true;
        }
    }
    *done = d;
    return true;
}

/* At the end of the input inside the innermost open frame. */
static void unterminated(Reader *r)
{
    const Frame *f = &r->stack[r->depth - 1];
    switch (f->kind) {
    case F_LIST:       fail(r, f->line, f->col, "unterminated list"); break;
    case F_VECTOR:     fail(r, f->line, f->col, "unterminated vector"); break;
    case F_BYTEVECTOR: fail(r, f->line, f->col, "unterminated bytevector"); break;
    default:           fail(r, f->line, f->col, "unexpected end of input after %s", f->text);
    }
}

Datum *sch_read(DArena *a, SchPort *in, SchReadError *err)
{
    const char *name = sch_port_name(in);
    size_t n = strlen(name) + 1;
    Reader r = { .a = a, .in = in, .err = err, .file = memcpy(datum_alloc(a, n), name, n) };
    err->msg[0] = 0;
    err->line = err->col = 0;
    Datum *result = NULL;
    while (!result) {
        Datum *d = NULL;
        Frame f = { 0 };
        Token t = next_token(&r, &d, &f);
        if (t == TK_ERROR) break;
        if (t == TK_END) {
            if (r.depth) unterminated(&r);
            break;
        }
        if (t == TK_OPEN) {
            if (!push(&r, &f)) break;
            continue;
        }
        if (t == TK_DOT) {
            Frame *top = r.depth ? &r.stack[r.depth - 1] : NULL;
            if (!top || top->kind != F_LIST || !top->head || top->dot != 0) {
                fail(&r, f.line, f.col, "bad dot syntax");
                break;
            }
            top->dot = 1;
            continue;
        }
        if (t == TK_CLOSE && !(d = close_frame(&r, f.close, &f.line, &f.col)))
            break;
        if (!deliver(&r, d, f.line, f.col, &result)) break;
    }
    free(r.stack);
    free(r.buf);
    return err->msg[0] ? NULL : result;
}

/* --- number syntax ---------------------------------------------------------------------------- */

static int digit_val(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'z') return c - 'a' + 10;
    if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
    return 99;
}

/* An unsigned integer's digits d[0..n) in radix 2, 8 or 16 as the nearest double: the
 * leading 61 or more bits in a uint64 with a sticky bit for the rest, so the one rounding
 * (the conversion) is correct. */
static double pow2_radix_to_double(const char *d, size_t n, int radix)
{
    int bits = radix == 2 ? 1 : radix == 8 ? 3 : 4;
    uint64_t top = 0;
    int shift = 0;
    bool sticky = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t v = (uint64_t)digit_val(d[i]);
        if (top >> (64 - bits) == 0) {
            top = top << bits | v;
        } else {
            sticky |= v != 0;
            shift += bits;
        }
    }
    return ldexp((double)(top | sticky), shift);
}

/* An unsigned integer's digits d[0..n): *m gets its value and the result is true when it is
 * at most limit; else *x gets the nearest double. */
static bool parse_uint(const char *d, size_t n, int radix, uint64_t limit, uint64_t *m, double *x)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t dv = (uint64_t)digit_val(d[i]);
        if (v > (limit - dv) / (uint64_t)radix) {
            if (radix == 10) {
                char *text = malloc(n + 1);
                if (!text) rtv_fatal("out of memory (reader)");
                memcpy(text, d, n);
                text[n] = 0;
                *x = strtod(text, NULL);
                free(text);
            } else {
                *x = pow2_radix_to_double(d, n, radix);
            }
            return false;
        }
        v = v * (uint64_t)radix + dv;
    }
    *m = v;
    return true;
}

/* The length of the run of radix digits at t. */
static size_t digits(const char *t, int radix)
{
    size_t n = 0;
    while (digit_val(t[n]) < radix) n++;
    return n;
}

/* The number in t (ASCII, NUL-terminated, prefixes removed); see sch_parse_number. */
static int parse_real(const char *t, int radix, char exactness, intptr_t *fix, double *flo)
{
    const char *start = t;
    bool neg = *t == '-';
    if (*t == '+' || *t == '-') t++;
    if (t != start && (strcasecmp(t, "inf.0") == 0 || strcasecmp(t, "nan.0") == 0)) {
        if (exactness == 'e') return 0;
        *flo = t[0] == 'i' || t[0] == 'I' ? (neg ? -INFINITY : INFINITY) : NAN;
        return 2;
    }
    uint64_t limit = neg ? (uint64_t)RTS_FIXNUM_MAX + 1 : (uint64_t)RTS_FIXNUM_MAX;
    size_t nint = digits(t, radix);
    if (t[nint] == '/') {
        /* n/d: the quotient, exact when d divides n */
        const char *den = t + nint + 1;
        size_t nden = digits(den, radix);
        if (nint == 0 || nden == 0 || den[nden]) return 0;
        uint64_t nm, dm;
        double nx, dx;
        bool nexact = parse_uint(t, nint, radix, limit, &nm, &nx);
        bool dexact = parse_uint(den, nden, radix, UINT64_MAX, &dm, &dx);
        if (dexact && dm == 0) return 0;
        if (!nexact && exactness != 'i') return 3;   /* an exact numerator beyond the fixnums */
        if (nexact && dexact && nm % dm == 0 && exactness != 'i') {
            uint64_t q = nm / dm;     /* at most limit: 2^62 when negative */
            *fix = neg ? -(intptr_t)q : (intptr_t)q;
            return 1;
        }
        /* A ratio that is no integer would be a rational, which is not supported (docs/
         * scheme.md): not a number, unless #i asks for the flonum (before: "1/2" read as 0.5,
         * an inexact number from exact syntax) */
        if (exactness != 'i') return 0;
        double x = (nexact ? (double)nm : nx) / (dexact ? (double)dm : dx);
        *flo = neg ? -x : x;
        return 2;
    }
    size_t i = nint, nfrac = 0;
    bool decimal = false;
    if (t[i] == '.') {
        decimal = true;
        for (i++; is_digit((uint32_t)t[i]); i++) nfrac++;
    }
    if (nint + nfrac == 0) return 0;
    if (radix == 10 && (t[i] == 'e' || t[i] == 'E')) {
        decimal = true;
        i++;
        if (t[i] == '+' || t[i] == '-') i++;
        size_t nexp = 0;
        for (; is_digit((uint32_t)t[i]); i++) nexp++;
        if (nexp == 0) return 0;
    }
    if (t[i] || (decimal && radix != 10)) return 0;
    if (decimal) {
        double x = strtod(start, NULL);   /* correctly rounded: the one reading of the text */
        if (exactness != 'e') {
            *flo = x;
            return 2;
        }
        if (x != floor(x) || !isfinite(x)) return 0;   /* no exact non-integers */
        if (x < -0x1p62 || x >= 0x1p62)
            return 3;
        *fix = (intptr_t)x;
        return 1;
    }
    uint64_t m;
    double x;
    if (!parse_uint(t, nint, radix, limit, &m, &x)) {
        if (exactness != 'i')
            return 3;                 /* beyond the fixnums: never silently a flonum */
        *flo = neg ? -x : x;
        return 2;
    }
    if (exactness == 'i') {
        *flo = neg ? -(double)m : (double)m;
        return 2;
    }
    *fix = neg ? -(intptr_t)m : (intptr_t)m;
    return 1;
}

int sch_parse_number(const uint32_t *s, size_t n, int radix, intptr_t *fix, double *flo)
{
    char exactness = 0;
    bool radix_given = false;
    size_t i = 0;
    for (; i + 1 < n && s[i] == '#'; i += 2) {
        uint32_t c = s[i + 1] | 0x20;     /* lower case */
        if (c == 'e' || c == 'i') {
            if (exactness) return 0;
            exactness = (char)c;
        } else if (c == 'x' || c == 'b' || c == 'o' || c == 'd') {
            if (radix_given) return 0;
            radix_given = true;
            radix = c == 'x' ? 16 : c == 'b' ? 2 : c == 'o' ? 8 : 10;
        } else {
            return 0;
        }
    }
    if (i == n) return 0;
    char small[128], *t = n - i < sizeof small ? small : malloc(n - i + 1);
    if (!t) rtv_fatal("out of memory (reader)");
    size_t k = 0;
    for (; i < n && s[i] > 0 && s[i] < 0x80; i++)
        t[k++] = (char)s[i];
    t[k] = 0;
    int kind = i == n ? parse_real(t, radix, exactness, fix, flo) : 0;
    if (t != small) free(t);
    return kind;
}
