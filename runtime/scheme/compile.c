/* The compiler: core forms (expand.c) to bytecode (vm.h).
 *
 * Two passes over each top-level unit:
 *  1. convert: datums to a tree of Nodes with every variable resolved -- a local (Var,
 *     owned by the lambda that binds it) or a global (a symbol). A reference from an inner
 *     lambda marks the Var captured and adds it to the free-variable list of every lambda
 *     between the reference and the owner (closure conversion).
 *  2. generate: each lambda gets a frame (Note [VM frames]): parameters from slot 2, then
 *     let-bound variables and temporaries, allocated as a stack. A variable that is both
 *     captured and assigned lives in a box; a letrec variable bound to a lambda (and never
 *     assigned) needs no box: the closures of a letrec group are all made first, then
 *     patched with SETFREE (so mutual recursion costs nothing at run time).
 *
 * Calls of some primitives (car, +, <, vector-ref, ...) compile to VM instructions when the
 * name is global and the unit never defines or assigns it at top level (as Guile and Chez
 * do for standard bindings); a unit that redefines one, e.g. `(define (car x) ...)`, gets
 * ordinary calls for that name from then on.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include "rts/vm_api.h"
#include "scheme/vm.h"

typedef struct Lam Lam;
typedef struct Node Node;

typedef struct Var {
    const char *name;
    Lam  *owner;
    bool  captured, assigned;
    bool  boxed;           /* captured and assigned, or a captured non-lambda letrec var */
    bool  check;           /* a letrec variable that may be read before its definition */
    bool  fixable;         /* letrec-bound to a lambda, never assigned */
    int   slot;
} Var;

struct Lam {
    Lam  *parent;
    const char *name;
    const char *file;
    int   line, col;
    Var **params;
    int   nparams;
    bool  rest;
    Var **free;
    int   nfree, freecap;
    int  *fhash;           /* free_index's table once there are many: index + 1, or 0 */
    int   fhashcap;
    Node *body;
};

typedef enum {
    N_CONST, N_LREF, N_GREF, N_LSET, N_GSET, N_GDEF, N_IF, N_LAMBDA, N_SEQ, N_CALL, N_LET,
    N_LETREC, N_PRIM
} NodeKind;

struct Node {
    NodeKind kind;
    const char *file;      /* its source position (Note [Source positions] in vm.h) */
    int      line, col;
    Datum   *datum;        /* N_CONST */
    Var     *var;          /* N_LREF, N_LSET */
    const char *gname;     /* N_GREF, N_GSET, N_GDEF */
    Node    *a, *b, *c;    /* N_IF: test then else; N_*SET, N_GDEF: the value; N_LET*: body */
    Lam     *lam;          /* N_LAMBDA */
    Node   **items;        /* N_SEQ; N_CALL: [proc, args...]; N_PRIM: args; N_LET*: inits */
    int      nitems;
    Var    **vars;         /* N_LET, N_LETREC */
    int      op;           /* N_PRIM: the VM instruction */
};

typedef struct Scope { const char *name; Var *var; struct Scope *next; } Scope;

typedef struct Comp {
    DArena *a;
    bool system;
    SchCompileError *err;
    jmp_buf fail;
    const char *file;           /* the position of the form being converted: an included */
    int line, col;              /* file's forms carry its name (Note [Include]) */
    const char **redefined;     /* globals this unit defines or assigns */
    int nredefined;
    int depth;                  /* Note [Compiler depth] */
} Comp;

/* Note [Compiler depth]
 * Both passes recurse on the nesting of the code: convert on the forms, generate (and
 * mark_boxes) on the nodes convert made, as deep as its recursion went. So convert counts
 * its depth, and past MAX_DEPTH the unit is a syntax error, not a C stack overflow. The
 * expander (Note [Expander depth]) bounds the forms it makes from its input, but the code
 * it makes nests deeper than that input (a cond clause becomes a let and an if). */
#define MAX_DEPTH 4000
#define STR_(n) #n
#define STR(n) STR_(n)

static void __attribute__((noreturn)) cfail(Comp *c, const char *fmt, const char *what)
{
    char msg[200];
    snprintf(msg, sizeof msg, fmt, what);
    snprintf(c->err->msg, sizeof c->err->msg, "%s:%d:%d: %s", c->file, c->line, c->col, msg);
    longjmp(c->fail, 1);
}

static void *cnew(Comp *c, size_t bytes) { return datum_alloc(c->a, bytes); }

/* --- inlined primitives ---------------------------------------------------------------------------- */

typedef struct Inline { const char *name; int op, nargs; } Inline;
static Inline inlines[] = {
    { "+", OP_ADD, 2 }, { "-", OP_SUB, 2 }, { "*", OP_MUL, 2 },
    { "<", OP_LT, 2 }, { "<=", OP_LE, 2 }, { ">", OP_GT, 2 }, { ">=", OP_GE, 2 }, { "=", OP_NUMEQ, 2 },
    { "eq?", OP_EQ, 2 }, { "cons", OP_CONS, 2 }, { "%cons", OP_CONS, 2 },
    { "car", OP_CAR, 1 }, { "cdr", OP_CDR, 1 }, { "not", OP_NOT, 1 }, { "null?", OP_NULLP, 1 },
    { "pair?", OP_PAIRP, 1 }, { "zero?", OP_ZEROP, 1 },
    { "vector-ref", OP_VREF, 2 }, { "vector-set!", OP_VSET, 3 },
    { "set-car!", OP_SETCAR, 2 }, { "set-cdr!", OP_SETCDR, 2 },
};
#define N_INLINES (sizeof inlines / sizeof inlines[0])

