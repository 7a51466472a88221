/* The expander: derived forms to the core forms the compiler knows.
 *
 * Core forms (what sch_expand returns, recursively):
 *   constants, (quote d), variable references,
 *   (if c t e), (define v e), (set! v e), (begin e ...) with at least one e,
 *   (lambda formals body) with one body expression,
 *   (let ((v e) ...) body), (letrec* ((v e) ...) body), applications.
 * A body's internal definitions become a letrec*. Temporaries the expansions introduce are
 * named " t<n>" (a name no program can write), and they call library procedures through
 * %-prefixed aliases (%memv, %cons, ...) that programs do not redefine; the expander is not
 * hygienic otherwise (a local variable named like a special form shadows nothing).
 *
 * Note [Include]
 * (include "file" ...) is the forms of the files, in order, as one (begin ...), spliced into
 * a body or the top level like any begin (R7RS 4.1.7). A relative name is taken from the
 * directory of the file that holds the include form, not from the current directory (as
 * Guile does), so a program can include its library wherever it is run from. The
 * forms read carry their file's name in their positions: errors in them, and backtraces
 * through the procedures they define, name that file. Includes nest at most MAX_INCLUDES
 * deep (a file that includes itself would never end). A program that cannot be trusted to
 * read files (the fuzzer's inputs) is compiled with sch_include_enabled off.
 *
 * Note [Expander depth]
 * The expander recurses on the nesting of the forms it expands (expand) and on the chains
 * that become nested code (cond and case clauses, let-values bindings, quasiquote
 * templates); it goes along plain lists with loops. Every such recursion counts in
 * Ex.depth, and past MAX_DEPTH the form is a syntax error, not a C stack overflow: the
 * reader admits 10000 levels of datums, more than the C stack holds here under ASan. The
 * compiler (compile.c) bounds the nesting of what it is given likewise.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdio.h>
#include "scheme/vm.h"

typedef struct Ex {
    DArena *a;
    SchCompileError *err;
    jmp_buf fail;
    const char *file;           /* the position of the form being expanded */
    int line, col;
    int depth;                  /* Note [Expander depth] */
    int includes;               /* includes being expanded (Note [Include]) */
    const Datum **uq_key;       /* has_unquote's answers so far (open addressing) */
    bool *uq_val;
    size_t uq_cap, uq_n;
} Ex;

#define MAX_DEPTH 2000
#define MAX_INCLUDES 64
#define STR_(n) #n
#define STR(n) STR_(n)

static const char *S_quote, *S_quasiquote, *S_unquote, *S_unquote_splicing, *S_lambda,
    *S_define, *S_set, *S_if, *S_begin, *S_let, *S_letstar, *S_letrec, *S_letrecstar,
    *S_and, *S_or, *S_when, *S_unless, *S_cond, *S_case, *S_else, *S_arrow, *S_do,
    *S_define_record_type, *S_delay, *S_delay_force, *S_make_promise_lazy, *S_guard,
    *S_let_values, *S_letstar_values, *S_define_values, *S_receive, *S_case_lambda,
    *S_parameterize, *S_import, *S_assert, *S_dot3, *S_define_syntax, *S_include;

static void init_names(void)
{
    if (S_quote) return;
#define N(var, text) var = datum_intern(text, sizeof text - 1)
    N(S_quote, "quote"); N(S_quasiquote, "quasiquote"); N(S_unquote, "unquote");
    N(S_unquote_splicing, "unquote-splicing"); N(S_lambda, "lambda"); N(S_define, "define");
    N(S_set, "set!"); N(S_if, "if"); N(S_begin, "begin"); N(S_let, "let");
    N(S_letstar, "let*"); N(S_letrec, "letrec"); N(S_letrecstar, "letrec*"); N(S_and, "and");
    N(S_or, "or"); N(S_when, "when"); N(S_unless, "unless"); N(S_cond, "cond");
    N(S_case, "case"); N(S_else, "else"); N(S_arrow, "=>"); N(S_do, "do");
    N(S_define_record_type, "define-record-type"); N(S_delay, "delay");
    N(S_delay_force, "delay-force"); N(S_make_promise_lazy, "make-promise");
    N(S_guard, "guard"); N(S_let_values, "let-values"); N(S_letstar_values, "let*-values");
    N(S_define_values, "define-values"); N(S_receive, "receive");
    N(S_case_lambda, "case-lambda"); N(S_parameterize, "parameterize");
    N(S_import, "import"); N(S_assert, "assert"); N(S_dot3, "..."); N(S_define_syntax, "define-syntax");
    N(S_include, "include");
#undef N
}

static void __attribute__((noreturn)) fail_at(Ex *x, const char *file, int line, int col,
                                              const char *msg)
{
    snprintf(x->err->msg, sizeof x->err->msg, "%s:%d:%d: %s", file, line, col, msg);
    longjmp(x->fail, 1);
}

/* A syntax error at datum `at` (or at the form being expanded when `at` has no position). */
static void __attribute__((noreturn)) fail_msg(Ex *x, const Datum *at, const char *msg)
{
    if (at && at->line) fail_at(x, at->file, at->line, at->col, msg);
    fail_at(x, x->file, x->line, x->col, msg);
}

static void __attribute__((noreturn)) fail(Ex *x, const Datum *at, const char *fmt, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof msg, fmt, what);
    fail_msg(x, at, msg);
}

/* One level deeper (Note [Expander depth]); the caller decrements x->depth when done. */
static void deeper(Ex *x, const Datum *at)
{
    if (++x->depth > MAX_DEPTH)
        fail(x, at, "%s", "nesting too deep (more than " STR(MAX_DEPTH) " levels of expressions)");
}

/* --- building datums ---------------------------------------------------------------------------- */

static Datum *sym(Ex *x, const char *interned)
{
    Datum *d = datum_new(x->a, D_SYM, x->line, x->col);
    d->file = x->file;
    d->u.sym = interned;
    return d;
}
static Datum *isym(Ex *x, const char *text) { return sym(x, datum_intern(text, strlen(text))); }

