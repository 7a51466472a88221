/* RTS options (BRIEF §4), with GHC's conventions so that users' habits carry over.
 *
 * Note [Where RTS options come from]
 * The RTSLAB_RTS environment variable (whitespace-separated words, no quoting) is parsed
 * first, then the command line, so the command line wins. On the command line:
 *   +RTS ... -RTS   RTS options; several blocks are allowed; +RTS without -RTS runs to the end;
 *   --RTS           removed; everything after it belongs to the program, +RTS included;
 *   --              kept for the program, and (as in GHC) ends +RTS processing too.
 * A -RTS outside a block is removed, like GHC. argv[0] is never an option. Every RTS word and
 * marker is removed from argv, the program's arguments keep their order.
 *
 * Sizes are digits with an optional fraction and an optional k/m/g suffix (either case,
 * powers of 1024): -A1.5m is 1572864 bytes. Heap sizes (-A, -M, -O) are rounded up to a multiple
 * of RTS_OPT_HEAP_GRAIN (one block); stack sizes (-K, -ki) to a multiple of a word.
 *
 * Every error message starts with "rtslab: " and fits on one line; the caller prints it and
 * exits 1.
 *
 * Note [The option table]
 * Every RTS option is one row (RtsOption, rts/patch.h): its name and syntax, how its value is
 * read (a flag, a number or a size in a range, or a parser of its own), its default, its
 * -? lines, what it does in one line (the docs' table), and where it goes. The base's rows
 * are the X-macro table RTS_BASE_OPTIONS (rts/options_table.h), in -?'s order; a patch's
 * are its RtsPatch's `options`, in its own file, with its own variables (Note [Patch
 * registration] in rts/patch.h). Parsing (rts_options_parse_word), the defaults
 * (rts_options_defaults), -? (rts_options_usage) and the docs' table
 * (--print-option-table, which testsuite/errors/option_table.py compares with
 * docs/rts-options.md) all read the rows; no code names an option but its row and its
 * parser. A build without a patch does not know the patch's options: "unknown RTS option",
 * as for any other word. A value of a base option that only a patch gives meaning to
 * (-qb0) is refused in a build where no patch claims it (RTS_OPT_CLAIM), once all the
 * options are parsed, as the command line overrides RTSLAB_RTS (check_final; a patch's own
 * checks are its RtsPatch.check). What the options come to on this machine (-N alone, -qn
 * above -N, -qb's default under a patch, a patch's settings) is decided once, by
 * opts_resolve (Note [Options, resolved once] in base/util.h). How to add an option:
 * docs/new-option.md. --info lists every patch of the tree, on or off, and the registered
 * patches' lines.
 */
#include "rtslab_options.h"
#include "rts_config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base/util.h"          /* base_cfg: what the options came to */
#include "sm/block.h"            /* BLOCK_SIZE: -A and -O in blocks */
#include "os/affinity.h"        /* --info: the capabilities --numa places */
#include "os/numa.h"
#include "io/iomgr.h"
#include "rts/patch.h"          /* Note [Patch registration] */
#include "rts/rts.h"            /* opts_resolve */

#include <stddef.h>

#define RTS_OPT_MAX_CAPS   4096u          /* -N<n>, -qn<n> */
#define RTS_OPT_MAX_GC_STRESS 1000000000u /* -DG<n> */
#define RTS_OPT_MAX_GEN    255u           /* -qg<gen>, -qb<gen> */
#define RTS_OPT_HEAP_GRAIN ((size_t)4096) /* -A, -M, -O round up to this */
#define RTS_OPT_MIN_STACK  ((size_t)1024) /* -K, -ki: at least 1k */

