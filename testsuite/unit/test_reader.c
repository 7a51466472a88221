/* Unit test: the Scheme reader (runtime/scheme/read.c), number syntax and formatting, the
 * printer and ports (port.c, print.c), on their own -- the runtime is never started: the
 * values printed are words in static arrays, as in test_object. */
#include "rtslab.h"
#include "scheme/scheme.h"
#include "unit/check.h"

#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* --- helpers ------------------------------------------------------------------------------ */

static SchPort *in_port(const char *src)
{
    return sch_port_open_utf8_in(src, strlen(src), "<test>");
}

/* A datum as text (test-only: numbers as %.17g, characters as #\x<hex>). */
static void show_(const Datum *d, char *out, size_t size)
{
    size_t n = strlen(out);
    char *o = out + n;
    size = size - n;
    switch (d->kind) {
    case D_NIL:  snprintf(o, size, "()"); break;
    case D_BOOL: snprintf(o, size, d->u.b ? "#t" : "#f"); break;
    case D_FIX:  snprintf(o, size, "%jd", (intmax_t)d->u.fix); break;
    case D_FLO:  snprintf(o, size, "%.17g", d->u.flo); break;
    case D_CHAR: snprintf(o, size, "#\\x%x", (unsigned)d->u.ch); break;
    case D_SYM:  snprintf(o, size, "%s", d->u.sym); break;
    case D_UNSPEC: snprintf(o, size, "#<unspecified>"); break;
    case D_STR: {
        size_t k = 0;
        o[k++] = '"';
        for (size_t i = 0; i < d->u.str.n && k + 6 < size; i++)
            k += sch_utf8_encode(d->u.str.s[i], o + k);
        o[k++] = '"';
        o[k] = 0;
        break;
    }
    case D_PAIR:
        strncat(o, "(", size - 1);
        for (;;) {
            show_(dcar(d), out, size + n);
            d = dcdr(d);
            if (d->kind != D_PAIR) break;
            strncat(out, " ", size + n - strlen(out) - 1);
        }
        if (d->kind != D_NIL) {
            strncat(out, " . ", size + n - strlen(out) - 1);
            show_(d, out, size + n);
        }
        strncat(out, ")", size + n - strlen(out) - 1);
        break;
    case D_VEC:
        strncat(o, "#(", size - 1);
        for (size_t i = 0; i < d->u.vec.n; i++) {
            if (i) strncat(out, " ", size + n - strlen(out) - 1);
            show_(d->u.vec.items[i], out, size + n);
        }
        strncat(out, ")", size + n - strlen(out) - 1);
        break;
    case D_BYTEVEC:
        strncat(o, "#u8(", size - 1);
        for (size_t i = 0; i < d->u.bv.n; i++) {
            char b[8];
            snprintf(b, sizeof b, i ? " %u" : "%u", d->u.bv.bytes[i]);
            strncat(out, b, size + n - strlen(out) - 1);
        }
        strncat(out, ")", size + n - strlen(out) - 1);
        break;
    }
}

static const char *show(const Datum *d)
{
    static char buf[4096];
    buf[0] = 0;
    if (!d) return "(null)";
    show_(d, buf, sizeof buf);
    return buf;
}

/* Reads the first datum of src and shows it (or "error: <msg> @line:col"). */
static const char *read_show(const char *src)
{
    static char buf[4096];
    DArena *a = datum_arena_new();
    SchReadError err;
    SchPort *p = in_port(src);
    Datum *d = sch_read(a, p, &err);
    if (d) snprintf(buf, sizeof buf, "%s", show(d));
    else if (err.msg[0]) snprintf(buf, sizeof buf, "error: %s @%d:%d", err.msg, err.line, err.col);
    else snprintf(buf, sizeof buf, "eof");
    datum_arena_free(a);
    sch_port_close(p);
    return buf;
}

/* The error message of reading src ("" when it reads fine); *line, *col its position. */
static const char *read_error(const char *src, int *line, int *col)
{
    static SchReadError err;
    DArena *a = datum_arena_new();
    SchPort *p = in_port(src);
    while (sch_read(a, p, &err)) {}
    datum_arena_free(a);
    sch_port_close(p);
    *line = err.line;
    *col = err.col;
    return err.msg;
}

#define CHECK_READ_ERROR(src, msg, l, c) do {                                       \
        int line_, col_;                                                            \
        const char *m_ = read_error(src, &line_, &col_);                            \
        if (!CHECK(strstr(m_, msg) != NULL))                                        \
            fprintf(stderr, "  reading %s: got \"%s\", want \"%s\"\n", src, m_, msg); \
        CHECK_EQ_INT(line_, l);                                                     \
        CHECK_EQ_INT(col_, c);                                                      \
    } while (0)

static size_t to_utf32(const char *s, uint32_t *out)
{
    size_t n = 0;
    for (; *s; s++) out[n++] = (uint8_t)*s;
    return n;
}

static int parse(const char *s, int radix, intptr_t *fix, double *flo)
{
    uint32_t buf[1024];
    size_t n = to_utf32(s, buf);
    return sch_parse_number(buf, n, radix, fix, flo);
}

static bool parses_fix(const char *s, int radix, intptr_t want)
{
    intptr_t fix = 0;
    double flo;
    int k = parse(s, radix, &fix, &flo);
    if (k != 1 || fix != want) {
        fprintf(stderr, "  parse \"%s\" (radix %d): kind %d, %jd; want %jd\n", s, radix, k,
                (intmax_t)fix, (intmax_t)want);
        return false;
    }
    return true;
}

/* An exact integer beyond the fixnums: kind 3, never a flonum. */
static bool parses_big(const char *s, int radix)
{
    intptr_t fix;
    double flo = 0;
    int k = parse(s, radix, &fix, &flo);
    if (k != 3)
        fprintf(stderr, "  parse \"%s\" (radix %d): kind %d; want 3 (beyond the fixnums)\n", s, radix, k);
    return k == 3;
}

static bool parses_flo(const char *s, int radix, double want)
{
    intptr_t fix;
    double flo = 0;
    int k = parse(s, radix, &fix, &flo);
    bool ok = k == 2 && (isnan(want) ? isnan(flo) : memcmp(&flo, &want, sizeof flo) == 0);
    if (!ok)
        fprintf(stderr, "  parse \"%s\" (radix %d): kind %d, %.17g; want %.17g\n", s, radix, k,
                flo, want);
    return ok;
}

/* Static "heap objects" for the printer (it never allocates, so it cannot tell). */
static Value arena[1 << 20];
static size_t arena_used;

static Value fake(ObjType t, size_t size)
{
    if (arena_used + 1 + size > sizeof arena / sizeof *arena) {
        fprintf(stderr, "test_reader: out of static object space\n");
        exit(2);
    }
    Value *w = &arena[arena_used];
    arena_used += 1 + size;
    w[0] = obj_make_header(t, size);
    return (Value)w;
}

