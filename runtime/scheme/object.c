/* Scheme objects: strings, symbols and their table, records and the built-in record types,
 * globals, error objects and the raising of errors from C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "rts/vm_api.h"
#include "scheme/scheme.h"

Value sch_rtd_values = RTS_FALSE, sch_rtd_error = RTS_FALSE,
      sch_rtd_port = RTS_FALSE, sch_rtd_cont = RTS_FALSE;

/* --- strings -------------------------------------------------------------------------------- */

Value sch_make_string(RtsCap *cap, size_t n, uint32_t fill)
{
    Value s = rts_make_raw(cap, T_STRING, n * 4);
    uint32_t *d = sch_string_data(s);
    for (size_t i = 0; i < n; i++)
        d[i] = fill;
    return s;
}

Value sch_string_from_utf32(RtsCap *cap, const uint32_t *s, size_t n)
{
    Value v = rts_make_raw(cap, T_STRING, n * 4);
    if (n) memcpy(sch_string_data(v), s, n * 4);
    return v;
}

/* The one UTF-8 decoder (scheme.h): strict, as the Unicode standard's "best practice" for
 * U+FFFD substitution says. Before, utf8->string and every string made from C bytes had a
 * decoder of their own that took ED A0 80 as U+D800, the overlong C0 80 as NUL and
 * F4 90 80 80 as U+110000, characters that are not Unicode scalar values. */
int32_t sch_utf8_decode(const uint8_t *s, size_t n, size_t *used)
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

Value sch_string_from_utf8(RtsCap *cap, const char *s, size_t n)
{
    uint32_t *tmp = malloc((n + 1) * sizeof *tmp);
    if (!tmp) rtv_fatal("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        size_t used;
        int32_t c = sch_utf8_decode((const uint8_t *)s + i, n - i, &used);
        tmp[k++] = c < 0 ? 0xfffd : (uint32_t)c;    /* cut short: one U+FFFD for the rest */
        i += c < 0 ? n - i : used;
    }
    Value v = sch_string_from_utf32(cap, tmp, k);
    free(tmp);
    return v;
}

