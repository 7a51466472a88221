/* Numbers: exact integers are fixnums, inexact reals are flonums (Note [Scheme values]).
 *
 * Exact arithmetic that leaves the fixnum range is an error ("<who>: fixnum overflow" with
 * the operands), never a wrap and never a silent switch to flonums; any flonum operand makes
 * the result a flonum. With no rationals, `/` of exact integers is exact only when the
 * division is, and `exact` of a non-integral flonum is an error. Without complex numbers,
 * sqrt/log/asin/acos of arguments outside their real domain give +nan.0 (as C's libm does).
 *
 * No primitive here keeps a Value across an allocation except through argv or a local root:
 * results are computed as C numbers first and boxed last (num_result, values2).
 */
#include <math.h>
#include "scheme/scheme.h"

/* --- representation helpers ------------------------------------------------------------------- */

static inline bool fix_in_range(intptr_t n) { return n >= RTS_FIXNUM_MIN && n <= RTS_FIXNUM_MAX; }

static inline double num_to_double(Value v)
{
    return rts_is_fixnum(v) ? (double)rts_fixnum_val(v) : rts_flonum_val(v);
}

static inline void check_num(RtsCap *cap, const char *who, Value v)
{
    if (!sch_is_number(v)) sch_type_error(cap, who, "number", v);
}

static Value num_result(RtsCap *cap, bool exact, intptr_t i, double d)
{
    return exact ? rts_fixnum(i) : rts_make_flonum(cap, d);
}

static Value fix_result(RtsCap *cap, const char *who, intptr_t r, Value a, Value b)
{
    if (!fix_in_range(r)) sch_error(cap, who, "fixnum overflow", 2, a, b);
    return rts_fixnum(r);
}

/* 2^62: the first double above the fixnum range, and -2^62 is RTS_FIXNUM_MIN. */
#define FIX_LIMIT_D 4611686018427387904.0

static bool double_is_integer(double d) { return isfinite(d) && d == floor(d); }

/* An integer argument: a fixnum, or an integral flonum (whose operations stay inexact). */
static void int_arg(RtsCap *cap, const char *who, Value v, bool *exact, intptr_t *i, double *d)
{
    if (rts_is_fixnum(v)) {
        *i = rts_fixnum_val(v);
        *d = (double)*i;
        return;
    }
    if (!sch_is_flonum(v) || !double_is_integer(rts_flonum_val(v)))
        sch_type_error(cap, who, "integer", v);
    *exact = false;
    *d = rts_flonum_val(v);
}

static intptr_t exact_int_arg(RtsCap *cap, const char *who, Value v)
{
    if (!rts_is_fixnum(v)) sch_type_error(cap, who, "exact integer", v);
    return rts_fixnum_val(v);
}

/* Multiple values: a record of sch_rtd_values holding the list (Note [Scheme values]). */
static Value values2(RtsCap *cap, Value a, Value b)
{
    size_t mark = sch_mark(cap);
    Value *pa = sch_protect(cap, a);
    Value *l = sch_protect(cap, rts_cons(cap, b, RTS_NIL));
    *l = rts_cons(cap, *pa, *l);
    Value r = sch_make_record(cap, sch_rtd_values, 1, l);
    sch_release(cap, mark);
    return r;
}

/* Two boxed numbers as values; the first is boxed before the second so neither is stale. */
static Value num_values2(RtsCap *cap, bool exact, intptr_t i1, double d1, intptr_t i2, double d2)
{
    size_t mark = sch_mark(cap);
    Value *a = sch_protect(cap, num_result(cap, exact, i1, d1));
    Value b = num_result(cap, exact, i2, d2);
    Value r = values2(cap, *a, b);
    sch_release(cap, mark);
    return r;
}

/* --- generic arithmetic (the VM's slow paths) ------------------------------------------------- */