/* Names redefined by any unit compiled so far (all capabilities; under redef_mu). */
static pthread_mutex_t redef_mu = PTHREAD_MUTEX_INITIALIZER;
static bool redef_global[N_INLINES];

static void init_inlines(void)
{
    for (size_t i = 0; i < N_INLINES; i++)
        inlines[i].name = datum_intern(inlines[i].name, strlen(inlines[i].name));
}

static const Inline *find_inline(const char *name, int nargs)
{
    for (size_t i = 0; i < N_INLINES; i++)
        if (inlines[i].name == name && inlines[i].nargs == nargs) {
            pthread_mutex_lock(&redef_mu);
            bool r = redef_global[i];
            pthread_mutex_unlock(&redef_mu);
            return r ? NULL : &inlines[i];
        }
    return NULL;
}

/* Records the globals a unit defines or assigns (before conversion). */
static void scan_redefinitions(const Datum *d, const char *s_define, const char *s_set, const char *s_quote)
{
    if (d->kind != D_PAIR) return;
    const Datum *h = dcar(d);
    if (datum_is_sym(h, s_quote)) return;
    if ((datum_is_sym(h, s_define) || datum_is_sym(h, s_set)) && dcdr(d)->kind == D_PAIR
        && dcar(dcdr(d))->kind == D_SYM) {
        const char *name = dcar(dcdr(d))->u.sym;
        for (size_t i = 0; i < N_INLINES; i++)
            if (inlines[i].name == name) {
                pthread_mutex_lock(&redef_mu);
                redef_global[i] = true;
                pthread_mutex_unlock(&redef_mu);
            }
    }
    for (; d->kind == D_PAIR; d = dcdr(d))
        scan_redefinitions(dcar(d), s_define, s_set, s_quote);
}

/* --- pass 1: convert ------------------------------------------------------------------------------ */

static const char *S_quote, *S_if, *S_define, *S_set, *S_lambda, *S_begin, *S_let, *S_letrecstar;

static Node *node(Comp *c, NodeKind k)
{
    Node *n = cnew(c, sizeof *n);
    n->kind = k;
    n->file = c->file;
    n->line = c->line;
    n->col = c->col;
    return n;
}

static Var *lookup(Scope *s, const char *name)
{
    for (; s; s = s->next)
        if (s->name == name) return s->var;
    return NULL;
}

static Scope *bind(Comp *c, Scope *s, Var *v)
{
    Scope *n = cnew(c, sizeof *n);
    n->name = v->name;
    n->var = v;
    n->next = s;
    return n;
}

static Var *new_var(Comp *c, const char *name, Lam *owner)
{
    Var *v = cnew(c, sizeof *v);
    v->name = name;
    v->owner = owner;
    return v;
}

static size_t fhash_slot(const Lam *l, const Var *v)
{
    return (size_t)(((uintptr_t)v >> 4) * 0x9e3779b97f4a7c15u) & (size_t)(l->fhashcap - 1);
}

/* The index of v among l's free variables, adding it if it is new. Past a few variables a
 * hash table finds them: the lambdas of deeply nested code can have thousands, and a
 * linear search here made compiling such code cubic. */
static int free_index(Comp *c, Lam *l, Var *v)
{
    if (l->fhash) {
        for (size_t h = fhash_slot(l, v); l->fhash[h]; h = (h + 1) & (size_t)(l->fhashcap - 1))
            if (l->free[l->fhash[h] - 1] == v) return l->fhash[h] - 1;
    } else {
        for (int i = 0; i < l->nfree; i++)
            if (l->free[i] == v) return i;
    }
    if (l->nfree == l->freecap) {
        int ncap = l->freecap ? 2 * l->freecap : 8;
        Var **nf = cnew(c, (size_t)ncap * sizeof *nf);
        if (l->nfree) memcpy(nf, l->free, (size_t)l->nfree * sizeof *nf);
        l->free = nf;
        l->freecap = ncap;
    }
    int i = l->nfree++;
    l->free[i] = v;
    if (l->nfree > 8 && 2 * l->nfree > l->fhashcap) {    /* (re)build the table */
        l->fhashcap = l->fhashcap ? 2 * l->fhashcap : 32;
        l->fhash = cnew(c, (size_t)l->fhashcap * sizeof *l->fhash);
        for (int k = 0; k < l->nfree; k++) {
            size_t h = fhash_slot(l, l->free[k]);
            while (l->fhash[h]) h = (h + 1) & (size_t)(l->fhashcap - 1);
            l->fhash[h] = k + 1;
        }
    } else if (l->fhash) {
        size_t h = fhash_slot(l, v);
        while (l->fhash[h]) h = (h + 1) & (size_t)(l->fhashcap - 1);
        l->fhash[h] = i + 1;
    }
    return i;
}

/* A reference to v from lambda `from`: closure conversion. A lambda that has v already
 * got it from an earlier reference, together with every lambda from it up to the owner. */
static void note_reference(Comp *c, Var *v, Lam *from)
{
    for (Lam *l = from; l != v->owner; l = l->parent) {
        v->captured = true;
        int n = l->nfree;
        free_index(c, l, v);
        if (l->nfree == n) break;
    }
}

static Node *convert(Comp *c, Datum *d, Scope *s, Lam *cur, bool toplevel);

