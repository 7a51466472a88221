/* The Scheme layer: object representations, local roots, errors, ports, the reader's
 * datums, the reader, the printer and the primitives below the VM. The header of the
 * modules below the VM (Note [Scheme layers]), so that they agree on representations; each
 * module's own state stays in its .c file.
 *
 * Note [Scheme layers]
 * The modules of runtime/scheme/, bottom-up (prefix sch_ unless noted). Each one calls only
 * modules below it, and includes only the headers of its level and below: scheme.h declares
 * the modules object .. prim_port, vm.h (which includes scheme.h) vm .. prim_ctl. Of the
 * core they include only the public headers of runtime/include/ and rts/vm_api.h (and
 * prim_ctl.c the prelude's text, the generated scheme_prelude.inc).
 *   object.c     strings, symbols, records and the built-in record types, globals, errors
 *                and raising them (sch_raise unwinds to the catch point the VM sets)
 *   datum.c      datums: the reader's C-side syntax trees (with source positions), datum_
 *   port.c       ports (files, strings, the standard streams) as C objects
 *   read.c       the reader (datums from a port), number syntax
 *   print.c      write/display, number formatting
 *   prim_num.c   numbers, and the generic arithmetic the VM's fast paths fall back on
 *   prim_data.c  lists, vectors, strings, chars, symbols, bytevectors
 *   prim_port.c  the port procedures (read, write, display, files, ...)
 *   vm.c         the bytecode VM, whose frames live on the runtime's thread stacks (vm.h)
 *   expand.c     derived forms to core forms, include
 *   compile.c    core forms to the VM's bytecode
 *   prim_ctl.c   control, threads, MVars, errors, time, the process; start-up (sch_boot)
 *   prelude.scm  the library written in Scheme, compiled at start-up
 *
 * Note [Scheme values]
 *   fixnum         rts_fixnum (63 bits; arithmetic that overflows is an error, never wraps)
 *   #t #f () eof   the runtime's immediates; RTS_UNSPEC is the unspecified value, RTS_UNDEF
 *                  marks an unbound global or a letrec variable read before its definition
 *   char           rts_char (a Unicode code point)
 *   flonum         T_FLONUM (raw: one double)
 *   string         T_STRING (raw: UTF-32 code points; raw_len is 4 x the length); mutable
 *   bytevector     T_BYTEVECTOR (raw bytes)
 *   symbol         T_SYMBOL [name: a T_BYTEVECTOR of UTF-8, global value]; interned
 *   pair, vector   T_PAIR [car, cdr], T_VECTOR
 *   box            T_BOX [value]: a captured variable that is assigned (compile.c)
 *   procedure      T_CLOSURE [proto as a fixnum address, free variables...]; primitives too
 *                  (their Proto has prim set and no free variables)
 *   record         T_RECORD [rtd, fields...]; a record type descriptor is itself a T_RECORD
 *                  [SCH_RTD_MARK, name symbol, field count, field names list]
 *   values         a record of sch_rtd_values [list]: zero or two or more values
 *   error object   a record of sch_rtd_error [message string, irritants list]
 *   port, continuation: records of the built-in rtds below (promises are records
 *                  defined in the prelude)
 *   MVar, thread   the runtime's T_MVAR and T_THREAD
 *
 * Note [GC safety in primitives]
 * Every allocation may move every heap object. A primitive's arguments (argv) live in the
 * capability's local roots, so argv[i] is current after any allocation; any other Value a
 * primitive keeps across an allocation must be held in a local root (sch_protect) and read
 * back through the pointer it returns. Release the roots (sch_release) before returning.
 * Errors (sch_error and friends) unwind to the VM, which releases the roots itself.
 */
#ifndef RTS_SCHEME_SCHEME_H
#define RTS_SCHEME_SCHEME_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "rtslab.h"
#include "rts/vm_api.h"

/* --- immediates and type tests ------------------------------------------------------------ */

