/* Data primitives: equivalence, booleans, pairs and lists, symbols, chars, strings, vectors,
 * bytevectors, procedures, and the record operations that define-record-type expands into.
 *
 * Beyond R7RS-small, three common string extensions (as in Guile and SRFI 13/130):
 *   (string-join list [delimiter])   the strings of list joined by delimiter (default " ")
 *   (string-split string char)       the substrings between occurrences of char, empty
 *                                    ones included: (string-split "a,,b" #\,) => ("a" "" "b")
 *   (string-contains s1 s2)          the index of the first occurrence of s2 in s1, or #f
 *
 * Characters: case and classes follow Unicode for Latin-1 (U+0000..U+00FF) and treat every
 * character above it as caseless, non-alphabetic and non-numeric; case mappings whose result
 * lies outside Latin-1 (the upper case of U+00B5 and U+00FF) are left out, so that upcase,
 * downcase and foldcase stay inverse on Latin-1. char-whitespace? is Unicode's White_Space.
 * Deliberately not <wctype.h>, whose answers depend on the locale.
 *
 * GC safety (Note [GC safety in primitives]): results are built after the arguments are
 * checked, reading the arguments back from argv after each allocation; lists are built in
 * local roots (ListBuilder, or an accumulator consed onto from the end).
 */
#include <stdio.h>
#include <stdlib.h>
#include "rts/vm_api.h"
#include "scheme/scheme.h"

/* The largest size make-vector, make-string and friends accept. */
#define SIZE_LIMIT ((size_t)1 << 32)

/* --- argument checking -------------------------------------------------------------------------- */

static inline void check_pair(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_pair(v)) sch_type_error(cap, who, "pair", v);
}

static inline void check_string(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_string(v)) sch_type_error(cap, who, "string", v);
}

static inline void check_vector(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_vector(v)) sch_type_error(cap, who, "vector", v);
}

static inline void check_bytevector(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_bytevector(v)) sch_type_error(cap, who, "bytevector", v);
}

static inline void check_symbol(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_symbol(v)) sch_type_error(cap, who, "symbol", v);
}

static inline uint32_t char_arg(RtsCap *cap, const char *who, Value v)
{
    if (!rts_is_char(v)) sch_type_error(cap, who, "char", v);
    return rts_char_val(v);
}

static inline intptr_t fix_arg(RtsCap *cap, const char *who, Value v)
{
    if (!rts_is_fixnum(v)) sch_type_error(cap, who, "exact integer", v);
    return rts_fixnum_val(v);
}

static uint8_t byte_arg(RtsCap *cap, const char *who, Value v)
{
    if (!rts_is_fixnum(v) || rts_fixnum_val(v) < 0 || rts_fixnum_val(v) > 255)
        sch_type_error(cap, who, "byte", v);
    return (uint8_t)rts_fixnum_val(v);
}

/* A size for a new object: an exact integer in [0, SIZE_LIMIT]. */
static size_t size_arg(RtsCap *cap, const char *who, Value v)
{
    intptr_t n = fix_arg(cap, who, v);
    if (n < 0) sch_error(cap, who, "negative size", 1, v);
    if ((size_t)n > SIZE_LIMIT) sch_error(cap, who, "too large", 1, v);
    return (size_t)n;
}

/* An index into obj: 0 <= i < len. */
static size_t index_arg(RtsCap *cap, const char *who, Value i, size_t len, Value obj)
{
    intptr_t n = fix_arg(cap, who, i);
    if (n < 0 || (size_t)n >= len) sch_range_error(cap, who, i, obj);
    return (size_t)n;
}

/* A bound of a range of obj: 0 <= i <= limit. */
static size_t bound_arg(RtsCap *cap, const char *who, Value i, size_t limit, Value obj)
{
    intptr_t n = fix_arg(cap, who, i);
    if (n < 0 || (size_t)n > limit) sch_range_error(cap, who, i, obj);
    return (size_t)n;
}

/* The optional [start [end]] arguments at argv[first], argv[first + 1] of an object of
 * length len (argv[obj]): 0 <= start <= end <= len. */
typedef struct { size_t start, end; } Range;

static Range range_args(RtsCap *cap, const char *who, Value *argv, int argc, int first,
                        size_t len, int obj)
{
    Range r = { 0, len };
    if (argc > first + 1) r.end = bound_arg(cap, who, argv[first + 1], len, argv[obj]);
    if (argc > first) r.start = bound_arg(cap, who, argv[first], r.end, argv[obj]);
    return r;
}

/* For copy!: the destination argv[0] must hold count elements from index argv[1]. */
static size_t dest_arg(RtsCap *cap, const char *who, Value *argv, size_t len, size_t count)
{
    size_t at = bound_arg(cap, who, argv[1], len, argv[0]);
    if (len - at < count) sch_range_error(cap, who, argv[1], argv[0]);
    return at;
}

/* A symbol's name (or `fallback` if v is not a symbol) in buf, NUL-terminated and truncated
 * to fit: a C copy, since the name moves at the next GC. */
static const char *symbol_name_copy(Value v, char *buf, size_t size, const char *fallback)
{
    size_t n = 0;
    const char *s = fallback;
    if (sch_is_symbol(v))
        s = sch_symbol_utf8(v, &n);
    else
        n = strlen(fallback);
    if (n >= size) n = size - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

/* Comparison chains: op is '<' 'l' (<=) '=' 'g' (>=) '>', c a three-way result. */
static bool cmp_holds(int op, int c)
{
    switch (op) {
    case '<': return c < 0;
    case 'l': return c <= 0;
    case '=': return c == 0;
    case 'g': return c >= 0;
    default:  return c > 0;
    }
}

/* --- equivalence ------------------------------------------------------------------------------- */

bool sch_eqv(Value a, Value b)
{
    if (a == b) return true;
    if (!sch_is_flonum(a) || !sch_is_flonum(b)) return false;
    return memcmp(raw_bytes(a), raw_bytes(b), sizeof(double)) == 0;
}

/* Note [equal? without recursion]
 * equal? keeps the pairs of values still to compare on an explicit stack, so deep nesting
 * (in cars or vectors) cannot overflow the C stack, and walks cdr chains in a loop that
 * pushes only the cars that are not atoms. It must terminate on circular data too, with the
 * answer R7RS asks for (equality of the possibly infinite unfoldings):
 *   - a cycle of cdrs alone: each chain walk looks for a repeated pair of positions with
 *     Brent's algorithm; from a repeat on, the rest was compared already;
 *   - any other cycle passes through pushed pairs: after EQUAL_BUDGET steps, each pushed
 *     pair of pairs/vectors is recorded when popped, and one met again is taken as equal
 *     (it has been or is being compared), so each is expanded once and the walk ends.
 * Acyclic data of modest size never pays for the recording. Nothing here allocates in the
 * heap or reaches a safe point, so addresses are stable throughout. */
#define EQUAL_BUDGET 100000
#define EQUAL_INLINE 64

typedef struct { Value a, b; } ValuePair;

typedef struct {
    ValuePair *stack, inline_stack[EQUAL_INLINE];
    size_t n, cap;
    ValuePair *seen;           /* open addressing; a.a == 0 marks a free slot */
    size_t seen_n, seen_cap;
    size_t steps;
} EqualWalk;

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) rtv_fatal("out of memory (equal?)");
    return q;
}

static void walk_push(EqualWalk *w, Value a, Value b)
{
    if (w->n == w->cap) {
        size_t cap = 2 * w->cap;
        if (w->stack == w->inline_stack) {
            w->stack = xrealloc(NULL, cap * sizeof *w->stack);
            memcpy(w->stack, w->inline_stack, sizeof w->inline_stack);
        } else {
            w->stack = xrealloc(w->stack, cap * sizeof *w->stack);
        }
        w->cap = cap;
    }
    w->stack[w->n++] = (ValuePair){ a, b };
}