static Node *convert_lambda(Comp *c, Datum *d, Scope *s, Lam *cur, const char *name)
{
    Lam *l = cnew(c, sizeof *l);
    l->parent = cur;
    l->name = name;
    l->file = d->line ? d->file : c->file;
    l->line = d->line ? d->line : c->line;
    l->col = d->line ? d->col : c->col;
    Datum *formals = dcar(dcdr(d));
    int n = 0;
    for (Datum *f = formals; f->kind == D_PAIR; f = dcdr(f)) n++;
    bool rest = false;
    {
        Datum *f = formals;
        while (f->kind == D_PAIR) f = dcdr(f);
        rest = f->kind == D_SYM;
    }
    l->params = cnew(c, (size_t)(n + 1) * sizeof(Var *));
    l->nparams = n;
    l->rest = rest;
    Scope *inner = s;
    int i = 0;
    Datum *f = formals;
    for (; f->kind == D_PAIR; f = dcdr(f), i++) {
        for (int j = 0; j < i; j++)
            if (l->params[j]->name == dcar(f)->u.sym) cfail(c, "lambda: duplicate parameter %s", dcar(f)->u.sym);
        l->params[i] = new_var(c, dcar(f)->u.sym, l);
        inner = bind(c, inner, l->params[i]);
    }
    if (rest) {
        l->params[n] = new_var(c, f->u.sym, l);
        inner = bind(c, inner, l->params[n]);
    }
    l->body = convert(c, dcar(dcdr(dcdr(d))), inner, l, false);
    Node *r = node(c, N_LAMBDA);
    r->lam = l;
    return r;
}

static bool is_lambda_form(const Datum *d) { return d->kind == D_PAIR && datum_is_sym(dcar(d), S_lambda); }

static Node *convert_value(Comp *c, Datum *d, Scope *s, Lam *cur, const char *name)
{
    if (is_lambda_form(d))
        return convert_lambda(c, d, s, cur, name);
    return convert(c, d, s, cur, false);
}

static Node *convert_let(Comp *c, Datum *d, Scope *s, Lam *cur, bool rec)
{
    Datum *bs = dcar(dcdr(d));
    int n = (int)datum_list_length(bs);
    Node *r = node(c, rec ? N_LETREC : N_LET);
    r->vars = cnew(c, (size_t)(n + 1) * sizeof(Var *));
    r->items = cnew(c, (size_t)(n + 1) * sizeof(Node *));
    r->nitems = n;
    Scope *inner = s;
    int i = 0;
    for (Datum *b = bs; b != DNIL; b = dcdr(b), i++) {
        r->vars[i] = new_var(c, dcar(dcar(b))->u.sym, cur);
        for (int j = 0; j < i; j++)
            if (rec && r->vars[j]->name == r->vars[i]->name)
                cfail(c, "duplicate binding of %s", r->vars[i]->name);
        if (rec) inner = bind(c, inner, r->vars[i]);
    }
    i = 0;
    for (Datum *b = bs; b != DNIL; b = dcdr(b), i++)
        r->items[i] = convert_value(c, dcar(dcdr(dcar(b))), rec ? inner : s, cur, r->vars[i]->name);
    if (!rec)
        for (i = 0; i < n; i++) inner = bind(c, inner, r->vars[i]);
    r->a = convert(c, dcar(dcdr(dcdr(d))), inner, cur, false);
    if (rec)
        for (i = 0; i < n; i++) {
            Var *v = r->vars[i];
            v->fixable = r->items[i]->kind == N_LAMBDA && !v->assigned;
            v->check = !v->fixable;
        }
    return r;
}

/* The forms the expander leaves (expand.c): the compiler's own syntax. */
static bool is_core_keyword(const char *sym)
{
    return sym == S_quote || sym == S_if || sym == S_define || sym == S_set || sym == S_lambda
        || sym == S_begin || sym == S_let || sym == S_letrecstar;
}

static Node *convert(Comp *c, Datum *d, Scope *s, Lam *cur, bool toplevel)
{
    const char *file = c->file;
    int line = c->line, col = c->col;
    if (d->line) { c->file = d->file; c->line = d->line; c->col = d->col; }
    if (++c->depth > MAX_DEPTH)
        cfail(c, "%s", "nesting too deep (more than " STR(MAX_DEPTH) " levels of expressions)");
    Node *r;
    if (d->kind == D_SYM) {
        Var *v = lookup(s, d->u.sym);
        if (v) {
            note_reference(c, v, cur);
            r = node(c, N_LREF);
            r->var = v;
        } else {
            r = node(c, N_GREF);
            r->gname = d->u.sym;
        }
    } else if (d->kind != D_PAIR) {
        r = node(c, N_CONST);
        r->datum = d;
    } else {
        Datum *h = dcar(d);
        /* The expander takes a core keyword at the head of a form as that form, bound
         * locally or not ("a local variable named like a special form shadows nothing",
         * expand.c), so the compiler does too: a local variable named quote or lambda is
         * a variable everywhere but at the head of a form. When the two disagreed, (let ((quote 1)) (quote (() . x))) had the
         * expander keep the quoted datum unchecked and the compiler convert it as a call:
         * an improper list walked off its end (found by make fuzz). A local binding of any
         * other name still makes its head a call, not an inlined primitive. */
        const char *hs = h->kind == D_SYM && (is_core_keyword(h->u.sym) || !lookup(s, h->u.sym))
            ? h->u.sym : NULL;
        if (hs == S_quote) {
            r = node(c, N_CONST);
            r->datum = dcar(dcdr(d));
        } else if (hs == S_if) {
            r = node(c, N_IF);
            r->a = convert(c, dcar(dcdr(d)), s, cur, false);
            r->b = convert(c, dcar(dcdr(dcdr(d))), s, cur, false);
            r->c = convert(c, dcar(dcdr(dcdr(dcdr(d)))), s, cur, false);
        } else if (hs == S_define) {
            if (!toplevel)
                cfail(c, "%s: a definition is not allowed here", "define");
            r = node(c, N_GDEF);
            r->gname = dcar(dcdr(d))->u.sym;
            r->a = convert_value(c, dcar(dcdr(dcdr(d))), s, cur, r->gname);
        } else if (hs == S_set) {
            Var *v = lookup(s, dcar(dcdr(d))->u.sym);
            if (v) {
                r = node(c, N_LSET);
                r->var = v;
                v->assigned = true;
                note_reference(c, v, cur);
            } else {
                r = node(c, N_GSET);
                r->gname = dcar(dcdr(d))->u.sym;
            }
            r->a = convert_value(c, dcar(dcdr(dcdr(d))), s, cur, dcar(dcdr(d))->u.sym);
        } else if (hs == S_lambda) {
            r = convert_lambda(c, d, s, cur, NULL);
        } else if (hs == S_begin) {
            int n = (int)datum_list_length(dcdr(d));
            r = node(c, N_SEQ);
            r->items = cnew(c, (size_t)n * sizeof(Node *));
            r->nitems = n;
            int i = 0;
            for (Datum *f = dcdr(d); f != DNIL; f = dcdr(f))
                r->items[i++] = convert(c, dcar(f), s, cur, toplevel);
        } else if (hs == S_let) {
            r = convert_let(c, d, s, cur, false);
        } else if (hs == S_letrecstar) {
            r = convert_let(c, d, s, cur, true);
        } else {
            int n = (int)datum_list_length(d);
            const Inline *in = hs ? find_inline(hs, n - 1) : NULL;
            r = node(c, in ? N_PRIM : N_CALL);
            r->items = cnew(c, (size_t)n * sizeof(Node *));
            int i = 0;
            for (Datum *f = in ? dcdr(d) : d; f != DNIL; f = dcdr(f))
                r->items[i++] = convert(c, dcar(f), s, cur, false);
            r->nitems = i;
            if (in) r->op = in->op;
            if (!in && r->items[0]->kind == N_GREF) {
                /* an unbound procedure is reported at its call (Note [Source positions]) */
                r->items[0]->file = r->file;
                r->items[0]->line = r->line;
                r->items[0]->col = r->col;
            }
        }
    }
    c->depth--;
    c->file = file;
    c->line = line;
    c->col = col;
    return r;
}