static Value flo(double d)
{
    Value v = fake(T_FLONUM, raw_words(8));
    obj_payload(v)[0] = 8;
    memcpy(raw_bytes(v), &d, 8);
    return v;
}

static Value cons(Value a, Value b)
{
    Value v = fake(T_PAIR, 2);
    obj_payload(v)[0] = a;
    obj_payload(v)[1] = b;
    return v;
}

static Value str(const uint32_t *s, size_t n)
{
    Value v = fake(T_STRING, raw_words(4 * n));
    obj_payload(v)[0] = 4 * n;
    memcpy(raw_bytes(v), s, 4 * n);
    return v;
}

static Value sym(const char *name, size_t n)
{
    Value b = fake(T_BYTEVECTOR, raw_words(n));
    obj_payload(b)[0] = n;
    memcpy(raw_bytes(b), name, n);
    Value v = fake(T_SYMBOL, SYM_NFIELDS);
    obj_payload(v)[SYM_NAME] = b;
    obj_payload(v)[SYM_VALUE] = RTS_UNDEF;
    return v;
}

static const char *fmt(double d)
{
    static char buf[64];
    static Value f;
    if (!f) f = flo(0);
    memcpy(raw_bytes(f), &d, sizeof d);
    sch_format_number(f, 10, buf, sizeof buf);
    return buf;
}

static const char *printed(Value v, bool write)
{
    static char *text;
    free(text);
    SchPort *p = sch_port_open_string_out();
    sch_print(p, v, write);
    text = sch_port_out_utf8(p, NULL);
    sch_port_close(p);
    return text;
}

/* --- ports --------------------------------------------------------------------------------- */

static void test_string_ports(void)
{
    SchPort *p = in_port("ab\ncλ");
    CHECK_EQ_INT(sch_port_line(p), 1);
    CHECK_EQ_INT(sch_port_col(p), 1);
    CHECK_EQ_INT(sch_port_peekc(p), 'a');
    CHECK_EQ_INT(sch_port_col(p), 1);
    CHECK_EQ_INT(sch_port_getc(p), 'a');
    CHECK_EQ_INT(sch_port_col(p), 2);
    CHECK_EQ_INT(sch_port_getc(p), 'b');
    CHECK_EQ_INT(sch_port_getc(p), '\n');
    CHECK_EQ_INT(sch_port_line(p), 2);
    CHECK_EQ_INT(sch_port_col(p), 1);
    CHECK_EQ_INT(sch_port_getc(p), 'c');
    CHECK_EQ_INT(sch_port_getc(p), 0x3bb);
    CHECK_EQ_INT(sch_port_col(p), 3);
    CHECK_EQ_INT(sch_port_peekc(p), -1);
    CHECK_EQ_INT(sch_port_getc(p), -1);
    CHECK_EQ_INT(sch_port_getc(p), -1);
    CHECK_STR(sch_port_name(p), "<test>");

    const uint32_t text[] = { 'x', 0, 0x1f600 };
    p = sch_port_open_string_in(text, 3);
    CHECK_STR(sch_port_name(p), "<string>");
    CHECK_EQ_INT(sch_port_getc(p), 'x');
    CHECK_EQ_INT(sch_port_getc(p), 0);
    CHECK_EQ_INT(sch_port_getc(p), 0x1f600);
    CHECK_EQ_INT(sch_port_getc(p), -1);
    p = sch_port_open_string_in(text, 3);
    sch_port_close(p);
    CHECK_EQ_INT(sch_port_getc(p), -1);
    sch_port_close(p);                             /* twice: harmless */

    /* Malformed UTF-8: a bad lead byte, a surrogate (one U+FFFD for the sequence), an
     * overlong form (a bad lead byte, then a lone continuation byte), a cut sequence. */
    const char bad[] = "a\xff" "b\xed\xa0\x80" "c\xc0\xaf" "\xc3\xa9" "\xe2\x82";
    p = sch_port_open_utf8_in(bad, sizeof bad - 1, "<bad>");
    const int32_t want[] = { 'a', 0xfffd, 'b', 0xfffd, 'c', 0xfffd, 0xfffd, 0xe9, 0xfffd, -1 };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        if (!CHECK_EQ_INT(sch_port_getc(p), want[i])) fprintf(stderr, "  at %zu\n", i);

    p = sch_port_open_string_out();
    sch_port_putc(p, 'a');
    sch_port_putc(p, 0x3bb);
    sch_port_puts(p, "xyz");
    sch_port_putc(p, 0x1f600);
    sch_port_puts(p, "");
    size_t n;
    char *s = sch_port_out_utf8(p, &n);
    CHECK_STR(s, "a\xce\xbbxyz\xf0\x9f\x98\x80");
    CHECK_EQ_INT(n, 10);
    free(s);
    /* Reading an output port sees the end; a closed one has no contents. */
    CHECK_EQ_INT(sch_port_getc(p), -1);
    sch_port_close(p);
    s = sch_port_out_utf8(p, &n);
    CHECK_EQ_INT(n, 0);
    free(s);

    CHECK(sch_port_stdin() == sch_port_stdin());
    CHECK_STR(sch_port_name(sch_port_stdin()), "<stdin>");
    CHECK_STR(sch_port_name(sch_port_stdout()), "<stdout>");
    CHECK_STR(sch_port_name(sch_port_stderr()), "<stderr>");
}

static void test_file_ports(void)
{
    char path[] = "/tmp/test_reader_XXXXXX";
    int fd = mkstemp(path);
    if (!CHECK(fd >= 0)) return;
    /* 5000 two-byte characters: sequences straddle the port's 4096-byte buffer. Then bad
     * bytes, and a sequence cut by the end of the file. */
    for (int i = 0; i < 5000; i++)
        CHECK(write(fd, "\xce\xbb", 2) == 2);
    CHECK(write(fd, "\n\xff" "z\xf0\x9f\x98", 6) == 6);
    close(fd);
    SchPort *p = sch_port_open_file_in(path);
    if (!CHECK(p != NULL)) return;
    CHECK_STR(sch_port_name(p), path);
    int ok = 0;
    for (int i = 0; i < 5000; i++)
        ok += sch_port_getc(p) == 0x3bb;
    CHECK_EQ_INT(ok, 5000);
    CHECK_EQ_INT(sch_port_col(p), 5001);
    CHECK_EQ_INT(sch_port_getc(p), '\n');
    CHECK_EQ_INT(sch_port_line(p), 2);
    CHECK_EQ_INT(sch_port_getc(p), 0xfffd);
    CHECK_EQ_INT(sch_port_peekc(p), 'z');
    CHECK_EQ_INT(sch_port_getc(p), 'z');
    CHECK_EQ_INT(sch_port_getc(p), 0xfffd);
    CHECK_EQ_INT(sch_port_getc(p), -1);
    sch_port_close(p);
    CHECK_EQ_INT(sch_port_getc(p), -1);

    /* The reader on a file. */
    FILE *f = fopen(path, "w");
    fputs("(define (f x)\n  (* x x))\n(f 3", f);
    fclose(f);
    p = sch_port_open_file_in(path);
    DArena *a = datum_arena_new();
    SchReadError err;
    Datum *d = sch_read(a, p, &err);
    CHECK_STR(show(d), "(define (f x) (* x x))");
    CHECK_EQ_INT(dcar(dcdr(dcdr(d)))->line, 2);
    CHECK_EQ_INT(dcar(dcdr(dcdr(d)))->col, 3);
    CHECK(sch_read(a, p, &err) == NULL);
    CHECK_STR(err.msg, "unterminated list");
    CHECK_EQ_INT(err.line, 3);
    CHECK_EQ_INT(err.col, 1);
    datum_arena_free(a);
    sch_port_close(p);
    unlink(path);

    CHECK(sch_port_open_file_in(path) == NULL);
    CHECK(sch_port_open_file_in("/") == NULL);
}