static size_t pair_hash(Value a, Value b, size_t mask)
{
    uint64_t h = ((uint64_t)a * 0x9e3779b97f4a7c15u) ^ ((uint64_t)b * 0xc2b2ae3d27d4eb4fu);
    return (size_t)(h >> 17) & mask;
}

/* Records (a, b) as compared; false if it already was. */
static bool walk_first_visit(EqualWalk *w, Value a, Value b)
{
    if (2 * (w->seen_n + 1) > w->seen_cap) {
        size_t old_cap = w->seen_cap, cap = old_cap ? 2 * old_cap : 1024;
        ValuePair *old = w->seen;
        w->seen = xrealloc(NULL, cap * sizeof *w->seen);
        memset(w->seen, 0, cap * sizeof *w->seen);
        w->seen_cap = cap;
        for (size_t i = 0; i < old_cap; i++) {
            if (!old[i].a) continue;
            size_t j = pair_hash(old[i].a, old[i].b, cap - 1);
            while (w->seen[j].a) j = (j + 1) & (cap - 1);
            w->seen[j] = old[i];
        }
        free(old);
    }
    size_t j = pair_hash(a, b, w->seen_cap - 1);
    for (; w->seen[j].a; j = (j + 1) & (w->seen_cap - 1))
        if (w->seen[j].a == a && w->seen[j].b == b) return false;
    w->seen[j] = (ValuePair){ a, b };
    w->seen_n++;
    return true;
}

/* Whether a and b may be equal without looking inside: then both are heap objects of one
 * type that equal? looks into. */
static bool same_shape(Value a, Value b)
{
    return rts_is_ptr(a) && rts_is_ptr(b) && obj_type(a) == obj_type(b);
}

/* Compares a popped pair of values: walks the cdr chain from it, pushing the pairs of cars
 * and vector elements still to compare; false on a difference. */
static bool equal_step(EqualWalk *w, Value a, Value b)
{
    if (sch_eqv(a, b)) return true;
    if (!same_shape(a, b)) return false;
    if (w->steps >= EQUAL_BUDGET && (obj_type(a) == T_PAIR || obj_type(a) == T_VECTOR)
        && !walk_first_visit(w, a, b))
        return true;
    /* Brent: (ca, cb) is the pair of positions saved at step `power` of the chain. */
    Value ca = a, cb = b;
    size_t power = 1, lam = 0;
    for (;;) {
        w->steps++;
        switch (obj_type(a)) {
        case T_PAIR: {
            Value x = rts_car(a), y = rts_car(b);
            if (!sch_eqv(x, y)) {
                if (!same_shape(x, y)) return false;
                walk_push(w, x, y);
            }
            a = rts_cdr(a);
            b = rts_cdr(b);
            if (sch_eqv(a, b)) return true;
            if (!same_shape(a, b)) return false;
            if (a == ca && b == cb) return true;
            if (++lam == power) {
                ca = a;
                cb = b;
                power *= 2;
                lam = 0;
            }
            continue;
        }
        case T_VECTOR: {
            size_t n = rts_vector_length(a);
            if (n != rts_vector_length(b)) return false;
            for (size_t i = n; i-- > 0;)
                walk_push(w, rts_field(a, i), rts_field(b, i));
            return true;
        }
        case T_STRING:
        case T_BYTEVECTOR:
            return raw_len(a) == raw_len(b) && memcmp(raw_bytes(a), raw_bytes(b), raw_len(a)) == 0;
        default:
            return false;
        }
    }
}

bool sch_equal(Value a, Value b)
{
    EqualWalk w = { .cap = EQUAL_INLINE };
    w.stack = w.inline_stack;
    bool same = equal_step(&w, a, b);
    while (same && w.n > 0) {
        ValuePair p = w.stack[--w.n];
        same = equal_step(&w, p.a, p.b);
    }
    if (w.stack != w.inline_stack) free(w.stack);
    free(w.seen);
    return same;
}

static Value p_eq(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(argv[0] == argv[1]);
}

static Value p_eqv(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_eqv(argv[0], argv[1]));
}

static Value p_equal(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_equal(argv[0], argv[1]));
}

/* --- booleans ----------------------------------------------------------------------------------- */

static Value p_not(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(argv[0] == RTS_FALSE);
}

static Value p_boolean_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(argv[0] == RTS_FALSE || argv[0] == RTS_TRUE);
}

static Value p_boolean_eq(RtsCap *cap, Value *argv, int argc)
{
    for (int i = 0; i < argc; i++)
        if (argv[i] != RTS_FALSE && argv[i] != RTS_TRUE)
            sch_type_error(cap, "boolean=?", "boolean", argv[i]);
    for (int i = 1; i < argc; i++)
        if (argv[i] != argv[0]) return RTS_FALSE;
    return RTS_TRUE;
}

/* --- lists: walking ----------------------------------------------------------------------------- */

/* The number of pairs in the chain of cdrs from v, with *tail set to the non-pair that ends
 * it; -1 if the chain is circular (Floyd's tortoise and hare). */
static intptr_t spine_length(Value v, Value *tail)
{
    Value slow = v;
    intptr_t n = 0;
    while (sch_is_pair(v)) {
        v = rts_cdr(v);
        n++;
        if (!sch_is_pair(v)) break;
        v = rts_cdr(v);
        n++;
        slow = rts_cdr(slow);
        if (v == slow) return -1;
    }
    *tail = v;
    return n;
}

static void circular_error(RtsCap *cap, const char *who) __attribute__((noreturn));
static void circular_error(RtsCap *cap, const char *who)
{
    /* No irritant: printing a circular list would not terminate. */
    sch_error(cap, who, "expected a list, got a circular list", 0);
}

/* The length of a proper list; a type error otherwise. */
static size_t list_length(RtsCap *cap, const char *who, Value v)
{
    Value tail;
    intptr_t n = spine_length(v, &tail);
    if (n < 0) circular_error(cap, who);
    if (tail != RTS_NIL) sch_type_error(cap, who, "list", v);
    return (size_t)n;
}

/* Builds a list front to back in local roots; the caller releases them. */
typedef struct { Value *head, *last; } ListBuilder;

static ListBuilder lb_new(RtsCap *cap)
{
    ListBuilder b;
    b.head = sch_protect(cap, RTS_NIL);
    b.last = sch_protect(cap, RTS_NIL);
    return b;
}

/* x need not be protected: rts_cons protects its arguments. */
static void lb_add(RtsCap *cap, ListBuilder *b, Value x)
{
    Value cell = rts_cons(cap, x, RTS_NIL);
    if (*b->last == RTS_NIL)
        *b->head = cell;
    else
        sm_set_cdr(cap, *b->last, cell);
    *b->last = cell;
}

/* --- pairs ------------------------------------------------------------------------------------- */

static Value p_pair_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_pair(argv[0]));
}

static Value p_null_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(argv[0] == RTS_NIL);
}

static Value p_list_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    Value tail;
    return rts_bool(spine_length(argv[0], &tail) >= 0 && tail == RTS_NIL);
}

static Value p_cons(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_cons(cap, argv[0], argv[1]);
}

/* c[ad]+r: the letters of the name apply from the last to the first. */
static Value cxr(RtsCap *cap, const char *who, Value v)
{
    for (size_t i = strlen(who) - 1; i-- > 1;) {
        check_pair(cap, who, v);
        v = who[i] == 'a' ? rts_car(v) : rts_cdr(v);
    }
    return v;
}