/* --- pass 2: generate ---------------------------------------------------------------------------- */

typedef struct Gen {
    Comp   *c;
    Lam    *lam;
    int32_t *code;
    size_t  n, cap;
    Datum **consts;
    int     nconsts, constcap;
    const void **ckeys;         /* const_index's hash table, ccap slots (a power of two): */
    int    *cvals;              /* a key (a symbol's interned name, else the datum) and */
    int     ccap;               /* its constant's index */
    Proto **children;
    int     nchildren, childcap;
    int     next, max;          /* the next free slot, the frame size so far */
    VmPos  *pos;                /* Note [Source positions] in vm.h */
    uint32_t npos, poscap;
    const char **files;         /* the files pos names besides the lambda's own */
    int     nfiles, filecap;
} Gen;

static void emit(Gen *g, int32_t w)
{
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 64;
        g->code = realloc(g->code, g->cap * sizeof *g->code);
        if (!g->code) rtv_fatal("out of memory (compiler)");
    }
    g->code[g->n++] = w;
}
static void emit1(Gen *g, int op, int a)               { emit(g, op); emit(g, a); }
static void emit2(Gen *g, int op, int a, int b)        { emit(g, op); emit(g, a); emit(g, b); }
static void emit3(Gen *g, int op, int a, int b, int d) { emit(g, op); emit(g, a); emit(g, b); emit(g, d); }

/* The instruction emitted next comes from n: its position goes into the table when it
 * differs from the last entry's (Note [Source positions] in vm.h). Called just before an
 * instruction that can fail, block or call, after the code of its operands. */
static void at(Gen *g, const Node *n)
{
    if (!n->line || !n->file)
        return;
    uint16_t fi = 0;
    if (strcmp(n->file, g->lam->file) != 0) {
        int i = 0;
        while (i < g->nfiles && strcmp(g->files[i], n->file) != 0) i++;
        if (i == g->nfiles) {
            if (g->nfiles == 65535) return;
            if (g->nfiles == g->filecap) {
                g->filecap = g->filecap ? 2 * g->filecap : 4;
                g->files = realloc(g->files, (size_t)g->filecap * sizeof *g->files);
                if (!g->files) rtv_fatal("out of memory (compiler)");
            }
            g->files[g->nfiles++] = n->file;
        }
        fi = (uint16_t)(i + 1);
    }
    uint16_t col = n->col > 65535 ? 65535 : (uint16_t)n->col;
    if (g->npos) {
        VmPos *last = &g->pos[g->npos - 1];
        if (last->line == (uint32_t)n->line && last->col == col && last->file == fi)
            return;
        if (last->pc == g->n) {             /* nothing emitted at the last one's position */
            last->line = (uint32_t)n->line;
            last->col = col;
            last->file = fi;
            return;
        }
    }
    if (g->npos == g->poscap) {
        g->poscap = g->poscap ? 2 * g->poscap : 8;
        g->pos = realloc(g->pos, g->poscap * sizeof *g->pos);
        if (!g->pos) rtv_fatal("out of memory (compiler)");
    }
    g->pos[g->npos++] = (VmPos){ .pc = (uint32_t)g->n, .line = (uint32_t)n->line, .col = col, .file = fi };
}

/* Whether an inlined primitive's instruction can raise an error (it then has a position). */
static bool prim_can_fail(int op)
{
    return op != OP_EQ && op != OP_CONS && op != OP_NOT && op != OP_NULLP && op != OP_PAIRP;
}

static int temp(Gen *g)
{
    int t = g->next++;
    if (g->next > g->max) g->max = g->next;
    return t;
}

static size_t const_slot(const Gen *g, const void *key)
{
    return (size_t)(((uintptr_t)key >> 3) * 0x9e3779b97f4a7c15u >> 20) & (size_t)(g->ccap - 1);
}

