/* Datums: the reader's syntax trees, C-side (so the compiler never sees a moving object),
 * with source positions; and their conversion to and from heap values. */
#include <pthread.h>
#include <stdlib.h>
#include "rts/vm_api.h"
#include "scheme/scheme.h"

Datum datum_nil_     = { .kind = D_NIL };
Datum datum_true_    = { .kind = D_BOOL, .u.b = true };
Datum datum_false_   = { .kind = D_BOOL, .u.b = false };
Datum datum_unspec_  = { .kind = D_UNSPEC };

/* --- arenas --------------------------------------------------------------------------------- */

typedef struct Chunk { struct Chunk *next; size_t used, size; max_align_t data[]; } Chunk;
struct DArena { Chunk *head; };

DArena *datum_arena_new(void)
{
    DArena *a = calloc(1, sizeof *a);
    if (!a) rtv_fatal("out of memory (datum arena)");
    return a;
}

void datum_arena_free(DArena *a)
{
    if (!a) return;
    for (Chunk *c = a->head, *n; c; c = n) {
        n = c->next;
        free(c);
    }
    free(a);
}

void *datum_alloc(DArena *a, size_t bytes)
{
    bytes = (bytes + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    Chunk *c = a->head;
    if (!c || c->size - c->used < bytes) {
        size_t size = bytes > 64 * 1024 ? bytes : 64 * 1024;
        c = malloc(sizeof *c + size);
        if (!c) rtv_fatal("out of memory (datum arena)");
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += bytes;
    memset(p, 0, bytes);
    return p;
}

/* --- symbol names ------------------------------------------------------------------------- */

/* An open-addressing set of names, grown at 1/2 load; names live forever. */
static pthread_mutex_t intern_mu = PTHREAD_MUTEX_INITIALIZER;
static char **names;
static size_t names_cap, names_n;

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint8_t)s[i]) * 1099511628211u;
    return h;
}

static size_t interned_len(const char *name)
{
    size_t len;
    memcpy(&len, name - sizeof len, sizeof len);
    return len;
}

static void names_grow(void)
{
    size_t ncap = names_cap ? 2 * names_cap : 1024;
    char **nn = calloc(ncap, sizeof *nn);
    if (!nn) rtv_fatal("out of memory (symbol names)");
    for (size_t i = 0; i < names_cap; i++) {
        if (!names[i]) continue;
        size_t j = hash_bytes(names[i], interned_len(names[i])) & (ncap - 1);
        while (nn[j]) j = (j + 1) & (ncap - 1);
        nn[j] = names[i];
    }
    free(names);
    names = nn;
    names_cap = ncap;
}

/* Names may contain NUL (|a\x0;b|): they are compared as (length, bytes), and the length is
 * stored in front of the text. */
const char *datum_intern(const char *s, size_t n)
{
    pthread_mutex_lock(&intern_mu);
    if (2 * (names_n + 1) > names_cap)
        names_grow();
    size_t j = hash_bytes(s, n) & (names_cap - 1);
    for (; names[j]; j = (j + 1) & (names_cap - 1)) {
        size_t len;
        memcpy(&len, names[j] - sizeof len, sizeof len);
        if (len == n && memcmp(names[j], s, n) == 0) {
            pthread_mutex_unlock(&intern_mu);
            return names[j];
        }
    }
    char *block = malloc(sizeof n + n + 1);
    if (!block) rtv_fatal("out of memory (symbol names)");
    memcpy(block, &n, sizeof n);
    memcpy(block + sizeof n, s, n);
    block[sizeof n + n] = 0;
    names[j] = block + sizeof n;
    names_n++;
    pthread_mutex_unlock(&intern_mu);
    return names[j];
}


/* --- constructors ------------------------------------------------------------------------------ */

Datum *datum_new(DArena *a, DatumKind k, int line, int col)
{
    Datum *d = datum_alloc(a, sizeof *d);
    d->kind = k;
    d->line = line;
    d->col = col;
    return d;
}

Datum *datum_cons(DArena *a, Datum *car, Datum *cdr)
{
    Datum *d = datum_new(a, D_PAIR, car->line, car->col);
    d->file = car->file;
    d->u.pair.car = car;
    d->u.pair.cdr = cdr;
    return d;
}

Datum *datum_sym(DArena *a, const char *name)
{
    Datum *d = datum_new(a, D_SYM, 0, 0);
    d->u.sym = datum_intern(name, strlen(name));
    return d;
}

Datum *datum_fix(DArena *a, intptr_t n)
{
    Datum *d = datum_new(a, D_FIX, 0, 0);
    d->u.fix = n;
    return d;
}

size_t datum_list_length(const Datum *d)
{
    size_t n = 0;
    for (; d->kind == D_PAIR; d = dcdr(d))
        n++;
    return d->kind == D_NIL ? n : (size_t)-1;
}

/* --- datums to values --------------------------------------------------------------------------- */