static Value arith(RtsCap *cap, int op, const char *who, Value a, Value b)
{
    if (rts_is_fixnum(a) && rts_is_fixnum(b)) {
        intptr_t x = rts_fixnum_val(a), y = rts_fixnum_val(b), r;
        bool ovf;
        switch (op) {
        case '+': ovf = __builtin_add_overflow(x, y, &r); break;
        case '-': ovf = __builtin_sub_overflow(x, y, &r); break;
        default:  ovf = __builtin_mul_overflow(x, y, &r); break;
        }
        if (ovf) sch_error(cap, who, "fixnum overflow", 2, a, b);
        return fix_result(cap, who, r, a, b);
    }
    check_num(cap, who, a);
    check_num(cap, who, b);
    double x = num_to_double(a), y = num_to_double(b);
    return rts_make_flonum(cap, op == '+' ? x + y : op == '-' ? x - y : x * y);
}

Value sch_add(RtsCap *cap, Value a, Value b) { return arith(cap, '+', "+", a, b); }
Value sch_sub(RtsCap *cap, Value a, Value b) { return arith(cap, '-', "-", a, b); }
Value sch_mul(RtsCap *cap, Value a, Value b) { return arith(cap, '*', "*", a, b); }

Value sch_div(RtsCap *cap, Value a, Value b)
{
    if (rts_is_fixnum(a) && rts_is_fixnum(b)) {
        intptr_t x = rts_fixnum_val(a), y = rts_fixnum_val(b);
        if (y == 0) sch_error(cap, "/", "division by zero", 2, a, b);
        if (x % y == 0) return fix_result(cap, "/", x / y, a, b);   /* MIN / -1 overflows */
        return rts_make_flonum(cap, (double)x / (double)y);
    }
    check_num(cap, "/", a);
    check_num(cap, "/", b);
    return rts_make_flonum(cap, num_to_double(a) / num_to_double(b));
}

/* Exact three-way comparison of a fixnum with a double: -1, 0, 1, or 2 when unordered (NaN).
 * Converting a fixnum beyond 2^53 to double would round, so compare integer parts exactly. */
static int cmp_fix_double(intptr_t i, double d)
{
    if (isnan(d)) return 2;
    if (d >= FIX_LIMIT_D) return -1;
    if (d < -FIX_LIMIT_D) return 1;
    double t = trunc(d);
    intptr_t ti = (intptr_t)t;
    if (i != ti) return i < ti ? -1 : 1;
    return d > t ? -1 : d < t ? 1 : 0;
}

static int num_cmp3(Value a, Value b)
{
    if (rts_is_fixnum(a)) {
        if (rts_is_fixnum(b)) {
            intptr_t x = rts_fixnum_val(a), y = rts_fixnum_val(b);
            return x < y ? -1 : x > y;
        }
        return cmp_fix_double(rts_fixnum_val(a), rts_flonum_val(b));
    }
    if (rts_is_fixnum(b)) {
        int c = cmp_fix_double(rts_fixnum_val(b), rts_flonum_val(a));
        return c == 2 ? 2 : -c;
    }
    double x = rts_flonum_val(a), y = rts_flonum_val(b);
    return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
}

static bool cmp_holds(int op, int c)
{
    switch (op) {
    case '<': return c == -1;
    case 'l': return c == -1 || c == 0;
    case '=': return c == 0;
    case 'g': return c == 0 || c == 1;
    default:  return c == 1;
    }
}

bool sch_num_cmp(RtsCap *cap, int op, Value a, Value b, const char *who)
{
    check_num(cap, who, a);
    check_num(cap, who, b);
    return cmp_holds(op, num_cmp3(a, b));
}

/* --- variadic arithmetic and comparison -------------------------------------------------------- */

static Value p_add(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 0) return rts_fixnum(0);
    check_num(cap, "+", argv[0]);
    Value acc = argv[0];          /* each step reads its operands before it allocates */
    for (int i = 1; i < argc; i++) acc = sch_add(cap, acc, argv[i]);
    return acc;
}

static Value p_mul(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 0) return rts_fixnum(1);
    check_num(cap, "*", argv[0]);
    Value acc = argv[0];
    for (int i = 1; i < argc; i++) acc = sch_mul(cap, acc, argv[i]);
    return acc;
}