/* The constant pool's index of d: a symbol is one constant however often it is named, any
 * other datum one per occurrence (its Datum). A hash table keyed by pointer (before: a
 * linear search, so 50k top-level defines took 2.1 s to compile and 200k 51 s). */
static int const_index(Gen *g, Datum *d)
{
    const void *key = d->kind == D_SYM ? (const void *)d->u.sym : (const void *)d;
    if (g->ccap) {
        for (size_t i = const_slot(g, key); g->ckeys[i]; i = (i + 1) & (size_t)(g->ccap - 1))
            if (g->ckeys[i] == key)
                return g->cvals[i];
    }
    if (2 * (g->nconsts + 1) > g->ccap) {          /* at most half full */
        int cap = g->ccap ? 2 * g->ccap : 64;
        const void **keys = calloc((size_t)cap, sizeof *keys);
        int *vals = malloc((size_t)cap * sizeof *vals);
        if (!keys || !vals) rtv_fatal("out of memory (compiler)");
        const void **okeys = g->ckeys;
        int *ovals = g->cvals, ocap = g->ccap;
        g->ckeys = keys, g->cvals = vals, g->ccap = cap;
        for (int j = 0; j < ocap; j++)
            if (okeys[j]) {
                size_t i = const_slot(g, okeys[j]);
                while (keys[i]) i = (i + 1) & (size_t)(cap - 1);
                keys[i] = okeys[j];
                vals[i] = ovals[j];
            }
        free(okeys);
        free(ovals);
    }
    size_t i = const_slot(g, key);
    while (g->ckeys[i]) i = (i + 1) & (size_t)(g->ccap - 1);
    g->ckeys[i] = key;
    g->cvals[i] = g->nconsts;
    if (g->nconsts == g->constcap) {
        g->constcap = g->constcap ? 2 * g->constcap : 16;
        g->consts = realloc(g->consts, (size_t)g->constcap * sizeof *g->consts);
        if (!g->consts) rtv_fatal("out of memory (compiler)");
    }
    g->consts[g->nconsts] = d;
    return g->nconsts++;
}

/* Note [System globals]
 * Code compiled with `system` set (the prelude) names every global X as "%sys:X", and its
 * definitions define both "%sys:X" and X; primitives are defined under both names too
 * (vm.c). A program can then redefine any global without changing what the prelude's
 * procedures call. */
static const char *system_name(const char *name)
{
    size_t n = strlen(name);
    char *buf = malloc(n + 6);
    if (!buf) rtv_fatal("out of memory (compiler)");
    memcpy(buf, "%sys:", 5);
    memcpy(buf + 5, name, n + 1);
    const char *r = datum_intern(buf, n + 5);
    free(buf);
    return r;
}

static int global_index(Gen *g, const char *name)
{
    if (g->c->system)
        name = system_name(name);
    Datum *d = datum_new(g->c->a, D_SYM, 0, 0);
    d->u.sym = name;
    return const_index(g, d);
}

/* The Value of an immediate datum if it fits an IMM operand (int32, sign-extended). */
static bool imm_value(const Datum *d, int32_t *out)
{
    Value v;
    switch (d->kind) {
    case D_FIX:    if (d->u.fix < -(1 << 29) || d->u.fix >= (1 << 29)) return false;
                   v = rts_fixnum(d->u.fix); break;
    case D_BOOL:   v = rts_bool(d->u.b); break;
    case D_NIL:    v = RTS_NIL; break;
    case D_UNSPEC: v = RTS_UNSPEC; break;
    case D_CHAR:   if (d->u.ch >= (1u << 22)) return false;
                   v = rts_char(d->u.ch); break;
    default:       return false;
    }
    *out = (int32_t)(intptr_t)v;
    return true;
}

static void gen_to(Gen *g, Node *n, int dst);
static void gen_tail(Gen *g, Node *n);
static Proto *gen_lambda(Comp *c, Lam *l);

/* Loads variable v into dst. */
static void load_var(Gen *g, Var *v, int dst)
{
    if (v->owner == g->lam) {
        if (v->boxed) emit2(g, OP_UNBOX, dst, v->slot);
        else if (dst != v->slot) emit2(g, OP_MOV, dst, v->slot);
    } else {
        emit2(g, OP_FREE, dst, free_index(g->c, g->lam, v));
        if (v->boxed) emit2(g, OP_UNBOX, dst, dst);
    }
    if (v->check) emit2(g, OP_CHECKDEF, dst, global_index(g, v->name));
}

/* A slot holding n's value: the variable's own slot when that is safe, else a temp. */
static int operand(Gen *g, Node *n)
{
    if (n->kind == N_LREF && n->var->owner == g->lam && !n->var->boxed && !n->var->check)
        return n->var->slot;
    int t = temp(g);
    gen_to(g, n, t);
    return t;
}

static bool small_fix(const Node *n, int32_t *out)
{
    if (n->kind != N_CONST || n->datum->kind != D_FIX) return false;
    if (n->datum->u.fix < -(1 << 29) || n->datum->u.fix >= (1 << 29)) return false;
    *out = (int32_t)n->datum->u.fix;
    return true;
}

static size_t emit_jump(Gen *g)          /* the offset word just emitted, to patch */
{
    emit(g, 0);
    return g->n - 1;
}
static void patch(Gen *g, size_t at) { g->code[at] = (int32_t)(g->n - (at + 1)); }