#define CXR(name)                                                                    \
    static Value p_##name(RtsCap *cap, Value *argv, int argc)                       \
    {                                                                                \
        (void)argc;                                                                  \
        return cxr(cap, #name, argv[0]);                                             \
    }
#define CXR_ALL(X)                                                                   \
    X(car) X(cdr)                                                                    \
    X(caar) X(cadr) X(cdar) X(cddr)                                                  \
    X(caaar) X(caadr) X(cadar) X(caddr) X(cdaar) X(cdadr) X(cddar) X(cdddr)          \
    X(caaaar) X(caaadr) X(caadar) X(caaddr) X(cadaar) X(cadadr) X(caddar) X(cadddr)  \
    X(cdaaar) X(cdaadr) X(cdadar) X(cdaddr) X(cddaar) X(cddadr) X(cdddar) X(cddddr)
CXR_ALL(CXR)

static Value p_set_car(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_pair(cap, "set-car!", argv[0]);
    sm_set_car(cap, argv[0], argv[1]);
    return RTS_UNSPEC;
}

static Value p_set_cdr(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_pair(cap, "set-cdr!", argv[0]);
    sm_set_cdr(cap, argv[0], argv[1]);
    return RTS_UNSPEC;
}

/* --- lists ------------------------------------------------------------------------------------- */

static Value p_list(RtsCap *cap, Value *argv, int argc)
{
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (int i = argc; i-- > 0;)
        *acc = rts_cons(cap, argv[i], *acc);
    Value r = *acc;
    sch_release(cap, mark);
    return r;
}

static Value p_make_list(RtsCap *cap, Value *argv, int argc)
{
    size_t n = size_arg(cap, "make-list", argv[0]);
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (size_t i = 0; i < n; i++)
        *acc = rts_cons(cap, argc > 1 ? argv[1] : RTS_FALSE, *acc);
    Value r = *acc;
    sch_release(cap, mark);
    return r;
}

/* (%check-not-circular who l): an error when l's chain of cdrs is circular, as length reports
 * it; anything else passes (map and the other list walkers of the prelude report an improper
 * end themselves). Before, map and filter on a circular list allocated until the heap was
 * gone. */
static Value p_check_not_circular(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    if (!sch_is_string(argv[0])) sch_type_error(cap, "%check-not-circular", "string", argv[0]);
    Value tail;
    if (spine_length(argv[1], &tail) < 0) {
        char who[64];
        size_t n;
        char *s = sch_string_to_utf8(argv[0], &n);
        snprintf(who, sizeof who, "%s", s);
        free(s);
        circular_error(cap, who);
    }
    return RTS_UNSPEC;
}

static Value p_length(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_fixnum((intptr_t)list_length(cap, "length", argv[0]));
}

/* All arguments but the last are copied; the last is shared and may be any value. */
static Value p_append(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 0) return RTS_NIL;
    for (int i = 0; i + 1 < argc; i++) list_length(cap, "append", argv[i]);
    size_t mark = sch_mark(cap);
    ListBuilder b = lb_new(cap);
    Value *cur = sch_protect(cap, RTS_NIL);
    for (int i = 0; i + 1 < argc; i++)
        for (*cur = argv[i]; *cur != RTS_NIL; *cur = rts_cdr(*cur))
            lb_add(cap, &b, rts_car(*cur));
    Value r = argv[argc - 1];
    if (*b.last != RTS_NIL) {
        sm_set_cdr(cap, *b.last, r);
        r = *b.head;
    }
    sch_release(cap, mark);
    return r;
}

static Value p_reverse(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    list_length(cap, "reverse", argv[0]);
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    Value *cur = sch_protect(cap, argv[0]);
    for (; *cur != RTS_NIL; *cur = rts_cdr(*cur))
        *acc = rts_cons(cap, rts_car(*cur), *acc);
    Value r = *acc;
    sch_release(cap, mark);
    return r;
}

/* The k-th cdr of argv[0] (k = argv[1]); need_pair: it must be a pair (list-ref, list-set!). */
static Value list_tail(RtsCap *cap, const char *who, Value *argv, bool need_pair)
{
    intptr_t k = fix_arg(cap, who, argv[1]);
    if (k < 0) sch_range_error(cap, who, argv[1], argv[0]);
    Value l = argv[0];
    for (intptr_t i = 0; i < k; i++) {
        if (!sch_is_pair(l)) sch_range_error(cap, who, argv[1], argv[0]);
        l = rts_cdr(l);
    }
    if (need_pair && !sch_is_pair(l)) sch_range_error(cap, who, argv[1], argv[0]);
    return l;
}

static Value p_list_tail(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return list_tail(cap, "list-tail", argv, false);
}

static Value p_list_ref(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_car(list_tail(cap, "list-ref", argv, true));
}

static Value p_list_set(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    sm_set_car(cap, list_tail(cap, "list-set!", argv, true), argv[2]);
    return RTS_UNSPEC;
}

/* Copies the pairs; an improper list's final cdr is shared, a non-pair is returned as is. */
static Value p_list_copy(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    Value tail;
    intptr_t n = spine_length(argv[0], &tail);
    if (n < 0) circular_error(cap, "list-copy");
    if (n == 0) return argv[0];
    size_t mark = sch_mark(cap);
    ListBuilder b = lb_new(cap);
    Value *cur = sch_protect(cap, argv[0]);
    for (intptr_t i = 0; i < n; i++, *cur = rts_cdr(*cur))
        lb_add(cap, &b, rts_car(*cur));
    sm_set_cdr(cap, *b.last, *cur);
    Value r = *b.head;
    sch_release(cap, mark);
    return r;
}

static Value p_last_pair(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_pair(cap, "last-pair", argv[0]);
    Value tail;
    intptr_t n = spine_length(argv[0], &tail);
    if (n < 0) circular_error(cap, "last-pair");
    Value l = argv[0];
    for (intptr_t i = 1; i < n; i++) l = rts_cdr(l);
    return l;
}

typedef bool (*EquivFn)(Value, Value);
static bool eq_fn(Value a, Value b) { return a == b; }

/* member and assoc: walk the list x, a type error if it is improper, an error if it is
 * circular (the hare moves one pair per step, the tortoise one per two). */
static Value list_search(RtsCap *cap, const char *who, Value x, Value list, EquivFn same,
                         bool assoc)
{
    Value l = list, slow = list;
    for (size_t n = 0;; n++) {
        if (l == RTS_NIL) return RTS_FALSE;
        if (!sch_is_pair(l)) sch_type_error(cap, who, "list", list);
        Value item = rts_car(l);
        if (assoc) {
            check_pair(cap, who, item);
            if (same(x, rts_car(item))) return item;
        } else if (same(x, item)) {
            return l;
        }
        l = rts_cdr(l);
        if (n & 1) {
            slow = rts_cdr(slow);
            if (l == slow) circular_error(cap, who);
        }
    }
}

static Value p_memq(RtsCap *cap, Value *argv, int argc)   { (void)argc; return list_search(cap, "memq", argv[0], argv[1], eq_fn, false); }
static Value p_memv(RtsCap *cap, Value *argv, int argc)   { (void)argc; return list_search(cap, "memv", argv[0], argv[1], sch_eqv, false); }
static Value p_member(RtsCap *cap, Value *argv, int argc) { (void)argc; return list_search(cap, "member", argv[0], argv[1], sch_equal, false); }
static Value p_assq(RtsCap *cap, Value *argv, int argc)   { (void)argc; return list_search(cap, "assq", argv[0], argv[1], eq_fn, true); }
static Value p_assv(RtsCap *cap, Value *argv, int argc)   { (void)argc; return list_search(cap, "assv", argv[0], argv[1], sch_eqv, true); }
static Value p_assoc(RtsCap *cap, Value *argv, int argc)  { (void)argc; return list_search(cap, "assoc", argv[0], argv[1], sch_equal, true); }