static Value p_sub(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 1) {   /* not 0 - x, which would make (- 0.0) 0.0 instead of -0.0 */
        if (sch_is_flonum(argv[0])) return rts_make_flonum(cap, -rts_flonum_val(argv[0]));
        return sch_sub(cap, rts_fixnum(0), argv[0]);
    }
    Value acc = argv[0];
    for (int i = 1; i < argc; i++) acc = sch_sub(cap, acc, argv[i]);
    return acc;
}

static Value p_div(RtsCap *cap, Value *argv, int argc)
{
    if (argc == 1) return sch_div(cap, rts_fixnum(1), argv[0]);
    Value acc = argv[0];
    for (int i = 1; i < argc; i++) acc = sch_div(cap, acc, argv[i]);
    return acc;
}

/* All arguments are checked to be numbers, even after the chain is known to fail. */
static Value compare_chain(RtsCap *cap, Value *argv, int argc, int op, const char *who)
{
    for (int i = 0; i < argc; i++) check_num(cap, who, argv[i]);
    for (int i = 0; i + 1 < argc; i++)
        if (!cmp_holds(op, num_cmp3(argv[i], argv[i + 1]))) return RTS_FALSE;
    return RTS_TRUE;
}

static Value p_num_eq(RtsCap *cap, Value *argv, int argc) { return compare_chain(cap, argv, argc, '=', "="); }
static Value p_num_lt(RtsCap *cap, Value *argv, int argc) { return compare_chain(cap, argv, argc, '<', "<"); }
static Value p_num_gt(RtsCap *cap, Value *argv, int argc) { return compare_chain(cap, argv, argc, '>', ">"); }
static Value p_num_le(RtsCap *cap, Value *argv, int argc) { return compare_chain(cap, argv, argc, 'l', "<="); }
static Value p_num_ge(RtsCap *cap, Value *argv, int argc) { return compare_chain(cap, argv, argc, 'g', ">="); }

/* max/min: a NaN argument wins; any flonum argument makes the result inexact. */
static Value extremum(RtsCap *cap, Value *argv, int argc, int want, const char *who)
{
    bool inexact = false;
    int best = 0;
    for (int i = 0; i < argc; i++) {
        check_num(cap, who, argv[i]);
        inexact |= sch_is_flonum(argv[i]);
        if (i == 0) continue;
        int c = num_cmp3(argv[i], argv[best]);
        if (c == want || (c == 2 && isnan(num_to_double(argv[i])))) best = i;
    }
    if (inexact && rts_is_fixnum(argv[best]))
        return rts_make_flonum(cap, (double)rts_fixnum_val(argv[best]));
    return argv[best];
}

static Value p_max(RtsCap *cap, Value *argv, int argc) { return extremum(cap, argv, argc, 1, "max"); }
static Value p_min(RtsCap *cap, Value *argv, int argc) { return extremum(cap, argv, argc, -1, "min"); }

/* --- predicates ------------------------------------------------------------------------------- */

static Value p_number_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(sch_is_number(argv[0]));
}

static Value p_rational_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    Value v = argv[0];
    return rts_bool(rts_is_fixnum(v) || (sch_is_flonum(v) && isfinite(rts_flonum_val(v))));
}

static Value p_integer_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    Value v = argv[0];
    return rts_bool(rts_is_fixnum(v) || (sch_is_flonum(v) && double_is_integer(rts_flonum_val(v))));
}

static Value p_exact_integer_p(RtsCap *cap, Value *argv, int argc)
{
    (void)cap; (void)argc;
    return rts_bool(rts_is_fixnum(argv[0]));
}

static Value p_exact_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_num(cap, "exact?", argv[0]);
    return rts_bool(rts_is_fixnum(argv[0]));
}

static Value p_inexact_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_num(cap, "inexact?", argv[0]);
    return rts_bool(sch_is_flonum(argv[0]));
}

static Value p_nan_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_num(cap, "nan?", argv[0]);
    return rts_bool(isnan(num_to_double(argv[0])));
}