/* --- the reader ------------------------------------------------------------------------------ */

static void test_read_atoms(void)
{
    CHECK_STR(read_show("42"), "42");
    CHECK_STR(read_show("  -17 "), "-17");
    CHECK_STR(read_show("+5"), "5");
    CHECK_STR(read_show("1.5"), "1.5");
    CHECK_STR(read_show(".5"), "0.5");
    CHECK_STR(read_show("-1e3"), "-1000");
    CHECK_STR(read_show("#x-1F"), "-31");
    CHECK_STR(read_show("#b101"), "5");
    CHECK_STR(read_show("#o17"), "15");
    CHECK_STR(read_show("#e1.0"), "1");
    CHECK_STR(read_show("#i3"), "3");
    CHECK_STR(read_show("+inf.0"), "inf");
    CHECK_STR(read_show("-inf.0"), "-inf");
    CHECK_STR(read_show("+nan.0"), "nan");
    CHECK_STR(read_show("6/3"), "2");
    /* a ratio that is no integer: rationals are not supported (it read as 0.25 before) */
    CHECK_STR(read_show("1/4"), "error: bad number syntax 1/4 @1:1");
    CHECK_STR(read_show("#i1/4"), "0.25");
    CHECK_STR(read_show("4611686018427387904"), "error: integer 4611686018427387904 is beyond the fixnum range (-4611686018427387904 to 4611686018427387903) @1:1");
    CHECK_STR(read_show("#i4611686018427387904"), "4.6116860184273879e+18");

    CHECK_STR(read_show("foo"), "foo");
    CHECK_STR(read_show("Foo"), "Foo");
    CHECK_STR(read_show("+"), "+");
    CHECK_STR(read_show("-"), "-");
    CHECK_STR(read_show("..."), "...");
    CHECK_STR(read_show("->x"), "->x");
    CHECK_STR(read_show("<=?"), "<=?");
    CHECK_STR(read_show("a.b"), "a.b");
    CHECK_STR(read_show("λx"), "λx");
    CHECK_STR(read_show("|foo bar|"), "foo bar");
    CHECK_STR(read_show("|a\\|b\\x41;|"), "a|bA");
    CHECK_STR(read_show("||"), "");
    CHECK_STR(read_show("abc;comment"), "abc");
    CHECK_STR(read_show("abc(d)"), "abc");
    {
        DArena *a = datum_arena_new();
        SchReadError err;
        Datum *d = sch_read(a, in_port("Hello"), &err);
        CHECK(datum_is_sym(d, datum_intern("Hello", 5)));
        CHECK(!datum_is_sym(d, datum_intern("hello", 5)));
        d = sch_read(a, in_port("|a\\x0;b|"), &err);
        CHECK(d && d->kind == D_SYM && d->u.sym == datum_intern("a\0b", 3));
        d = sch_read(a, in_port("-0.0"), &err);
        CHECK(d && d->kind == D_FLO && d->u.flo == 0 && signbit(d->u.flo));
        datum_arena_free(a);
    }

    CHECK_STR(read_show("#t"), "#t");
    CHECK_STR(read_show("#f"), "#f");
    CHECK_STR(read_show("#true"), "#t");
    CHECK_STR(read_show("#false"), "#f");

    CHECK_STR(read_show("#\\a"), "#\\x61");
    CHECK_STR(read_show("#\\A"), "#\\x41");
    CHECK_STR(read_show("#\\space"), "#\\x20");
    CHECK_STR(read_show("#\\newline"), "#\\xa");
    CHECK_STR(read_show("#\\linefeed"), "#\\xa");
    CHECK_STR(read_show("#\\tab"), "#\\x9");
    CHECK_STR(read_show("#\\nul"), "#\\x0");
    CHECK_STR(read_show("#\\null"), "#\\x0");
    CHECK_STR(read_show("#\\return"), "#\\xd");
    CHECK_STR(read_show("#\\alarm"), "#\\x7");
    CHECK_STR(read_show("#\\backspace"), "#\\x8");
    CHECK_STR(read_show("#\\delete"), "#\\x7f");
    CHECK_STR(read_show("#\\escape"), "#\\x1b");
    CHECK_STR(read_show("#\\x41"), "#\\x41");
    CHECK_STR(read_show("#\\x3bb"), "#\\x3bb");
    CHECK_STR(read_show("#\\x"), "#\\x78");
    CHECK_STR(read_show("#\\λ"), "#\\x3bb");
    CHECK_STR(read_show("#\\("), "#\\x28");
    CHECK_STR(read_show("#\\)"), "#\\x29");
    CHECK_STR(read_show("#\\ "), "#\\x20");
    CHECK_STR(read_show("#\\;"), "#\\x3b");
    CHECK_STR(read_show("(#\\a)"), "(#\\x61)");

    CHECK_STR(read_show("\"abc\""), "\"abc\"");
    CHECK_STR(read_show("\"\""), "\"\"");
    CHECK_STR(read_show("\"a\\nb\\t\\\\\\\"\\a\\r\\|\""), "\"a\nb\t\\\"\a\r|\"");
    CHECK_STR(read_show("\"\\x41;\\x3bb;\""), "\"A\xce\xbb\"");
    CHECK_STR(read_show("\"ab\\\n    cd\""), "\"abcd\"");
    CHECK_STR(read_show("\"ab\\  \t\n  cd\""), "\"abcd\"");
    CHECK_STR(read_show("\"ab\\\r\n cd\""), "\"abcd\"");
    CHECK_STR(read_show("\"two\nlines\""), "\"two\nlines\"");
}