/* Note [Patch registration]: the patches compiled in, from configure's RTSLAB_PATCH_REGS. */
#define RTSLAB_PATCH_REG(n) extern const RtsPatch patch_##n;
RTSLAB_PATCH_REGS
#undef RTSLAB_PATCH_REG
#define RTSLAB_PATCH_REG(n) &patch_##n,
const RtsPatch *const patch_registry[] = { RTSLAB_PATCH_REGS NULL };
#undef RTSLAB_PATCH_REG

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        int n = snprintf(err, errlen, "rtslab: ");
        if (n >= 0 && (size_t)n < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* The space-separated lists configure makes (RTSLAB_PATCHES, RTSLAB_PATCHES_KNOWN):
 * next_word sets *w and *n to the next word of *p and advances it, false at the end;
 * in_list says whether the n bytes at w are a word of list. */
static bool next_word(const char **p, const char **w, size_t *n)
{
    while (**p == ' ') (*p)++;
    if (**p == '\0') return false;
    *w = *p;
    *n = strcspn(*p, " ");
    *p += *n;
    return true;
}

static bool in_list(const char *list, const char *w, size_t n)
{
    const char *x;
    size_t xn;
    while (next_word(&list, &x, &xn))
        if (xn == n && strncmp(x, w, n) == 0) return true;
    return false;
}

static const char *fmt_size(char *buf, size_t len, size_t v);

int rts_parse_size(const char *s, size_t *out)
{
    if (!s || !is_digit(*s)) return -1;

    size_t whole = 0;
    for (; is_digit(*s); s++) {
        size_t d = (size_t)(*s - '0');
        if (whole > (SIZE_MAX - d) / 10) return -1;
        whole = whole * 10 + d;
    }

    /* The fraction keeps at most 9 digits (frac < 2^30), so frac * mult fits in 64 bits. */
    uint64_t frac = 0, scale = 1;
    if (*s == '.') {
        s++;
        if (!is_digit(*s)) return -1;
        for (int n = 0; is_digit(*s); s++, n++) {
            if (n < 9) {
                frac = frac * 10 + (uint64_t)(*s - '0');
                scale *= 10;
            }
        }
    }

    size_t mult = 1;
    switch (*s) {
    case 'k': case 'K': mult = (size_t)1 << 10; s++; break;
    case 'm': case 'M': mult = (size_t)1 << 20; s++; break;
    case 'g': case 'G': mult = (size_t)1 << 30; s++; break;
    default: break;
    }
    if (*s != '\0') return -1;

    if (whole > SIZE_MAX / mult) return -1;
    size_t v = whole * mult;
    size_t f = (size_t)(frac * (uint64_t)mult / scale);
    if (v > SIZE_MAX - f) return -1;
    *out = v + f;
    return 0;
}

/* Digits only. Returns -1 when malformed; a value above max comes back as max + 1. */
static int parse_uint(const char *s, unsigned max, unsigned *out)
{
    if (!is_digit(*s)) return -1;
    unsigned long v = 0;
    for (; is_digit(*s); s++) {
        if (v <= max) v = v * 10 + (unsigned long)(*s - '0');
    }
    if (*s != '\0') return -1;
    *out = v > max ? max + 1 : (unsigned)v;
    return 0;
}

/* digits[.digits], no sign or exponent; independent of the locale. */
static int parse_factor(const char *s, double *out)
{
    if (!is_digit(*s)) return -1;
    double v = 0;
    int ndig = 0;
    for (; is_digit(*s); s++) {
        if (++ndig > 15) return -1;
        v = v * 10 + (*s - '0');
    }
    if (*s == '.') {
        s++;
        if (!is_digit(*s)) return -1;
        double scale = 0.1;
        for (int n = 0; is_digit(*s); s++, n++) {
            if (n < 15) {
                v += (*s - '0') * scale;
                scale /= 10;
            }
        }
    }
    if (*s != '\0') return -1;
    *out = v;
    return 0;
}

static int round_up(size_t *v, size_t grain)
{
    if (*v > SIZE_MAX - (grain - 1)) return -1;
    *v = (*v + grain - 1) / grain * grain;
    return 0;
}

static int set_file(char **slot, const char *name, char *err, size_t errlen)
{
    char *copy = NULL;
    if (name) {
        copy = strdup(name);
        if (!copy) return fail(err, errlen, "out of memory parsing RTS options");
    }
    free(*slot);
    *slot = copy;
    return 0;
}

/* --- the variables the rows set ---------------------------------------------------------- */

/* Where row r keeps its value: a field of *o (a base row) or the patch's own variable. */
static void *row_var(const RtsOption *r, RtsOptions *o)
{
    if (r->var) return r->var;
    if (r->field == RTS_NO_FIELD) return NULL;
    return (char *)o + r->field;
}

static void put_value(const RtsOption *r, RtsOptions *o, unsigned long long v, double d)
{
    void *at = row_var(r, o);
    if (!at) return;
    switch (r->type) {
    case RTS_T_BOOL: { bool b = v != 0; memcpy(at, &b, sizeof b); break; }
    case RTS_T_UNSIGNED: { unsigned u = (unsigned)v; memcpy(at, &u, sizeof u); break; }
    case RTS_T_SIZE: { size_t z = (size_t)v; memcpy(at, &z, sizeof z); break; }
    case RTS_T_DOUBLE: memcpy(at, &d, sizeof d); break;
    case RTS_T_INT: { int i = (int)v; memcpy(at, &i, sizeof i); break; }
    case RTS_T_NONE: break;
    }
}

static void put_given(const RtsOption *r, RtsOptions *o, bool given)
{
    if (r->given) *r->given = given;
    if (r->given_field) {
        bool b = given;
        memcpy((char *)o + r->given_field, &b, sizeof b);
    }
}

/* --- the parsers the rows name (RtsOption.parse; rts/options_table.h) --------------------- */

/* A number of row r, from r->min to r->max. */
static int read_number(const RtsOption *r, const char *w, const char *arg, unsigned *out,
                       char *err, size_t errlen)
{
    unsigned n;
    if (parse_uint(arg, (unsigned)r->max, &n) != 0)
        return fail(err, errlen, "bad number in RTS option %s", w);
    if (r->from_to && (n < r->min || n > r->max))
        return fail(err, errlen, "%s: %s must be from %llu to %llu", w, r->noun, r->min, r->max);
    if (n < r->min)
        return fail(err, errlen, "%s: %s must be at least %llu", w, r->noun, r->min);
    if (n > r->max)
        return fail(err, errlen, "%s: %s must be at most %llu", w, r->noun, r->max);
    *out = n;
    return 0;
}

/* A size of row r: at least r->min as given, then rounded up to r->grain. */
static int read_size(const RtsOption *r, const char *w, const char *arg, size_t *out,
                     char *err, size_t errlen)
{
    size_t v;
    if (rts_parse_size(arg, &v) != 0)
        return fail(err, errlen, "bad size in RTS option %s", w);
    if (v < r->min) {
        char m[32];
        return fail(err, errlen, "%s: %s must be at least %s", w, r->noun,
                    fmt_size(m, sizeof m, (size_t)r->min));
    }
    if (round_up(&v, r->grain ? r->grain : 1) != 0)
        return fail(err, errlen, "bad size in RTS option %s", w);
    *out = v;
    return 0;
}

/* -N alone */
static int opt_caps_auto(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                         char *err, size_t errlen)
{
    (void)r; (void)w; (void)arg; (void)err; (void)errlen;
    o->n_caps_auto = true;
    o->n_caps_given = false;
    return 0;
}

/* -N<n> */
static int opt_caps(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                    char *err, size_t errlen)
{
    unsigned n;
    if (read_number(r, w, arg, &n, err, errlen) != 0) return -1;
    o->n_caps = n;
    o->n_caps_auto = false;
    o->n_caps_given = true;
    return 0;
}

/* -qg / -qg<gen>, -qb / -qb<gen>: the word alone turns the feature off (the row's on_field);
 * a generation below the row's min is judged once all options are parsed (check_final),
 * since a later word may override it and a patch may give it a meaning (RTS_OPT_CLAIM). */
static int opt_gen(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                   char *err, size_t errlen)
{
    bool *on = (bool *)((char *)o + r->on_field);
    if (*arg == '\0') {
        *on = false;
        return 0;
    }
    unsigned g;
    if (parse_uint(arg, (unsigned)r->max, &g) != 0)
        return fail(err, errlen, "bad generation in RTS option %s", w);
    if (g > r->max)
        return fail(err, errlen, "%s: the generation must be at most %llu", w, r->max);
    *on = true;
    put_value(r, o, g, 0);
    put_given(r, o, true);
    return 0;
}

/* -M: 0 (unlimited) or at least min; rounded up to a block. */
static int opt_max_heap(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                        char *err, size_t errlen)
{
    size_t v;
    if (rts_parse_size(arg, &v) != 0)
        return fail(err, errlen, "bad size in RTS option %s", w);
    if (v != 0 && v < r->min) {
        char m[32];
        return fail(err, errlen, "%s: the maximum heap size must be 0 (unlimited) or at "
                    "least %s", w, fmt_size(m, sizeof m, (size_t)r->min));
    }
    if (round_up(&v, r->grain) != 0)
        return fail(err, errlen, "bad size in RTS option %s", w);
    o->max_heap = v;
    return 0;
}

/* -F<n> */
static int opt_factor(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                      char *err, size_t errlen)
{
    double f;
    if (parse_factor(arg, &f) != 0)
        return fail(err, errlen, "bad number in RTS option %s", w);
    if (!(f > 0))
        return fail(err, errlen, "%s: %s must be greater than 0", w, r->noun);
    o->old_gen_factor = f;
    return 0;
}

/* --aging=1|0 (Note [Aging] in sm/storage.h) */
static int opt_aging(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                     char *err, size_t errlen)
{
    (void)r;
    if (strcmp(arg, "1") == 0) o->aging = true;
    else if (strcmp(arg, "0") == 0) o->aging = false;
    else return fail(err, errlen, "%s: --aging= takes 1 or 0", w);
    return 0;
}

/* -s[<file>], -S[<file>] */
static int opt_stats(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                     char *err, size_t errlen)
{
    const char *file = *arg != '\0' && strcmp(arg, "stderr") != 0 ? arg : NULL;
    if (set_file(&o->stats_file, file, err, errlen) != 0) return -1;
    o->stats = r->name[1] == 's' ? RTS_STATS_SUMMARY : RTS_STATS_VERBOSE;
    (void)w;
    return 0;
}

/* -l[<file>] */
static int opt_eventlog(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                        char *err, size_t errlen)
{
    (void)r; (void)w;
    if (set_file(&o->eventlog_file, *arg != '\0' ? arg : NULL, err, errlen) != 0) return -1;
    o->eventlog = true;
    return 0;
}

/* --eventlog-format=ghc|chrome (Note [Eventlog]) */
static int opt_eventlog_format(const RtsOption *r, RtsOptions *o, const char *w,
                               const char *arg, char *err, size_t errlen)
{
    (void)r;
    if (strcmp(arg, "ghc") == 0) o->eventlog_format = 0;
    else if (strcmp(arg, "chrome") == 0) o->eventlog_format = 1;
    else return fail(err, errlen, "%s: --eventlog-format= takes ghc or chrome", w);
    return 0;
}

/* -po<stem>: GHC's (Note [Time profile] in sched/profile.h) */
static int opt_profile(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                       char *err, size_t errlen)
{
    (void)r;
    if (*arg == '\0')
        return fail(err, errlen, "%s: -po<stem> needs a file name stem", w);
    if (set_file(&o->profile_stem, arg, err, errlen) != 0) return -1;
    o->profile = true;
    return 0;
}

/* -DG<n>: one message for a malformed and an out-of-range count */
static int opt_gc_stress(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                         char *err, size_t errlen)
{
    unsigned n;
    if (parse_uint(arg, (unsigned)r->max, &n) != 0 || n < r->min || n > r->max)
        return fail(err, errlen, "%s: -DG<n> needs a number of allocations from %llu to %llu",
                    w, r->min, r->max);
    o->gc_stress = n;
    return 0;
}

/* --io-manager=auto|uring|epoll (Note [IO manager] in io/iomgr.h) */
static int opt_io_manager(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                          char *err, size_t errlen)
{
    (void)r;
    if (strcmp(arg, "auto") == 0) o->io_manager = IO_CHOOSE_AUTO;
    else if (strcmp(arg, "uring") == 0) o->io_manager = IO_CHOOSE_URING;
    else if (strcmp(arg, "epoll") == 0) o->io_manager = IO_CHOOSE_EPOLL;
    else return fail(err, errlen, "%s: --io-manager= takes auto, uring or epoll", w);
    return 0;
}

/* --numa, --numa=<mask> (Note [NUMA-local heap] in os/numa.h): the mask in decimal, as
 * GHC reads it, or in hex after 0x; bit i is node i. Which nodes exist is known only at
 * start-up (numa_init says when the mask names none of them). */
static int opt_numa(const RtsOption *r, RtsOptions *o, const char *w, const char *arg,
                    char *err, size_t errlen)
{
    unsigned long long mask = ~0ull;
    if (!r->exact) {
        const char *s = arg;
        unsigned base = 10;
        if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            base = 16;
            s += 2;
        }
        mask = 0;
        int ndig = 0;
        for (; *s; s++, ndig++) {
            unsigned d = is_digit(*s) ? (unsigned)(*s - '0')
                       : base == 16 && *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10)
                       : base == 16 && *s >= 'A' && *s <= 'F' ? (unsigned)(*s - 'A' + 10)
                       : 99;
            if (d >= base)
                return fail(err, errlen, "bad node mask in RTS option %s (a number, decimal or "
                            "0x hex; bit i is NUMA node i)", w);
            if (mask > (~0ull - d) / base)
                return fail(err, errlen, "%s: the node mask must fit in 64 bits (nodes 0..63)", w);
            mask = mask * base + d;
        }
        if (ndig == 0)
            return fail(err, errlen, "bad node mask in RTS option %s (a number, decimal or "
                        "0x hex; bit i is NUMA node i)", w);
        if (mask == 0)
            return fail(err, errlen, "%s: the node mask names no node", w);
    }