static Value p_infinite_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_num(cap, "infinite?", argv[0]);
    return rts_bool(isinf(num_to_double(argv[0])));
}

static Value p_finite_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    check_num(cap, "finite?", argv[0]);
    return rts_bool(isfinite(num_to_double(argv[0])));
}

/* The sign of a number: -1, 0, 1, or 2 for NaN. */
static int num_sign(RtsCap *cap, const char *who, Value v)
{
    check_num(cap, who, v);
    return num_cmp3(v, rts_fixnum(0));
}

static Value p_zero_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_bool(num_sign(cap, "zero?", argv[0]) == 0);
}

static Value p_positive_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_bool(num_sign(cap, "positive?", argv[0]) == 1);
}

static Value p_negative_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_bool(num_sign(cap, "negative?", argv[0]) == -1);
}

static bool is_odd(RtsCap *cap, const char *who, Value v)
{
    bool exact = true;
    intptr_t i = 0;
    double d;
    int_arg(cap, who, v, &exact, &i, &d);
    return exact ? (i & 1) != 0 : fmod(d, 2.0) != 0.0;
}

static Value p_odd_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_bool(is_odd(cap, "odd?", argv[0]));
}

static Value p_even_p(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_bool(!is_odd(cap, "even?", argv[0]));
}

/* --- integer division ---------------------------------------------------------------------------
 * Each operation works on exact fixnums, or on doubles when either operand is an integral
 * flonum. fmod is exact, so the flonum quotients are derived from it. */

typedef enum { DIV_TRUNCATE, DIV_FLOOR } DivKind;

typedef struct {
    bool exact;
    intptr_t q, r;
    double qd, rd;
} DivResult;

static DivResult int_divide(RtsCap *cap, const char *who, DivKind kind, Value a, Value b)
{
    DivResult res = { .exact = true };
    intptr_t x = 0, y = 0;
    double xd, yd;
    int_arg(cap, who, a, &res.exact, &x, &xd);
    int_arg(cap, who, b, &res.exact, &y, &yd);
    if (yd == 0.0) sch_error(cap, who, "division by zero", 2, a, b);
    if (res.exact) {
        /* Only RTS_FIXNUM_MIN / -1 leaves the range; its remainder is 0 either way. */
        res.q = x / y;
        res.r = x % y;
        if (kind == DIV_FLOOR && res.r != 0 && (res.r < 0) != (y < 0)) {
            res.q -= 1;
            res.r += y;
        }
        if (!fix_in_range(res.q)) sch_error(cap, who, "fixnum overflow", 2, a, b);
        return res;
    }
    res.rd = fmod(xd, yd);
    if (kind == DIV_FLOOR && res.rd != 0.0 && (res.rd < 0.0) != (yd < 0.0))
        res.rd += yd;
    res.qd = nearbyint((xd - res.rd) / yd);
    return res;
}

static Value p_truncate_quotient(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "truncate-quotient", DIV_TRUNCATE, argv[0], argv[1]);
    return num_result(cap, d.exact, d.q, d.qd);
}

static Value p_quotient(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "quotient", DIV_TRUNCATE, argv[0], argv[1]);
    return num_result(cap, d.exact, d.q, d.qd);
}

static Value p_truncate_remainder(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "truncate-remainder", DIV_TRUNCATE, argv[0], argv[1]);
    return num_result(cap, d.exact, d.r, d.rd);
}

static Value p_remainder(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "remainder", DIV_TRUNCATE, argv[0], argv[1]);
    return num_result(cap, d.exact, d.r, d.rd);
}

static Value p_floor_quotient(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "floor-quotient", DIV_FLOOR, argv[0], argv[1]);
    return num_result(cap, d.exact, d.q, d.qd);
}

static Value p_floor_remainder(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "floor-remainder", DIV_FLOOR, argv[0], argv[1]);
    return num_result(cap, d.exact, d.r, d.rd);
}

static Value p_modulo(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "modulo", DIV_FLOOR, argv[0], argv[1]);
    return num_result(cap, d.exact, d.r, d.rd);
}