static void test_read_compound(void)
{
    CHECK_STR(read_show("()"), "()");
    CHECK_STR(read_show("( )"), "()");
    CHECK_STR(read_show("(a b c)"), "(a b c)");
    CHECK_STR(read_show("(a . b)"), "(a . b)");
    CHECK_STR(read_show("(a b . c)"), "(a b . c)");
    CHECK_STR(read_show("(a . (b c))"), "(a b c)");
    CHECK_STR(read_show("(a .b)"), "(a .b)");
    CHECK_STR(read_show("[a b]"), "(a b)");
    CHECK_STR(read_show("(let ([x 1]) x)"), "(let ((x 1)) x)");
    CHECK_STR(read_show("((()))"), "((()))");
    CHECK_STR(read_show("#(1 \"s\" #\\a)"), "#(1 \"s\" #\\x61)");
    CHECK_STR(read_show("#()"), "#()");
    CHECK_STR(read_show("#(#(1) (2))"), "#(#(1) (2))");
    CHECK_STR(read_show("#u8(0 1 255)"), "#u8(0 1 255)");
    CHECK_STR(read_show("#u8()"), "#u8()");
    CHECK_STR(read_show("'x"), "(quote x)");
    CHECK_STR(read_show("''x"), "(quote (quote x))");
    CHECK_STR(read_show("'()"), "(quote ())");
    CHECK_STR(read_show("`(a ,b ,@c)"), "(quasiquote (a (unquote b) (unquote-splicing c)))");
    CHECK_STR(read_show("(a 'b)"), "(a (quote b))");
    CHECK_STR(read_show("(quote x)"), "(quote x)");

    CHECK_STR(read_show("; comment\n 1"), "1");
    CHECK_STR(read_show("#| a #| nested |# b |# 2"), "2");
    CHECK_STR(read_show("#|x||#3"), "3");
    CHECK_STR(read_show("#;(a b) 3"), "3");
    CHECK_STR(read_show("#; #;1 2 3"), "3");
    CHECK_STR(read_show("(1 #;2 3)"), "(1 3)");
    CHECK_STR(read_show("(1 #|x|# 3)"), "(1 3)");
    CHECK_STR(read_show("(a . #;b c)"), "(a . c)");
    CHECK_STR(read_show("(a . b #;c)"), "(a . b)");
    CHECK_STR(read_show("(.5 . .5)"), "(0.5 . 0.5)");
    CHECK_STR(read_show("'#;a b"), "(quote b)");
    CHECK_STR(read_show("#!/usr/bin/env rtslab\n(x)"), "(x)");
    CHECK_STR(read_show(""), "eof");
    CHECK_STR(read_show("   ; only a comment"), "eof");
    CHECK_STR(read_show("#| only a comment |#"), "eof");
    CHECK_STR(read_show("#;x"), "eof");

    /* One datum at a time; then the end. */
    DArena *a = datum_arena_new();
    SchReadError err;
    SchPort *p = in_port("1 (2)\n'three #t");
    CHECK_STR(show(sch_read(a, p, &err)), "1");
    CHECK_STR(show(sch_read(a, p, &err)), "(2)");
    CHECK_STR(show(sch_read(a, p, &err)), "(quote three)");
    CHECK_STR(show(sch_read(a, p, &err)), "#t");
    CHECK(sch_read(a, p, &err) == NULL);
    CHECK_STR(err.msg, "");
    CHECK(sch_read(a, p, &err) == NULL);
    CHECK_STR(err.msg, "");

    /* The empty list is DNIL, wherever it is. */
    Datum *d = sch_read(a, in_port("(lambda () ())"), &err);
    CHECK(dcar(dcdr(d)) == DNIL);
    CHECK(dcar(dcdr(dcdr(d))) == DNIL);
    CHECK(dcdr(dcdr(dcdr(d))) == DNIL);

    /* A long list is no trouble (no recursion along cdrs). */
    size_t n = 1000000;
    char *big = malloc(2 * n + 3);
    big[0] = '(';
    for (size_t i = 0; i < n; i++) memcpy(big + 1 + 2 * i, "1 ", 2);
    big[2 * n + 1] = ')';
    big[2 * n + 2] = 0;
    d = sch_read(a, in_port(big), &err);
    CHECK(d && datum_list_length(d) == n);
    free(big);
    datum_arena_free(a);
}

static void test_read_positions(void)
{
    DArena *a = datum_arena_new();
    SchReadError err;
    Datum *d = sch_read(a, in_port("\n  (foo\n   bar . \"baz\") 'q #(1)"), &err);
    SchPort *p;
    CHECK_EQ_INT(d->line, 2);
    CHECK_EQ_INT(d->col, 3);
    CHECK_EQ_INT(dcar(d)->line, 2);                /* foo */
    CHECK_EQ_INT(dcar(d)->col, 4);
    Datum *cell = dcdr(d);                          /* the cell of bar: bar's position */
    CHECK_EQ_INT(cell->line, 3);
    CHECK_EQ_INT(cell->col, 4);
    CHECK_EQ_INT(dcar(cell)->line, 3);
    CHECK_EQ_INT(dcar(cell)->col, 4);
    CHECK_EQ_INT(dcdr(cell)->kind, D_STR);
    CHECK_EQ_INT(dcdr(cell)->line, 3);
    CHECK_EQ_INT(dcdr(cell)->col, 10);

    p = in_port("  'q  #(1 2)  #\\a \"s\" 12 #t");
    d = sch_read(a, p, &err);                       /* (quote q): all at the quote */
    CHECK_EQ_INT(d->col, 3);
    CHECK_EQ_INT(dcar(d)->col, 3);
    CHECK_EQ_INT(dcar(dcdr(d))->col, 4);
    d = sch_read(a, p, &err);
    CHECK_EQ_INT(d->kind, D_VEC);
    CHECK_EQ_INT(d->col, 7);
    CHECK_EQ_INT(d->u.vec.items[1]->col, 11);
    const int cols[] = { 15, 19, 23, 26 };
    for (int i = 0; i < 4; i++) {
        d = sch_read(a, p, &err);
        CHECK_EQ_INT(d->line, 1);
        CHECK_EQ_INT(d->col, cols[i]);
    }
    datum_arena_free(a);
}