#if HAVE_LIBNUMA
    o->numa = true;
    o->numa_mask = mask;
    return 0;
#else
    (void)o;
    (void)mask;
    return fail(err, errlen, "%s: NUMA support is not built in (configure found no libnuma, "
                "or was given --without-libnuma)", w);
#endif
}

/* --- the table ----------------------------------------------------------------------------- */

#include "rts/options_table.h"

#define RTS_OPTION_ROW(...) { __VA_ARGS__ },
static const RtsOption base_options[] = {
    RTS_BASE_OPTIONS(RTS_OPTION_ROW)
    { .name = NULL }
};
#undef RTS_OPTION_ROW

/* Every row, the base's and then each registered patch's: calls fn(row, owner) until it
 * returns a row; owner is NULL for the base's. */
typedef const RtsOption *(*RowFn)(const RtsOption *r, const RtsPatch *owner, void *arg);

static const RtsOption *each_row(RowFn fn, void *arg)
{
    const RtsOption *hit;
    for (const RtsOption *r = base_options; r->name; r++)
        if ((hit = fn(r, NULL, arg))) return hit;
    for (const RtsPatch *const *p = patch_registry; *p; p++)
        for (const RtsOption *r = (*p)->options; r && r->name; r++)
            if ((hit = fn(r, *p, arg))) return hit;
    return NULL;
}