#define SCH_RTD_MARK  RTS_IMM(16)   /* field 0 of a record type descriptor */
#define SCH_BLOCK     RTS_IMM(17)   /* a primitive's result: the thread blocked (see below) */
#define SCH_YIELD     RTS_IMM(18)   /* a primitive's result: the thread yields */

static inline bool sch_is_pair(Value v)    { return rts_has_type(v, T_PAIR); }
static inline bool sch_is_vector(Value v)  { return rts_has_type(v, T_VECTOR); }
static inline bool sch_is_string(Value v)  { return rts_has_type(v, T_STRING); }
static inline bool sch_is_symbol(Value v)  { return rts_has_type(v, T_SYMBOL); }
static inline bool sch_is_flonum(Value v)  { return rts_has_type(v, T_FLONUM); }
static inline bool sch_is_bytevector(Value v) { return rts_has_type(v, T_BYTEVECTOR); }
static inline bool sch_is_procedure(Value v)  { return rts_has_type(v, T_CLOSURE); }
static inline bool sch_is_number(Value v)  { return rts_is_fixnum(v) || sch_is_flonum(v); }

/* --- strings (UTF-32) ----------------------------------------------------------------------- */

static inline size_t    sch_string_len(Value s)  { return raw_len(s) / 4; }
static inline uint32_t *sch_string_data(Value s) { return (uint32_t *)raw_bytes(s); }
Value sch_make_string(RtsCap *cap, size_t n, uint32_t fill);
/* s may point into the heap: it is decoded before anything is allocated. */
Value sch_string_from_utf8(RtsCap *cap, const char *s, size_t n);
Value sch_string_from_utf32(RtsCap *cap, const uint32_t *s, size_t n);
/* UTF-8 encoding of a string (malloc'd, NUL-terminated; *n gets the byte length if n). */
char *sch_string_to_utf8(Value s, size_t *n);
/* The string argument s of `who` as a C string for a C interface that ends it at a NUL (a file
 * name, a host name, an environment variable's name: `what`), malloc'd; a string that holds a
 * NUL character is an error (before: "victim\x0;.bak" opened, truncated or deleted victim).
 * A string not a string is a type error. */
char *sch_string_to_cstr(RtsCap *cap, Value s, const char *who, const char *what);
/* Appends the UTF-8 encoding of c to buf (at most 4 bytes); returns the bytes written. */
size_t sch_utf8_encode(uint32_t c, char *buf);
/* Decodes one UTF-8 sequence from s[0..n), n >= 1, and sets *used. Malformed bytes give
 * U+FFFD (a bad lead byte alone; a broken sequence up to the byte that breaks it; an
 * overlong form, a surrogate or a value past U+10FFFF as a whole). Returns -1 when s ends
 * inside a sequence that more bytes could complete. The one decoder of the Scheme layer. */
int32_t sch_utf8_decode(const uint8_t *s, size_t n, size_t *used);

/* --- symbols ---------------------------------------------------------------------------------- */

enum { SYM_NAME, SYM_VALUE, SYM_NFIELDS };
Value sch_intern(RtsCap *cap, const char *utf8, size_t n);
static inline const char *sch_symbol_utf8(Value sym, size_t *n)      /* valid until a GC */
{
    Value b = obj_payload(sym)[SYM_NAME];
    if (n) *n = raw_len(b);
    return (const char *)raw_bytes(b);
}
static inline Value sch_symbol_value(Value sym) { return obj_payload(sym)[SYM_VALUE]; }
/* A gensym: a fresh uninterned symbol (utf8 must not point into the heap). */
Value sch_make_symbol_uninterned(RtsCap *cap, const char *utf8, size_t n);

/* --- records ---------------------------------------------------------------------------------- */