static Value p_floor_div(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "floor/", DIV_FLOOR, argv[0], argv[1]);
    return num_values2(cap, d.exact, d.q, d.qd, d.r, d.rd);
}

static Value p_truncate_div(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    DivResult d = int_divide(cap, "truncate/", DIV_TRUNCATE, argv[0], argv[1]);
    return num_values2(cap, d.exact, d.q, d.qd, d.r, d.rd);
}

/* --- gcd, lcm ----------------------------------------------------------------------------------- */

/* Magnitudes as unsigned: |RTS_FIXNUM_MIN| = 2^62 does not fit a fixnum. */
static uintptr_t gcd_u(uintptr_t a, uintptr_t b)
{
    while (b) {
        uintptr_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

static double gcd_d(double a, double b)
{
    a = fabs(a);
    b = fabs(b);
    while (b != 0.0) {
        double t = fmod(a, b);
        a = b;
        b = t;
    }
    return a;
}

static uintptr_t magnitude(intptr_t i) { return i < 0 ? -(uintptr_t)i : (uintptr_t)i; }

/* Exact unless some argument is an (integral) flonum; checks every argument's type. */
static bool all_exact_ints(RtsCap *cap, const char *who, Value *argv, int argc)
{
    bool exact = true;
    for (int i = 0; i < argc; i++) {
        intptr_t x;
        double xd;
        int_arg(cap, who, argv[i], &exact, &x, &xd);
    }
    return exact;
}

static Value p_gcd(RtsCap *cap, Value *argv, int argc)
{
    if (!all_exact_ints(cap, "gcd", argv, argc)) {
        double g = 0.0;
        for (int i = 0; i < argc; i++) g = gcd_d(g, num_to_double(argv[i]));
        return rts_make_flonum(cap, g);
    }
    uintptr_t g = 0;
    for (int i = 0; i < argc; i++) g = gcd_u(g, magnitude(rts_fixnum_val(argv[i])));
    if (g > (uintptr_t)RTS_FIXNUM_MAX) sch_error(cap, "gcd", "fixnum overflow", 1, argv[0]);
    return rts_fixnum((intptr_t)g);
}

static Value p_lcm(RtsCap *cap, Value *argv, int argc)
{
    if (!all_exact_ints(cap, "lcm", argv, argc)) {
        double l = 1.0;
        for (int i = 0; i < argc; i++) {
            double x = fabs(num_to_double(argv[i]));
            l = (l == 0.0 || x == 0.0) ? 0.0 : l / gcd_d(l, x) * x;
        }
        return rts_make_flonum(cap, l);
    }
    uintptr_t l = 1;
    for (int i = 0; i < argc; i++) {
        uintptr_t m = magnitude(rts_fixnum_val(argv[i]));
        if (m == 0 || l == 0)
            l = 0;
        else if (__builtin_mul_overflow(l / gcd_u(l, m), m, &l) || l > (uintptr_t)RTS_FIXNUM_MAX)
            sch_error(cap, "lcm", "fixnum overflow", 1, argv[i]);
    }
    return rts_fixnum((intptr_t)l);
}

/* --- abs, rounding ------------------------------------------------------------------------------ */

static Value p_abs(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    Value v = argv[0];
    if (rts_is_fixnum(v)) {
        intptr_t i = rts_fixnum_val(v);
        if (i < 0 && -i > RTS_FIXNUM_MAX) sch_error(cap, "abs", "fixnum overflow", 1, v);
        return rts_fixnum(i < 0 ? -i : i);
    }
    check_num(cap, "abs", v);
    return rts_make_flonum(cap, fabs(rts_flonum_val(v)));
}

/* Rounding an exact integer gives it back; a flonum is rounded as a flonum. */
static Value rounding(RtsCap *cap, Value v, double (*fn)(double), const char *who)
{
    if (rts_is_fixnum(v)) return v;
    check_num(cap, who, v);
    return rts_make_flonum(cap, fn(rts_flonum_val(v)));
}

static Value p_floor(RtsCap *cap, Value *argv, int argc)    { (void)argc; return rounding(cap, argv[0], floor, "floor"); }
static Value p_ceiling(RtsCap *cap, Value *argv, int argc)  { (void)argc; return rounding(cap, argv[0], ceil, "ceiling"); }
static Value p_truncate(RtsCap *cap, Value *argv, int argc) { (void)argc; return rounding(cap, argv[0], trunc, "truncate"); }
/* nearbyint in the default rounding mode rounds half to even, as R7RS round does. */
static Value p_round(RtsCap *cap, Value *argv, int argc)    { (void)argc; return rounding(cap, argv[0], nearbyint, "round"); }

/* --- transcendental functions (always inexact) --------------------------------------------------- */

static double real_arg(RtsCap *cap, const char *who, Value v)
{
    check_num(cap, who, v);
    return num_to_double(v);
}

#define UNARY_FLONUM(cname, sname, fn)                                               \
    static Value cname(RtsCap *cap, Value *argv, int argc)                          \
    {                                                                                \
        (void)argc;                                                                  \
        return rts_make_flonum(cap, fn(real_arg(cap, sname, argv[0])));              \
    }
UNARY_FLONUM(p_exp, "exp", exp)
UNARY_FLONUM(p_sin, "sin", sin)
UNARY_FLONUM(p_cos, "cos", cos)
UNARY_FLONUM(p_tan, "tan", tan)
UNARY_FLONUM(p_asin, "asin", asin)
UNARY_FLONUM(p_acos, "acos", acos)

/* (log z) and (log z base). */
static Value p_log(RtsCap *cap, Value *argv, int argc)
{
    double r = log(real_arg(cap, "log", argv[0]));
    if (argc == 2) r /= log(real_arg(cap, "log", argv[1]));
    return rts_make_flonum(cap, r);
}

/* (atan z) and (atan y x). */
static Value p_atan(RtsCap *cap, Value *argv, int argc)
{
    double y = real_arg(cap, "atan", argv[0]);
    return rts_make_flonum(cap, argc == 2 ? atan2(y, real_arg(cap, "atan", argv[1])) : atan(y));
}

/* floor(sqrt(n)) for n >= 0, corrected for the rounding of the double sqrt. */
static intptr_t isqrt(intptr_t n)
{
    intptr_t s = (intptr_t)sqrt((double)n);
    while (s > 0 && s * s > n) s--;
    while ((s + 1) * (s + 1) <= n) s++;
    return s;
}

static Value p_sqrt(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    Value v = argv[0];
    if (rts_is_fixnum(v) && rts_fixnum_val(v) >= 0) {
        intptr_t n = rts_fixnum_val(v), s = isqrt(n);
        if (s * s == n) return rts_fixnum(s);
    }
    return rts_make_flonum(cap, sqrt(real_arg(cap, "sqrt", v)));
}

static Value p_exact_integer_sqrt(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    intptr_t n = exact_int_arg(cap, "exact-integer-sqrt", argv[0]);
    if (n < 0) sch_type_error(cap, "exact-integer-sqrt", "non-negative exact integer", argv[0]);
    intptr_t s = isqrt(n);
    return values2(cap, rts_fixnum(s), rts_fixnum(n - s * s));
}

/* Exact base and non-negative exact exponent: exact, by repeated squaring, overflow checked.
 * The base is squared only while exponent bits remain, and then the result would be at least
 * as large as the square, so an overflow of the square is an overflow of the result. */
static Value p_expt(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    Value a = argv[0], b = argv[1];
    if (rts_is_fixnum(a) && rts_is_fixnum(b)) {
        intptr_t base = rts_fixnum_val(a), e = rts_fixnum_val(b), r = 1;
        if (e < 0 && base == 0) sch_error(cap, "expt", "division by zero", 2, a, b);
        if (e >= 0) {
            /* |base| <= 1 needs no loop, which could not overflow but could be long */
            if (base == 0) return rts_fixnum(e == 0 ? 1 : 0);
            if (base == 1 || base == -1) return rts_fixnum((e & 1) ? base : 1);
            for (;;) {
                if ((e & 1) && (__builtin_mul_overflow(r, base, &r) || !fix_in_range(r)))
                    sch_error(cap, "expt", "fixnum overflow", 2, a, b);
                e >>= 1;
                if (e == 0) return rts_fixnum(r);
                if (__builtin_mul_overflow(base, base, &base) || !fix_in_range(base))
                    sch_error(cap, "expt", "fixnum overflow", 2, a, b);
            }
        }
    }
    return rts_make_flonum(cap, pow(real_arg(cap, "expt", a), real_arg(cap, "expt", b)));
}

/* --- exactness ---------------------------------------------------------------------------------- */

static Value to_exact(RtsCap *cap, Value v, const char *who)
{
    if (rts_is_fixnum(v)) return v;
    check_num(cap, who, v);
    double d = rts_flonum_val(v);
    if (!double_is_integer(d))
        sch_error(cap, who, "no exact representation (no rationals)", 1, v);
    if (d < -FIX_LIMIT_D || d >= FIX_LIMIT_D) sch_error(cap, who, "fixnum overflow", 1, v);
    return rts_fixnum((intptr_t)d);
}

static Value to_inexact(RtsCap *cap, Value v, const char *who)
{
    if (sch_is_flonum(v)) return v;
    check_num(cap, who, v);
    return rts_make_flonum(cap, (double)rts_fixnum_val(v));
}

static Value p_exact(RtsCap *cap, Value *argv, int argc)          { (void)argc; return to_exact(cap, argv[0], "exact"); }
static Value p_inexact_to_exact(RtsCap *cap, Value *argv, int argc) { (void)argc; return to_exact(cap, argv[0], "inexact->exact"); }
static Value p_inexact(RtsCap *cap, Value *argv, int argc)        { (void)argc; return to_inexact(cap, argv[0], "inexact"); }
static Value p_exact_to_inexact(RtsCap *cap, Value *argv, int argc) { (void)argc; return to_inexact(cap, argv[0], "exact->inexact"); }

static Value p_square(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return arith(cap, '*', "square", argv[0], argv[0]);
}

/* --- bitwise operations (SRFI 151 names) on fixnums ----------------------------------------------
 * Two's complement on the 63-bit value: and/ior/xor/not of fixnums stay in range. */

static Value bitwise_fold(RtsCap *cap, Value *argv, int argc, int op, const char *who)
{
    intptr_t acc = op == '&' ? -1 : 0;
    for (int i = 0; i < argc; i++) {
        intptr_t x = exact_int_arg(cap, who, argv[i]);
        acc = op == '&' ? acc & x : op == '|' ? acc | x : acc ^ x;
    }
    return rts_fixnum(acc);
}

static Value p_bitwise_and(RtsCap *cap, Value *argv, int argc) { return bitwise_fold(cap, argv, argc, '&', "bitwise-and"); }
static Value p_bitwise_ior(RtsCap *cap, Value *argv, int argc) { return bitwise_fold(cap, argv, argc, '|', "bitwise-ior"); }
static Value p_bitwise_xor(RtsCap *cap, Value *argv, int argc) { return bitwise_fold(cap, argv, argc, '^', "bitwise-xor"); }

static Value p_bitwise_not(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    return rts_fixnum(~exact_int_arg(cap, "bitwise-not", argv[0]));
}

static Value p_arithmetic_shift(RtsCap *cap, Value *argv, int argc)
{
    (void)argc;
    intptr_t n = exact_int_arg(cap, "arithmetic-shift", argv[0]);
    intptr_t k = exact_int_arg(cap, "arithmetic-shift", argv[1]);
    if (k <= 0) {   /* >> on a negative intptr_t is arithmetic in GCC and clang */
        return rts_fixnum(k <= -63 ? (n < 0 ? -1 : 0) : n >> -k);
    }
    if (n == 0) return argv[0];
    if (k >= 63 || (n < 0 ? n < RTS_FIXNUM_MIN >> k : n > RTS_FIXNUM_MAX >> k))
        sch_error(cap, "arithmetic-shift", "fixnum overflow", 2, argv[0], argv[1]);
    return rts_fixnum((intptr_t)((uintptr_t)n << k));
}

/* --- the table ---------------------------------------------------------------------------------- */

const SchPrimDef sch_prims_num[] = {
    { "number?", p_number_p, 1, 1 },
    { "complex?", p_number_p, 1, 1 },
    { "real?", p_number_p, 1, 1 },
    { "rational?", p_rational_p, 1, 1 },
    { "integer?", p_integer_p, 1, 1 },
    { "exact?", p_exact_p, 1, 1 },
    { "inexact?", p_inexact_p, 1, 1 },
    { "exact-integer?", p_exact_integer_p, 1, 1 },
    { "exact-rational?", p_exact_integer_p, 1, 1 },
    { "nan?", p_nan_p, 1, 1 },
    { "infinite?", p_infinite_p, 1, 1 },
    { "finite?", p_finite_p, 1, 1 },
    { "zero?", p_zero_p, 1, 1 },
    { "positive?", p_positive_p, 1, 1 },
    { "negative?", p_negative_p, 1, 1 },
    { "odd?", p_odd_p, 1, 1 },
    { "even?", p_even_p, 1, 1 },
    { "=", p_num_eq, 1, -1 },
    { "<", p_num_lt, 1, -1 },
    { ">", p_num_gt, 1, -1 },
    { "<=", p_num_le, 1, -1 },
    { ">=", p_num_ge, 1, -1 },
    { "+", p_add, 0, -1 },
    { "*", p_mul, 0, -1 },
    { "-", p_sub, 1, -1 },
    { "/", p_div, 1, -1 },
    { "max", p_max, 1, -1 },
    { "min", p_min, 1, -1 },
    { "abs", p_abs, 1, 1 },
    { "quotient", p_quotient, 2, 2 },
    { "remainder", p_remainder, 2, 2 },
    { "modulo", p_modulo, 2, 2 },
    { "floor/", p_floor_div, 2, 2 },
    { "truncate/", p_truncate_div, 2, 2 },
    { "floor-quotient", p_floor_quotient, 2, 2 },
    { "floor-remainder", p_floor_remainder, 2, 2 },
    { "truncate-quotient", p_truncate_quotient, 2, 2 },
    { "truncate-remainder", p_truncate_remainder, 2, 2 },
    { "gcd", p_gcd, 0, -1 },
    { "lcm", p_lcm, 0, -1 },
    { "floor", p_floor, 1, 1 },
    { "ceiling", p_ceiling, 1, 1 },
    { "round", p_round, 1, 1 },
    { "truncate", p_truncate, 1, 1 },
    { "exp", p_exp, 1, 1 },
    { "log", p_log, 1, 2 },
    { "sin", p_sin, 1, 1 },
    { "cos", p_cos, 1, 1 },
    { "tan", p_tan, 1, 1 },
    { "asin", p_asin, 1, 1 },
    { "acos", p_acos, 1, 1 },
    { "atan", p_atan, 1, 2 },
    { "sqrt", p_sqrt, 1, 1 },
    { "exact-integer-sqrt", p_exact_integer_sqrt, 1, 1 },
    { "expt", p_expt, 2, 2 },
    { "exact", p_exact, 1, 1 },
    { "inexact", p_inexact, 1, 1 },
    { "exact->inexact", p_exact_to_inexact, 1, 1 },
    { "inexact->exact", p_inexact_to_exact, 1, 1 },
    { "square", p_square, 1, 1 },
    { "bitwise-and", p_bitwise_and, 0, -1 },
    { "bitwise-ior", p_bitwise_ior, 0, -1 },
    { "bitwise-xor", p_bitwise_xor, 0, -1 },
    { "bitwise-not", p_bitwise_not, 1, 1 },
    { "arithmetic-shift", p_arithmetic_shift, 2, 2 },
    { NULL, NULL, 0, 0 }
};