/* --- symbols ----------------------------------------------------------------------------------- */

static Value p_symbol_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_symbol(argv[0]));
}

/* A fresh string from UTF-8 that lives in the heap: copied out first, since the heap copy
 * may move while the string is allocated. */
static Value string_from_heap_utf8(RtsCap *cap, const char *s, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy) rtv_fatal("out of memory");
    memcpy(copy, s, n);
    Value r = sch_string_from_utf8(cap, copy, n);
    free(copy);
    return r;
}

static Value p_symbol_to_string(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_symbol(cap, "symbol->string", argv[0]);
    size_t n;
    const char *name = sch_symbol_utf8(argv[0], &n);
    return string_from_heap_utf8(cap, name, n);
}

static Value p_string_to_symbol(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string->symbol", argv[0]);
    size_t n;
    char *utf8 = sch_string_to_utf8(argv[0], &n);
    Value sym = sch_intern(cap, utf8, n);
    free(utf8);
    return sym;
}

static Value p_symbol_eq(RtsCap *cap, Value *argv, int argc)
{
    for (int i = 0; i < argc; i++) check_symbol(cap, "symbol=?", argv[i]);
    for (int i = 1; i < argc; i++)
        if (argv[i] != argv[0]) return RTS_FALSE;
    return RTS_TRUE;
}

/* (gensym [prefix]): an uninterned symbol named prefix (a string or symbol; default "g")
 * followed by a process-wide counter, so that printed gensyms are distinct too. */
static Value p_gensym(RtsCap *cap, Value *argv, int argc)
{
    static uint64_t counter;
    uint64_t k = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
    char *prefix = NULL;
    size_t n = 1;
    if (argc > 0) {
        if (sch_is_string(argv[0])) {
            prefix = sch_string_to_utf8(argv[0], &n);
        } else {
            check_symbol(cap, "gensym", argv[0]);
            const char *s = sch_symbol_utf8(argv[0], &n);
            prefix = malloc(n + 1);
            if (!prefix) rtv_fatal("out of memory");
            memcpy(prefix, s, n);
        }
    }
    char *name = malloc(n + 24);
    if (!name) rtv_fatal("out of memory");
    memcpy(name, prefix ? prefix : "g", n);
    size_t len = n + (size_t)snprintf(name + n, 24, "%llu", (unsigned long long)k);
    free(prefix);
    Value sym = sch_make_symbol_uninterned(cap, name, len);
    free(name);
    return sym;
}

/* --- characters (Latin-1 rules; see the top of the file) ----------------------------------------- */

static bool char_upper(uint32_t c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7);
}

static bool char_lower(uint32_t c)
{
    return (c >= 'a' && c <= 'z') || c == 0xB5 || (c >= 0xDF && c <= 0xFF && c != 0xF7);
}

static bool char_alphabetic(uint32_t c)
{
    return char_upper(c) || char_lower(c) || c == 0xAA || c == 0xBA;
}

static bool char_whitespace(uint32_t c)
{
    return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680
        || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F
        || c == 0x205F || c == 0x3000;
}

/* ß (U+00DF) and ÿ (U+00FF) are lower case with no upper case in Latin-1. */
static uint32_t char_upcase(uint32_t c)
{
    return char_lower(c) && c != 0xB5 && c != 0xDF && c != 0xFF ? c - 0x20 : c;
}

static uint32_t char_downcase(uint32_t c) { return char_upper(c) ? c + 0x20 : c; }

static uint32_t char_foldcase(uint32_t c) { return char_downcase(c); }

static Value p_char_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(rts_is_char(argv[0]));
}

static Value p_char_to_integer(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_fixnum(char_arg(cap, "char->integer", argv[0]));
}

static Value p_integer_to_char(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    intptr_t n = fix_arg(cap, "integer->char", argv[0]);
    if (n < 0 || n > 0x10FFFF || (n >= 0xD800 && n <= 0xDFFF))
        sch_type_error(cap, "integer->char", "Unicode scalar value", argv[0]);
    return rts_char((uint32_t)n);
}

static Value char_compare(RtsCap *cap, Value *argv, int argc, int op, bool fold, const char *who)
{
    for (int i = 0; i < argc; i++) char_arg(cap, who, argv[i]);
    for (int i = 0; i + 1 < argc; i++) {
        uint32_t a = rts_char_val(argv[i]), b = rts_char_val(argv[i + 1]);
        if (fold) {
            a = char_foldcase(a);
            b = char_foldcase(b);
        }
        if (!cmp_holds(op, a < b ? -1 : a > b)) return RTS_FALSE;
    }
    return RTS_TRUE;
}

#define CHAR_CMP(cname, sname, op, fold)                                             \
    static Value cname(RtsCap *cap, Value *argv, int argc)                          \
    {                                                                                \
        return char_compare(cap, argv, argc, op, fold, sname);                       \
    }
CHAR_CMP(p_char_eq, "char=?", '=', false)
CHAR_CMP(p_char_lt, "char<?", '<', false)
CHAR_CMP(p_char_gt, "char>?", '>', false)
CHAR_CMP(p_char_le, "char<=?", 'l', false)
CHAR_CMP(p_char_ge, "char>=?", 'g', false)
CHAR_CMP(p_char_ci_eq, "char-ci=?", '=', true)
CHAR_CMP(p_char_ci_lt, "char-ci<?", '<', true)
CHAR_CMP(p_char_ci_gt, "char-ci>?", '>', true)
CHAR_CMP(p_char_ci_le, "char-ci<=?", 'l', true)
CHAR_CMP(p_char_ci_ge, "char-ci>=?", 'g', true)

#define CHAR_PRED(cname, sname, test)                                                \
    static Value cname(RtsCap *cap, Value *argv, int argc)                          \
    {                                                                                \
        (void)argc;                                                                  \
        return rts_bool(test(char_arg(cap, sname, argv[0])));                        \
    }
static bool char_numeric(uint32_t c) { return c >= '0' && c <= '9'; }
CHAR_PRED(p_char_alphabetic_p, "char-alphabetic?", char_alphabetic)
CHAR_PRED(p_char_numeric_p, "char-numeric?", char_numeric)
CHAR_PRED(p_char_whitespace_p, "char-whitespace?", char_whitespace)
CHAR_PRED(p_char_upper_case_p, "char-upper-case?", char_upper)
CHAR_PRED(p_char_lower_case_p, "char-lower-case?", char_lower)

#define CHAR_MAP(cname, sname, fn)                                                   \
    static Value cname(RtsCap *cap, Value *argv, int argc)                          \
    {                                                                                \
        (void)argc;                                                                  \
        return rts_char(fn(char_arg(cap, sname, argv[0])));                          \
    }
CHAR_MAP(p_char_upcase, "char-upcase", char_upcase)
CHAR_MAP(p_char_downcase, "char-downcase", char_downcase)
CHAR_MAP(p_char_foldcase, "char-foldcase", char_foldcase)

static Value p_digit_value(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    uint32_t c = char_arg(cap, "digit-value", argv[0]);
    return char_numeric(c) ? rts_fixnum(c - '0') : RTS_FALSE;
}

/* --- strings ----------------------------------------------------------------------------------- */

static Value p_string_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_string(argv[0]));
}

static Value p_make_string(RtsCap *cap, Value *argv, int argc)
{
    size_t n = size_arg(cap, "make-string", argv[0]);
    uint32_t fill = argc > 1 ? char_arg(cap, "make-string", argv[1]) : ' ';
    return sch_make_string(cap, n, fill);
}

static Value p_string(RtsCap *cap, Value *argv, int argc)
{
    for (int i = 0; i < argc; i++) char_arg(cap, "string", argv[i]);
    Value s = sch_make_string(cap, (size_t)argc, 0);
    uint32_t *d = sch_string_data(s);
    for (int i = 0; i < argc; i++) d[i] = rts_char_val(argv[i]);
    return s;
}