/* The row of the word w: the row whose name it is, else the one with the longest name it
 * begins with (a value follows); claims are no words. */
struct word_match {
    const char *w;
    const RtsOption *best;
    size_t best_n;
};

static const RtsOption *match_row(const RtsOption *r, const RtsPatch *owner, void *arg)
{
    struct word_match *m = arg;
    size_t n = strlen(r->name);
    (void)owner;
    if (r->kind == RTS_OPT_CLAIM) return NULL;
    if (r->exact) return strcmp(m->w, r->name) == 0 ? r : NULL;
    if (strncmp(m->w, r->name, n) == 0 && n > m->best_n) {
        m->best = r;
        m->best_n = n;
    }
    return NULL;
}

static const RtsOption *row_of_word(const char *w)
{
    struct word_match m = { w, NULL, 0 };
    const RtsOption *exact = each_row(match_row, &m);
    return exact ? exact : m.best;
}

/* Whether a registered patch claims the value `word` of a base option (RTS_OPT_CLAIM). */
static bool claimed(const char *word)
{
    for (const RtsPatch *const *p = patch_registry; *p; p++)
        for (const RtsOption *r = (*p)->options; r && r->name; r++)
            if (r->kind == RTS_OPT_CLAIM && strcmp(r->name, word) == 0) return true;
    return false;
}