static void test_read_errors(void)
{
    CHECK_READ_ERROR(")", "unexpected ')'", 1, 1);
    CHECK_READ_ERROR("  ]", "unexpected ']'", 1, 3);
    CHECK_READ_ERROR("(a b", "unterminated list", 1, 1);
    CHECK_READ_ERROR("(a (b c)", "unterminated list", 1, 1);
    CHECK_READ_ERROR("((a) (b", "unterminated list", 1, 6);
    CHECK_READ_ERROR("\n  (foo\n", "unterminated list", 2, 3);
    CHECK_READ_ERROR("#(1 2", "unterminated vector", 1, 1);
    CHECK_READ_ERROR("#u8(1 2", "unterminated bytevector", 1, 1);
    CHECK_READ_ERROR("(a]", "unexpected ']'", 1, 3);
    CHECK_READ_ERROR("[a)", "unexpected ')'", 1, 3);
    CHECK_READ_ERROR("#(a]", "unexpected ']'", 1, 4);
    CHECK_READ_ERROR("\"abc", "unterminated string", 1, 1);
    CHECK_READ_ERROR("x \"a\\", "unterminated string", 1, 3);
    CHECK_READ_ERROR("\"a\\qb\"", "bad escape \\q in string", 1, 3);
    CHECK_READ_ERROR("\"\\x41\"", "bad \\x escape", 1, 2);
    CHECK_READ_ERROR("\"\\xd800;\"", "bad \\x escape", 1, 2);
    CHECK_READ_ERROR("\"a\\  b\"", "bad line continuation", 1, 3);
    CHECK_READ_ERROR("|abc", "unterminated |symbol|", 1, 1);
    CHECK_READ_ERROR("#\\foo", "bad character name #\\foo", 1, 1);
    CHECK_READ_ERROR("#\\xd800", "bad character name", 1, 1);
    CHECK_READ_ERROR("#\\x110000", "bad character name", 1, 1);
    CHECK_READ_ERROR("#\\", "unexpected end of input after #\\", 1, 1);
    CHECK_READ_ERROR("1abc", "bad number syntax", 1, 1);
    CHECK_READ_ERROR("(a -1x)", "bad number syntax", 1, 4);
    CHECK_READ_ERROR("+.5.", "bad number syntax", 1, 1);
    CHECK_READ_ERROR("#xZZ", "bad number syntax", 1, 1);
    CHECK_READ_ERROR("#e1.5", "bad number syntax", 1, 1);
    CHECK_READ_ERROR("'", "unexpected end of input after '", 1, 1);
    CHECK_READ_ERROR("(a ,@", "unexpected end of input after ,@", 1, 4);
    CHECK_READ_ERROR("#;", "unexpected end of input after #;", 1, 1);
    CHECK_READ_ERROR("(a ')", "unexpected ')' after '", 1, 5);
    CHECK_READ_ERROR("(a #;)", "unexpected ')' after #;", 1, 6);
    CHECK_READ_ERROR("(a . )", "bad dot syntax", 1, 6);
    CHECK_READ_ERROR("( . a)", "bad dot syntax", 1, 3);
    CHECK_READ_ERROR("(a . b c)", "bad dot syntax", 1, 8);
    CHECK_READ_ERROR("(a . b . c)", "bad dot syntax", 1, 8);
    CHECK_READ_ERROR(". a", "bad dot syntax", 1, 1);
    CHECK_READ_ERROR("#(a . b)", "bad dot syntax", 1, 5);
    CHECK_READ_ERROR("'.", "bad dot syntax", 1, 2);
    CHECK_READ_ERROR("#u8(1 256)", "bad bytevector element", 1, 7);
    CHECK_READ_ERROR("#u8(a)", "bad bytevector element", 1, 5);
    CHECK_READ_ERROR("#| abc |", "unterminated block comment", 1, 1);
    CHECK_READ_ERROR("x #| #| |# ", "unterminated block comment", 1, 3);
    CHECK_READ_ERROR("#q", "bad # syntax", 1, 1);
    CHECK_READ_ERROR("#", "unexpected end of input after #", 1, 1);
    CHECK_READ_ERROR(" #!x", "bad # syntax", 1, 2);
    CHECK_READ_ERROR("#u8 (1)", "bad # syntax", 1, 1);

    /* Nesting: MAX_DEPTH (10000) levels read; one more is an error. */
    size_t n = 10000;
    char *s = malloc(2 * n + 3);
    memset(s, '(', n);
    memset(s + n, ')', n);
    s[2 * n] = 0;
    int line, col;
    CHECK_STR(read_error(s, &line, &col), "");
    memset(s, '(', n + 1);
    memset(s + n + 1, ')', n + 1);
    s[2 * n + 2] = 0;
    CHECK(strstr(read_error(s, &line, &col), "nesting too deep") != NULL);
    CHECK_EQ_INT(col, (int)n + 1);
    memset(s, '\'', 2 * n);
    s[2 * n] = 0;
    CHECK(strstr(read_error(s, &line, &col), "nesting too deep") != NULL);
    free(s);
}

/* Random inputs never crash or hang the reader; every error has a message and a position. */
static void test_read_fuzz(void)
{
    static const char alphabet[] = "()[]#\\;|\"'`,@. \n\tabxtfu8e01+-/λ";
    uint64_t x = 0x9e3779b97f4a7c15u;
    unsigned errors = 0, datums = 0;
    for (int iter = 0; iter < 30000; iter++) {
        char src[96];
        size_t n = 0, len = (size_t)(x % 80);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            if (iter % 3 == 0) src[n++] = (char)(x >> 24);                 /* any byte */
            else src[n++] = alphabet[(x >> 24) % (sizeof alphabet - 1)];
        }
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        SchPort *p = sch_port_open_utf8_in(src, n, "<fuzz>");
        DArena *a = datum_arena_new();
        SchReadError err;
        for (int k = 0; k < 200; k++) {
            Datum *d = sch_read(a, p, &err);
            if (d) { datums++; continue; }
            if (err.msg[0]) {
                errors++;
                CHECK(err.line >= 1 && err.col >= 1);
            }
            break;
        }
        datum_arena_free(a);
        sch_port_close(p);
    }
    CHECK(errors > 1000);
    CHECK(datums > 1000);
}

/* --- number syntax ---------------------------------------------------------------------------- */