static Datum *cons(Ex *x, Datum *a, Datum *b)
{
    Datum *d = datum_new(x->a, D_PAIR, x->line, x->col);
    d->file = x->file;
    d->u.pair.car = a;
    d->u.pair.cdr = b;
    return d;
}
static Datum *list1(Ex *x, Datum *a) { return cons(x, a, DNIL); }
static Datum *list2(Ex *x, Datum *a, Datum *b) { return cons(x, a, list1(x, b)); }
static Datum *list3(Ex *x, Datum *a, Datum *b, Datum *c) { return cons(x, a, list2(x, b, c)); }
static Datum *list4(Ex *x, Datum *a, Datum *b, Datum *c, Datum *d) { return cons(x, a, list3(x, b, c, d)); }

/* A temporary: " t<n>", or "<prefix><n>" (prefix starting with a space). The compiler
 * names no procedure after a temporary, but a do loop's, " do loop <n>", is named "do loop"
 * in backtraces (compile.c, proc_name). */
static Datum *gensym_named(Ex *x, const char *prefix)
{
    static unsigned long counter;
    char buf[48];
    snprintf(buf, sizeof buf, "%s%lu", prefix, __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
    return isym(x, buf);
}
static Datum *gensym(Ex *x) { return gensym_named(x, " t"); }

static Datum *quote(Ex *x, Datum *d) { return list2(x, sym(x, S_quote), d); }
static Datum *seq(Ex *x, Datum *forms)       /* a list of forms as one expression */
{
    if (forms == DNIL) return DUNSPEC;
    if (dcdr(forms) == DNIL) return dcar(forms);
    return cons(x, sym(x, S_begin), forms);
}

static Datum *append2(Ex *x, Datum *l1, Datum *l2)
{
    Datum *r = l2, **t = &r;
    for (; l1 != DNIL; l1 = dcdr(l1)) {
        *t = cons(x, dcar(l1), l2);
        t = &(*t)->u.pair.cdr;
    }
    return r;
}

/* Checks that d is a proper list of at least min elements. */
static size_t need_list(Ex *x, Datum *d, size_t min, const char *what)
{
    size_t n = datum_list_length(d);
    if (n == (size_t)-1 || n < min)
        fail(x, d, "%s: bad syntax", what);
    return n;
}

/* --- the expander ---------------------------------------------------------------------------------- */

static Datum *expand(Ex *x, Datum *d);
static Datum *expand_body(Ex *x, Datum *forms, const Datum *at);

static Datum *expand_list(Ex *x, Datum *l)
{
    Datum *r = DNIL, **t = &r;
    for (; l != DNIL; l = dcdr(l)) {
        Datum *h = expand(x, dcar(l));
        *t = cons(x, h, DNIL);
        t = &(*t)->u.pair.cdr;
    }
    return r;
}

static bool is_formals(const Datum *f)
{
    for (; f->kind == D_PAIR; f = dcdr(f))
        if (dcar(f)->kind != D_SYM) return false;
    return f->kind == D_NIL || f->kind == D_SYM;
}

static Datum *make_lambda(Ex *x, Datum *formals, Datum *body, const Datum *at)
{
    if (!is_formals(formals))
        fail(x, formals, "%s: bad parameter list", "lambda");
    return list3(x, sym(x, S_lambda), formals, expand_body(x, body, at));
}

/* Bindings ((v e) ...): checks them. */
static void check_bindings(Ex *x, Datum *b, const char *what)
{
    if (datum_list_length(b) == (size_t)-1) fail(x, b, "%s: bad bindings", what);
    for (; b != DNIL; b = dcdr(b)) {
        Datum *e = dcar(b);
        size_t n = datum_list_length(e);
        if ((n != 2 && n != 1) || dcar(e)->kind != D_SYM)
            fail(x, e, "%s: bad binding", what);
    }
}
static Datum *binding_init(Datum *b) { return dcdr(b) == DNIL ? DUNSPEC : dcar(dcdr(b)); }

static Datum *expand_bindings(Ex *x, Datum *b)
{
    Datum *r = DNIL, **t = &r;
    for (; b != DNIL; b = dcdr(b)) {
        Datum *e = dcar(b);
        Datum *nb = list2(x, dcar(e), expand(x, binding_init(e)));
        *t = cons(x, nb, DNIL);
        t = &(*t)->u.pair.cdr;
    }
    return r;
}

/* (let name ((v e) ...) body): ((letrec* ((name (lambda (v ...) body))) name) e ...) */
static Datum *named_let(Ex *x, Datum *name, Datum *bindings, Datum *body, const Datum *at)
{
    check_bindings(x, bindings, "let");
    Datum *vars = DNIL, **vt = &vars, *inits = DNIL, **it = &inits;
    for (Datum *b = bindings; b != DNIL; b = dcdr(b)) {
        *vt = cons(x, dcar(dcar(b)), DNIL); vt = &(*vt)->u.pair.cdr;
        *it = cons(x, expand(x, binding_init(dcar(b))), DNIL); it = &(*it)->u.pair.cdr;
    }
    Datum *lam = make_lambda(x, vars, body, at);
    Datum *rec = list3(x, sym(x, S_letrecstar), list1(x, list2(x, name, lam)), name);
    return cons(x, rec, inits);
}

static Datum *expand_cond(Ex *x, Datum *clauses)
{
    if (clauses == DNIL) return DUNSPEC;
    Datum *c = dcar(clauses);
    if (need_list(x, c, 1, "cond") && datum_is_sym(dcar(c), S_else)) {
        if (dcdr(clauses) != DNIL) fail(x, c, "%s: else must be the last clause", "cond");
        return expand(x, seq(x, dcdr(c)));
    }
    deeper(x, c);
    Datum *rest = expand_cond(x, dcdr(clauses));
    x->depth--;
    Datum *test = expand(x, dcar(c));
    if (dcdr(c) == DNIL) {                          /* (test): its value if true */
        Datum *t = gensym(x);
        return list3(x, sym(x, S_let), list1(x, list2(x, t, test)),
                     list4(x, sym(x, S_if), t, t, rest));
    }
    if (datum_is_sym(dcar(dcdr(c)), S_arrow)) {     /* (test => f) */
        if (need_list(x, c, 3, "cond") != 3) fail(x, c, "%s: bad => clause", "cond");
        Datum *t = gensym(x);
        Datum *call = list2(x, expand(x, dcar(dcdr(dcdr(c)))), t);
        return list3(x, sym(x, S_let), list1(x, list2(x, t, test)),
                     list4(x, sym(x, S_if), t, call, rest));
    }
    return list4(x, sym(x, S_if), test, expand(x, seq(x, dcdr(c))), rest);
}

static bool eq_comparable(const Datum *d)
{
    return d->kind == D_SYM || d->kind == D_FIX || d->kind == D_CHAR || d->kind == D_BOOL
        || d->kind == D_NIL;
}

static Datum *case_body(Ex *x, Datum *body, Datum *key)
{
    if (body != DNIL && datum_is_sym(dcar(body), S_arrow)) {
        if (datum_list_length(body) != 2) fail(x, body, "%s: bad => clause", "case");
        return list2(x, expand(x, dcar(dcdr(body))), key);
    }
    return expand(x, seq(x, body));
}

static Datum *expand_case_clauses(Ex *x, Datum *clauses, Datum *key)
{
    if (clauses == DNIL) return DUNSPEC;
    Datum *c = dcar(clauses);
    need_list(x, c, 2, "case");
    if (datum_is_sym(dcar(c), S_else))
        return case_body(x, dcdr(c), key);
    Datum *data = dcar(c);
    if (datum_list_length(data) == (size_t)-1) fail(x, data, "%s: bad clause", "case");
    Datum *test;
    if (data != DNIL && dcdr(data) == DNIL && eq_comparable(dcar(data)))
        test = list3(x, isym(x, "eq?"), key, quote(x, dcar(data)));
    else
        test = list3(x, isym(x, "%memv"), key, quote(x, data));
    Datum *then = case_body(x, dcdr(c), key);
    deeper(x, c);
    Datum *rest = expand_case_clauses(x, dcdr(clauses), key);
    x->depth--;
    return list4(x, sym(x, S_if), test, then, rest);
}

static Datum *qq(Ex *x, Datum *d, int depth);

/* Whether d holds an unquote or unquote-splicing anywhere (as the head of a list, in a
 * list or vector at any depth). qq asks it of every pair and vector it goes through, each
 * of which is inside the last, so the answers are remembered per datum (Ex.uq_*): without
 * that, a template nested n deep took n walks of the whole of it. */
static size_t uq_slot(const Ex *x, const Datum *d)
{
    size_t h = (size_t)(((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15u) & (x->uq_cap - 1);
    while (x->uq_key[h] && x->uq_key[h] != d) h = (h + 1) & (x->uq_cap - 1);
    return h;
}

static bool uq_known(const Ex *x, const Datum *d, bool *val)
{
    if (!x->uq_cap) return false;
    size_t h = uq_slot(x, d);
    if (!x->uq_key[h]) return false;
    *val = x->uq_val[h];
    return true;
}

static void uq_remember(Ex *x, const Datum *d, bool val)
{
    if (2 * (x->uq_n + 1) > x->uq_cap) {
        const Datum **keys = x->uq_key;
        bool *vals = x->uq_val;
        size_t cap = x->uq_cap;
        x->uq_cap = cap ? 2 * cap : 256;
        x->uq_key = datum_alloc(x->a, x->uq_cap * sizeof *x->uq_key);
        x->uq_val = datum_alloc(x->a, x->uq_cap * sizeof *x->uq_val);
        for (size_t i = 0; i < cap; i++)
            if (keys[i]) {
                size_t h = uq_slot(x, keys[i]);
                x->uq_key[h] = keys[i];
                x->uq_val[h] = vals[i];
            }
    }
    size_t h = uq_slot(x, d);
    if (!x->uq_key[h]) x->uq_n++;
    x->uq_key[h] = d;
    x->uq_val[h] = val;
}

static bool has_unquote(Ex *x, const Datum *d)
{
    bool v = false;
    if (d->kind != D_PAIR && d->kind != D_VEC) return false;
    if (uq_known(x, d, &v)) return v;
    if (d->kind == D_VEC) {
        for (size_t i = 0; i < d->u.vec.n && !v; i++)
            v = has_unquote(x, d->u.vec.items[i]);
        uq_remember(x, d, v);
        return v;
    }
    /* A list: its cells up to one already known (no recursion along the list), then each
     * cell's answer from the last to the first. */
    size_t n = 0;
    const Datum *p = d;
    for (; p->kind == D_PAIR && !uq_known(x, p, &v); p = dcdr(p)) n++;
    if (p->kind != D_PAIR) v = false;
    const Datum **cells = datum_alloc(x->a, n * sizeof *cells);
    p = d;
    for (size_t i = 0; i < n; i++, p = dcdr(p))
        cells[i] = p;
    for (size_t i = n; i-- > 0;) {
        const Datum *h = dcar(cells[i]);
        v = v || datum_is_sym(h, S_unquote) || datum_is_sym(h, S_unquote_splicing)
              || has_unquote(x, h);
        uq_remember(x, cells[i], v);
    }
    return v;
}

static Datum *qq_template(Ex *x, Datum *d, int depth);

static Datum *qq(Ex *x, Datum *d, int depth)
{
    deeper(x, d);
    Datum *r = qq_template(x, d, depth);
    x->depth--;
    return r;
}

static Datum *qq_template(Ex *x, Datum *d, int depth)
{
    if (!has_unquote(x, d) && !(d->kind == D_PAIR && datum_is_sym(dcar(d), S_quasiquote)))
        return quote(x, d);
    if (d->kind == D_VEC) {
        Datum *l = DNIL;
        for (size_t i = d->u.vec.n; i-- > 0;)
            l = cons(x, d->u.vec.items[i], l);
        return list2(x, isym(x, "%list->vector"), qq(x, l, depth));
    }
    if (d->kind != D_PAIR) return quote(x, d);
    Datum *h = dcar(d);
    if (datum_is_sym(h, S_unquote) && datum_list_length(d) == 2) {
        if (depth == 1) return expand(x, dcar(dcdr(d)));
        return list3(x, isym(x, "%list"), quote(x, h), qq(x, dcar(dcdr(d)), depth - 1));
    }
    if (datum_is_sym(h, S_quasiquote) && datum_list_length(d) == 2)
        return list3(x, isym(x, "%list"), quote(x, h), qq(x, dcar(dcdr(d)), depth + 1));
    if (h->kind == D_PAIR && datum_is_sym(dcar(h), S_unquote_splicing) && datum_list_length(h) == 2) {
        Datum *rest = qq(x, dcdr(d), depth);
        if (depth == 1)
            return list3(x, isym(x, "%append"), expand(x, dcar(dcdr(h))), rest);
        Datum *inner = list3(x, isym(x, "%list"), quote(x, dcar(h)), qq(x, dcar(dcdr(h)), depth - 1));
        return list3(x, isym(x, "%cons"), inner, rest);
    }
    return list3(x, isym(x, "%cons"), qq(x, h, depth), qq(x, dcdr(d), depth));
}

/* (define-record-type name (ctor field ...) pred (field accessor [modifier]) ...) */
static Datum *record_type(Ex *x, Datum *d)
{
    need_list(x, d, 4, "define-record-type");           /* name, constructor, predicate */
    Datum *name = dcar(dcdr(d)), *ctor = dcar(dcdr(dcdr(d))), *pred = dcar(dcdr(dcdr(dcdr(d))));
    Datum *fields = dcdr(dcdr(dcdr(dcdr(d))));
    if (name->kind == D_PAIR) name = dcar(name);          /* (name extra ...) in some dialects */
    if (name->kind != D_SYM) fail(x, d, "%s: bad type name", "define-record-type");
    Datum *fnames = DNIL, **ft = &fnames;
    size_t nf = 0;
    for (Datum *f = fields; f != DNIL; f = dcdr(f), nf++) {
        Datum *spec = dcar(f);
        if (spec->kind == D_SYM) spec = list1(x, spec);
        size_t n = datum_list_length(spec);
        if (n == (size_t)-1 || n < 1 || n > 3 || dcar(spec)->kind != D_SYM)
            fail(x, spec, "%s: bad field", "define-record-type");
        *ft = cons(x, dcar(spec), DNIL);
        ft = &(*ft)->u.pair.cdr;
    }
    Datum *defs = DNIL, **dt = &defs;
#define ADD(form) do { *dt = cons(x, (form), DNIL); dt = &(*dt)->u.pair.cdr; } while (0)
    ADD(list3(x, sym(x, S_define), name,
              list3(x, isym(x, "%make-rtd"), quote(x, name), quote(x, fnames))));
    if (ctor->kind == D_SYM) {                               /* a bare name: every field */
        ctor = cons(x, ctor, fnames);
    }
    if (ctor->kind == D_PAIR) {
        Datum *cargs = dcdr(ctor);
        if (!is_formals(cargs) || datum_list_length(cargs) == (size_t)-1)
            fail(x, ctor, "%s: bad constructor", "define-record-type");
        Datum *vals = DNIL, **vt = &vals;
        for (Datum *f = fnames; f != DNIL; f = dcdr(f)) {
            Datum *v = DFALSE;
            for (Datum *c = cargs; c != DNIL; c = dcdr(c))
                if (dcar(c)->u.sym == dcar(f)->u.sym) v = dcar(c);
            *vt = cons(x, v, DNIL);
            vt = &(*vt)->u.pair.cdr;
        }
        Datum *body = cons(x, isym(x, "%record"), cons(x, name, vals));
        ADD(list3(x, sym(x, S_define), dcar(ctor), list3(x, sym(x, S_lambda), cargs, body)));
    }
    if (pred->kind == D_SYM) {
        Datum *o = gensym(x);
        ADD(list3(x, sym(x, S_define), pred,
                  list3(x, sym(x, S_lambda), list1(x, o), list3(x, isym(x, "%record?"), o, name))));
    }
    size_t i = 0;
    for (Datum *f = fields; f != DNIL; f = dcdr(f), i++) {
        Datum *spec = dcar(f);
        if (spec->kind != D_PAIR) continue;
        Datum *acc = dcdr(spec) != DNIL ? dcar(dcdr(spec)) : NULL;
        Datum *mod = acc && dcdr(dcdr(spec)) != DNIL ? dcar(dcdr(dcdr(spec))) : NULL;
        Datum *o = gensym(x), *v = gensym(x);
        if (acc) {
            Datum *call = cons(x, isym(x, "%record-ref"),
                               list4(x, o, name, datum_fix(x->a, (intptr_t)i), quote(x, acc)));
            ADD(list3(x, sym(x, S_define), acc, list3(x, sym(x, S_lambda), list1(x, o), call)));
        }
        if (mod) {
            Datum *call = cons(x, isym(x, "%record-set!"),
                               cons(x, o, list4(x, name, datum_fix(x->a, (intptr_t)i), v, quote(x, mod))));
            ADD(list3(x, sym(x, S_define), mod, list3(x, sym(x, S_lambda), list2(x, o, v), call)));
        }
    }
#undef ADD
    (void)nf;
    return expand(x, cons(x, sym(x, S_begin), defs));
}

/* (guard (var clause ...) body ...), after R7RS's definition but re-raising from the
 * guard's own context when no clause matches (call/cc is escape-only):
 *   ((%call/cc-guard (lambda (k) (with-exception-handler
 *        (lambda (c) (k (lambda () (let ((var c)) (cond clause ... (else (raise-continuable c)))))))
 *        (lambda () (call-with-values (lambda () body ...) (lambda vs (k (lambda () (apply values vs))))))))))) */
static Datum *guard(Ex *x, Datum *d)
{
    need_list(x, d, 2, "guard");
    Datum *spec = dcar(dcdr(d)), *body = dcdr(dcdr(d));
    if (spec->kind != D_PAIR || dcar(spec)->kind != D_SYM || datum_list_length(spec) == (size_t)-1)
        fail(x, d, "%s: bad syntax", "guard");
    Datum *var = dcar(spec), *clauses = dcdr(spec);
    Datum *k = gensym(x), *c = gensym(x), *vs = gensym(x);
    bool has_else = false;
    for (Datum *cl = clauses; cl != DNIL; cl = dcdr(cl))
        if (dcar(cl)->kind == D_PAIR && datum_is_sym(dcar(dcar(cl)), S_else)) has_else = true;
    if (!has_else)
        clauses = append2(x, clauses, list1(x, list2(x, sym(x, S_else),
                                                     list2(x, isym(x, "%raise-continuable"), c))));
    Datum *handler_body = list3(x, sym(x, S_let), list1(x, list2(x, var, c)),
                                cons(x, sym(x, S_cond), clauses));
    Datum *handler = list3(x, sym(x, S_lambda), list1(x, c),
                           list2(x, k, list3(x, sym(x, S_lambda), DNIL, handler_body)));
    Datum *producer = cons(x, sym(x, S_lambda), cons(x, DNIL, body));
    Datum *consumer = list3(x, sym(x, S_lambda), vs,
                            list2(x, k, list3(x, sym(x, S_lambda), DNIL,
                                              list3(x, isym(x, "%apply"), isym(x, "%values"), vs))));
    Datum *thunk = list3(x, sym(x, S_lambda), DNIL,
                         list3(x, isym(x, "%call-with-values"), producer, consumer));
    Datum *weh = list3(x, isym(x, "%with-exception-handler"), handler, thunk);
    Datum *outer = list2(x, isym(x, "%call/cc*"), list3(x, sym(x, S_lambda), list1(x, k), weh));
    return expand(x, list1(x, outer));
}

/* let*-values / receive: nested call-with-values, each binding in the scope of the ones
 * before it. */
static Datum *let_values(Ex *x, Datum *bindings, Datum *body, const Datum *at)
{
    if (bindings == DNIL)
        return list3(x, sym(x, S_let), DNIL, expand_body(x, body, at));
    Datum *b = dcar(bindings);
    if (datum_list_length(b) != 2 || !is_formals(dcar(b)))
        fail(x, b, "%s: bad binding", "let-values");
    deeper(x, b);
    Datum *inner = let_values(x, dcdr(bindings), body, at);
    x->depth--;
    Datum *producer = list3(x, sym(x, S_lambda), DNIL, expand(x, dcar(dcdr(b))));
    Datum *consumer = list3(x, sym(x, S_lambda), dcar(b), inner);
    return list3(x, isym(x, "%call-with-values"), producer, consumer);
}

/* let-values: every init in the outer scope. The values are received into temporaries of
 * the same shape, then bound to the real names all at once. */
static Datum *let_values_parallel(Ex *x, Datum *bindings, Datum *body, const Datum *at)
{
    Datum *renamed = DNIL, **rt = &renamed, *lets = DNIL, **lt = &lets;
    for (Datum *bs = bindings; bs != DNIL; bs = dcdr(bs)) {
        Datum *b = dcar(bs);
        if (datum_list_length(b) != 2 || !is_formals(dcar(b)))
            fail(x, b, "%s: bad binding", "let-values");
        Datum *formals = DNIL, **ft = &formals, *f = dcar(b);
        for (; f->kind == D_PAIR; f = dcdr(f)) {
            Datum *t = gensym(x);
            *ft = cons(x, t, DNIL); ft = &(*ft)->u.pair.cdr;
            *lt = cons(x, list2(x, dcar(f), t), DNIL); lt = &(*lt)->u.pair.cdr;
        }
        if (f->kind == D_SYM) {
            Datum *t = gensym(x);
            *ft = t;
            *lt = cons(x, list2(x, f, t), DNIL); lt = &(*lt)->u.pair.cdr;
        }
        *rt = cons(x, list2(x, formals, dcar(dcdr(b))), DNIL);
        rt = &(*rt)->u.pair.cdr;
    }
    return let_values(x, renamed, list1(x, cons(x, sym(x, S_let), cons(x, lets, body))), at);
}

/* (do ((var init step) ...) (test expr ...) body ...) */
static Datum *expand_do(Ex *x, Datum *d)
{
    need_list(x, d, 3, "do");
    Datum *specs = dcar(dcdr(d)), *end = dcar(dcdr(dcdr(d))), *body = dcdr(dcdr(dcdr(d)));
    if (datum_list_length(specs) == (size_t)-1 || need_list(x, end, 1, "do") < 1)
        fail(x, d, "%s: bad syntax", "do");
    Datum *loop = gensym_named(x, " do loop ");
    Datum *bindings = DNIL, **bt = &bindings, *steps = DNIL, **st = &steps;
    for (Datum *s = specs; s != DNIL; s = dcdr(s)) {
        Datum *sp = dcar(s);
        size_t n = datum_list_length(sp);
        if ((n != 2 && n != 3) || dcar(sp)->kind != D_SYM) fail(x, sp, "%s: bad variable", "do");
        *bt = cons(x, list2(x, dcar(sp), dcar(dcdr(sp))), DNIL); bt = &(*bt)->u.pair.cdr;
        *st = cons(x, n == 3 ? dcar(dcdr(dcdr(sp))) : dcar(sp), DNIL); st = &(*st)->u.pair.cdr;
    }
    Datum *again = append2(x, body, list1(x, cons(x, loop, steps)));
    Datum *exit = dcdr(end) == DNIL ? list1(x, DUNSPEC) : dcdr(end);
    Datum *ifx = list4(x, sym(x, S_if), dcar(end), cons(x, sym(x, S_begin), exit),
                       cons(x, sym(x, S_begin), again));
    return expand(x, list4(x, sym(x, S_let), loop, bindings, ifx));
}

/* (case-lambda (formals body ...) ...): dispatch on the argument count. */
static Datum *case_lambda(Ex *x, Datum *d)
{
    Datum *args = gensym(x), *n = gensym(x);
    Datum *clauses = DNIL, **ct = &clauses;
    for (Datum *c = dcdr(d); c != DNIL; c = dcdr(c)) {
        Datum *cl = dcar(c);
        need_list(x, cl, 2, "case-lambda");
        Datum *f = dcar(cl);
        size_t req = 0;
        Datum *p = f;
        for (; p->kind == D_PAIR; p = dcdr(p)) req++;
        Datum *test = list3(x, isym(x, p->kind == D_NIL ? "=" : ">="), n, datum_fix(x->a, (intptr_t)req));
        Datum *call = list3(x, isym(x, "%apply"), cons(x, sym(x, S_lambda), cl), args);
        *ct = cons(x, list2(x, test, call), DNIL);
        ct = &(*ct)->u.pair.cdr;
    }
    Datum *err = list3(x, isym(x, "%error"), datum_new(x->a, D_STR, 0, 0), args);
    static uint32_t msg[] = { 'c','a','s','e','-','l','a','m','b','d','a',':',' ','n','o',' ',
                              'c','l','a','u','s','e',' ','m','a','t','c','h','e','s' };
    dcar(dcdr(err))->u.str.s = msg;
    dcar(dcdr(err))->u.str.n = sizeof msg / sizeof msg[0];
    *ct = list1(x, list2(x, sym(x, S_else), err));
    Datum *body = list3(x, sym(x, S_let), list1(x, list2(x, n, list2(x, isym(x, "%length"), args))),
                        cons(x, sym(x, S_cond), clauses));
    return expand(x, list3(x, sym(x, S_lambda), args, body));
}

/* --- include (Note [Include]) ---------------------------------------------------------------------- */

bool sch_include_enabled = true;

/* The file that `name` names from the file `from`, in the arena. */
static const char *include_path(Ex *x, const char *from, const char *name)
{
    const char *slash = strrchr(from, '/');
    size_t dir = name[0] == '/' || !slash ? 0 : (size_t)(slash - from) + 1, n = strlen(name);
    char *path = datum_alloc(x->a, dir + n + 1);
    memcpy(path, from, dir);
    memcpy(path + dir, name, n + 1);
    return path;
}

/* The file name in the string datum s (UTF-8, in the arena), or NULL if it is empty or
 * holds a NUL. */
static const char *file_name(Ex *x, const Datum *s)
{
    if (s->kind != D_STR || s->u.str.n == 0) return NULL;
    char *name = datum_alloc(x->a, 4 * s->u.str.n + 1), *end = name;
    for (size_t i = 0; i < s->u.str.n; i++) {
        if (!s->u.str.s[i]) return NULL;
        end += sch_utf8_encode(s->u.str.s[i], end);
    }
    return name;
}

static Datum *include(Ex *x, Datum *d)
{
    need_list(x, d, 2, "include");
    if (x->includes == MAX_INCLUDES)
        fail(x, d, "%s: nested more than " STR(MAX_INCLUDES) " deep (does a file include itself?)", "include");
    Datum *forms = DNIL, **tail = &forms;
    for (Datum *l = dcdr(d); l != DNIL; l = dcdr(l)) {
        const char *name = file_name(x, dcar(l));
        if (!name) fail(x, dcar(l), "%s: expected a file name (a string)", "include");
        if (!sch_include_enabled) fail(x, dcar(l), "%s: reading files is disabled", "include");
        const char *path = include_path(x, x->file, name);
        SchPort *in = sch_port_open_file_in(path);
        if (!in) {
            char msg[300];
            snprintf(msg, sizeof msg, "include: cannot open %s: %s", path, strerror(errno));
            fail_msg(x, dcar(l), msg);
        }
        SchReadError err;
        for (Datum *f; (f = sch_read(x->a, in, &err));) {
            *tail = datum_cons(x->a, f, DNIL);
            tail = &(*tail)->u.pair.cdr;
        }
        sch_port_free(in);
        if (err.msg[0]) fail_at(x, path, err.line, err.col, err.msg);
    }
    x->includes++;
    Datum *r = expand(x, cons(x, sym(x, S_begin), forms));
    x->includes--;
    return r;
}

/* --- define, define-values, parameterize, assert ---------------------------------------------------- */

/* (define (f . formals) body ...), curried (define ((f a) b) ...), (define v [expr]). */
static Datum *define(Ex *x, Datum *d, size_t n, Datum *a1)
{
    if (n < 2) fail(x, d, "%s: bad syntax", "define");
    if (a1->kind == D_PAIR) {                      /* (define (f . formals) body ...) */
        Datum *target = dcar(a1), *formals = dcdr(a1), *body = dcdr(dcdr(d));
        if (body == DNIL) fail(x, d, "%s: no body", "define");
        Datum *lam = cons(x, sym(x, S_lambda), cons(x, formals, body));
        while (target->kind == D_PAIR) {           /* curried: (define ((f a) b) ...) */
            lam = list3(x, sym(x, S_lambda), dcdr(target), lam);
            target = dcar(target);
        }
        if (target->kind != D_SYM) fail(x, d, "%s: bad name", "define");
        return list3(x, sym(x, S_define), target, expand(x, lam));
    }
    if (a1->kind != D_SYM || n > 3) fail(x, d, "%s: bad syntax", "define");
    return list3(x, sym(x, S_define), a1, n == 3 ? expand(x, dcar(dcdr(dcdr(d)))) : DUNSPEC);
}

/* (define-values formals expr): each variable defined, then set from expr's values. */
static Datum *define_values(Ex *x, Datum *d, size_t n, Datum *a1)
{
    const char *s = S_define_values;
    if (n != 3 || !is_formals(a1)) fail(x, d, "%s: bad syntax", s);
    Datum *defs = DNIL, **dt = &defs, *tmps = DNIL, **tt = &tmps, *sets = DNIL, **st = &sets;
    Datum *f = a1;
    for (; f->kind == D_PAIR; f = dcdr(f)) {
        Datum *t = gensym(x);
        *dt = cons(x, list2(x, sym(x, S_define), dcar(f)), DNIL); dt = &(*dt)->u.pair.cdr;
        *tt = cons(x, t, DNIL); tt = &(*tt)->u.pair.cdr;
        *st = cons(x, list3(x, sym(x, S_set), dcar(f), t), DNIL); st = &(*st)->u.pair.cdr;
    }
    if (f->kind == D_SYM) {
        Datum *t = gensym(x);
        *dt = cons(x, list2(x, sym(x, S_define), f), DNIL);
        *tt = t;
        *st = cons(x, list3(x, sym(x, S_set), f, t), DNIL);
    }
    Datum *consumer = cons(x, sym(x, S_lambda), cons(x, tmps, append2(x, sets, list1(x, DUNSPEC))));
    Datum *call = list3(x, isym(x, "%call-with-values"),
                        list3(x, sym(x, S_lambda), DNIL, dcar(dcdr(dcdr(d)))), consumer);
    return expand(x, cons(x, sym(x, S_begin), append2(x, defs, list1(x, call))));
}

/* (parameterize ((p v) ...) body ...) as (%parameterize (list p ...) (list v ...) thunk). */
static Datum *parameterize(Ex *x, Datum *d, size_t n, Datum *a1)
{
    const char *s = S_parameterize;
    if (n < 3 || datum_list_length(a1) == (size_t)-1) fail(x, d, "%s: bad syntax", s);
    Datum *ps = DNIL, **pt = &ps, *vs = DNIL, **vt = &vs;
    for (Datum *b = a1; b != DNIL; b = dcdr(b)) {
        if (datum_list_length(dcar(b)) != 2) fail(x, dcar(b), "%s: bad binding", s);
        *pt = cons(x, dcar(dcar(b)), DNIL); pt = &(*pt)->u.pair.cdr;
        *vt = cons(x, dcar(dcdr(dcar(b))), DNIL); vt = &(*vt)->u.pair.cdr;
    }
    Datum *thunk = cons(x, sym(x, S_lambda), cons(x, DNIL, dcdr(dcdr(d))));
    return expand(x, list4(x, isym(x, "%parameterize"), cons(x, isym(x, "%list"), ps),
                           cons(x, isym(x, "%list"), vs), thunk));
}

/* (assert expr): an error quoting expr when it is false. */
static Datum *assertion(Ex *x, Datum *d, size_t n, Datum *a1)
{
    const char *s = S_assert;
    if (n != 2) fail(x, d, "%s: bad syntax", s);
    static uint32_t msg[] = { 'a','s','s','e','r','t','i','o','n',' ','f','a','i','l','e','d',':' };
    Datum *m = datum_new(x->a, D_STR, 0, 0);
    m->u.str.s = msg;
    m->u.str.n = sizeof msg / sizeof msg[0];
    return expand(x, list4(x, sym(x, S_if), a1, DUNSPEC, list3(x, isym(x, "%error"), m, quote(x, a1))));
}

/* --- the dispatch -------------------------------------------------------------------------------------- */

static Datum *expand_pair(Ex *x, Datum *d)
{
    Datum *h = dcar(d);
    if (datum_list_length(d) == (size_t)-1)
        fail(x, d, "%s: improper list in an expression", h->kind == D_SYM ? h->u.sym : "call");
    if (h->kind != D_SYM)
        return expand_list(x, d);
    const char *s = h->u.sym;
    size_t n = datum_list_length(d);
    Datum *a1 = n > 1 ? dcar(dcdr(d)) : NULL;
    if (s == S_quote) {
        if (n != 2) fail(x, d, "%s: bad syntax", "quote");
        return d;
    }
    if (s == S_quasiquote) {
        if (n != 2) fail(x, d, "%s: bad syntax", "quasiquote");
        return qq(x, a1, 1);
    }
    if (s == S_lambda) {
        if (n < 3) fail(x, d, "%s: bad syntax", "lambda");
        return make_lambda(x, a1, dcdr(dcdr(d)), d);
    }
    if (s == S_define) return define(x, d, n, a1);
    if (s == S_set) {
        if (n != 3 || a1->kind != D_SYM) fail(x, d, "%s: bad syntax", "set!");
        return list3(x, h, a1, expand(x, dcar(dcdr(dcdr(d)))));
    }
    if (s == S_if) {
        if (n != 3 && n != 4) fail(x, d, "%s: bad syntax", "if");
        Datum *e = n == 4 ? expand(x, dcar(dcdr(dcdr(dcdr(d))))) : DUNSPEC;
        return list4(x, h, expand(x, a1), expand(x, dcar(dcdr(dcdr(d)))), e);
    }
    if (s == S_begin) {
        if (n == 1) return DUNSPEC;
        return cons(x, h, expand_list(x, dcdr(d)));
    }
    if (s == S_let) {
        if (n < 3) fail(x, d, "%s: bad syntax", "let");
        if (a1->kind == D_SYM) {
            if (n < 4) fail(x, d, "%s: bad syntax", "let");
            return named_let(x, a1, dcar(dcdr(dcdr(d))), dcdr(dcdr(dcdr(d))), d);
        }
        check_bindings(x, a1, "let");
        return list3(x, h, expand_bindings(x, a1), expand_body(x, dcdr(dcdr(d)), d));
    }
    if (s == S_letstar) {
        if (n < 3) fail(x, d, "%s: bad syntax", "let*");
        check_bindings(x, a1, "let*");
        if (a1 == DNIL || dcdr(a1) == DNIL)
            return expand(x, cons(x, sym(x, S_let), dcdr(d)));
        Datum *inner = cons(x, h, cons(x, dcdr(a1), dcdr(dcdr(d))));
        return expand(x, list3(x, sym(x, S_let), list1(x, dcar(a1)), inner));
    }
    if (s == S_letrec || s == S_letrecstar) {
        if (n < 3) fail(x, d, "%s: bad syntax", s);
        check_bindings(x, a1, s);
        return list3(x, sym(x, S_letrecstar), expand_bindings(x, a1), expand_body(x, dcdr(dcdr(d)), d));
    }
    if (s == S_and || s == S_or) {
        if (n == 1) return s == S_and ? DTRUE : DFALSE;
        if (n == 2) return expand(x, a1);
        Datum *rest = expand(x, cons(x, h, dcdr(dcdr(d))));
        if (s == S_and)
            return list4(x, sym(x, S_if), expand(x, a1), rest, DFALSE);
        Datum *t = gensym(x);
        return list3(x, sym(x, S_let), list1(x, list2(x, t, expand(x, a1))),
                     list4(x, sym(x, S_if), t, t, rest));
    }
    if (s == S_when || s == S_unless) {
        if (n < 3) fail(x, d, "%s: bad syntax", s);
        Datum *body = expand(x, seq(x, dcdr(dcdr(d))));
        Datum *test = expand(x, a1);
        return s == S_when ? list4(x, sym(x, S_if), test, body, DUNSPEC)
                           : list4(x, sym(x, S_if), test, DUNSPEC, body);
    }
    if (s == S_cond) return expand_cond(x, dcdr(d));
    if (s == S_case) {
        if (n < 2) fail(x, d, "%s: bad syntax", "case");
        Datum *t = gensym(x);
        return list3(x, sym(x, S_let), list1(x, list2(x, t, expand(x, a1))),
                     expand_case_clauses(x, dcdr(dcdr(d)), t));
    }
    if (s == S_do) return expand_do(x, d);
    if (s == S_define_record_type) return record_type(x, d);
    if (s == S_delay || s == S_delay_force) {
        if (n != 2) fail(x, d, "%s: bad syntax", s);
        Datum *body = s == S_delay ? list2(x, isym(x, "%make-eager-promise"), a1) : a1;
        return expand(x, list2(x, isym(x, "%make-lazy-promise"), list3(x, sym(x, S_lambda), DNIL, body)));
    }
    if (s == S_guard) return guard(x, d);
    if (s == S_let_values || s == S_letstar_values) {
        if (n < 3 || datum_list_length(a1) == (size_t)-1) fail(x, d, "%s: bad syntax", s);
        return s == S_let_values ? let_values_parallel(x, a1, dcdr(dcdr(d)), d)
                                 : let_values(x, a1, dcdr(dcdr(d)), d);
    }
    if (s == S_receive) {                  /* (receive formals expr body ...) */
        if (n < 4) fail(x, d, "%s: bad syntax", s);
        return let_values(x, list1(x, list2(x, a1, dcar(dcdr(dcdr(d))))), dcdr(dcdr(dcdr(d))), d);
    }
    if (s == S_define_values) return define_values(x, d, n, a1);
    if (s == S_case_lambda) return case_lambda(x, d);
    if (s == S_parameterize) return parameterize(x, d, n, a1);
    if (s == S_assert) return assertion(x, d, n, a1);
    if (s == S_import) return DUNSPEC;
    if (s == S_include) return include(x, d);
    if (s == S_define_syntax) fail(x, d, "%s: macros are not supported", s);
    return expand_list(x, d);
}

static Datum *expand(Ex *x, Datum *d)
{
    const char *file = x->file;
    int line = x->line, col = x->col;
    if (d->line) { x->file = d->file; x->line = d->line; x->col = d->col; }
    deeper(x, d);
    Datum *r;
    switch (d->kind) {
    case D_PAIR: r = expand_pair(x, d); break;
    case D_VEC:  r = quote(x, d); break;
    case D_NIL:  fail(x, d, "%s", "empty combination ()");
    default:     r = d; break;
    }
    x->depth--;
    x->file = file;
    x->line = line;
    x->col = col;
    return r;
}

static bool is_define(const Datum *d)
{
    return d->kind == D_PAIR && datum_is_sym(dcar(d), S_define);
}

/* Appends the expanded forms of `forms` to *out, splicing begins. */
static Datum **splice(Ex *x, Datum *forms, Datum **out)
{
    for (; forms != DNIL; forms = dcdr(forms)) {
        Datum *e = expand(x, dcar(forms));
        if (e->kind == D_PAIR && datum_is_sym(dcar(e), S_begin)) {
            for (Datum *f = dcdr(e); f != DNIL; f = dcdr(f)) {
                *out = cons(x, dcar(f), DNIL);
                out = &(*out)->u.pair.cdr;
            }
        } else {
            *out = cons(x, e, DNIL);
            out = &(*out)->u.pair.cdr;
        }
    }
    return out;
}

/* A body: forms up to the last definition become letrec* bindings (expressions among
 * them bound to temporaries, keeping their order), the rest is the body proper. */
static Datum *expand_body(Ex *x, Datum *forms, const Datum *at)
{
    if (datum_list_length(forms) == (size_t)-1 || forms == DNIL)
        fail(x, at, "%s: empty or improper body", "body");
    Datum *all = DNIL;
    splice(x, forms, &all);
    Datum *last_def = NULL;
    for (Datum *f = all; f != DNIL; f = dcdr(f))
        if (is_define(dcar(f))) last_def = f;
    if (!last_def)
        return seq(x, all);
    Datum *bindings = DNIL, **bt = &bindings;
    Datum *f = all;
    for (;; f = dcdr(f)) {
        Datum *e = dcar(f);
        Datum *b = is_define(e) ? list2(x, dcar(dcdr(e)), dcar(dcdr(dcdr(e))))
                                : list2(x, gensym(x), e);
        *bt = cons(x, b, DNIL);
        bt = &(*bt)->u.pair.cdr;
        if (f == last_def) break;
    }
    Datum *rest = dcdr(last_def);
    return list3(x, sym(x, S_letrecstar), bindings, rest == DNIL ? DUNSPEC : seq(x, rest));
}

Datum *sch_expand(DArena *a, Datum *form, SchCompileError *err, const char *file)
{
    init_names();
    Ex x = { .a = a, .err = err, .file = file, .line = form->line, .col = form->col };
    if (setjmp(x.fail))
        return NULL;
    return expand(&x, form);
}