static const RtsOption *set_default(const RtsOption *r, const RtsPatch *owner, void *arg)
{
    (void)owner;
    if (r->kind == RTS_OPT_CLAIM) return NULL;
    put_value(r, arg, r->dflt, r->dflt_f);
    put_given(r, arg, false);
    return NULL;
}

void rts_options_defaults(RtsOptions *o)
{
    memset(o, 0, sizeof *o);
    o->par_gc = true;              /* -qg and -qb alone turn them off (opt_gen) */
    o->balance = true;
    each_row(set_default, o);      /* every other default is its row's */
}

void rts_options_free(RtsOptions *o)
{
    if (!o) return;
    free(o->stats_file);
    o->stats_file = NULL;
    free(o->eventlog_file);
    o->eventlog_file = NULL;
    free(o->profile_stem);
    o->profile_stem = NULL;
}

int rts_options_parse_word(RtsOptions *o, const char *w, char *err, size_t errlen)
{
    if (w[0] != '-') return fail(err, errlen, "unexpected RTS argument: %s", w);
    const RtsOption *r = row_of_word(w);
    if (!r) return fail(err, errlen, "unknown RTS option: %s", w);
    const char *arg = w + strlen(r->name);
    switch (r->kind) {
    case RTS_OPT_FLAG:
        put_value(r, o, 1, 0);
        break;
    case RTS_OPT_NUMBER: {
        unsigned n;
        if (read_number(r, w, arg, &n, err, errlen) != 0) return -1;
        put_value(r, o, n, 0);
        break;
    }
    case RTS_OPT_SIZE: {
        size_t z = 0;
        if (read_size(r, w, arg, &z, err, errlen) != 0) return -1;
        put_value(r, o, z, 0);
        break;
    }
    case RTS_OPT_CUSTOM:
        if (r->parse(r, o, w, arg, err, errlen) != 0) return -1;
        break;
    case RTS_OPT_CLAIM:
        return fail(err, errlen, "unknown RTS option: %s", w);
    }
    put_given(r, o, true);
    return 0;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

static int parse_env(RtsOptions *o, const char *env, char *err, size_t errlen)
{
    char *buf = strdup(env);
    if (!buf) return fail(err, errlen, "out of memory parsing RTS options");
    int rc = 0;
    char *p = buf;
    for (;;) {
        while (is_space(*p)) p++;
        if (*p == '\0') break;
        char *word = p;
        while (*p != '\0' && !is_space(*p)) p++;
        bool last = *p == '\0';
        *p = '\0';
        if (rts_options_parse_word(o, word, err, errlen) != 0) {
            /* says where: the command line holds no such word (before: the same message) */
            size_t n = err ? strnlen(err, errlen) : 0;
            if (err && n + 1 < errlen)
                snprintf(err + n, errlen - n, " (in RTSLAB_RTS)");
            rc = -1;
            break;
        }
        if (last) break;
        p++;
    }
    free(buf);
    return rc;
}

/* A generation below its row's min (-qb0 in the base), judged once all options are parsed:
 * an error unless a registered patch claims the value (Note [The option table]). */
static int check_gens(const RtsOptions *o, char *err, size_t errlen)
{
    for (const RtsOption *r = base_options; r->name; r++) {
        if (r->parse != opt_gen || r->min == 0) continue;
        bool on = *(const bool *)((const char *)o + r->on_field);
        unsigned g;
        memcpy(&g, (const char *)o + r->field, sizeof g);
        char word[32];
        snprintf(word, sizeof word, "%s%u", r->name, g);
        if (on && g < r->min && !claimed(word))
            return fail(err, errlen, "%s: the generation must be at least %llu in this build",
                        word, r->min);
    }
    return 0;
}

/* Whether two paths name one regular file (an existing one by its inode, a new one by the
 * same text); a device such as /dev/null may take both. */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb)
        return S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return !ea && !eb && strcmp(a, b) == 0;
}