static Value p_string_length(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string-length", argv[0]);
    return rts_fixnum((intptr_t)sch_string_len(argv[0]));
}

static Value p_string_ref(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string-ref", argv[0]);
    size_t i = index_arg(cap, "string-ref", argv[1], sch_string_len(argv[0]), argv[0]);
    return rts_char(sch_string_data(argv[0])[i]);
}

static Value p_string_set(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string-set!", argv[0]);
    size_t i = index_arg(cap, "string-set!", argv[1], sch_string_len(argv[0]), argv[0]);
    sch_string_data(argv[0])[i] = char_arg(cap, "string-set!", argv[2]);
    return RTS_UNSPEC;
}

/* A new string holding argv[0][start, end); `first` is where the optional bounds start. */
static Value string_copy(RtsCap *cap, const char *who, Value *argv, int argc, int first)
{
    check_string(cap, who, argv[0]);
    Range r = range_args(cap, who, argv, argc, first, sch_string_len(argv[0]), 0);
    Value s = sch_make_string(cap, r.end - r.start, 0);
    memcpy(sch_string_data(s), sch_string_data(argv[0]) + r.start, (r.end - r.start) * 4);
    return s;
}

static Value p_substring(RtsCap *cap, Value *argv, int argc)   { return string_copy(cap, "substring", argv, argc, 1); }
static Value p_string_copy(RtsCap *cap, Value *argv, int argc) { return string_copy(cap, "string-copy", argv, argc, 1); }

static Value p_string_append(RtsCap *cap, Value *argv, int argc)
{
    size_t n = 0;
    for (int i = 0; i < argc; i++) {
        check_string(cap, "string-append", argv[i]);
        n += sch_string_len(argv[i]);
    }
    Value s = sch_make_string(cap, n, 0);
    uint32_t *d = sch_string_data(s);
    for (int i = 0; i < argc; i++) {
        memcpy(d, sch_string_data(argv[i]), sch_string_len(argv[i]) * 4);
        d += sch_string_len(argv[i]);
    }
    return s;
}

/* (string-copy! to at from [start [end]]); the ranges may overlap. */
static Value p_string_copy_x(RtsCap *cap, Value *argv, int argc)
{
    check_string(cap, "string-copy!", argv[0]);
    check_string(cap, "string-copy!", argv[2]);
    Range r = range_args(cap, "string-copy!", argv, argc, 3, sch_string_len(argv[2]), 2);
    size_t at = dest_arg(cap, "string-copy!", argv, sch_string_len(argv[0]), r.end - r.start);
    memmove(sch_string_data(argv[0]) + at, sch_string_data(argv[2]) + r.start,
            (r.end - r.start) * 4);
    return RTS_UNSPEC;
}

static Value p_string_fill(RtsCap *cap, Value *argv, int argc)
{
    check_string(cap, "string-fill!", argv[0]);
    uint32_t c = char_arg(cap, "string-fill!", argv[1]);
    Range r = range_args(cap, "string-fill!", argv, argc, 2, sch_string_len(argv[0]), 0);
    uint32_t *d = sch_string_data(argv[0]);
    for (size_t i = r.start; i < r.end; i++) d[i] = c;
    return RTS_UNSPEC;
}

static Value p_string_to_list(RtsCap *cap, Value *argv, int argc)
{
    check_string(cap, "string->list", argv[0]);
    Range r = range_args(cap, "string->list", argv, argc, 1, sch_string_len(argv[0]), 0);
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (size_t i = r.end; i > r.start; i--)
        *acc = rts_cons(cap, rts_char(sch_string_data(argv[0])[i - 1]), *acc);
    Value l = *acc;
    sch_release(cap, mark);
    return l;
}

static Value p_list_to_string(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    size_t n = list_length(cap, "list->string", argv[0]);
    for (Value l = argv[0]; l != RTS_NIL; l = rts_cdr(l)) char_arg(cap, "list->string", rts_car(l));
    Value s = sch_make_string(cap, n, 0);
    uint32_t *d = sch_string_data(s);
    for (Value l = argv[0]; l != RTS_NIL; l = rts_cdr(l)) *d++ = rts_char_val(rts_car(l));
    return s;
}

static Value p_string_to_vector(RtsCap *cap, Value *argv, int argc)
{
    check_string(cap, "string->vector", argv[0]);
    Range r = range_args(cap, "string->vector", argv, argc, 1, sch_string_len(argv[0]), 0);
    Value v = rts_make_vector(cap, r.end - r.start, RTS_FALSE);
    const uint32_t *s = sch_string_data(argv[0]);
    for (size_t i = r.start; i < r.end; i++) sm_set_field(cap, v, i - r.start, rts_char(s[i]));
    return v;
}

static Value p_vector_to_string(RtsCap *cap, Value *argv, int argc)
{
    check_vector(cap, "vector->string", argv[0]);
    Range r = range_args(cap, "vector->string", argv, argc, 1, rts_vector_length(argv[0]), 0);
    for (size_t i = r.start; i < r.end; i++) char_arg(cap, "vector->string", rts_field(argv[0], i));
    Value s = sch_make_string(cap, r.end - r.start, 0);
    uint32_t *d = sch_string_data(s);
    for (size_t i = r.start; i < r.end; i++) d[i - r.start] = rts_char_val(rts_field(argv[0], i));
    return s;
}

/* Three-way lexicographic comparison by code point (after case folding if fold). */
static int string_cmp3(Value a, Value b, bool fold)
{
    size_t na = sch_string_len(a), nb = sch_string_len(b);
    const uint32_t *x = sch_string_data(a), *y = sch_string_data(b);
    for (size_t i = 0; i < na && i < nb; i++) {
        uint32_t c = fold ? char_foldcase(x[i]) : x[i], d = fold ? char_foldcase(y[i]) : y[i];
        if (c != d) return c < d ? -1 : 1;
    }
    return na < nb ? -1 : na > nb;
}

static Value string_compare(RtsCap *cap, Value *argv, int argc, int op, bool fold, const char *who)
{
    for (int i = 0; i < argc; i++) check_string(cap, who, argv[i]);
    for (int i = 0; i + 1 < argc; i++)
        if (!cmp_holds(op, string_cmp3(argv[i], argv[i + 1], fold))) return RTS_FALSE;
    return RTS_TRUE;
}

#define STRING_CMP(cname, sname, op, fold)                                           \
    static Value cname(RtsCap *cap, Value *argv, int argc)                          \
    {                                                                                \
        return string_compare(cap, argv, argc, op, fold, sname);                     \
    }
STRING_CMP(p_string_eq, "string=?", '=', false)
STRING_CMP(p_string_lt, "string<?", '<', false)
STRING_CMP(p_string_gt, "string>?", '>', false)
STRING_CMP(p_string_le, "string<=?", 'l', false)
STRING_CMP(p_string_ge, "string>=?", 'g', false)
STRING_CMP(p_string_ci_eq, "string-ci=?", '=', true)
STRING_CMP(p_string_ci_lt, "string-ci<?", '<', true)
STRING_CMP(p_string_ci_gt, "string-ci>?", '>', true)
STRING_CMP(p_string_ci_le, "string-ci<=?", 'l', true)
STRING_CMP(p_string_ci_ge, "string-ci>=?", 'g', true)

/* A new string: fn applied to each character of argv[0]. */
static Value string_map(RtsCap *cap, Value *argv, uint32_t (*fn)(uint32_t), const char *who)
{
    check_string(cap, who, argv[0]);
    size_t n = sch_string_len(argv[0]);
    Value s = sch_make_string(cap, n, 0);
    const uint32_t *from = sch_string_data(argv[0]);
    uint32_t *to = sch_string_data(s);
    for (size_t i = 0; i < n; i++) to[i] = fn(from[i]);
    return s;
}