/* Jumps to a patched target when test is false. Returns the offset word. */
static size_t gen_branch_false(Gen *g, Node *test)
{
    int mark = g->next;
    if (test->kind == N_PRIM && test->nitems == 2) {
        int jop = test->op == OP_LT ? OP_JNLT : test->op == OP_LE ? OP_JNLE : test->op == OP_GT ? OP_JNGT
                : test->op == OP_GE ? OP_JNGE : test->op == OP_NUMEQ ? OP_JNNUMEQ : -1;
        int32_t k;
        if (jop >= 0 && small_fix(test->items[1], &k)) {
            int a = operand(g, test->items[0]);
            g->next = mark;
            at(g, test);
            emit2(g, jop - OP_JNLT + OP_JNLTI, a, k);
            return emit_jump(g);
        }
        if (jop >= 0 && small_fix(test->items[0], &k)) {      /* (< k x) is (> x k) */
            static const int swapped[] = { OP_JNGTI, OP_JNGEI, OP_JNLTI, OP_JNLEI, OP_JNNUMEQI };
            int b = operand(g, test->items[1]);
            g->next = mark;
            at(g, test);
            emit2(g, swapped[jop - OP_JNLT], b, k);
            return emit_jump(g);
        }
        if (jop >= 0) {
            int a = operand(g, test->items[0]);
            int b = operand(g, test->items[1]);
            g->next = mark;
            at(g, test);
            emit2(g, jop, a, b);
            return emit_jump(g);
        }
    }
    int s = operand(g, test);
    g->next = mark;
    emit1(g, OP_JF, s);
    return emit_jump(g);
}

static void gen_closure(Gen *g, Lam *l, int dst)
{
    Proto *p = gen_lambda(g->c, l);
    if (g->nchildren == g->childcap) {
        g->childcap = g->childcap ? 2 * g->childcap : 8;
        g->children = realloc(g->children, (size_t)g->childcap * sizeof *g->children);
        if (!g->children) rtv_fatal("out of memory (compiler)");
    }
    int idx = g->nchildren;
    g->children[g->nchildren++] = p;
    int mark = g->next;
    int *src = malloc((size_t)(l->nfree + 1) * sizeof *src);
    if (!src) rtv_fatal("out of memory (compiler)");
    for (int i = 0; i < l->nfree; i++) {
        Var *v = l->free[i];
        if (v->owner == g->lam) {
            src[i] = v->slot;              /* the box itself when boxed */
        } else {
            src[i] = temp(g);
            emit2(g, OP_FREE, src[i], free_index(g->c, g->lam, v));
        }
    }
    emit3(g, OP_CLOSURE, dst, idx, l->nfree);
    for (int i = 0; i < l->nfree; i++)
        emit(g, src[i]);
    free(src);
    g->next = mark;
}

static void gen_prim(Gen *g, Node *n, int dst)
{
    int mark = g->next;
    int32_t k;
    bool fails = prim_can_fail(n->op);
    if ((n->op == OP_ADD || n->op == OP_SUB) && small_fix(n->items[1], &k)) {
        int a = operand(g, n->items[0]);
        at(g, n);
        emit3(g, OP_ADDI, dst, a, n->op == OP_ADD ? k : -k);
    } else if (n->op == OP_ADD && small_fix(n->items[0], &k)) {
        int a = operand(g, n->items[1]);
        at(g, n);
        emit3(g, OP_ADDI, dst, a, k);
    } else if (n->nitems == 1) {
        int a = operand(g, n->items[0]);
        if (fails) at(g, n);
        emit2(g, n->op, dst, a);
    } else if (n->op == OP_VSET) {
        int v = operand(g, n->items[0]), i = operand(g, n->items[1]), x = operand(g, n->items[2]);
        at(g, n);
        emit3(g, OP_VSET, v, i, x);
        emit2(g, OP_IMM, dst, (int32_t)(intptr_t)RTS_UNSPEC);
    } else if (n->op == OP_SETCAR || n->op == OP_SETCDR) {
        int p = operand(g, n->items[0]), x = operand(g, n->items[1]);
        at(g, n);
        emit2(g, n->op, p, x);
        emit2(g, OP_IMM, dst, (int32_t)(intptr_t)RTS_UNSPEC);
    } else {
        int a = operand(g, n->items[0]), b = operand(g, n->items[1]);
        if (fails) at(g, n);
        emit3(g, n->op, dst, a, b);
    }
    g->next = mark;
}

/* Evaluates the procedure and arguments of a call into consecutive temps; returns the first. */
static int gen_call_args(Gen *g, Node *n)
{
    int base = g->next;
    for (int i = 0; i < n->nitems; i++)
        temp(g);
    for (int i = 0; i < n->nitems; i++)
        gen_to(g, n->items[i], base + i);
    return base;
}

/* Binds the variables of a let or letrec (slots from g->next, kept for the body). */
static void gen_bindings(Gen *g, Node *n)
{
    for (int i = 0; i < n->nitems; i++)
        n->vars[i]->slot = temp(g);
    if (n->kind == N_LET) {
        /* Inits into temps first, then into the slots: an init may not see the new vars,
         * but evaluating it straight into its slot would be fine too; the copy keeps
         * slot order simple. */
        for (int i = 0; i < n->nitems; i++) {
            gen_to(g, n->items[i], n->vars[i]->slot);
        }
        for (int i = 0; i < n->nitems; i++)
            if (n->vars[i]->boxed) emit1(g, OP_BOX, n->vars[i]->slot);
        return;
    }
    /* letrec*: placeholders (boxes where captured), then every lambda's closure, the
     * patches for the group's variables they capture, then the other inits in order. */
    for (int i = 0; i < n->nitems; i++) {
        Var *v = n->vars[i];
        v->boxed = v->captured && !v->fixable;
        emit2(g, OP_IMM, v->slot, (int32_t)(intptr_t)(v->fixable ? RTS_UNSPEC : RTS_UNDEF));
        if (v->boxed) emit1(g, OP_BOX, v->slot);
    }
    for (int i = 0; i < n->nitems; i++)
        if (n->vars[i]->fixable)
            gen_closure(g, n->items[i]->lam, n->vars[i]->slot);
    for (int i = 0; i < n->nitems; i++) {
        if (!n->vars[i]->fixable) continue;
        Lam *l = n->items[i]->lam;
        for (int f = 0; f < l->nfree; f++)
            for (int j = 0; j < n->nitems; j++)
                if (l->free[f] == n->vars[j] && n->vars[j]->fixable)
                    emit3(g, OP_SETFREE, n->vars[i]->slot, f, n->vars[j]->slot);
    }
    for (int i = 0; i < n->nitems; i++) {
        Var *v = n->vars[i];
        if (v->fixable) continue;
        if (v->boxed) {
            int mark = g->next;
            int t = operand(g, n->items[i]);
            emit2(g, OP_SETBOX, v->slot, t);
            g->next = mark;
        } else {
            gen_to(g, n->items[i], v->slot);
        }
    }
}

