/* The printer: write and display of every value (Note [Scheme values] in scheme.h), and
 * number formatting.
 *
 * The printer never allocates in the heap, so it may run anywhere (error reports among
 * others) and the objects it walks cannot move while it runs. It iterates along a list's
 * cdrs and stops a cyclic cdr chain with "..." (Brent's cycle detection); it recurses on
 * elements, down to MAX_DEPTH levels, below which it prints "...". Output is collected in a
 * small buffer and handed to the port a chunk at a time.
 *
 * `write` prints (quote x) as such, never as 'x.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include "scheme/scheme.h"

#define MAX_DEPTH 10000

typedef struct Out {
    SchPort *p;
    size_t n;
    char buf[512];
} Out;

static void out_flush(Out *o)
{
    o->buf[o->n] = 0;
    if (o->n) sch_port_puts(o->p, o->buf);
    o->n = 0;
}

static void out_byte(Out *o, char b)
{
    if (b == 0) {                      /* sch_port_puts takes a C string */
        out_flush(o);
        sch_port_putc(o->p, 0);
        return;
    }
    if (o->n + 1 >= sizeof o->buf) out_flush(o);
    o->buf[o->n++] = b;
}

static void out_char(Out *o, uint32_t c)
{
    if (c == 0) {
        out_byte(o, 0);
        return;
    }
    if (o->n + 5 >= sizeof o->buf) out_flush(o);
    o->n += sch_utf8_encode(c, o->buf + o->n);
}

static void out_str(Out *o, const char *s)
{
    while (*s)
        out_byte(o, *s++);
}

/* The leaves that format into a buffer are kept out of line, so that the frames of the
 * printer's recursion stay small. */
__attribute__((noinline))
static void out_fmt_hex(Out *o, const char *prefix, uint32_t c, const char *suffix)
{
    char b[32];
    snprintf(b, sizeof b, "%s%x%s", prefix, (unsigned)c, suffix);
    out_str(o, b);
}

/* Decodes one UTF-8 sequence of a symbol's name with the Scheme layer's decoder (a name cut
 * short inside a sequence: U+FFFD for its lead byte). */
static uint32_t utf8_next(const uint8_t *s, size_t n, size_t *used)
{
    int32_t c = sch_utf8_decode(s, n, used);
    if (c < 0) {
        *used = 1;
        return 0xfffd;
    }
    return (uint32_t)c;
}

/* Whether `write` shows c as itself (else as a hex escape or a character name). */
static bool printable(uint32_t c)
{
    return (c > 0x20 && c < 0x7f)
        || (c > 0xa0 && c <= 0x10ffff && !(c >= 0xd800 && c <= 0xdfff) && c != 0xad
            && c != 0x2028 && c != 0x2029 && c != 0xfeff);
}

/* --- numbers -------------------------------------------------------------------------------- */

static size_t format_fixnum(intptr_t v, int radix, char *out)
{
    char tmp[72];
    size_t k = 0, n = 0;
    uintptr_t m = v < 0 ? -(uintptr_t)v : (uintptr_t)v;
    do {
        tmp[k++] = "0123456789abcdefghijklmnopqrstuvwxyz"[m % (uintptr_t)radix];
        m /= (uintptr_t)radix;
    } while (m);
    if (v < 0) out[n++] = '-';
    while (k) out[n++] = tmp[--k];
    out[n] = 0;
    return n;
}

/* The shortest digits that read back as d, laid out as Python's repr lays them out: plain
 * for exponents -4..15 (with ".0" when integral), else d.ddde[-]x. */
static size_t format_flonum(double d, char *out)
{
    if (isnan(d)) return (size_t)sprintf(out, "+nan.0");
    if (isinf(d)) return (size_t)sprintf(out, d > 0 ? "+inf.0" : "-inf.0");
    char e[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(e, sizeof e, "%.*e", prec - 1, d);
        if (strtod(e, NULL) == d) break;
    }
    /* e is [-]d[.ddd]e(+|-)xx */
    char digits[24];
    size_t nd = 0;
    const char *s = e + (e[0] == '-');
    for (; *s != 'e'; s++)
        if (*s != '.') digits[nd++] = *s;
    int exp = atoi(s + 1);
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    size_t n = 0;
    if (e[0] == '-') out[n++] = '-';
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out[n++] = '0';
            out[n++] = '.';
            for (int i = -1; i > exp; i--) out[n++] = '0';
            memcpy(out + n, digits, nd);
            n += nd;
        } else {
            for (int i = 0; i <= exp; i++) out[n++] = (size_t)i < nd ? digits[i] : '0';
            out[n++] = '.';
            if (nd > (size_t)exp + 1) {
                memcpy(out + n, digits + exp + 1, nd - (size_t)exp - 1);
                n += nd - (size_t)exp - 1;
            } else {
                out[n++] = '0';
            }
        }
    } else {
        out[n++] = digits[0];
        if (nd > 1) {
            out[n++] = '.';
            memcpy(out + n, digits + 1, nd - 1);
            n += nd - 1;
        }
        n += (size_t)sprintf(out + n, "e%d", exp);
    }
    out[n] = 0;
    return n;
}