size_t sch_utf8_encode(uint32_t c, char *b)
{
    if (c < 0x80) { b[0] = (char)c; return 1; }
    if (c < 0x800) { b[0] = (char)(0xc0 | c >> 6); b[1] = (char)(0x80 | (c & 0x3f)); return 2; }
    if (c < 0x10000) {
        b[0] = (char)(0xe0 | c >> 12); b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        b[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    b[0] = (char)(0xf0 | (c >> 18 & 0x07)); b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    b[2] = (char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

char *sch_string_to_utf8(Value s, size_t *n)
{
    size_t len = sch_string_len(s);
    const uint32_t *d = sch_string_data(s);
    char *out = malloc(len * 4 + 1);
    if (!out) rtv_fatal("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < len; i++)
        k += sch_utf8_encode(d[i], out + k);
    out[k] = 0;
    if (n) *n = k;
    return out;
}

char *sch_string_to_cstr(RtsCap *cap, Value s, const char *who, const char *what)
{
    if (!sch_is_string(s)) sch_type_error(cap, who, "string", s);
    const uint32_t *d = sch_string_data(s);
    for (size_t i = 0, len = sch_string_len(s); i < len; i++)
        if (d[i] == 0) {
            char msg[120];
            snprintf(msg, sizeof msg, "a %s may not contain a NUL character, got", what);
            sch_error(cap, who, msg, 1, s);
        }
    return sch_string_to_utf8(s, NULL);
}

/* --- symbols -------------------------------------------------------------------------------------
 * Note [Symbol table]
 * The table is a heap vector of buckets (lists of symbols), a GC root. Interning may run on
 * any capability: the new symbol and its bucket cell are allocated first, then the lookup
 * and the insertion happen under sym_lock, which is never held across an allocation (a GC
 * cannot start while another capability spins on it). The table doubles when it holds two
 * symbols per bucket: the larger vector is allocated outside the lock, and under it (if no
 * other capability has grown the table meanwhile) the existing cells are relinked into it,
 * which allocates nothing. Before, 8,192 buckets were all there ever were, and interning
 * was quadratic: 200k symbols 0.2 s, 2M 48 s. Interned symbols live as long as the table
 * (a weak table would let unreferenced ones go; not done: programs here intern names from
 * their source and their input, a bounded set); uninterned ones (gensym) are ordinary
 * objects the GC frees.
 */
#define SYM_BUCKETS_MIN 8192
static Value sym_table = RTS_FALSE;
static size_t sym_count;                /* under sym_lock */
static RtvLock sym_lock = RTV_LOCK_INIT("symbols");

static uint64_t name_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211u;
    return h;
}

Value sch_make_symbol_uninterned(RtsCap *cap, const char *utf8, size_t n)
{
    size_t mark = sch_mark(cap);
    Value *name = sch_protect(cap, rts_make_raw(cap, T_BYTEVECTOR, n));
    memcpy(raw_bytes(*name), utf8, n);
    Value sym = rts_make_object(cap, T_SYMBOL, SYM_NFIELDS, RTS_UNDEF);
    sm_set_field(cap, sym, SYM_NAME, *name);
    sch_release(cap, mark);
    return sym;
}

static Value bucket_find(Value b, const char *s, size_t n)
{
    for (; b != RTS_NIL; b = rts_cdr(b)) {
        size_t len;
        const char *t = sch_symbol_utf8(rts_car(b), &len);
        if (len == n && memcmp(s, t, n) == 0)
            return rts_car(b);
    }
    return RTS_FALSE;
}

static size_t bucket_of(const char *s, size_t n, Value table)
{
    return (size_t)(name_hash(s, n) % obj_size(table));
}

/* Relinks every cell of sym_table into `bigger` (all RTS_NIL), which then replaces it.
 * Under sym_lock; allocates nothing. */
static void sym_rehash(RtsCap *cap, Value bigger)
{
    for (size_t i = 0; i < obj_size(sym_table); i++) {
        Value next;
        for (Value c = rts_field(sym_table, i); c != RTS_NIL; c = next) {
            next = rts_cdr(c);
            size_t len;
            const char *name = sch_symbol_utf8(rts_car(c), &len);
            size_t j = bucket_of(name, len, bigger);
            sm_set_cdr(cap, c, rts_field(bigger, j));
            sm_set_field(cap, bigger, j, c);
        }
    }
    sym_table = bigger;
}

/* Doubles the table, which had `buckets` buckets and two symbols in each when the caller
 * looked (under sym_lock; Note [Symbol table]). */
static void sym_grow(RtsCap *cap, size_t buckets)
{
    Value bigger = rts_make_vector(cap, 2 * buckets, RTS_NIL);
    rtv_lock(&sym_lock);
    if (obj_size(sym_table) == buckets)     /* else another capability grew it first */
        sym_rehash(cap, bigger);
    rtv_unlock(&sym_lock);
}

Value sch_intern(RtsCap *cap, const char *utf8, size_t n)
{
    /* The common case, an existing symbol, allocates nothing. A GC may move objects but
     * cannot run in this window: nothing here allocates or reaches a safe point. */
    rtv_lock(&sym_lock);
    Value found = bucket_find(rts_field(sym_table, bucket_of(utf8, n, sym_table)), utf8, n);
    rtv_unlock(&sym_lock);
    if (found != RTS_FALSE)
        return found;
    /* utf8 may point into the heap (a string's contents): copy it before allocating. */
    char *copy = malloc(n + 1);
    if (!copy) rtv_fatal("out of memory");
    memcpy(copy, utf8, n);
    size_t mark = sch_mark(cap);
    Value *sym = sch_protect(cap, sch_make_symbol_uninterned(cap, copy, n));
    Value cell = rts_cons(cap, *sym, RTS_NIL);
    rtv_lock(&sym_lock);
    size_t i = bucket_of(copy, n, sym_table);    /* the table may have grown meanwhile */
    Value b = rts_field(sym_table, i);
    found = bucket_find(b, copy, n);
    size_t grow_from = 0;                       /* the table's size, when it is full */
    if (found == RTS_FALSE) {
        sm_set_cdr(cap, cell, b);
        sm_set_field(cap, sym_table, i, cell);
        found = rts_car(cell);
        if (++sym_count > 2 * obj_size(sym_table))
            grow_from = obj_size(sym_table);
    }
    rtv_unlock(&sym_lock);
    free(copy);
    if (grow_from) {
        *sym = found;                           /* growing allocates: keep it rooted */
        sym_grow(cap, grow_from);
        found = *sym;
    }
    sch_release(cap, mark);
    return found;
}

/* --- records ------------------------------------------------------------------------------------- */

Value sch_make_rtd(RtsCap *cap, Value name, Value field_names)
{
    size_t mark = sch_mark(cap);
    Value *nm = sch_protect(cap, name), *fn = sch_protect(cap, field_names);
    Value rtd = rts_make_object(cap, T_RECORD, RTD_SIZE, RTS_FALSE);
    size_t nf = 0;
    for (Value p = *fn; sch_is_pair(p); p = rts_cdr(p))
        nf++;
    sm_set_field(cap, rtd, RTD_MARK, SCH_RTD_MARK);
    sm_set_field(cap, rtd, RTD_NAME, *nm);
    sm_set_field(cap, rtd, RTD_NFIELDS_, rts_fixnum((intptr_t)nf));
    sm_set_field(cap, rtd, RTD_FIELD_NAMES, *fn);
    sch_release(cap, mark);
    return rtd;
}

Value sch_make_record(RtsCap *cap, Value rtd, size_t n, const Value *fields)
{
    size_t mark = sch_mark(cap);
    Value *r = sch_protect(cap, rtd);
    Value rec = rts_make_object(cap, T_RECORD, n + 1, RTS_FALSE);
    sm_set_field(cap, rec, 0, *r);
    for (size_t i = 0; fields && i < n; i++)
        sm_set_field(cap, rec, 1 + i, fields[i]);
    sch_release(cap, mark);
    return rec;
}

static Value builtin_rtd(RtsCap *cap, const char *name, Value *root)
{
    *root = sch_make_rtd(cap, sch_intern(cap, name, strlen(name)), RTS_NIL);
    rts_add_root(root);
    return *root;
}

/* --- globals ------------------------------------------------------------------------------------- */

void sch_define_global(RtsCap *cap, const char *name, Value v)
{
    size_t mark = sch_mark(cap);
    Value *vp = sch_protect(cap, v);
    Value sym = sch_intern(cap, name, strlen(name));
    sm_set_field(cap, sym, SYM_VALUE, *vp);
    char sys[128];
    int n = snprintf(sys, sizeof sys, "%%sys:%s", name);
    sym = sch_intern(cap, sys, (size_t)n);
    sm_set_field(cap, sym, SYM_VALUE, *vp);
    sch_release(cap, mark);
}

/* --- errors --------------------------------------------------------------------------------------- */

/* An error object whose message is "<who>: <msg>" (or msg alone when who is NULL). The
 * irritants must already be in local roots. */
static Value make_error(RtsCap *cap, const char *who, const char *msg, Value *irritants, int n)
{
    size_t mark = sch_mark(cap);
    Value *list = sch_protect(cap, RTS_NIL);
    for (int i = n; i-- > 0;)
        *list = rts_cons(cap, irritants[i], *list);
    size_t wl = who ? strlen(who) : 0, ml = strlen(msg);
    char *text = malloc(wl + ml + 3);
    if (!text) rtv_fatal("out of memory");
    if (who) {
        memcpy(text, who, wl);
        memcpy(text + wl, ": ", 2);
        wl += 2;
    }
    memcpy(text + wl, msg, ml + 1);
    Value fields[2];
    fields[ERR_MESSAGE] = sch_string_from_utf8(cap, text, wl + ml);
    fields[ERR_IRRITANTS] = *list;
    free(text);
    Value *f = sch_protect(cap, fields[ERR_MESSAGE]);
    sch_protect(cap, fields[ERR_IRRITANTS]);
    Value e = sch_make_record(cap, sch_rtd_error, 2, f);
    sch_release(cap, mark);
    return e;
}

void sch_error(RtsCap *cap, const char *who, const char *msg, int n, ...)
{
    Value *irr = rtv_lroots_next(cap);
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) {
        Value v = va_arg(ap, Value);
        rtv_check_not_stale(v, who ? who : msg);
        sch_protect(cap, v);
    }
    va_end(ap);
    sch_raise(cap, make_error(cap, who, msg, irr, n));
}

void sch_type_error(RtsCap *cap, const char *who, const char *expected, Value got)
{
    char msg[128];
    const char *art = strchr("aeiou", expected[0]) ? "an" : "a";
    snprintf(msg, sizeof msg, "expected %s %s, got", art, expected);
    sch_error(cap, who, msg, 1, got);
}

void sch_range_error(RtsCap *cap, const char *who, Value index, Value object)
{
    sch_error(cap, who, "index out of range:", 2, index, object);
}

__thread jmp_buf *sch_catch;

void sch_raise(RtsCap *cap, Value obj)
{
    if (!sch_catch)
        rtv_fatal("a Scheme error outside the VM");
    rts_set_result(cap, obj);
    longjmp(*sch_catch, 1);
}

/* --- start-up ---------------------------------------------------------------------------------------- */

void sch_objects_init(RtsCap *cap)
{
    sym_table = rts_make_vector(cap, SYM_BUCKETS_MIN, RTS_NIL);
    rts_add_root(&sym_table);
    builtin_rtd(cap, "values", &sch_rtd_values);
    builtin_rtd(cap, "error", &sch_rtd_error);
    builtin_rtd(cap, "port", &sch_rtd_port);
    builtin_rtd(cap, "continuation", &sch_rtd_cont);
}