static Value p_string_upcase(RtsCap *cap, Value *argv, int argc)   { (void)argc; return string_map(cap, argv, char_upcase, "string-upcase"); }
static Value p_string_downcase(RtsCap *cap, Value *argv, int argc) { (void)argc; return string_map(cap, argv, char_downcase, "string-downcase"); }
static Value p_string_foldcase(RtsCap *cap, Value *argv, int argc) { (void)argc; return string_map(cap, argv, char_foldcase, "string-foldcase"); }

static Value p_string_join(RtsCap *cap, Value *argv, int argc)
{
    size_t count = list_length(cap, "string-join", argv[0]), n = 0, dn = 1;
    if (argc > 1) {
        check_string(cap, "string-join", argv[1]);
        dn = sch_string_len(argv[1]);
    }
    for (Value l = argv[0]; l != RTS_NIL; l = rts_cdr(l)) {
        check_string(cap, "string-join", rts_car(l));
        n += sch_string_len(rts_car(l));
    }
    if (count > 1) n += (count - 1) * dn;
    Value s = sch_make_string(cap, n, ' ');
    uint32_t *d = sch_string_data(s);
    for (Value l = argv[0]; l != RTS_NIL; l = rts_cdr(l)) {
        if (l != argv[0]) {
            if (argc > 1) memcpy(d, sch_string_data(argv[1]), dn * 4);
            d += dn;   /* without a delimiter argument, the space already there */
        }
        memcpy(d, sch_string_data(rts_car(l)), sch_string_len(rts_car(l)) * 4);
        d += sch_string_len(rts_car(l));
    }
    return s;
}

static Value p_string_split(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string-split", argv[0]);
    uint32_t sep = char_arg(cap, "string-split", argv[1]);
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    /* From the end, so that each piece is consed on the front. */
    size_t end = sch_string_len(argv[0]);
    for (size_t i = end + 1; i-- > 0;) {
        if (i > 0 && sch_string_data(argv[0])[i - 1] != sep) continue;
        Value piece = sch_make_string(cap, end - i, 0);
        memcpy(sch_string_data(piece), sch_string_data(argv[0]) + i, (end - i) * 4);
        *acc = rts_cons(cap, piece, *acc);
        end = i > 0 ? i - 1 : 0;
    }
    Value l = *acc;
    sch_release(cap, mark);
    return l;
}

static Value p_string_contains(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_string(cap, "string-contains", argv[0]);
    check_string(cap, "string-contains", argv[1]);
    size_t n = sch_string_len(argv[0]), m = sch_string_len(argv[1]);
    const uint32_t *s = sch_string_data(argv[0]), *t = sch_string_data(argv[1]);
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (memcmp(s + i, t, m * 4) == 0) return rts_fixnum((intptr_t)i);
    return RTS_FALSE;
}

/* --- vectors ----------------------------------------------------------------------------------- */

static Value p_vector_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_vector(argv[0]));
}

static Value p_make_vector(RtsCap *cap, Value *argv, int argc)
{
    size_t n = size_arg(cap, "make-vector", argv[0]);
    return rts_make_vector(cap, n, argc > 1 ? argv[1] : RTS_FALSE);
}

static Value p_vector(RtsCap *cap, Value *argv, int argc)
{
    Value v = rts_make_vector(cap, (size_t)argc, RTS_FALSE);
    for (int i = 0; i < argc; i++) sm_set_field(cap, v, (size_t)i, argv[i]);
    return v;
}

static Value p_vector_length(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_vector(cap, "vector-length", argv[0]);
    return rts_fixnum((intptr_t)rts_vector_length(argv[0]));
}

static Value p_vector_ref(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_vector(cap, "vector-ref", argv[0]);
    return rts_field(argv[0], index_arg(cap, "vector-ref", argv[1], rts_vector_length(argv[0]), argv[0]));
}

static Value p_vector_set(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_vector(cap, "vector-set!", argv[0]);
    size_t i = index_arg(cap, "vector-set!", argv[1], rts_vector_length(argv[0]), argv[0]);
    sm_set_field(cap, argv[0], i, argv[2]);
    return RTS_UNSPEC;
}

/* (vector-fetch-add! v k n): adds the fixnum n to the fixnum in element k of v as one atomic
 * step and returns what the element held, as GHC's fetchAddIntArray#: a counter that threads
 * on several capabilities share without an MVar (an MVar every thread takes in turn makes
 * them queue through the run queue). Threads that share such an element change and read it
 * only this way, (vector-fetch-add! v k 0) to read it: a vector-ref beside it would be a data
 * race. No write barrier: a fixnum is not a pointer, and nothing allocates here, so no GC
 * moves v meanwhile. */
static Value p_vector_fetch_add(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_vector(cap, "vector-fetch-add!", argv[0]);
    size_t i = index_arg(cap, "vector-fetch-add!", argv[1], rts_vector_length(argv[0]), argv[0]);
    intptr_t d = fix_arg(cap, "vector-fetch-add!", argv[2]);
    Value *slot = &obj_payload(argv[0])[i];
    Value old = __atomic_load_n(slot, __ATOMIC_RELAXED);
    for (;;) {
        if (!rts_is_fixnum(old))
            sch_type_error(cap, "vector-fetch-add!", "exact integer element", old);
        intptr_t sum;
        if (__builtin_add_overflow(rts_fixnum_val(old), d, &sum) || sum > RTS_FIXNUM_MAX
            || sum < RTS_FIXNUM_MIN)
            sch_error(cap, "vector-fetch-add!", "the sum is not a fixnum", 2, old, argv[2]);
        if (__atomic_compare_exchange_n(slot, &old, rts_fixnum(sum), true, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            return old;
    }
}

static Value p_vector_to_list(RtsCap *cap, Value *argv, int argc)
{
    check_vector(cap, "vector->list", argv[0]);
    Range r = range_args(cap, "vector->list", argv, argc, 1, rts_vector_length(argv[0]), 0);
    size_t mark = sch_mark(cap);
    Value *acc = sch_protect(cap, RTS_NIL);
    for (size_t i = r.end; i > r.start; i--)
        *acc = rts_cons(cap, rts_field(argv[0], i - 1), *acc);
    Value l = *acc;
    sch_release(cap, mark);
    return l;
}

static Value p_list_to_vector(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    size_t n = list_length(cap, "list->vector", argv[0]);
    Value v = rts_make_vector(cap, n, RTS_FALSE);
    size_t i = 0;
    for (Value l = argv[0]; l != RTS_NIL; l = rts_cdr(l)) sm_set_field(cap, v, i++, rts_car(l));
    return v;
}

static Value p_vector_fill(RtsCap *cap, Value *argv, int argc)
{
    check_vector(cap, "vector-fill!", argv[0]);
    Range r = range_args(cap, "vector-fill!", argv, argc, 2, rts_vector_length(argv[0]), 0);
    for (size_t i = r.start; i < r.end; i++) sm_set_field(cap, argv[0], i, argv[1]);
    return RTS_UNSPEC;
}

static Value p_vector_copy(RtsCap *cap, Value *argv, int argc)
{
    check_vector(cap, "vector-copy", argv[0]);
    Range r = range_args(cap, "vector-copy", argv, argc, 1, rts_vector_length(argv[0]), 0);
    Value v = rts_make_vector(cap, r.end - r.start, RTS_FALSE);
    for (size_t i = r.start; i < r.end; i++) sm_set_field(cap, v, i - r.start, rts_field(argv[0], i));
    return v;
}

/* (vector-copy! to at from [start [end]]); when to and from are one vector the copy runs in
 * the direction that reads each element before overwriting it. */
static Value p_vector_copy_x(RtsCap *cap, Value *argv, int argc)
{
    check_vector(cap, "vector-copy!", argv[0]);
    check_vector(cap, "vector-copy!", argv[2]);
    Range r = range_args(cap, "vector-copy!", argv, argc, 3, rts_vector_length(argv[2]), 2);
    size_t n = r.end - r.start;
    size_t at = dest_arg(cap, "vector-copy!", argv, rts_vector_length(argv[0]), n);
    if (at <= r.start) {
        for (size_t i = 0; i < n; i++)
            sm_set_field(cap, argv[0], at + i, rts_field(argv[2], r.start + i));
    } else {
        for (size_t i = n; i-- > 0;)
            sm_set_field(cap, argv[0], at + i, rts_field(argv[2], r.start + i));
    }
    return RTS_UNSPEC;
}

static Value p_vector_append(RtsCap *cap, Value *argv, int argc)
{
    size_t n = 0;
    for (int i = 0; i < argc; i++) {
        check_vector(cap, "vector-append", argv[i]);
        n += rts_vector_length(argv[i]);
    }
    Value v = rts_make_vector(cap, n, RTS_FALSE);
    size_t k = 0;
    for (int i = 0; i < argc; i++)
        for (size_t j = 0; j < rts_vector_length(argv[i]); j++)
            sm_set_field(cap, v, k++, rts_field(argv[i], j));
    return v;
}

/* --- bytevectors -------------------------------------------------------------------------------- */

static Value p_bytevector_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_bytevector(argv[0]));
}