enum { RTD_MARK, RTD_NAME, RTD_NFIELDS_, RTD_FIELD_NAMES, RTD_SIZE };
static inline bool sch_is_record(Value v)  { return rts_has_type(v, T_RECORD); }
static inline bool sch_is_rtd(Value v)     { return sch_is_record(v) && obj_payload(v)[0] == SCH_RTD_MARK; }
static inline bool sch_is_record_of(Value v, Value rtd)
{ return sch_is_record(v) && obj_payload(v)[0] == rtd; }
static inline Value sch_record_rtd(Value v) { return obj_payload(v)[0]; }
/* Field i of a record (0 = the first field after the rtd). */
static inline Value sch_record_ref(Value v, size_t i) { return obj_payload(v)[1 + i]; }
Value sch_make_rtd(RtsCap *cap, Value name, Value field_names);
/* A record of rtd with n fields (taken from fields[], which may be local roots, or all #f
 * when fields is NULL). */
Value sch_make_record(RtsCap *cap, Value rtd, size_t n, const Value *fields);

/* Built-in record types; GC roots. */
extern Value sch_rtd_values, sch_rtd_error, sch_rtd_port, sch_rtd_cont;

enum { ERR_MESSAGE, ERR_IRRITANTS };   /* fields of an error object */

/* --- local roots (Note [GC safety in primitives]) --------------------------------------------- */

static inline size_t sch_mark(RtsCap *cap)                  { return rtv_lroots_mark(cap); }
static inline Value *sch_protect(RtsCap *cap, Value v)      { return rtv_lroot(cap, v); }
static inline void   sch_release(RtsCap *cap, size_t mark)  { rtv_lroots_release(cap, mark); }

/* --- errors ---------------------------------------------------------------------------------------
 * `who` and `msg` must not point into the heap (an allocation precedes their copy); the
 * Value arguments are protected by the calls themselves, as the allocating sch_ and rts_
 * functions all protect their Value arguments. Each raises a Scheme error object (catchable by guard / with-exception-handler) and does
 * not return. The message is "<who>: <msg>" and the irritants follow it when printed, e.g.
 *   sch_type_error(cap, "car", "pair", v)       car: expected a pair, got: 5
 *   sch_error(cap, "vector-ref", "index out of range", 2, idx, vec)
 */
void sch_error(RtsCap *cap, const char *who, const char *msg, int nirritants, ...)
    __attribute__((noreturn));
void sch_type_error(RtsCap *cap, const char *who, const char *expected, Value got)
    __attribute__((noreturn));
void sch_range_error(RtsCap *cap, const char *who, Value index, Value object)
    __attribute__((noreturn));
/* Raises obj (any value) as an exception: leaves it in the result register and unwinds
 * (longjmp) to this OS thread's sch_catch. */
void sch_raise(RtsCap *cap, Value obj) __attribute__((noreturn));
/* Where sch_raise unwinds to on this OS thread: set by the VM while it runs Scheme code (it
 * then calls the Scheme procedure `raise`); NULL elsewhere. */
extern __thread jmp_buf *sch_catch;

/* --- globals and procedures ---------------------------------------------------------------------- */

/* Defines the global `name` as v, and "%sys:name" too for the prelude (compile.c,
 * Note [System globals]). */
void sch_define_global(RtsCap *cap, const char *name, Value v);

/* A procedure's field 0 is the address (as a fixnum) of its prototype, vm.h's Proto, whose
 * first field is its name: so the layers below the VM can name a procedure. */
static inline const char *sch_procedure_name(Value c)      /* NULL: anonymous */
{ return *(const char *const *)(uintptr_t)rts_fixnum_val(obj_payload(c)[0]); }

/* Makes the symbol table and the built-in record types. */
void sch_objects_init(RtsCap *cap);

/* --- primitives ------------------------------------------------------------------------------------
 * A primitive gets its arguments in argv[0..argc) (local roots; Note [GC safety in
 * primitives]); the VM has checked min_args <= argc <= max_args (max_args -1: any number).
 * It returns its result, or SCH_BLOCK when the runtime call it made (MVar take/read/put,
 * join, sleep) blocked the thread: the value the thread finds in the result register
 * (rts_result) when it resumes is then the primitive's result. SCH_YIELD: likewise, after
 * the thread has been put at the back of the run queue. */