/* Options that must agree with each other, checked once all are parsed (so their order
 * does not matter). -qn beyond -N is not among them: rts_init clamps it with a warning, as
 * GHC does, since -N alone is known only there. */
static int check_final(const RtsOptions *o, char *err, size_t errlen)
{
    if (o->initial_stack > o->max_stack) {
        char ki[32], k[32];
        return fail(err, errlen, "-ki%s: the initial stack size is above the maximum stack size "
                    "(-K%s)", fmt_size(ki, sizeof ki, o->initial_stack),
                    fmt_size(k, sizeof k, o->max_stack));
    }
    for (const RtsPatch *const *p = patch_registry; *p; p++)   /* Note [Patch registration] */
        if ((*p)->check && (*p)->check(o, err, errlen) != 0) return -1;
    if (o->stats_file && o->eventlog_file && same_file(o->stats_file, o->eventlog_file))
        return fail(err, errlen, "-s%s and -l%s name the same file: the statistics would "
                    "overwrite the eventlog", o->stats_file, o->eventlog_file);
    return check_gens(o, err, errlen);
}

int rts_options_parse(RtsOptions *o, int *argc, char **argv, const char *env,
                      char *err, size_t errlen)
{
    if (env && parse_env(o, env, err, errlen) != 0) return -1;
    if (!argc || !argv || *argc <= 0) return check_final(o, err, errlen);

    int n = *argc, out = 1, i;
    bool in_rts = false;
    for (i = 1; i < n; i++) {
        char *a = argv[i];
        if (strcmp(a, "--RTS") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--") == 0) break;
        if (strcmp(a, "+RTS") == 0) {
            in_rts = true;
        } else if (strcmp(a, "-RTS") == 0) {
            in_rts = false;
        } else if (in_rts) {
            if (rts_options_parse_word(o, a, err, errlen) != 0) return -1;
        } else {
            argv[out++] = a;
        }
    }
    for (; i < n; i++) argv[out++] = argv[i];
    argv[out] = NULL;
    *argc = out;
    return check_final(o, err, errlen);
}

/* "1m", "512m", "4k", "100" */
static const char *fmt_size(char *buf, size_t len, size_t v)
{
    static const char suffix[] = "gmk";
    for (int i = 0; i < 3; i++) {
        size_t unit = (size_t)1 << (10 * (3 - i));
        if (v != 0 && v % unit == 0) {
            snprintf(buf, len, "%zu%c", v / unit, suffix[i]);
            return buf;
        }
    }
    snprintf(buf, len, "%zu", v);
    return buf;
}

const char *opts_fmt_size(char *buf, size_t len, size_t v)
{
    return fmt_size(buf, len, v);
}

/* The base's -? lines that a patch may word differently (RtsPatch.usage_lines), by syntax. */
static const char *usage_text(const RtsOption *r)
{
    for (const RtsPatch *const *p = patch_registry; *p; p++)
        for (const RtsUsageLine *l = (*p)->usage_lines; l && l->name; l++)
            if (strcmp(l->name, r->syntax) == 0) return l->text;
    return r->help;
}

/* A value of row r as -? and the docs write it: its default, min or max. */
static const char *fmt_value(char *buf, size_t len, const RtsOption *r, unsigned long long v)
{
    if (r->type == RTS_T_SIZE) return fmt_size(buf, len, (size_t)v);
    snprintf(buf, len, "%llu", v);
    return buf;
}

static const char *fmt_default(char *buf, size_t len, const RtsOption *r)
{
    if (r->type == RTS_T_DOUBLE) {
        snprintf(buf, len, "%g", r->dflt_f);
        return buf;
    }
    return fmt_value(buf, len, r, r->dflt);
}

/* Prints text with "{default}", "{min}" and "{max}" replaced by row r's. */
static void put_help(FILE *f, const RtsOption *r, const char *text)
{
    static const char *const keys[] = { "{default}", "{min}", "{max}" };
    while (*text) {
        const char *brace = strchr(text, '{');
        if (!brace) {
            fputs(text, f);
            return;
        }
        fwrite(text, 1, (size_t)(brace - text), f);
        text = brace;
        int k;
        for (k = 0; k < 3; k++)
            if (strncmp(text, keys[k], strlen(keys[k])) == 0) break;
        if (k == 3) {
            fputc(*text++, f);
            continue;
        }
        char v[32];
        fputs(k == 0 ? fmt_default(v, sizeof v, r)
              : fmt_value(v, sizeof v, r, k == 1 ? r->min : r->max), f);
        text += strlen(keys[k]);
    }
}

/* The -? lines of the registered patches' rows of one section. */
static void usage_patches(FILE *f, RtsUsageSection section)
{
    for (const RtsPatch *const *p = patch_registry; *p; p++)
        for (const RtsOption *r = (*p)->options; r && r->name; r++)
            if (r->help && r->section == section) put_help(f, r, r->help);
}

void rts_options_usage(void *file)
{
    FILE *f = file;
    fputs(
        "Usage: <prog> <args> [+RTS <rtsopts> | -RTS <args>] ... --RTS <args>\n"
        "\n"
        "   +RTS    RTS options follow (up to -RTS or the end of the command line)\n"
        "   -RTS    program arguments follow\n"
        "  --RTS    every later argument belongs to the program, RTS flags included\n"
        "  --       passed to the program; ends +RTS processing too\n"
        "RTS options are also read from the RTSLAB_RTS environment variable (whitespace-\n"
        "separated, before the command line). Sizes take a k, m or g suffix (powers of 1024)\n"
        "and may have a fraction, e.g. -A1.5m.\n"
        "\n", f);
    for (const RtsOption *r = base_options; r->name; r++) {
        if (r->help) put_help(f, r, usage_text(r));
        for (int s = RTS_USAGE_QA; s <= RTS_USAGE_STACK; s++)
            if (r->then & RTS_USAGE_AFTER(s)) usage_patches(f, (RtsUsageSection)s);
    }
}

/* A cell of a Markdown table: '|' escaped, and outside code '<' as an entity (so that
 * "<n>" is not taken for HTML). */
static void put_cell(FILE *f, const char *s, bool code)
{
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", f);
        else if (*s == '<' && !code) fputs("&lt;", f);
        else fputc(*s, f);
    }
}