size_t sch_format_number(Value v, int radix, char *buf, size_t size)
{
    char tmp[80];
    size_t len = rts_is_fixnum(v) ? format_fixnum(rts_fixnum_val(v), radix, tmp)
                                  : format_flonum(rts_flonum_val(v), tmp);
    if (size) {
        size_t k = len < size ? len : size - 1;
        memcpy(buf, tmp, k);
        buf[k] = 0;
    }
    return len;
}

/* --- characters, strings, symbols ------------------------------------------------------------- */

__attribute__((noinline))
static void out_number(Out *o, Value v)
{
    char b[80];
    sch_format_number(v, 10, b, sizeof b);
    out_str(o, b);
}

static const char *char_name(uint32_t c)
{
    switch (c) {
    case 0:    return "null";
    case 7:    return "alarm";
    case 8:    return "backspace";
    case '\t': return "tab";
    case '\n': return "newline";
    case '\r': return "return";
    case 0x1b: return "escape";
    case ' ':  return "space";
    case 0x7f: return "delete";
    default:   return NULL;
    }
}

static void print_char(Out *o, uint32_t c, bool write)
{
    if (!write) {
        out_char(o, c);
        return;
    }
    const char *name = char_name(c);
    out_str(o, "#\\");
    if (name) out_str(o, name);
    else if (printable(c)) out_char(o, c);
    else out_fmt_hex(o, "x", c, "");
}

/* One character inside "..." or |...| (quote: the delimiter). */
static void print_escaped(Out *o, uint32_t c, char quote)
{
    switch (c) {
    case '\\': out_str(o, "\\\\"); return;
    case '\n': out_str(o, "\\n"); return;
    case '\t': out_str(o, "\\t"); return;
    case '\r': out_str(o, "\\r"); return;
    }
    if (c == (uint32_t)quote) {
        out_byte(o, '\\');
        out_byte(o, quote);
    } else if (printable(c) || c == ' ' || c == 0xa0) {
        out_char(o, c);
    } else {
        out_fmt_hex(o, "\\x", c, ";");
    }
}

static void print_string(Out *o, Value s, bool write)
{
    const uint32_t *d = sch_string_data(s);
    size_t n = sch_string_len(s);
    if (write) out_byte(o, '"');
    for (size_t i = 0; i < n; i++) {
        if (write) print_escaped(o, d[i], '"');
        else out_char(o, d[i]);
    }
    if (write) out_byte(o, '"');
}

/* Whether a symbol's name would read back as something else without bars: the rules of the
 * reader (read.c) for delimiters, numbers, '#' and '.'. */
static bool needs_bars(const uint8_t *s, size_t n)
{
    if (n == 0 || s[0] == '#' || (n == 1 && s[0] == '.')) return true;
    size_t i = 0;
    if (s[i] == '+' || s[i] == '-') i++;
    if (i < n && s[i] == '.') i++;
    if (i < n && s[i] >= '0' && s[i] <= '9') return true;        /* it looks like a number */
    if (n == 6 && (s[0] == '+' || s[0] == '-')
        && (strncasecmp((const char *)s + 1, "inf.0", 5) == 0
            || strncasecmp((const char *)s + 1, "nan.0", 5) == 0))
        return true;
    for (i = 0; i < n;) {
        size_t used;
        uint32_t c = utf8_next(s + i, n - i, &used);
        if (!printable(c) || (c < 0x80 && strchr("()[]\";'`,|\\", (int)c))) return true;
        i += used;
    }
    return false;
}

static void print_symbol(Out *o, Value sym, bool write)
{
    size_t n;
    const uint8_t *s = (const uint8_t *)sch_symbol_utf8(sym, &n);
    if (!write || !needs_bars(s, n)) {
        for (size_t i = 0; i < n; i++)
            out_byte(o, (char)s[i]);
        return;
    }
    out_byte(o, '|');
    for (size_t i = 0; i < n;) {
        size_t used;
        print_escaped(o, utf8_next(s + i, n - i, &used), '|');
        i += used;
    }
    out_byte(o, '|');
}

/* --- compound values --------------------------------------------------------------------------- */

static void print_value(Out *o, Value v, bool write, int depth);

static void print_list(Out *o, Value v, bool write, int depth)
{
    Value mark = v;                    /* Brent: compared with every later cell */
    size_t steps = 0, power = 2;
    out_byte(o, '(');
    for (;;) {
        print_value(o, rts_car(v), write, depth + 1);
        v = rts_cdr(v);
        if (!sch_is_pair(v)) break;
        out_byte(o, ' ');
        if (v == mark) {
            out_str(o, "...)");
            return;
        }
        if (++steps == power) {
            mark = v;
            steps = 0;
            power *= 2;
        }
    }
    if (v != RTS_NIL) {
        out_str(o, " . ");
        print_value(o, v, write, depth + 1);
    }
    out_byte(o, ')');
}