/* Lists are built back to front with the partial result in a local root, so long lists
 * need no C recursion; cars recurse (nesting depth is bounded by the reader). */
Value sch_datum_to_value(RtsCap *cap, const Datum *d)
{
    switch (d->kind) {
    case D_NIL:    return RTS_NIL;
    case D_BOOL:   return rts_bool(d->u.b);
    case D_FIX:    return rts_fixnum(d->u.fix);
    case D_FLO:    return rts_make_flonum(cap, d->u.flo);
    case D_CHAR:   return rts_char(d->u.ch);
    case D_UNSPEC: return RTS_UNSPEC;
    case D_STR:    return sch_string_from_utf32(cap, d->u.str.s, d->u.str.n);
    case D_SYM:    return sch_intern(cap, d->u.sym, interned_len(d->u.sym));
    case D_BYTEVEC: {
        Value b = rts_make_raw(cap, T_BYTEVECTOR, d->u.bv.n);
        memcpy(raw_bytes(b), d->u.bv.bytes, d->u.bv.n);
        return b;
    }
    case D_VEC: {
        size_t mark = sch_mark(cap);
        Value *v = sch_protect(cap, rts_make_vector(cap, d->u.vec.n, RTS_FALSE));
        for (size_t i = 0; i < d->u.vec.n; i++) {
            Value x = sch_datum_to_value(cap, d->u.vec.items[i]);
            sm_set_field(cap, *v, i, x);
        }
        Value r = *v;
        sch_release(cap, mark);
        return r;
    }
    case D_PAIR: {
        size_t n = 0;
        const Datum *p = d;
        for (; p->kind == D_PAIR; p = dcdr(p))
            n++;
        const Datum **items = malloc(n * sizeof *items);
        if (!items) rtv_fatal("out of memory");
        p = d;
        for (size_t i = 0; i < n; i++, p = dcdr(p))
            items[i] = dcar(p);
        size_t mark = sch_mark(cap);
        Value *acc = sch_protect(cap, sch_datum_to_value(cap, p));   /* the tail */
        for (size_t i = n; i-- > 0;) {
            Value x = sch_datum_to_value(cap, items[i]);
            *acc = rts_cons(cap, x, *acc);
        }
        free(items);
        Value r = *acc;
        sch_release(cap, mark);
        return r;
    }
    }
    return RTS_UNSPEC;
}

/* --- values to datums --------------------------------------------------------------------------- */

Datum *sch_value_to_datum(DArena *a, Value v)
{
    if (rts_is_fixnum(v)) return datum_fix(a, rts_fixnum_val(v));
    if (v == RTS_NIL) return DNIL;
    if (v == RTS_TRUE) return DTRUE;
    if (v == RTS_FALSE) return DFALSE;
    if (rts_is_char(v)) {
        Datum *d = datum_new(a, D_CHAR, 0, 0);
        d->u.ch = rts_char_val(v);
        return d;
    }
    if (!rts_is_ptr(v)) return DUNSPEC;
    switch (obj_type(v)) {
    case T_FLONUM: {
        Datum *d = datum_new(a, D_FLO, 0, 0);
        d->u.flo = rts_flonum_val(v);
        return d;
    }
    case T_STRING: {
        Datum *d = datum_new(a, D_STR, 0, 0);
        d->u.str.n = sch_string_len(v);
        d->u.str.s = datum_alloc(a, d->u.str.n * 4 + 4);
        memcpy(d->u.str.s, sch_string_data(v), d->u.str.n * 4);
        return d;
    }
    case T_SYMBOL: {
        size_t n;
        const char *s = sch_symbol_utf8(v, &n);
        Datum *d = datum_new(a, D_SYM, 0, 0);
        d->u.sym = datum_intern(s, n);
        return d;
    }
    case T_BYTEVECTOR: {
        Datum *d = datum_new(a, D_BYTEVEC, 0, 0);
        d->u.bv.n = raw_len(v);
        d->u.bv.bytes = datum_alloc(a, d->u.bv.n + 1);
        memcpy(d->u.bv.bytes, raw_bytes(v), d->u.bv.n);
        return d;
    }
    case T_VECTOR: {
        Datum *d = datum_new(a, D_VEC, 0, 0);
        d->u.vec.n = rts_vector_length(v);
        d->u.vec.items = datum_alloc(a, (d->u.vec.n + 1) * sizeof(Datum *));
        for (size_t i = 0; i < d->u.vec.n; i++)
            d->u.vec.items[i] = sch_value_to_datum(a, rts_field(v, i));
        return d;
    }
    case T_PAIR: {
        Datum *head = NULL, **tail = &head;
        for (; sch_is_pair(v); v = rts_cdr(v)) {
            *tail = datum_cons(a, sch_value_to_datum(a, rts_car(v)), DNIL);
            tail = &(*tail)->u.pair.cdr;
        }
        *tail = sch_value_to_datum(a, v);
        return head;
    }
    default:
        return DUNSPEC;
    }
}