/* Note [The option table]: one line per row, "OWNER\t| `SYNTAX` | DEFAULT | VALUES | WHAT |",
 * OWNER "base" or the patch's name; docs/rts-options.md holds the base's rows (checked by
 * testsuite/errors/option_table.py). */
static const RtsOption *print_row(const RtsOption *r, const RtsPatch *owner, void *arg)
{
    FILE *f = arg;
    char d[64], lo[32], hi[32], range[96];
    if (r->kind == RTS_OPT_CLAIM || !r->what) return NULL;
    const char *dflt = r->dflt_text ? r->dflt_text
                     : r->exact ? "off" : fmt_default(d, sizeof d, r);
    const char *values = r->range_text;
    if (!values) {
        if (r->exact) {
            values = "-";               /* the word alone */
        } else if (r->type == RTS_T_SIZE && r->min == 0) {
            values = "a size";
        } else if (r->type == RTS_T_SIZE) {
            snprintf(range, sizeof range, "a size, at least %s", fmt_value(lo, sizeof lo, r,
                                                                          r->min));
            values = range;
        } else {
            snprintf(range, sizeof range, "%s..%s", fmt_value(lo, sizeof lo, r, r->min),
                     fmt_value(hi, sizeof hi, r, r->max));
            values = range;
        }
    }
    fprintf(f, "%s\t| `", owner ? owner->name : "base");
    put_cell(f, r->syntax, true);
    fputs("` | ", f);
    put_cell(f, dflt, false);
    fputs(" | ", f);
    put_cell(f, values, false);
    fputs(" | ", f);
    put_cell(f, r->what, false);
    fputs(" |\n", f);
    return NULL;
}

void rts_options_print_table(void *file)
{
    each_row(print_row, file);
}

/* Haskell-show-like string: quotes and backslashes escaped. */
static void put_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\%u", c);
        } else {
            fputc(c, f);
        }
    }
    fputc('"', f);
}

static void put_pair(FILE *f, bool first, const char *key, const char *val)
{
    fputs(first ? " [(" : " ,(", f);
    put_str(f, key);
    fputc(',', f);
    put_str(f, val);
    fputs(")\n", f);
}

#define YESNO(x) ((x) ? "YES" : "NO")

static void info_put(FILE *f, const char *key, const char *val)
{
    put_pair(f, false, key, val);
}

/* The --info lines of the registered patches that follow the base's line `key`. */
static void info_after(FILE *f, const char *key)
{
    for (const RtsPatch *const *p = patch_registry; *p; p++)
        if ((*p)->info && (*p)->info_after && strcmp((*p)->info_after, key) == 0)
            (*p)->info(f, info_put);
}

/* A line of the base's, then the patches' that follow it. */
static void info_line(FILE *f, const char *key, const char *val)
{
    put_pair(f, false, key, val);
    info_after(f, key);
}

/* "Patch NAME": YES or NO for every patch of the tree (RTSLAB_PATCHES_KNOWN), so that these
 * sources name none (Note [Options that need a patch]); the test driver reads them. */
static void info_patches(FILE *f)
{
    const char *p = RTSLAB_PATCHES_KNOWN, *x;
    size_t xn;
    if (strcmp(p, "none") == 0) return;
    while (next_word(&p, &x, &xn)) {
        char key[80];
        snprintf(key, sizeof key, "Patch %.*s", (int)xn, x);
        put_pair(f, false, key, in_list(RTSLAB_PATCHES, x, xn) ? "YES" : "NO");
    }
}