static Value p_make_bytevector(RtsCap *cap, Value *argv, int argc)
{
    size_t n = size_arg(cap, "make-bytevector", argv[0]);
    uint8_t fill = argc > 1 ? byte_arg(cap, "make-bytevector", argv[1]) : 0;
    Value b = rts_make_raw(cap, T_BYTEVECTOR, n);
    memset(raw_bytes(b), fill, n);
    return b;
}

static Value p_bytevector(RtsCap *cap, Value *argv, int argc)
{
    for (int i = 0; i < argc; i++) byte_arg(cap, "bytevector", argv[i]);
    Value b = rts_make_raw(cap, T_BYTEVECTOR, (size_t)argc);
    for (int i = 0; i < argc; i++) raw_bytes(b)[i] = (uint8_t)rts_fixnum_val(argv[i]);
    return b;
}

static Value p_bytevector_length(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_bytevector(cap, "bytevector-length", argv[0]);
    return rts_fixnum((intptr_t)raw_len(argv[0]));
}

static Value p_bytevector_u8_ref(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_bytevector(cap, "bytevector-u8-ref", argv[0]);
    size_t i = index_arg(cap, "bytevector-u8-ref", argv[1], raw_len(argv[0]), argv[0]);
    return rts_fixnum(raw_bytes(argv[0])[i]);
}

static Value p_bytevector_u8_set(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_bytevector(cap, "bytevector-u8-set!", argv[0]);
    size_t i = index_arg(cap, "bytevector-u8-set!", argv[1], raw_len(argv[0]), argv[0]);
    raw_bytes(argv[0])[i] = byte_arg(cap, "bytevector-u8-set!", argv[2]);
    return RTS_UNSPEC;
}

static Value p_bytevector_copy(RtsCap *cap, Value *argv, int argc)
{
    check_bytevector(cap, "bytevector-copy", argv[0]);
    Range r = range_args(cap, "bytevector-copy", argv, argc, 1, raw_len(argv[0]), 0);
    Value b = rts_make_raw(cap, T_BYTEVECTOR, r.end - r.start);
    memcpy(raw_bytes(b), raw_bytes(argv[0]) + r.start, r.end - r.start);
    return b;
}

static Value p_bytevector_copy_x(RtsCap *cap, Value *argv, int argc)
{
    check_bytevector(cap, "bytevector-copy!", argv[0]);
    check_bytevector(cap, "bytevector-copy!", argv[2]);
    Range r = range_args(cap, "bytevector-copy!", argv, argc, 3, raw_len(argv[2]), 2);
    size_t at = dest_arg(cap, "bytevector-copy!", argv, raw_len(argv[0]), r.end - r.start);
    memmove(raw_bytes(argv[0]) + at, raw_bytes(argv[2]) + r.start, r.end - r.start);
    return RTS_UNSPEC;
}

static Value p_bytevector_append(RtsCap *cap, Value *argv, int argc)
{
    size_t n = 0;
    for (int i = 0; i < argc; i++) {
        check_bytevector(cap, "bytevector-append", argv[i]);
        n += raw_len(argv[i]);
    }
    Value b = rts_make_raw(cap, T_BYTEVECTOR, n);
    uint8_t *d = raw_bytes(b);
    for (int i = 0; i < argc; i++) {
        memcpy(d, raw_bytes(argv[i]), raw_len(argv[i]));
        d += raw_len(argv[i]);
    }
    return b;
}

/* Malformed UTF-8 decodes as U+FFFD (sch_string_from_utf8). */
static Value p_utf8_to_string(RtsCap *cap, Value *argv, int argc)
{
    check_bytevector(cap, "utf8->string", argv[0]);
    Range r = range_args(cap, "utf8->string", argv, argc, 1, raw_len(argv[0]), 0);
    return string_from_heap_utf8(cap, (const char *)raw_bytes(argv[0]) + r.start, r.end - r.start);
}

static Value p_string_to_utf8(RtsCap *cap, Value *argv, int argc)
{
    check_string(cap, "string->utf8", argv[0]);
    Range r = range_args(cap, "string->utf8", argv, argc, 1, sch_string_len(argv[0]), 0);
    char buf[4];
    size_t n = 0;
    for (size_t i = r.start; i < r.end; i++) n += sch_utf8_encode(sch_string_data(argv[0])[i], buf);
    Value b = rts_make_raw(cap, T_BYTEVECTOR, n);
    uint8_t *d = raw_bytes(b);
    for (size_t i = r.start; i < r.end; i++) {
        size_t k = sch_utf8_encode(sch_string_data(argv[0])[i], buf);
        memcpy(d, buf, k);
        d += k;
    }
    return b;
}

/* --- procedures -------------------------------------------------------------------------------- */

static Value p_procedure_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_procedure(argv[0]));
}

/* --- records (what define-record-type expands into) --------------------------------------------- */

static void check_rtd(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_rtd(v)) sch_type_error(cap, who, "record type descriptor", v);
}

/* (%make-rtd name field-names) */
static Value p_make_rtd(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_symbol(cap, "%make-rtd", argv[0]);
    list_length(cap, "%make-rtd", argv[1]);
    return sch_make_rtd(cap, argv[0], argv[1]);
}

static Value p_record_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_rtd(cap, "%record?", argv[1]);
    return rts_bool(sch_is_record_of(argv[0], argv[1]));
}

/* The field index of (%record-ref obj rtd index who) / (%record-set! obj rtd index value
 * who) after checking obj; an error names the accessor `who` and the type ("point-x:
 * expected a point, got 5" for a type named <point>). */
static size_t record_field(RtsCap *cap, Value *argv, Value who_sym, const char *fallback)
{
    char who[128], type[128];
    symbol_name_copy(who_sym, who, sizeof who, fallback);
    check_rtd(cap, who, argv[1]);
    if (!sch_is_record_of(argv[0], argv[1])) {
        size_t n = strlen(symbol_name_copy(rts_field(argv[1], RTD_NAME), type, sizeof type, "record"));
        const char *t = type;
        if (n > 2 && type[0] == '<' && type[n - 1] == '>') {
            type[n - 1] = 0;
            t++;
        }
        sch_type_error(cap, who, t, argv[0]);
    }
    return index_arg(cap, who, argv[2], obj_size(argv[0]) - 1, argv[0]);
}