static void test_parse_number(void)
{
    intptr_t fix;
    double d;
    CHECK(parses_fix("0", 10, 0));
    CHECK(parses_fix("-0", 10, 0));
    CHECK(parses_fix("42", 10, 42));
    CHECK(parses_fix("+42", 10, 42));
    CHECK(parses_fix("-42", 10, -42));
    CHECK(parses_fix("007", 10, 7));
    CHECK(parses_fix("4611686018427387903", 10, RTS_FIXNUM_MAX));
    CHECK(parses_fix("-4611686018427387904", 10, RTS_FIXNUM_MIN));
    CHECK(parses_fix("#x1F", 10, 31));
    CHECK(parses_fix("#X1f", 10, 31));
    CHECK(parses_fix("#b-101", 10, -5));
    CHECK(parses_fix("#o777", 10, 511));
    CHECK(parses_fix("#d99", 16, 99));
    CHECK(parses_fix("ff", 16, 255));
    CHECK(parses_fix("1e5", 16, 0x1e5));
    CHECK(parses_fix("-101", 2, -5));
    CHECK(parses_fix("#x3FFFFFFFFFFFFFFF", 10, RTS_FIXNUM_MAX));
    CHECK(parses_fix("#e1.0", 10, 1));
    CHECK(parses_fix("#e1e3", 10, 1000));
    CHECK(parses_fix("#e-2.5e1", 10, -25));
    CHECK(parses_fix("#x#e10", 10, 16));
    CHECK(parses_fix("#e#x10", 10, 16));
    CHECK(parses_fix("6/3", 10, 2));
    CHECK(parses_fix("-6/3", 10, -2));
    CHECK(parses_fix("0/5", 10, 0));
    CHECK(parses_fix("#xa/5", 10, 2));

    CHECK(parses_flo("1.5", 10, 1.5));
    CHECK(parses_flo("-1.5", 10, -1.5));
    CHECK(parses_flo(".5", 10, 0.5));
    CHECK(parses_flo("5.", 10, 5.0));
    CHECK(parses_flo("-0.0", 10, -0.0));
    CHECK(parses_flo("1e3", 10, 1000.0));
    CHECK(parses_flo("1E3", 10, 1000.0));
    CHECK(parses_flo("1e+3", 10, 1000.0));
    CHECK(parses_flo("2.5e-3", 10, 0.0025));
    CHECK(parses_flo("0.1", 10, 0.1));
    CHECK(parses_flo("#d1.5", 16, 1.5));
    CHECK(parses_flo("#i5", 10, 5.0));
    CHECK(parses_flo("#x#i10", 10, 16.0));
    CHECK(parses_flo("#i#x10", 10, 16.0));
    CHECK(parses_flo("#i6/3", 10, 2.0));
    /* a ratio that is no integer is a flonum only with #i: rationals are not supported */
    CHECK(parses_flo("#i1/4", 10, 0.25));
    CHECK(parses_flo("#i-1/4", 10, -0.25));
    CHECK(parses_flo("+inf.0", 10, INFINITY));
    CHECK(parses_flo("-inf.0", 10, -INFINITY));
    CHECK(parses_flo("+INF.0", 10, INFINITY));
    CHECK(parses_flo("+nan.0", 10, NAN));
    CHECK(parses_flo("-nan.0", 10, NAN));
    CHECK(parses_flo("1e400", 10, INFINITY));
    CHECK(parses_flo("1e-400", 10, 0.0));
    CHECK(parses_flo("4.9406564584124654e-324", 10, 5e-324));
    CHECK(parses_flo("1.7976931348623157e308", 10, DBL_MAX));
    /* Correct rounding: halfway cases. */
    CHECK(parses_flo("9007199254740993.0", 10, 9007199254740992.0));
    CHECK(parses_flo("9007199254740995.0", 10, 9007199254740996.0));
    CHECK(parses_flo("0.30000000000000004", 10, 0.1 + 0.2));
    /* Exact integers beyond the fixnums are kind 3 (a syntax error to the reader, #f to
     * string->number), never silently a flonum ... */
    CHECK(parses_big("4611686018427387904", 10));
    CHECK(parses_big("-4611686018427387905", 10));
    CHECK(parses_big("99999999999999999999", 10));
    CHECK(parses_big("#xFFFFFFFFFFFFFFFFFFFF", 10));
    CHECK(parses_big("#x4000000000000000", 10));
    CHECK(parses_big("#x-4000000000000001", 10));
    CHECK(parses_big("ffffffffffffffffff", 16));
    CHECK(parses_big("99999999999999999999/3", 10));
    CHECK(parses_big("#e1e30", 10));
    CHECK(parses_fix("#x-4000000000000000", 10, RTS_FIXNUM_MIN));
    CHECK(parses_fix("4611686018427387903", 10, RTS_FIXNUM_MAX));
    /* ... and with #i they are flonums, correctly rounded in every radix. */
    CHECK(parses_flo("#i4611686018427387904", 10, 4611686018427387904.0));
    CHECK(parses_flo("#i-4611686018427387905", 10, -4611686018427387905.0));
    CHECK(parses_flo("#i99999999999999999999", 10, 1e20));
    CHECK(parses_flo("#i#xFFFFFFFFFFFFFFFFFFFF", 10, ldexp(1, 80)));
    CHECK(parses_flo("#i#x4000000000000000", 10, ldexp(1, 62)));
    CHECK(parses_flo("#x#i-4000000000000001", 10, -ldexp(1, 62)));
    /* 2^64 + 2^11 is halfway between two doubles (to even: down); one more, up. */
    CHECK(parses_flo("#i#x10000000000000800", 10, ldexp(1, 64)));
    CHECK(parses_flo("#i#x10000000000000801", 10, ldexp(1, 64) + ldexp(1, 12)));
    CHECK(parses_flo("#i#x10000000000001800", 10, ldexp(1, 64) + ldexp(1, 13)));
    CHECK(parses_flo("#i#b1111111111111111111111111111111111111111111111111111111111111111111111",
                     10, ldexp(1, 70)));
    CHECK(parses_flo("#i#o7777777777777777777777777", 10, ldexp(1, 75)));
    CHECK(parses_flo("#i4611686018427387903", 10, 4611686018427387903.0));
    CHECK(parses_flo("1e30", 10, 1e30));

    const char *not_numbers[] = {
        "", "+", "-", ".", "..", "...", "+.", "-.", "e", "e1", "1e", "1e+", "1.5.", "1..5",
        "abc", "1a", "--1", "+-1", "1+", "inf.0", "nan.0", "+inf.1", "+inf", "1/", "/2",
        "1/0", "1/2/3", "1.5/2", "#", "#x", "#x#x1", "#e#i1", "#q1", "#x1.5", "#b2", "#o8",
        "1 ", " 1", "1_000", "0x10", "#e+inf.0", "#e1.5", "#e1/2", "1/-2", "#xg", "1/4", "-1/4",
    };
    for (size_t i = 0; i < sizeof not_numbers / sizeof *not_numbers; i++)
        if (!CHECK_EQ_INT(parse(not_numbers[i], 10, &fix, &d), 0))
            fprintf(stderr, "  \"%s\" parsed as a number\n", not_numbers[i]);
    uint32_t lambda[] = { '1', 0x3bb };
    CHECK_EQ_INT(sch_parse_number(lambda, 2, 10, &fix, &d), 0);
    uint32_t nul[] = { '1', 0 };
    CHECK_EQ_INT(sch_parse_number(nul, 2, 10, &fix, &d), 0);
    /* A long number (the text is copied to the heap when long). */
    char longnum[400];
    memset(longnum, '0', 300);
    strcpy(longnum + 300, "12.5");
    CHECK(parses_flo(longnum, 10, 12.5));
}