/* What --numa does here, for the options in force (Note [NUMA-local heap] in os/numa.h). */
static void numa_info(FILE *f)
{
    if (!base_cfg->resolved)
        base_fatal("--info before the options were resolved (opts_resolve)");
    char *buf = malloc(4096);
    if (buf == NULL)
        return;
    unsigned n = base_cfg->n_caps;
    put_pair(f, false, "NUMA (--numa)", numa_explain(buf, 4096, base_cfg->numa, base_cfg->numa_mask,
                                                     base_cfg->pin_caps, n));
    free(buf);
}

/* The options as given: private to option parsing (Note [Options, resolved once] in
 * base/util.h); opts_read fills them, opts_resolve reads them. */
static RtsOptions rts_opts;

const RtsOptions *rts_options(void) { return &rts_opts; }

int opts_read(int *argc, char **argv, const char *env, char *err, size_t errlen)
{
    rts_options_defaults(&rts_opts);
    return rts_options_parse(&rts_opts, argc, argv, env, err, errlen);
}

void opts_resolve(void)
{
    const RtsOptions *o = &rts_opts;
    RtsConfig c = { 0 };
    c.n_caps = o->n_caps_auto ? affinity_default_caps() : o->n_caps;
    c.n_caps_auto = o->n_caps_auto;
    c.n_caps_given = o->n_caps_given;
    c.pin_caps = o->pin_caps;
    c.gc_threads = o->gc_threads ? o->gc_threads : c.n_caps;
    if (c.gc_threads > c.n_caps) {
        c.gc_threads = c.n_caps;
        c.gc_threads_clamped = true;
    }
    c.par_gc = o->par_gc;
    c.par_gc_gen = o->par_gc_gen;
    c.balance = o->balance;
    c.balance_gen_given = o->balance_gen_given;
    c.balance_gen = o->balance_gen;
    c.alloc_area = o->alloc_area;
    c.nursery_blocks = o->alloc_area / BLOCK_SIZE;
    c.max_heap = o->max_heap;
    c.old_gen_factor = o->old_gen_factor;
    c.min_old_gen_blocks = o->min_old_gen / BLOCK_SIZE;
    c.aging = o->aging;
    c.sync_defer = o->sync_defer;
    c.numa = o->numa;
    c.numa_mask = o->numa_mask;
    c.max_stack = o->max_stack;
    c.initial_stack = o->initial_stack;
    c.sanity = o->sanity;
    c.gc_stress = o->gc_stress;
    c.io_manager = o->io_manager;
    c.stats = o->stats;
    c.stats_file = o->stats_file;
    c.machine_readable = o->machine_readable;
    c.eventlog = o->eventlog;
    c.eventlog_file = o->eventlog_file;
    c.eventlog_format = o->eventlog_format;
    c.profile = o->profile;
    c.profile_stem = o->profile_stem;
    for (const RtsPatch *const *p = patch_registry; *p; p++)   /* Note [Patch registration] */
        if ((*p)->resolve) (*p)->resolve(o, &c);
    base_config_set(&c);
}

void rts_options_info(void *file)
{
    FILE *f = file;
    put_pair(f, true, "RTS name", "rtslab");
    put_pair(f, false, "Version", RTSLAB_VERSION);
    numa_info(f);
    info_line(f, "Configure args", RTSLAB_CONFIGURE_ARGS);
    put_pair(f, false, "Patches", RTSLAB_PATCHES);
    info_patches(f);
    info_after(f, "Patches");
    put_pair(f, false, "liburing", YESNO(HAVE_LIBURING));
    char why[256];
    put_pair(f, false, "IO manager", io_choose((IoChoice)base_cfg->io_manager, why, sizeof why) == 0
                                     ? io_choice_info() : why);
    char why2[256];              /* whether the uring back end can run here (tests: needs=io_uring) */
    put_pair(f, false, "io_uring", YESNO(io_choose(IO_CHOOSE_URING, why2, sizeof why2) == 0));
    io_choose((IoChoice)base_cfg->io_manager, why, sizeof why);
    info_after(f, "io_uring");
    info_line(f, "libnuma", YESNO(HAVE_LIBNUMA));
    info_line(f, "perf", YESNO(HAVE_PERF));
    put_pair(f, false, "Debug", YESNO(RTS_DEBUG));
    /* configure --with-sanitizer: what the tests that measure memory skip (GCC's macros) */
#if defined(__SANITIZE_ADDRESS__) && defined(__SANITIZE_THREAD__)
    put_pair(f, false, "Sanitizer", "YES (address, thread)");
#elif defined(__SANITIZE_ADDRESS__)
    put_pair(f, false, "Sanitizer", "YES (address)");
#elif defined(__SANITIZE_THREAD__)
    put_pair(f, false, "Sanitizer", "YES (thread)");
#else
    put_pair(f, false, "Sanitizer", "NO");
#endif
    info_after(f, "Sanitizer");
    fputs(" ]\n", f);
}