typedef Value (*SchPrimFn)(RtsCap *cap, Value *argv, int argc);
typedef struct SchPrimDef {
    const char *name;
    SchPrimFn   fn;
    int         min_args, max_args;
} SchPrimDef;
/* The tables of the modules below the VM (prim_ctl.c has its own); each ends with an entry
 * whose name is NULL. */
extern const SchPrimDef sch_prims_num[], sch_prims_data[], sch_prims_port[];

/* Shared by the VM's inline fast paths and the primitives (prim_num.c): the slow paths
 * of generic arithmetic on two numbers (flonums, overflow and type errors). */
Value sch_add(RtsCap *cap, Value a, Value b);
Value sch_sub(RtsCap *cap, Value a, Value b);
Value sch_mul(RtsCap *cap, Value a, Value b);
Value sch_div(RtsCap *cap, Value a, Value b);          /* `/`: exact when exact */
/* Numeric comparison; op is one of '<' 'l' (<=) '=' 'g' (>=) '>'; `who` names the
 * procedure in a type error. */
bool  sch_num_cmp(RtsCap *cap, int op, Value a, Value b, const char *who);
bool  sch_eqv(Value a, Value b);
bool  sch_equal(Value a, Value b);

/* --- ports (port.c) -------------------------------------------------------------------------------- */

typedef struct SchPort SchPort;
SchPort *sch_port_stdin(void);
SchPort *sch_port_stdout(void);
SchPort *sch_port_stderr(void);
SchPort *sch_port_open_string_in(const uint32_t *s, size_t n);  /* copies s */
SchPort *sch_port_open_utf8_in(const char *s, size_t n, const char *name);  /* copies s */
SchPort *sch_port_open_file_in(const char *path);               /* NULL on failure (errno) */
SchPort *sch_port_open_file_out(const char *path);              /* NULL on failure (errno) */
SchPort *sch_port_open_string_out(void);
bool     sch_port_is_input(SchPort *p);
bool     sch_port_is_open(SchPort *p);
bool     sch_port_is_string_out(SchPort *p);
bool     sch_port_is_file_in(SchPort *p);    /* open-input-file's (not stdin) */
/* Whether p was closed while a read waited on it (once: the waiting read, which then reads
 * the end of file from the closed port). */
bool     sch_port_take_waiter_eof(SchPort *p);
/* Whether the line read-line waits for (or read) outgrew the heap's limit, -M (once). */
bool     sch_port_take_line_too_long(SchPort *p);
/* The bytes the waits of read-line and read-string on p have looked at (%port-scanned). */
uint64_t sch_port_scanned(SchPort *p);
/* A write to p (a socket or file output port) that moves no byte for ns nanoseconds fails
 * with ETIMEDOUT (0: never); false, and nothing set, for any other port. */
bool     sch_port_set_write_timeout(SchPort *p, uint64_t ns);
int32_t  sch_port_getc(SchPort *p);    /* a code point, or -1 at end of input */
int32_t  sch_port_peekc(SchPort *p);
/* Whether a character (or the end) can be read without blocking. */
bool     sch_port_char_ready(SchPort *p);
/* Reads up to max characters, stopping after a newline if `line` (the line's "\n" or
 * "\r\n" is dropped): malloc'd, *n of them; NULL when max > 0 and the input had ended. */
uint32_t *sch_port_read_chars(SchPort *p, size_t max, bool line, size_t *n);
void     sch_port_putc(SchPort *p, uint32_t c);
void     sch_port_puts(SchPort *p, const char *utf8);
/* Writes s[0..n) (which may be a heap string's contents: nothing here allocates). */
void     sch_port_put_utf32(SchPort *p, const uint32_t *s, size_t n);
void     sch_port_flush(SchPort *p);
/* The errno of a write, flush or close of p that failed since the last call, or 0; clears
 * it (Note [Write errors] in port.c). */