static void gen_to(Gen *g, Node *n, int dst)
{
    int mark = g->next;
    switch (n->kind) {
    case N_CONST: {
        int32_t imm;
        if (imm_value(n->datum, &imm)) emit2(g, OP_IMM, dst, imm);
        else emit2(g, OP_CONST, dst, const_index(g, n->datum));
        break;
    }
    case N_LREF:
        if (n->var->check) at(g, n);        /* CHECKDEF */
        load_var(g, n->var, dst);
        break;
    case N_GREF:
        at(g, n);
        emit2(g, OP_GLOBAL, dst, global_index(g, n->gname));
        break;
    case N_LSET: {
        Var *v = n->var;
        if (v->owner == g->lam && !v->boxed) {
            gen_to(g, n->a, v->slot);
        } else {
            int t = operand(g, n->a);
            int box = v->slot;
            if (v->owner != g->lam) {
                box = temp(g);
                emit2(g, OP_FREE, box, free_index(g->c, g->lam, v));
            }
            emit2(g, OP_SETBOX, box, t);
        }
        emit2(g, OP_IMM, dst, (int32_t)(intptr_t)RTS_UNSPEC);
        break;
    }
    case N_GSET:
    case N_GDEF: {
        int t = operand(g, n->a);
        if (n->kind == N_GSET) at(g, n);
        emit2(g, n->kind == N_GSET ? OP_SETGLOBAL : OP_DEFGLOBAL, global_index(g, n->gname), t);
        if (n->kind == N_GDEF && g->c->system) {      /* Note [System globals] */
            Datum *d = datum_new(g->c->a, D_SYM, 0, 0);
            d->u.sym = n->gname;
            emit2(g, OP_DEFGLOBAL, const_index(g, d), t);
        }
        emit2(g, OP_IMM, dst, (int32_t)(intptr_t)RTS_UNSPEC);
        break;
    }
    case N_IF: {
        size_t jf = gen_branch_false(g, n->a);
        gen_to(g, n->b, dst);
        emit(g, OP_JMP);
        size_t jend = emit_jump(g);
        patch(g, jf);
        gen_to(g, n->c, dst);
        patch(g, jend);
        break;
    }
    case N_LAMBDA: gen_closure(g, n->lam, dst); break;
    case N_SEQ:
        for (int i = 0; i + 1 < n->nitems; i++) {
            int t = temp(g);
            gen_to(g, n->items[i], t);
            g->next = mark;
        }
        gen_to(g, n->items[n->nitems - 1], dst);
        break;
    case N_CALL: {
        int base = gen_call_args(g, n);
        at(g, n);
        emit3(g, OP_CALL, base, n->nitems - 1, dst);
        break;
    }
    case N_PRIM: gen_prim(g, n, dst); break;
    case N_LET:
    case N_LETREC:
        gen_bindings(g, n);
        gen_to(g, n->a, dst);
        break;
    }
    g->next = mark;
}

static void gen_tail(Gen *g, Node *n)
{
    int mark = g->next;
    switch (n->kind) {
    case N_IF: {
        size_t jf = gen_branch_false(g, n->a);
        gen_tail(g, n->b);
        patch(g, jf);
        gen_tail(g, n->c);
        break;
    }
    case N_SEQ:
        for (int i = 0; i + 1 < n->nitems; i++) {
            int t = temp(g);
            gen_to(g, n->items[i], t);
            g->next = mark;
        }
        gen_tail(g, n->items[n->nitems - 1]);
        break;
    case N_CALL: {
        int base = gen_call_args(g, n);
        at(g, n);
        emit3(g, OP_TAILCALL, base, n->nitems - 1, base);   /* Note [Tail calls of primitives] */
        emit1(g, OP_RET, base);                              /* in vm.c */
        break;
    }
    case N_LET:
    case N_LETREC:
        gen_bindings(g, n);
        gen_tail(g, n->a);
        break;
    case N_LREF:
        if (n->var->owner == g->lam && !n->var->boxed && !n->var->check) {
            emit1(g, OP_RET, n->var->slot);
            break;
        }
        /* fall through */
    default: {
        int t = temp(g);
        gen_to(g, n, t);
        emit1(g, OP_RET, t);
        break;
    }
    }
    g->next = mark;
}

/* Marks boxed variables: captured and assigned (letrec variables are decided in
 * gen_bindings, which sees whether their init is a lambda). */