/* --- number formatting and the printer ---------------------------------------------------------- */

static void test_format_number(void)
{
    CHECK_STR(fmt(0.1), "0.1");
    CHECK_STR(fmt(1.0), "1.0");
    CHECK_STR(fmt(-1.0), "-1.0");
    CHECK_STR(fmt(0.0), "0.0");
    CHECK_STR(fmt(-0.0), "-0.0");
    CHECK_STR(fmt(100.0), "100.0");
    CHECK_STR(fmt(123.456), "123.456");
    CHECK_STR(fmt(-2.5), "-2.5");
    CHECK_STR(fmt(1.0 / 3.0), "0.3333333333333333");
    CHECK_STR(fmt(2.0 / 3.0), "0.6666666666666666");
    CHECK_STR(fmt(0.1 + 0.2), "0.30000000000000004");
    CHECK_STR(fmt(1e21), "1e21");
    CHECK_STR(fmt(1e100), "1e100");
    CHECK_STR(fmt(-1e100), "-1e100");
    CHECK_STR(fmt(1.5e-7), "1.5e-7");
    CHECK_STR(fmt(1.2345e-5), "1.2345e-5");
    CHECK_STR(fmt(5e-324), "5e-324");
    CHECK_STR(fmt(DBL_MAX), "1.7976931348623157e308");
    CHECK_STR(fmt(1e15), "1000000000000000.0");
    CHECK_STR(fmt(1e16), "1e16");
    CHECK_STR(fmt(123456789012345678.0), "1.2345678901234568e17");
    CHECK_STR(fmt(0.001), "0.001");
    CHECK_STR(fmt(0.0001), "0.0001");
    CHECK_STR(fmt(0.00001), "1e-5");
    CHECK_STR(fmt(9007199254740993.0), "9007199254740992.0");
    CHECK_STR(fmt(INFINITY), "+inf.0");
    CHECK_STR(fmt(-INFINITY), "-inf.0");
    CHECK_STR(fmt(NAN), "+nan.0");

    char buf[80];
    CHECK_EQ_INT(sch_format_number(rts_fixnum(0), 10, buf, sizeof buf), 1);
    CHECK_STR(buf, "0");
    sch_format_number(rts_fixnum(-42), 10, buf, sizeof buf);
    CHECK_STR(buf, "-42");
    sch_format_number(rts_fixnum(255), 16, buf, sizeof buf);
    CHECK_STR(buf, "ff");
    sch_format_number(rts_fixnum(-5), 2, buf, sizeof buf);
    CHECK_STR(buf, "-101");
    sch_format_number(rts_fixnum(8), 8, buf, sizeof buf);
    CHECK_STR(buf, "10");
    sch_format_number(rts_fixnum(RTS_FIXNUM_MAX), 10, buf, sizeof buf);
    CHECK_STR(buf, "4611686018427387903");
    sch_format_number(rts_fixnum(RTS_FIXNUM_MIN), 10, buf, sizeof buf);
    CHECK_STR(buf, "-4611686018427387904");
    char want[80] = "-1";
    memset(want + 2, '0', 62);
    want[64] = 0;
    CHECK_EQ_INT(sch_format_number(rts_fixnum(RTS_FIXNUM_MIN), 2, buf, sizeof buf), 64);
    CHECK_STR(buf, want);
    /* Like snprintf: the full length, the text cut to fit. */
    CHECK_EQ_INT(sch_format_number(rts_fixnum(12345), 10, buf, 4), 5);
    CHECK_STR(buf, "123");

    /* Random doubles: the text reads back as the same double, as a flonum, and no shorter
     * text (one digit fewer) does. */
    uint64_t x = 88172645463325252u;
    int ok = 0, total = 0;
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        double v;
        uint64_t bits = i % 2 ? x : (x >> 12) | 0x3ff0000000000000u;   /* half in [1, 2) */
        memcpy(&v, &bits, sizeof v);
        if (isnan(v)) continue;
        total++;
        const char *t = fmt(v);
        uint32_t u[64];
        size_t n = to_utf32(t, u);
        intptr_t fix;
        double back;
        bool good = sch_parse_number(u, n, 10, &fix, &back) == 2
                 && memcmp(&back, &v, sizeof v) == 0 && strtod(t, NULL) == v;
        if (good) ok++;
        else if (total - ok < 5) fprintf(stderr, "  %.17g printed as %s\n", v, t);
    }
    CHECK_EQ_INT(ok, total);
}