int      sch_port_take_error(SchPort *p);
/* Contents of a string output port so far (malloc'd UTF-8, NUL-terminated). */
char    *sch_port_out_utf8(SchPort *p, size_t *n);
/* The same as characters (malloc'd, *n of them); NULL when the port is closed. */
uint32_t *sch_port_out_utf32(SchPort *p, size_t *n);
/* Position of the next character of an input port (1-based line and column) and its name
 * (a file name, or "<string>"/"<stdin>"). */
int      sch_port_line(SchPort *p);
int      sch_port_col(SchPort *p);
const char *sch_port_name(SchPort *p);
void     sch_port_close(SchPort *p);
/* Closes and frees a port the C code made for itself, one no port object wraps (Note [Ports]). */
void     sch_port_free(SchPort *p);
/* A port object wraps a SchPort (a record of sch_rtd_port), and its finalizer frees it. */
Value    sch_port_value(RtsCap *cap, SchPort *p);
bool     sch_is_port(Value v);
SchPort *sch_port_of(Value v);
/* Flushes every output port (at exit, before errors); false when a file port could not be
 * written, each such port reported on stderr ("rtslab: cannot write to FILE: reason";
 * Note [Write errors] in port.c). */
bool     sch_flush_all(void);
/* Managed ports: sockets and files through the IO manager (Note [Ports through the IO
 * manager] in port.c). A step answers READY (go on as for any port), SUBMIT (*op is to be
 * blocked on with rts_io_block, then the step retried), BUSY (another thread's op is in
 * flight: retry a little later) or ERROR (*err: an errno). */
enum { SCH_IO_READY, SCH_IO_SUBMIT, SCH_IO_BUSY, SCH_IO_ERROR };
enum { SCH_NEED_CHAR, SCH_NEED_LINE, SCH_NEED_CHARS, SCH_NEED_BYTES, SCH_NEED_MORE };
struct RtsIoOp;
struct sockaddr_storage;
SchPort *sch_port_open_fd(int fd, bool listener, const char *name);  /* a socket or listener */
bool     sch_port_is_output(SchPort *p);
bool     sch_port_is_listener(SchPort *p);
bool     sch_port_is_socket(SchPort *p);
int      sch_port_fd(SchPort *p);
int      sch_port_io_in(SchPort *p, int need, size_t n, struct RtsIoOp **op, int *err);
int      sch_port_io_out(SchPort *p, bool all, struct RtsIoOp **op);    /* all: flush */
/* READY: *fd the connection, *peer its peer's address as the accept gave it (even when the
 * peer has already reset it, where getpeername fails) */
int      sch_port_io_accept(SchPort *p, struct RtsIoOp **op, int *fd, struct sockaddr_storage *peer,
                            int *err);
int      sch_port_io_connect(SchPort *p, const void *addr, unsigned len, struct RtsIoOp **op,
                             int *err);
/* `read` on a managed port (Note [Reading a datum from a managed port] in port.c): a read
 * ahead begins; read_done ends it, true (with the port put back, and *had the bytes that
 * were there) when it ran out of input that had come: wait for SCH_NEED_MORE than *had. */
void     sch_port_read_ahead(SchPort *p);
bool     sch_port_read_done(SchPort *p, size_t *had);
/* Bytes from a managed input port's buffer: up to max (malloc'd, *n), NULL at the end. */
uint8_t *sch_port_read_bytes(SchPort *p, size_t max, size_t *n);
void     sch_port_put_bytes(SchPort *p, const uint8_t *b, size_t n);

/* --- datums (datum.c): what the reader produces and the compiler consumes ----------------------------- */

