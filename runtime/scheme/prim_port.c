/* The port procedures: opening and closing, character and string I/O, read, write and
 * display, files, number <-> string conversion (over port.c, read.c and print.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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
    if (!sch_is_port(argv[i]) || sch_port_is_input(p = sch_port_of(argv[i])) != input)
        sch_type_error(cap, who, input ? "input port" : "output port", argv[i]);
    if (!sch_port_is_open(p)) sch_error(cap, who, "port is closed", 1, argv[i]);
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
        char msg[256];
        snprintf(msg, sizeof msg, "cannot write to %s: %s", sch_port_name(p), strerror(e));
        sch_error(cap, who, msg, 0);
    }
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
    check_string(cap, argv[0], who);
    char *path = sch_string_to_utf8(argv[0], NULL);
    SchPort *p = input ? sch_port_open_file_in(path) : sch_port_open_file_out(path);
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
    sch_port_close(p);
    if (!sch_port_is_input(p))
        check_written(cap, p, "close-port");
    return RTS_UNSPEC;
}

static Value close_dir(RtsCap *cap, Value v, bool input, const char *who)
{
    SchPort *p = port_arg(cap, v, who);
    if (sch_port_is_input(p) != input) sch_type_error(cap, who, input ? "input port" : "output port", v);
    sch_port_close(p);
    if (!input)
        check_written(cap, p, who);
    return RTS_UNSPEC;
}

PRIM(p_close_input_port)  { return close_dir(cap, argv[0], true, "close-input-port"); }
PRIM(p_close_output_port) { return close_dir(cap, argv[0], false, "close-output-port"); }

PRIM(p_is_input_port)  { return rts_bool(sch_is_port(argv[0]) && sch_port_is_input(sch_port_of(argv[0]))); }
PRIM(p_is_output_port) { return rts_bool(sch_is_port(argv[0]) && !sch_port_is_input(sch_port_of(argv[0]))); }
PRIM(p_is_port)        { return rts_bool(sch_is_port(argv[0])); }

PRIM(p_input_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "input-port-open?");
    return rts_bool(sch_port_is_input(p) && sch_port_is_open(p));
}

PRIM(p_output_port_open)
{
    SchPort *p = port_arg(cap, argv[0], "output-port-open?");
    return rts_bool(!sch_port_is_input(p) && sch_port_is_open(p));
}

PRIM(p_eof_object)    { return RTS_EOF; }
PRIM(p_is_eof_object) { return rts_bool(argv[0] == RTS_EOF); }

static Value char_or_eof(int32_t c) { return c < 0 ? RTS_EOF : rts_char((uint32_t)c); }

PRIM(p_read_char) { return char_or_eof(sch_port_getc(in_arg(cap, argv, argc, 0, "read-char"))); }
PRIM(p_peek_char) { return char_or_eof(sch_port_peekc(in_arg(cap, argv, argc, 0, "peek-char"))); }
PRIM(p_char_ready) { return rts_bool(sch_port_char_ready(in_arg(cap, argv, argc, 0, "char-ready?"))); }

/* A string of what sch_port_read_chars reads, or the eof object when the input had ended. */
static Value read_chars(RtsCap *cap, SchPort *p, size_t max, bool line)
{
    size_t n;
    uint32_t *buf = sch_port_read_chars(p, max, line, &n);
    if (!buf) return RTS_EOF;
    Value s = sch_string_from_utf32(cap, buf, n);
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
    SchPort *p = out_arg(cap, argv, argc, 1, "write-char");
    sch_port_putc(p, rts_char_val(argv[0]));
    check_written(cap, p, "write-char");
    return RTS_UNSPEC;
}

PRIM(p_write_string)
{
    check_string(cap, argv[0], "write-string");
    SchPort *p = out_arg(cap, argv, argc, 1, "write-string");
    size_t len = sch_string_len(argv[0]);
    size_t end = index_arg(cap, argv, argc, 3, len, len, "write-string");
    size_t start = index_arg(cap, argv, argc, 2, end, 0, "write-string");
    sch_port_put_utf32(p, sch_string_data(argv[0]) + start, end - start);
    check_written(cap, p, "write-string");
    return RTS_UNSPEC;
}

PRIM(p_newline)
{
    SchPort *p = out_arg(cap, argv, argc, 0, "newline");
    sch_port_putc(p, '\n');
    check_written(cap, p, "newline");
    return RTS_UNSPEC;
}

PRIM(p_display)
{
    SchPort *p = out_arg(cap, argv, argc, 1, "display");
    sch_print(p, argv[0], false);
    check_written(cap, p, "display");
    return RTS_UNSPEC;
}

PRIM(p_write)
{
    SchPort *p = out_arg(cap, argv, argc, 1, "write");
    sch_print(p, argv[0], true);
    check_written(cap, p, "write");
    return RTS_UNSPEC;
}

PRIM(p_flush_output_port)
{
    SchPort *p = out_arg(cap, argv, argc, 0, "flush-output-port");
    sch_port_flush(p);
    check_written(cap, p, "flush-output-port");
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