static void mark_boxes(Node *n)
{
    if (!n) return;
    switch (n->kind) {
    case N_LREF: case N_LSET:
        n->var->boxed = n->var->captured && n->var->assigned;
        break;
    case N_LAMBDA:
        for (int i = 0; i < n->lam->nparams + (n->lam->rest ? 1 : 0); i++)
            n->lam->params[i]->boxed = n->lam->params[i]->captured && n->lam->params[i]->assigned;
        mark_boxes(n->lam->body);
        return;
    case N_LET:
        for (int i = 0; i < n->nitems; i++)
            n->vars[i]->boxed = n->vars[i]->captured && n->vars[i]->assigned;
        break;
    case N_LETREC:
        for (int i = 0; i < n->nitems; i++)
            n->vars[i]->boxed = n->vars[i]->captured && !n->vars[i]->fixable;
        break;
    default:
        break;
    }
    mark_boxes(n->a);
    mark_boxes(n->b);
    mark_boxes(n->c);
    for (int i = 0; i < n->nitems; i++)
        mark_boxes(n->items[i]);
}

/* The name of a procedure bound to the variable `var` (NULL: anonymous). The expander's
 * temporaries (names starting with a space) name none, but for a do loop's: "do loop". */
static const char *proc_name(const char *var)
{
    if (!var) return NULL;
    if (var[0] == ' ')
        return strncmp(var, " do loop ", 9) == 0 ? "do loop" : NULL;
    return datum_intern(var, strlen(var));
}

static Proto *gen_lambda(Comp *c, Lam *l)
{
    Gen g = { .c = c, .lam = l };
    int np = l->nparams + (l->rest ? 1 : 0);
    for (int i = 0; i < np; i++)
        l->params[i]->slot = 2 + i;
    g.next = g.max = 2 + np;
    for (int i = 0; i < np; i++)
        if (l->params[i]->boxed) emit1(&g, OP_BOX, l->params[i]->slot);
    gen_tail(&g, l->body);
    emit(&g, OP_HALT);

    Proto *p = calloc(1, sizeof *p);
    if (!p) rtv_fatal("out of memory (compiler)");
    vm_register_proto(p);
    p->code = g.code;
    p->ncode = g.n;
    p->nparams = l->nparams;
    p->rest = l->rest;
    p->fast_nargs1 = l->rest ? 0 : l->nparams + 1;
    p->system = c->system;
    p->frame_size = g.max < 3 ? 3 : g.max;
    p->nfree = l->nfree;
    p->children = g.children;
    p->nchildren = g.nchildren;
    p->name = proc_name(l->name);
    p->file = datum_intern(l->file, strlen(l->file));
    p->line = l->line;
    p->col = l->col;
    if (g.npos) {                      /* Note [Source positions] in vm.h */
        p->pos = realloc(g.pos, g.npos * sizeof *g.pos);
        if (!p->pos) rtv_fatal("out of memory (compiler)");
        p->npos = g.npos;
    }
    if (g.nfiles) {
        p->files = malloc((size_t)g.nfiles * sizeof *p->files);
        if (!p->files) rtv_fatal("out of memory (compiler)");
        for (int i = 0; i < g.nfiles; i++)
            p->files[i] = datum_intern(g.files[i], strlen(g.files[i]));
        p->nfiles = (uint16_t)g.nfiles;
    }
    free(g.files);
    /* Constants become a heap vector, a GC root for as long as the code lives (forever). */
    p->consts = RTS_FALSE;
    if (g.nconsts) {
        RtsCap *cap = rtv_my_cap();
        rts_add_root(&p->consts);
        p->consts = rts_make_vector(cap, (size_t)g.nconsts, RTS_FALSE);
        for (int i = 0; i < g.nconsts; i++) {
            Value v = sch_datum_to_value(cap, g.consts[i]);
            sm_set_field(cap, p->consts, (size_t)i, v);
        }
    }
    free(g.consts);
    free(g.ckeys);
    free(g.cvals);
    return p;
}

/* --- the entry point -------------------------------------------------------------------------------- */

Proto *sch_compile_toplevel(Datum *forms, const char *file, bool system, SchCompileError *err)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init_inlines);
    S_quote = datum_intern("quote", 5); S_if = datum_intern("if", 2);
    S_define = datum_intern("define", 6); S_set = datum_intern("set!", 4);
    S_lambda = datum_intern("lambda", 6); S_begin = datum_intern("begin", 5);
    S_let = datum_intern("let", 3); S_letrecstar = datum_intern("letrec*", 7);

    Comp c = { .file = file, .system = system, .err = err, .line = 1, .col = 1 };
    c.a = datum_arena_new();
    err->msg[0] = 0;
    if (setjmp(c.fail)) {
        datum_arena_free(c.a);
        return NULL;
    }
    /* Expand every form first: the unit's redefinitions decide inlining everywhere in it. */
    Datum *expanded = DNIL, **tail = &expanded;
    for (Datum *f = forms; f->kind == D_PAIR; f = dcdr(f)) {
        Datum *e = sch_expand(c.a, dcar(f), err, file);
        if (!e) {
            datum_arena_free(c.a);
            return NULL;
        }
        *tail = datum_cons(c.a, e, DNIL);
        tail = &(*tail)->u.pair.cdr;
    }
    if (!system)                  /* the prelude defines the %-aliases of inlined names */
        scan_redefinitions(expanded, S_define, S_set, S_quote);
    Lam *top = cnew(&c, sizeof *top);
    top->name = "<top level>";
    top->file = file;
    top->line = forms->kind == D_PAIR ? dcar(forms)->line : 1;
    top->col = 1;
    Datum *body = expanded == DNIL ? DUNSPEC
                : datum_cons(c.a, datum_sym(c.a, "begin"), expanded);
    top->body = convert(&c, body, NULL, top, true);
    Node wrap = { .kind = N_LAMBDA, .lam = top };
    mark_boxes(&wrap);
    Proto *p = gen_lambda(&c, top);
    datum_arena_free(c.a);
    return p;
}