typedef enum {
    D_NIL, D_BOOL, D_FIX, D_FLO, D_CHAR, D_STR, D_SYM, D_PAIR, D_VEC, D_BYTEVEC, D_UNSPEC
} DatumKind;

typedef struct Datum Datum;
struct Datum {
    DatumKind kind;
    int line, col;                  /* 0: no position */
    const char *file;               /* the source file's name when line is not 0 */
    union {
        bool      b;
        intptr_t  fix;
        double    flo;
        uint32_t  ch;
        struct { uint32_t *s; size_t n; } str;
        const char *sym;            /* interned by datum_intern: compare pointers */
        struct { Datum *car, *cdr; } pair;
        struct { Datum **items; size_t n; } vec;
        struct { uint8_t *bytes; size_t n; } bv;
    } u;
};

/* All datums of one read or compile live in an arena, freed at once. */
typedef struct DArena DArena;
DArena *datum_arena_new(void);
void    datum_arena_free(DArena *a);
void   *datum_alloc(DArena *a, size_t bytes);          /* zeroed */
/* The canonical copy of a symbol name (NUL-terminated, lives forever; thread-safe). */
const char *datum_intern(const char *s, size_t n);

Datum *datum_new(DArena *a, DatumKind k, int line, int col);
Datum *datum_cons(DArena *a, Datum *car, Datum *cdr);   /* at car's position */
Datum *datum_sym(DArena *a, const char *name);         /* name is interned here */
Datum *datum_fix(DArena *a, intptr_t n);
extern Datum datum_nil_, datum_true_, datum_false_, datum_unspec_;
#define DNIL    (&datum_nil_)
#define DTRUE   (&datum_true_)
#define DFALSE  (&datum_false_)
#define DUNSPEC (&datum_unspec_)
static inline bool datum_is_pair(const Datum *d) { return d->kind == D_PAIR; }
static inline bool datum_is_sym(const Datum *d, const char *interned)
{ return d->kind == D_SYM && d->u.sym == interned; }
static inline Datum *dcar(const Datum *d) { return d->u.pair.car; }
static inline Datum *dcdr(const Datum *d) { return d->u.pair.cdr; }
size_t datum_list_length(const Datum *d);              /* (size_t)-1 if not a proper list */
/* The heap value a datum denotes (allocates; symbols are interned). */
Value  sch_datum_to_value(RtsCap *cap, const Datum *d);
/* The datum of a heap value (for the compiler: eval of data). */
Datum *sch_value_to_datum(DArena *a, Value v);

/* --- the reader (read.c) -------------------------------------------------------------------------- */

typedef struct SchReadError {
    char msg[200];
    int line, col;
} SchReadError;
/* Reads one datum. Returns NULL at the end of the input with err->msg empty, or NULL with
 * err->msg set (and its position) on a syntax error. Datums carry their positions, and the
 * port's name as their file. */
Datum *sch_read(DArena *a, SchPort *in, SchReadError *err);
/* Number syntax (R7RS, without exactness prefixes beyond #e/#i, radix prefixes #x #b #o #d):
 * returns 0 if s is not a number, 1 with *fix set for an exact integer (fixnum range),
 * 2 with *flo set for an inexact real, 3 for an exact integer beyond the fixnum range (which
 * the reader rejects and string->number answers with #f: never read as a flonum). */
int    sch_parse_number(const uint32_t *s, size_t n, int radix, intptr_t *fix, double *flo);

/* --- the printer (print.c) --------------------------------------------------------------------------- */

/* Prints v on p: as `write` does when write is true, else as `display`. Never allocates in
 * the heap (safe to call anywhere). */
void   sch_print(SchPort *p, Value v, bool write);
/* Shortest text that reads back as the same number (flonums: round-trip, "+inf.0",
 * "+nan.0", a ".0" on integral values); radix 10 for flonums. Returns the length. */
size_t sch_format_number(Value v, int radix, char *buf, size_t size);

#endif