static void test_print(void)
{
    CHECK_STR(printed(rts_fixnum(-7), true), "-7");
    CHECK_STR(printed(flo(2.0), true), "2.0");
    CHECK_STR(printed(RTS_TRUE, true), "#t");
    CHECK_STR(printed(RTS_FALSE, false), "#f");
    CHECK_STR(printed(RTS_NIL, true), "()");
    CHECK_STR(printed(RTS_EOF, true), "#<eof>");
    CHECK_STR(printed(RTS_UNSPEC, true), "#<unspecified>");
    CHECK_STR(printed(RTS_UNDEF, true), "#<undefined>");

    CHECK_STR(printed(rts_char('a'), true), "#\\a");
    CHECK_STR(printed(rts_char('a'), false), "a");
    CHECK_STR(printed(rts_char(' '), true), "#\\space");
    CHECK_STR(printed(rts_char('\n'), true), "#\\newline");
    CHECK_STR(printed(rts_char(0), true), "#\\null");
    CHECK_STR(printed(rts_char(0x7f), true), "#\\delete");
    CHECK_STR(printed(rts_char(1), true), "#\\x1");
    CHECK_STR(printed(rts_char(0x3bb), true), "#\\\xce\xbb");
    CHECK_STR(printed(rts_char(0x3bb), false), "\xce\xbb");
    CHECK_STR(printed(rts_char(0x85), true), "#\\x85");

    const uint32_t s1[] = { 'a', '"', '\\', '\n', '\t', '\r', 1, 0x3bb, '|', ' ' };
    Value s = str(s1, 10);
    CHECK_STR(printed(s, true), "\"a\\\"\\\\\\n\\t\\r\\x1;\xce\xbb| \"");
    CHECK_STR(printed(s, false), "a\"\\\n\t\r\x01\xce\xbb| ");
    CHECK_STR(printed(str(s1, 0), true), "\"\"");
    /* A NUL goes through (sch_port_puts takes C strings). */
    const uint32_t s2[] = { 'a', 0, 'b' };
    SchPort *p = sch_port_open_string_out();
    sch_print(p, str(s2, 3), false);
    size_t n;
    char *text = sch_port_out_utf8(p, &n);
    CHECK_EQ_INT(n, 3);
    CHECK(memcmp(text, "a\0b", 3) == 0);
    free(text);

    CHECK_STR(printed(sym("foo", 3), true), "foo");
    CHECK_STR(printed(sym("", 0), true), "||");
    CHECK_STR(printed(sym("a b", 3), true), "|a b|");
    CHECK_STR(printed(sym("a b", 3), false), "a b");
    CHECK_STR(printed(sym("a|b", 3), true), "|a\\|b|");
    CHECK_STR(printed(sym("1", 1), true), "|1|");
    CHECK_STR(printed(sym("-1x", 3), true), "|-1x|");
    CHECK_STR(printed(sym("+.5", 3), true), "|+.5|");
    CHECK_STR(printed(sym("+inf.0", 6), true), "|+inf.0|");
    CHECK_STR(printed(sym(".", 1), true), "|.|");
    CHECK_STR(printed(sym("#foo", 4), true), "|#foo|");
    CHECK_STR(printed(sym("a(b", 3), true), "|a(b|");
    CHECK_STR(printed(sym("a\nb", 3), true), "|a\\nb|");
    CHECK_STR(printed(sym("+", 1), true), "+");
    CHECK_STR(printed(sym("...", 3), true), "...");
    CHECK_STR(printed(sym("->x", 3), true), "->x");
    CHECK_STR(printed(sym("a#b", 3), true), "a#b");
    CHECK_STR(printed(sym("\xce\xbb", 2), true), "\xce\xbb");

    Value a = sym("a", 1), b = sym("b", 1);
    CHECK_STR(printed(cons(a, RTS_NIL), true), "(a)");
    CHECK_STR(printed(cons(a, cons(rts_fixnum(1), RTS_NIL)), true), "(a 1)");
    CHECK_STR(printed(cons(a, b), true), "(a . b)");
    CHECK_STR(printed(cons(a, cons(b, rts_fixnum(3))), true), "(a b . 3)");
    CHECK_STR(printed(cons(sym("quote", 5), cons(a, RTS_NIL)), true), "(quote a)");
    CHECK_STR(printed(cons(str(s1, 1), cons(rts_char('c'), RTS_NIL)), false), "(a c)");
    CHECK_STR(printed(cons(str(s1, 1), cons(rts_char('c'), RTS_NIL)), true), "(\"a\" #\\c)");
    CHECK_STR(printed(cons(RTS_NIL, cons(cons(RTS_NIL, RTS_NIL), RTS_NIL)), true), "(() (()))");

    Value v = fake(T_VECTOR, 3);
    obj_payload(v)[0] = rts_fixnum(1);
    obj_payload(v)[1] = cons(a, RTS_NIL);
    obj_payload(v)[2] = flo(0.5);
    CHECK_STR(printed(v, true), "#(1 (a) 0.5)");
    CHECK_STR(printed(fake(T_VECTOR, 0), true), "#()");
    Value bv = fake(T_BYTEVECTOR, raw_words(3));
    obj_payload(bv)[0] = 3;
    memcpy(raw_bytes(bv), "\x01\x02\xff", 3);
    CHECK_STR(printed(bv, true), "#u8(1 2 255)");
    CHECK_STR(printed(fake(T_MVAR, 3), true), "#<mvar>");

    /* A cyclic list ends in "..."; so does nesting beyond the printer's depth limit. */
    Value c3 = cons(rts_fixnum(3), RTS_NIL), c1 = cons(rts_fixnum(1), cons(rts_fixnum(2), c3));
    obj_payload(c3)[1] = c1;
    const char *t = printed(c1, true);
    CHECK(strncmp(t, "(1 2 3 1", 8) == 0);
    CHECK(strlen(t) < 100 && strcmp(t + strlen(t) - 4, "...)") == 0);
    Value self = cons(a, RTS_NIL);
    obj_payload(self)[1] = self;
    CHECK(strlen(printed(self, true)) < 20);
    Value deep = RTS_NIL;
    for (int i = 0; i < 20000; i++)
        deep = cons(deep, RTS_NIL);
    t = printed(deep, true);
    CHECK(strstr(t, "...") != NULL);
    CHECK(strlen(t) < 40000);
    /* A long list prints without recursion. */
    Value lst = RTS_NIL;
    for (int i = 0; i < 100000; i++)
        lst = cons(rts_fixnum(7), lst);
    CHECK_EQ_INT(strlen(printed(lst, false)), 2 * 100000 + 1);
}

/* What `write` prints, the reader reads back: random strings, characters and symbols. */
static void test_write_read(void)
{
    static const uint32_t pool[] = {
        'a', 'Z', '0', '9', '+', '-', '.', '#', '|', '\\', '"', '\'', '`', ',', ';', '(', ')',
        '[', ']', '{', '@', ' ', '\t', '\n', '\r', 0, 1, 7, 0x1b, 0x7f, 0x85, 0xa0, 0xad,
        0xe9, 0x3bb, 0x2028, 0xfeff, 0xfffd, 0x1f600, 0x10ffff,
    };
    const size_t npool = sizeof pool / sizeof *pool;
    uint64_t x = 0x2545f4914f6cdd1du;
    int bad = 0;
    DArena *a = datum_arena_new();
    size_t mark = arena_used;
    for (int iter = 0; iter < 20000; iter++) {
        arena_used = mark;
        uint32_t cps[12];
        char name[64];
        size_t n = 0, len = 0;
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        len = (size_t)(x % 12);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            cps[i] = pool[(x >> 20) % npool];
            n += sch_utf8_encode(cps[i], name + n);
        }
        SchReadError err;
        SchPort *p;
        Datum *d;
        /* a string */
        p = in_port(printed(str(cps, len), true));
        d = sch_read(a, p, &err);
        bool ok = d && d->kind == D_STR && d->u.str.n == len
               && (len == 0 || memcmp(d->u.str.s, cps, len * 4) == 0);
        sch_port_close(p);
        /* a symbol */
        const char *text = printed(sym(name, n), true);
        p = in_port(text);
        d = sch_read(a, p, &err);
        bool sym_ok = d && d->kind == D_SYM && d->u.sym == datum_intern(name, n);
        if (!sym_ok && bad < 5) fprintf(stderr, "  symbol written as %s reads back otherwise\n", text);
        ok = ok && sym_ok;
        sch_port_close(p);
        /* a character */
        if (len) {
            p = in_port(printed(rts_char(cps[0]), true));
            d = sch_read(a, p, &err);
            ok = ok && d && d->kind == D_CHAR && d->u.ch == cps[0];
            sch_port_close(p);
        }
        bad += !ok;
    }
    datum_arena_free(a);
    CHECK_EQ_INT(bad, 0);
}

int main(void)
{
    test_string_ports();
    test_file_ports();
    test_read_atoms();
    test_read_compound();
    test_read_positions();
    test_read_errors();
    test_read_fuzz();
    test_parse_number();
    test_format_number();
    test_print();
    test_write_read();
    return check_done();
}