static Value p_record_ref(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return sch_record_ref(argv[0], record_field(cap, argv, argv[3], "%record-ref"));
}

static Value p_record_set(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    size_t i = record_field(cap, argv, argv[4], "%record-set!");
    sm_set_field(cap, argv[0], 1 + i, argv[3]);
    return RTS_UNSPEC;
}

/* --- the table ---------------------------------------------------------------------------------- */

#define CXR_DEF(name) { #name, p_##name, 1, 1 },

const SchPrimDef sch_prims_data[] = {
    { "not", p_not, 1, 1 },
    { "boolean?", p_boolean_p, 1, 1 },
    { "boolean=?", p_boolean_eq, 1, -1 },
    { "eq?", p_eq, 2, 2 },
    { "eqv?", p_eqv, 2, 2 },
    { "equal?", p_equal, 2, 2 },

    { "pair?", p_pair_p, 1, 1 },
    { "null?", p_null_p, 1, 1 },
    { "list?", p_list_p, 1, 1 },
    { "cons", p_cons, 2, 2 },
    CXR_ALL(CXR_DEF)
    { "set-car!", p_set_car, 2, 2 },
    { "set-cdr!", p_set_cdr, 2, 2 },
    { "list", p_list, 0, -1 },
    { "make-list", p_make_list, 1, 2 },
    { "length", p_length, 1, 1 },
    { "%check-not-circular", p_check_not_circular, 2, 2 },
    { "append", p_append, 0, -1 },
    { "reverse", p_reverse, 1, 1 },
    { "list-tail", p_list_tail, 2, 2 },
    { "list-ref", p_list_ref, 2, 2 },
    { "list-set!", p_list_set, 3, 3 },
    { "list-copy", p_list_copy, 1, 1 },
    { "last-pair", p_last_pair, 1, 1 },
    { "memq", p_memq, 2, 2 },
    { "memv", p_memv, 2, 2 },
    { "member", p_member, 2, 2 },
    { "assq", p_assq, 2, 2 },
    { "assv", p_assv, 2, 2 },
    { "assoc", p_assoc, 2, 2 },

    { "symbol?", p_symbol_p, 1, 1 },
    { "symbol->string", p_symbol_to_string, 1, 1 },
    { "string->symbol", p_string_to_symbol, 1, 1 },
    { "symbol=?", p_symbol_eq, 1, -1 },
    { "gensym", p_gensym, 0, 1 },

    { "char?", p_char_p, 1, 1 },
    { "char->integer", p_char_to_integer, 1, 1 },
    { "integer->char", p_integer_to_char, 1, 1 },
    { "char=?", p_char_eq, 1, -1 },
    { "char<?", p_char_lt, 1, -1 },
    { "char>?", p_char_gt, 1, -1 },
    { "char<=?", p_char_le, 1, -1 },
    { "char>=?", p_char_ge, 1, -1 },
    { "char-ci=?", p_char_ci_eq, 1, -1 },
    { "char-ci<?", p_char_ci_lt, 1, -1 },
    { "char-ci>?", p_char_ci_gt, 1, -1 },
    { "char-ci<=?", p_char_ci_le, 1, -1 },
    { "char-ci>=?", p_char_ci_ge, 1, -1 },
    { "char-alphabetic?", p_char_alphabetic_p, 1, 1 },
    { "char-numeric?", p_char_numeric_p, 1, 1 },
    { "char-whitespace?", p_char_whitespace_p, 1, 1 },
    { "char-upper-case?", p_char_upper_case_p, 1, 1 },
    { "char-lower-case?", p_char_lower_case_p, 1, 1 },
    { "char-upcase", p_char_upcase, 1, 1 },
    { "char-downcase", p_char_downcase, 1, 1 },
    { "char-foldcase", p_char_foldcase, 1, 1 },
    { "digit-value", p_digit_value, 1, 1 },

    { "string?", p_string_p, 1, 1 },
    { "make-string", p_make_string, 1, 2 },
    { "string", p_string, 0, -1 },
    { "string-length", p_string_length, 1, 1 },
    { "string-ref", p_string_ref, 2, 2 },
    { "string-set!", p_string_set, 3, 3 },
    { "substring", p_substring, 2, 3 },
    { "string-append", p_string_append, 0, -1 },
    { "string-copy", p_string_copy, 1, 3 },
    { "string-copy!", p_string_copy_x, 3, 5 },
    { "string-fill!", p_string_fill, 2, 4 },
    { "string->list", p_string_to_list, 1, 3 },
    { "list->string", p_list_to_string, 1, 1 },
    { "string->vector", p_string_to_vector, 1, 3 },
    { "vector->string", p_vector_to_string, 1, 3 },
    { "string=?", p_string_eq, 1, -1 },
    { "string<?", p_string_lt, 1, -1 },
    { "string>?", p_string_gt, 1, -1 },
    { "string<=?", p_string_le, 1, -1 },
    { "string>=?", p_string_ge, 1, -1 },
    { "string-ci=?", p_string_ci_eq, 1, -1 },
    { "string-ci<?", p_string_ci_lt, 1, -1 },
    { "string-ci>?", p_string_ci_gt, 1, -1 },
    { "string-ci<=?", p_string_ci_le, 1, -1 },
    { "string-ci>=?", p_string_ci_ge, 1, -1 },
    { "string-upcase", p_string_upcase, 1, 1 },
    { "string-downcase", p_string_downcase, 1, 1 },
    { "string-foldcase", p_string_foldcase, 1, 1 },
    { "string-join", p_string_join, 1, 2 },
    { "string-split", p_string_split, 2, 2 },
    { "string-contains", p_string_contains, 2, 2 },

    { "vector?", p_vector_p, 1, 1 },
    { "make-vector", p_make_vector, 1, 2 },
    { "vector", p_vector, 0, -1 },
    { "vector-length", p_vector_length, 1, 1 },
    { "vector-ref", p_vector_ref, 2, 2 },
    { "vector-set!", p_vector_set, 3, 3 },
    { "vector-fetch-add!", p_vector_fetch_add, 3, 3 },
    { "vector->list", p_vector_to_list, 1, 3 },
    { "list->vector", p_list_to_vector, 1, 1 },
    { "vector-fill!", p_vector_fill, 2, 4 },
    { "vector-copy", p_vector_copy, 1, 3 },
    { "vector-copy!", p_vector_copy_x, 3, 5 },
    { "vector-append", p_vector_append, 0, -1 },

    { "bytevector?", p_bytevector_p, 1, 1 },
    { "make-bytevector", p_make_bytevector, 1, 2 },
    { "bytevector", p_bytevector, 0, -1 },
    { "bytevector-length", p_bytevector_length, 1, 1 },
    { "bytevector-u8-ref", p_bytevector_u8_ref, 2, 2 },
    { "bytevector-u8-set!", p_bytevector_u8_set, 3, 3 },
    { "bytevector-copy", p_bytevector_copy, 1, 3 },
    { "bytevector-copy!", p_bytevector_copy_x, 3, 5 },
    { "bytevector-append", p_bytevector_append, 0, -1 },
    { "utf8->string", p_utf8_to_string, 1, 3 },
    { "string->utf8", p_string_to_utf8, 1, 3 },

    { "procedure?", p_procedure_p, 1, 1 },

    { "%make-rtd", p_make_rtd, 2, 2 },
    { "%record?", p_record_p, 2, 2 },
    { "%record-ref", p_record_ref, 4, 4 },
    { "%record-set!", p_record_set, 5, 5 },
    { NULL, NULL, 0, 0 }
};