/* " x y z" for the elements of a list (bounded like print_list). */
static void print_elements(Out *o, Value list, bool write, int depth)
{
    Value mark = list;
    size_t steps = 0, power = 2;
    for (; sch_is_pair(list); list = rts_cdr(list)) {
        out_byte(o, ' ');
        print_value(o, rts_car(list), write, depth + 1);
        if (rts_cdr(list) == mark) {
            out_str(o, " ...");
            return;
        }
        if (++steps == power) {
            mark = rts_cdr(list);
            steps = 0;
            power *= 2;
        }
    }
}

static void print_record(Out *o, Value v, bool write, int depth)
{
    Value rtd = sch_record_rtd(v);
    if (rtd == SCH_RTD_MARK) {
        out_str(o, "#<record-type ");
        print_value(o, obj_payload(v)[RTD_NAME], false, depth + 1);
        out_byte(o, '>');
        return;
    }
    if (rtd == sch_rtd_error) {
        out_str(o, "#<error ");
        print_value(o, sch_record_ref(v, ERR_MESSAGE), true, depth + 1);
        print_elements(o, sch_record_ref(v, ERR_IRRITANTS), true, depth);
        out_byte(o, '>');
        return;
    }
    if (rtd == sch_rtd_values) {
        out_str(o, "#<values");
        print_elements(o, sch_record_ref(v, 0), write, depth);
        out_byte(o, '>');
        return;
    }
    if (rtd == sch_rtd_port)    { out_str(o, "#<port>"); return; }
    if (rtd == sch_rtd_cont)    { out_str(o, "#<continuation>"); return; }
    out_str(o, "#<");
    Value name = sch_is_rtd(rtd) ? obj_payload(rtd)[RTD_NAME] : RTS_FALSE;
    if (sch_is_symbol(name)) print_symbol(o, name, false);
    else out_str(o, "record");
    for (size_t i = 0; i + 1 < obj_size(v); i++) {
        out_byte(o, ' ');
        print_value(o, sch_record_ref(v, i), write, depth + 1);
    }
    out_byte(o, '>');
}

static void print_value(Out *o, Value v, bool write, int depth)
{
    if (depth > MAX_DEPTH) {
        out_str(o, "...");
        return;
    }
    if (rts_is_fixnum(v)) {
        out_number(o, v);
        return;
    }
    if (rts_is_char(v)) {
        print_char(o, rts_char_val(v), write);
        return;
    }
    if (!rts_is_ptr(v)) {
        switch (v) {
        case RTS_FALSE:  out_str(o, "#f"); return;
        case RTS_TRUE:   out_str(o, "#t"); return;
        case RTS_NIL:    out_str(o, "()"); return;
        case RTS_EOF:    out_str(o, "#<eof>"); return;
        case RTS_UNSPEC: out_str(o, "#<unspecified>"); return;
        case RTS_UNDEF:  out_str(o, "#<undefined>"); return;
        default:         out_fmt_hex(o, "#<immediate ", (uint32_t)(v >> 3), ">"); return;
        }
    }
    switch (obj_type(v)) {
    case T_PAIR:
        print_list(o, v, write, depth);
        return;
    case T_VECTOR:
        out_str(o, "#(");
        for (size_t i = 0; i < rts_vector_length(v); i++) {
            if (i) out_byte(o, ' ');
            print_value(o, rts_field(v, i), write, depth + 1);
        }
        out_byte(o, ')');
        return;
    case T_BYTEVECTOR:
        out_str(o, "#u8(");
        for (size_t i = 0; i < raw_len(v); i++) {
            if (i) out_byte(o, ' ');
            out_number(o, rts_fixnum(raw_bytes(v)[i]));
        }
        out_byte(o, ')');
        return;
    case T_STRING:
        print_string(o, v, write);
        return;
    case T_SYMBOL:
        print_symbol(o, v, write);
        return;
    case T_FLONUM:
        out_number(o, v);
        return;
    case T_CLOSURE: {
        const char *name = sch_procedure_name(v);
        out_str(o, "#<procedure");
        if (name && *name) {
            out_byte(o, ' ');
            out_str(o, name);
        }
        out_byte(o, '>');
        return;
    }
    case T_RECORD:
        print_record(o, v, write, depth);
        return;
    case T_MVAR:
        out_str(o, "#<mvar>");
        return;
    case T_THREAD:
        out_str(o, "#<thread ");
        out_number(o, rts_fixnum(rts_thread_id(v)));
        out_byte(o, '>');
        return;
    case T_BOX:
        out_str(o, "#<box>");
        return;
    default:
        out_str(o, "#<object>");
        return;
    }
}

void sch_print(SchPort *p, Value v, bool write)
{
    Out o = { .p = p };
    print_value(&o, v, write, 0);
    out_flush(&o);
}
