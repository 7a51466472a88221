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
 * of RTS_OPT_HEAP_GRAIN (one block); stack sizes (-K, -ki, -kc, -kb) to a multiple of a word.
 *
 * Every error message starts with "rtslab: " and fits on one line; the caller prints it and
 * exits 1.
 *
 * Note [Options that need a patch]
 * An option that only a patch gives meaning to is an error in a build without the patch
 * (never accepted and ignored). Its value is parsed first in every build, as
 * patch_option_specs[] says (one table: the syntax, the range, the message out of range and
 * the one without the patch), so a malformed value is reported as such; then the patch that
 * registered the option takes it (Note [Patch registration] in rts/patch.h: its default,
 * where it goes and its -? lines are in the patch's own file), and without one it needs the
 * patch (needs_patch). The message names the configure flag, which needs_patch finds in
 * RTSLAB_PATCH_OPTIONS (configure.ac's RTSLAB_PATCH lines), so these sources name no patch
 * and the base, with every patch stripped (`make patches`), says only that the option is not
 * in this build. An option whose meaning depends on others (-qb0 against a later -qb<gen>)
 * is judged once all the options are parsed, as the command line overrides RTSLAB_RTS
 * (check_patch_options; a patch's own checks are its RtsPatch.check). The -? text lists a
 * patch's options in builds with it, and the options of the patches a build lacks at its
 * end; --info lists every patch of the tree, on or off, and the registered patches' lines.
 */
#include "rtslab_options.h"
#include "rts_config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "base/util.h"          /* rts_opts: what --info shows of the options in force */
#include "os/affinity.h"        /* --info: the capabilities --numa places */
#include "os/numa.h"
#include "io/iomgr.h"
#include "rts/patch.h"          /* Note [Patch registration] */
#include "rts/rts.h"            /* rts_config_resolve */

#define RTS_OPT_MAX_CAPS   4096u          /* -N<n>, -qn<n> */
#define RTS_OPT_MAX_GC_STRESS 1000000000u /* -DG<n> */
#define RTS_OPT_MAX_GEN    255u           /* -qg<gen>, -qb<gen> */
#define RTS_OPT_HEAP_GRAIN ((size_t)4096) /* -A, -M, -O round up to this */
#define RTS_OPT_MIN_STACK  ((size_t)1024) /* -K, -ki, -kc: at least 1k */

/* Note [Patch registration]: the patches compiled in, from configure's RTSLAB_PATCH_REGS. */
#define RTSLAB_PATCH_REG(n) extern const RtsPatch rts_patch_##n;
RTSLAB_PATCH_REGS
#undef RTSLAB_PATCH_REG
#define RTSLAB_PATCH_REG(n) &rts_patch_##n,
const RtsPatch *const rts_patches[] = { RTSLAB_PATCH_REGS NULL };
#undef RTSLAB_PATCH_REG

/* How the options only a patch gives meaning to are parsed, in every build (Note [Options
 * that need a patch]): a number (an unsigned) or a size (a size_t; a stack size has a
 * minimum and is rounded up to a word, as -K), from min to max (0: no maximum), `noun` in
 * the message when it is out of range; `what` is the subject and verb of the message in a
 * build without a patch that registers it (Note [Patch registration] in rts/patch.h). A
 * claim is a value of a base option that only a patch gives meaning to, judged once all the
 * options are parsed (check_patch_options). */
typedef enum { OPT_NUMBER, OPT_STACK_SIZE, OPT_SIZE, OPT_CLAIM } OptKind;
typedef struct {
    const char *name;
    OptKind kind;
    unsigned long long min, max;
    const char *noun, *what;
} OptSpec;

static const OptSpec patch_option_specs[] = {
    { "-kc", OPT_STACK_SIZE, RTS_OPT_MIN_STACK, 0, "the stack chunk size", "stack chunks need" },
    { "-kb", OPT_SIZE, 0, 0, NULL, "stack chunks need" },
    { "-qy", OPT_NUMBER, 1, 1000000000u, "the spins between yields", "yielding spin-waits need" },
    { "-qw", OPT_NUMBER, 0, 1000000000u, "the spin count", "futex barriers need" },
    { "-qi", OPT_NUMBER, 0, 1000000u, "the number of GCs",
      "idle capabilities opting out of GC need" },
    { "-qb0", OPT_CLAIM, 0, 0, NULL, "work stealing in minor GCs needs" },
};
#define N_PATCH_OPTIONS (sizeof patch_option_specs / sizeof patch_option_specs[0])

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

/* The space-separated lists configure makes (RTSLAB_PATCHES, RTSLAB_PATCHES_KNOWN,
 * RTSLAB_PATCH_OPTIONS): next_word sets *w and *n to the next word of *p and advances it,
 * false at the end; in_list says whether the n bytes at w are a word of list. */
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

/* The patch of configure.ac's RTSLAB_PATCH lines that gives meaning to the option word `w`
 * (the longest of its options that begins w), copied into name; false when none does. */
static bool patch_of_option(const char *w, char *name, size_t len)
{
    const char *p = RTSLAB_PATCH_OPTIONS, *x;  /* "NAME:OPTION NAME:OPTION ..." */
    size_t xn, best = 0;
    while (next_word(&p, &x, &xn)) {
        const char *colon = memchr(x, ':', xn);
        if (!colon) continue;
        size_t olen = xn - (size_t)(colon + 1 - x);
        if (olen > best && strncmp(w, colon + 1, olen) == 0) {
            best = olen;
            snprintf(name, len, "%.*s", (int)(colon - x), x);
        }
    }
    return best > 0;
}

/* Note [Options that need a patch]: `what` is the sentence's subject and verb, e.g.
 * "stack chunks need". */
static int needs_patch(char *err, size_t errlen, const char *w, const char *what)
{
    char name[64];
    if (patch_of_option(w, name, sizeof name))
        return fail(err, errlen, "%s: %s a build with --enable-%s", w, what, name);
    return fail(err, errlen, "%s: %s a patch this build does not have", w, what);
}

/* The spec of the option word w (the longest name that begins it; claims are no words). */
static const OptSpec *spec_of_word(const char *w)
{
    const OptSpec *best = NULL;
    for (size_t i = 0; i < N_PATCH_OPTIONS; i++) {
        const OptSpec *sp = &patch_option_specs[i];
        size_t n = strlen(sp->name);
        if (sp->kind != OPT_CLAIM && strncmp(w, sp->name, n) == 0
            && (!best || n > strlen(best->name)))
            best = sp;
    }
    return best;
}

static const OptSpec *spec_named(const char *name)
{
    for (size_t i = 0; i < N_PATCH_OPTIONS; i++)
        if (strcmp(patch_option_specs[i].name, name) == 0) return &patch_option_specs[i];
    return NULL;
}

/* The entry of a registered patch for the option `name`; NULL when no patch in the build
 * registers it. */
static const RtsPatchOption *registered_option(const char *name)
{
    for (const RtsPatch *const *p = rts_patches; *p; p++)
        for (const RtsPatchOption *e = (*p)->options; e && e->name; e++)
            if (strcmp(e->name, name) == 0) return e;
    return NULL;
}

static void set_field(RtsOptions *o, const OptSpec *sp, int field, unsigned long long v)
{
    char *at = (char *)o + field;
    if (sp->kind == OPT_NUMBER) {
        unsigned u = (unsigned)v;
        memcpy(at, &u, sizeof u);
    } else {
        size_t z = (size_t)v;
        memcpy(at, &z, sizeof z);
    }
}

static void set_bool(RtsOptions *o, int field, bool v)
{
    memcpy((char *)o + field, &v, sizeof v);
}

void rts_options_defaults(RtsOptions *o)
{
    memset(o, 0, sizeof *o);
    o->n_caps = 1;
    o->n_caps_auto = false;
    o->n_caps_given = false;
    o->alloc_area = RTS_DEFAULT_ALLOC_AREA;
    o->max_heap = 0;
    o->old_gen_factor = RTS_DEFAULT_OLD_GEN_FACTOR;
    o->min_old_gen = RTS_MIN_OLD_GEN_LIMIT;
    o->aging = true;
    o->sync_defer = RTS_DEFAULT_SYNC_DEFER;
    o->max_stack = RTS_DEFAULT_MAX_STACK;
    o->initial_stack = RTS_DEFAULT_INITIAL_STACK;
    o->par_gc = true;
    o->par_gc_gen = RTS_DEFAULT_PAR_GC_GEN;
    o->balance = true;
    o->balance_gen = RTS_DEFAULT_BALANCE_GEN;
    o->gc_threads = 0;
    o->pin_caps = false;
    o->stats = RTS_STATS_NONE;
    o->stats_file = NULL;
    o->machine_readable = false;
    o->numa = false;
    o->numa_mask = 0;
    o->eventlog = false;
    o->eventlog_file = NULL;
    o->profile = false;
    o->profile_stem = NULL;
    o->eventlog_format = 0;
    o->sanity = false;
    o->gc_stress = 0;
    o->io_manager = IO_CHOOSE_AUTO;
    o->show_info = false;
    o->show_help = false;
    /* the registered patches' options (Note [Patch registration]) */
    for (const RtsPatch *const *p = rts_patches; *p; p++)
        for (const RtsPatchOption *e = (*p)->options; e && e->name; e++) {
            const OptSpec *sp = spec_named(e->name);
            if (sp && e->field != RTS_NO_FIELD) set_field(o, sp, e->field, e->dflt);
            if (e->auto_field != RTS_NO_FIELD) set_bool(o, e->auto_field, true);
        }
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

/* -K, -ki, -kc */
static int stack_size(const char *word, const char *arg, const char *what, size_t *out,
                      char *err, size_t errlen)
{
    size_t v;
    if (rts_parse_size(arg, &v) != 0)
        return fail(err, errlen, "bad size in RTS option %s", word);
    if (v < RTS_OPT_MIN_STACK)
        return fail(err, errlen, "%s: the %s must be at least 1k", word, what);
    if (round_up(&v, sizeof(void *)) != 0)
        return fail(err, errlen, "bad size in RTS option %s", word);
    *out = v;
    return 0;
}

/* -A, -M: the minimum applies to the size as given, then it is rounded up to a block. */
static int heap_size(const char *word, bool zero_ok, size_t *out, char *err, size_t errlen)
{
    size_t v;
    if (rts_parse_size(word + 2, &v) != 0)
        return fail(err, errlen, "bad size in RTS option %s", word);
    if (v < RTS_MIN_ALLOC_AREA && !(zero_ok && v == 0)) {
        if (zero_ok)
            return fail(err, errlen,
                        "%s: the maximum heap size must be 0 (unlimited) or at least %zuk", word,
                        RTS_MIN_ALLOC_AREA >> 10);
        return fail(err, errlen, "%s: the allocation area must be at least %zuk", word,
                    RTS_MIN_ALLOC_AREA >> 10);
    }
    if (round_up(&v, RTS_OPT_HEAP_GRAIN) != 0)
        return fail(err, errlen, "bad size in RTS option %s", word);
    *out = v;
    return 0;
}

/* -qg / -qg<gen>, -qb / -qb<gen> */
static int gen_option(const char *word, const char *arg, bool *flag, unsigned *gen,
                      char *err, size_t errlen)
{
    if (*arg == '\0') {
        *flag = false;
        return 0;
    }
    unsigned g;
    if (parse_uint(arg, RTS_OPT_MAX_GEN, &g) != 0)
        return fail(err, errlen, "bad generation in RTS option %s", word);
    if (g > RTS_OPT_MAX_GEN)
        return fail(err, errlen, "%s: the generation must be at most %u", word, RTS_OPT_MAX_GEN);
    *flag = true;
    *gen = g;
    return 0;
}

/* --numa, --numa=<mask> (Note [NUMA-local heap] in os/numa.h): the mask in decimal, as
 * GHC reads it, or in hex after 0x; bit i is node i. Which nodes exist is known only at
 * start-up (numa_init says when the mask names none of them). */
static int numa_option(RtsOptions *o, const char *w, char *err, size_t errlen)
{
    unsigned long long mask = ~0ull;
    if (w[6] == '=') {
        const char *s = w + 7;
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

static const char *fmt_size(char *buf, size_t len, size_t v);

/* An option of patch_option_specs: its value is parsed and range-checked in every build, then
 * goes where the registered patch says, or is refused (Note [Options that need a patch]). */
static int patch_option(RtsOptions *o, const char *w, const OptSpec *sp, char *err, size_t errlen)
{
    const char *arg = w + strlen(sp->name);
    unsigned long long v;
    if (sp->kind == OPT_NUMBER) {
        unsigned n;
        if (parse_uint(arg, (unsigned)sp->max, &n) != 0)
            return fail(err, errlen, "bad number in RTS option %s", w);
        if (n < sp->min || n > sp->max) {
            if (sp->min == 0)
                return fail(err, errlen, "%s: %s must be at most %llu", w, sp->noun, sp->max);
            return fail(err, errlen, "%s: %s must be from %llu to %llu", w, sp->noun, sp->min,
                        sp->max);
        }
        v = n;
    } else {
        size_t z;
        if (rts_parse_size(arg, &z) != 0)
            return fail(err, errlen, "bad size in RTS option %s", w);
        if (z < sp->min) {
            char m[32];
            return fail(err, errlen, "%s: %s must be at least %s", w, sp->noun,
                        fmt_size(m, sizeof m, (size_t)sp->min));
        }
        if (round_up(&z, sizeof(void *)) != 0)
            return fail(err, errlen, "bad size in RTS option %s", w);
        v = z;
    }
    const RtsPatchOption *e = registered_option(sp->name);
    if (!e || e->field == RTS_NO_FIELD)
        return needs_patch(err, errlen, w, sp->what);
    set_field(o, sp, e->field, v);
    if (e->auto_field != RTS_NO_FIELD) set_bool(o, e->auto_field, false);
    return 0;
}

int rts_options_parse_word(RtsOptions *o, const char *w, char *err, size_t errlen)
{
    if (w[0] != '-') return fail(err, errlen, "unexpected RTS argument: %s", w);
    const OptSpec *sp = spec_of_word(w);
    if (sp) return patch_option(o, w, sp, err, errlen);

    switch (w[1]) {
    case 'N': {
        if (w[2] == '\0') {
            o->n_caps_auto = true;
            o->n_caps_given = false;
            return 0;
        }
        unsigned n;
        if (parse_uint(w + 2, RTS_OPT_MAX_CAPS, &n) != 0)
            return fail(err, errlen, "bad number in RTS option %s", w);
        if (n < 1)
            return fail(err, errlen, "%s: the number of capabilities must be at least 1", w);
        if (n > RTS_OPT_MAX_CAPS)
            return fail(err, errlen, "%s: the number of capabilities must be at most %u", w,
                        RTS_OPT_MAX_CAPS);
        o->n_caps = n;
        o->n_caps_auto = false;
        o->n_caps_given = true;
        return 0;
    }
    case 'A':
        return heap_size(w, false, &o->alloc_area, err, errlen);
    case 'M':
        return heap_size(w, true, &o->max_heap, err, errlen);
    case 'F': {
        double f;
        if (parse_factor(w + 2, &f) != 0)
            return fail(err, errlen, "bad number in RTS option %s", w);
        if (!(f > 0))
            return fail(err, errlen, "%s: the old generation factor must be greater than 0", w);
        o->old_gen_factor = f;
        return 0;
    }
    case 'O': {
        /* GHC's -O<size> (its default is 1m; ours 4m, rts_config.h): the least the old
         * generation grows to before its first major GC, and the least it is let grow to
         * after one. */
        size_t v;
        if (rts_parse_size(w + 2, &v) != 0)
            return fail(err, errlen, "bad size in RTS option %s", w);
        if (v < RTS_OPT_HEAP_GRAIN)
            return fail(err, errlen, "%s: the minimum old generation size must be at least %zuk",
                        w, RTS_OPT_HEAP_GRAIN >> 10);
        if (round_up(&v, RTS_OPT_HEAP_GRAIN) != 0)
            return fail(err, errlen, "bad size in RTS option %s", w);
        o->min_old_gen = v;
        return 0;
    }
    case 'K':
        return stack_size(w, w + 2, "maximum stack size", &o->max_stack, err, errlen);
    case 'k':
        if (w[2] == 'i')
            return stack_size(w, w + 3, "initial stack size", &o->initial_stack, err, errlen);
        break;
    case 'q':
        switch (w[2]) {
        case 'g':
            return gen_option(w, w + 3, &o->par_gc, &o->par_gc_gen, err, errlen);
        case 'b':
            return gen_option(w, w + 3, &o->balance, &o->balance_gen, err, errlen);
        case 'n': {
            unsigned n;
            if (parse_uint(w + 3, RTS_OPT_MAX_CAPS, &n) != 0)
                return fail(err, errlen, "bad number in RTS option %s", w);
            if (n < 1)
                return fail(err, errlen, "%s: the number of GC threads must be at least 1", w);
            if (n > RTS_OPT_MAX_CAPS)
                return fail(err, errlen, "%s: the number of GC threads must be at most %u", w,
                            RTS_OPT_MAX_CAPS);
            o->gc_threads = n;
            return 0;
        }
        case 'a':
            if (w[3] != '\0') break;
            o->pin_caps = true;
            return 0;
        default:
            break;
        }
        break;
    case 's':
    case 'S': {
        const char *file = w[2] != '\0' && strcmp(w + 2, "stderr") != 0 ? w + 2 : NULL;
        if (set_file(&o->stats_file, file, err, errlen) != 0) return -1;
        o->stats = w[1] == 's' ? RTS_STATS_SUMMARY : RTS_STATS_VERBOSE;
        return 0;
    }
    case 'l':
        if (set_file(&o->eventlog_file, w[2] != '\0' ? w + 2 : NULL, err, errlen) != 0)
            return -1;
        o->eventlog = true;
        return 0;
    case 'p':
        /* GHC's -p and -po<stem>: Note [Time profile] in sched/profile.h */
        if (w[2] == '\0') {
            o->profile = true;
            return 0;
        }
        if (w[2] == 'o') {
            if (w[3] == '\0')
                return fail(err, errlen, "%s: -po<stem> needs a file name stem", w);
            if (set_file(&o->profile_stem, w + 3, err, errlen) != 0)
                return -1;
            o->profile = true;
            return 0;
        }
        break;
    case 'D':
        if (strcmp(w, "-DS") == 0) {
            o->sanity = true;
            return 0;
        }
        if (w[2] == 'G') {
            unsigned n;
            if (parse_uint(w + 3, RTS_OPT_MAX_GC_STRESS, &n) != 0 || n < 1)
                return fail(err, errlen, "%s: -DG<n> needs a number of allocations from 1 to %u",
                            w, RTS_OPT_MAX_GC_STRESS);
            o->gc_stress = n;
            return 0;
        }
        break;
    case '?':
        if (w[2] != '\0') break;
        o->show_help = true;
        return 0;
    case '-':
        if (strcmp(w, "--info") == 0) {
            o->show_info = true;
            return 0;
        }
        if (strcmp(w, "--numa") == 0 || strncmp(w, "--numa=", 7) == 0)
            return numa_option(o, w, err, errlen);
        if (strcmp(w, "--machine-readable") == 0) {
            o->machine_readable = true;
            return 0;
        }
        if (strcmp(w, "--stats-keys") == 0) {  /* Note [Patch statistics] in trace/stats.h */
            o->show_stats_keys = true;
            return 0;
        }
        if (strncmp(w, "--io-manager=", 13) == 0) {   /* Note [IO manager] in io/iomgr.h */
            const char *v = w + 13;
            if (strcmp(v, "auto") == 0) o->io_manager = IO_CHOOSE_AUTO;
            else if (strcmp(v, "uring") == 0) o->io_manager = IO_CHOOSE_URING;
            else if (strcmp(v, "epoll") == 0) o->io_manager = IO_CHOOSE_EPOLL;
            else return fail(err, errlen, "%s: --io-manager= takes auto, uring or epoll", w);
            return 0;
        }
        if (strncmp(w, "--aging=", 8) == 0) {   /* Note [Aging] in sm/storage.h */
            const char *v = w + 8;
            if (strcmp(v, "1") == 0) o->aging = true;
            else if (strcmp(v, "0") == 0) o->aging = false;
            else return fail(err, errlen, "%s: --aging= takes 1 or 0", w);
            return 0;
        }
        if (strncmp(w, "--sync-defer=", 13) == 0) {   /* Note [Deferred GC requests] in sm/gc.h */
            size_t v;
            if (rts_parse_size(w + 13, &v) != 0 || round_up(&v, RTS_OPT_HEAP_GRAIN) != 0)
                return fail(err, errlen, "bad size in RTS option %s", w);
            o->sync_defer = v;
            return 0;
        }
        if (strncmp(w, "--eventlog-format=", 18) == 0) {   /* Note [Eventlog] */
            const char *v = w + 18;
            if (strcmp(v, "ghc") == 0) o->eventlog_format = 0;
            else if (strcmp(v, "chrome") == 0) o->eventlog_format = 1;
            else return fail(err, errlen, "%s: --eventlog-format= takes ghc or chrome", w);
            return 0;
        }
        break;
    default:
        break;
    }
    return fail(err, errlen, "unknown RTS option: %s", w);
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

/* Note [Options that need a patch]: the options still in force once all are parsed. */
static int check_patch_options(const RtsOptions *o, char *err, size_t errlen)
{
    if (o->balance && o->balance_gen == 0 && !registered_option("-qb0"))
        return needs_patch(err, errlen, "-qb0", spec_named("-qb0")->what);
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
    for (const RtsPatch *const *p = rts_patches; *p; p++)   /* Note [Patch registration] */
        if ((*p)->check && (*p)->check(o, err, errlen) != 0) return -1;
    if (o->stats_file && o->eventlog_file && same_file(o->stats_file, o->eventlog_file))
        return fail(err, errlen, "-s%s and -l%s name the same file: the statistics would "
                    "overwrite the eventlog", o->stats_file, o->eventlog_file);
    return check_patch_options(o, err, errlen);
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

const char *rts_fmt_size(char *buf, size_t len, size_t v)
{
    return fmt_size(buf, len, v);
}

/* The base's -? lines that a patch may word differently (RtsPatch.usage_lines). */
static void usage_line(FILE *f, const char *name, const char *text)
{
    for (const RtsPatch *const *p = rts_patches; *p; p++)
        for (const RtsUsageLine *l = (*p)->usage_lines; l && l->name; l++)
            if (strcmp(l->name, name) == 0) {
                fputs(l->text, f);
                return;
            }
    fputs(text, f);
}

/* The -? lines of the registered patches' options of one section, "%s" their default. */
static void usage_patches(FILE *f, RtsUsageSection section)
{
    for (const RtsPatch *const *p = rts_patches; *p; p++)
        for (const RtsPatchOption *e = (*p)->options; e && e->name; e++) {
            if (!e->usage || e->section != section) continue;
            const char *at = strstr(e->usage, "%s");
            if (!at) {
                fputs(e->usage, f);
                continue;
            }
            char d[32];
            const OptSpec *sp = spec_named(e->name);
            if (sp && sp->kind == OPT_NUMBER)
                snprintf(d, sizeof d, "%llu", e->dflt);
            else
                fmt_size(d, sizeof d, (size_t)e->dflt);
            fprintf(f, "%.*s%s%s", (int)(at - e->usage), e->usage, d, at + 2);
        }
}

/* The options of the patches this build lacks (Note [Options that need a patch]). */
static void usage_missing_patches(FILE *f)
{
    const char *p = RTSLAB_PATCH_OPTIONS, *x;
    size_t xn;
    bool any = false;
    while (next_word(&p, &x, &xn)) {
        const char *colon = memchr(x, ':', xn);
        if (!colon || in_list(RTSLAB_PATCHES, x, (size_t)(colon - x))) continue;
        if (!any) fputs("\nOptions of patches not in this build (an error here):\n", f);
        any = true;
        fprintf(f, "  %-13.*s needs configure --enable-%.*s\n", (int)(xn - (size_t)(colon + 1 - x)),
                colon + 1, (int)(colon - x), x);
    }
}

void rts_options_usage(void *file)
{
    FILE *f = file;
    char a[32], ki[32], kk[32], amin[32], omin[32], sd[32];
    fmt_size(a, sizeof a, RTS_DEFAULT_ALLOC_AREA);
    fmt_size(sd, sizeof sd, RTS_DEFAULT_SYNC_DEFER);
    fmt_size(amin, sizeof amin, RTS_MIN_ALLOC_AREA);
    fmt_size(omin, sizeof omin, RTS_MIN_OLD_GEN_LIMIT);
    fmt_size(kk, sizeof kk, RTS_DEFAULT_MAX_STACK);
    fmt_size(ki, sizeof ki, RTS_DEFAULT_INITIAL_STACK);

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
        "\n"
        "  -?            print this message and exit\n"
        "  --info        print information about the RTS (version, patches) and exit\n"
        "\n", f);
    usage_line(f, "-N", "  -N            use as many capabilities as the machine has\n");
    fprintf(f,
        "  -N<n>         use <n> capabilities (1..%u; default 1)\n"
        "  -qg           use sequential GC\n"
        "  -qg<gen>      use parallel GC only for generations >= <gen> (default %d)\n"
        "  -qb           no load balancing in parallel GC\n"
        "  -qb<gen>      load-balance in parallel GC only for generations >= <gen>\n"
        "                (default %s)\n"
        "  -qn<n>        use <n> GC threads (default: one per capability; at most\n"
        "                one per capability)\n",
        RTS_OPT_MAX_CAPS, RTS_DEFAULT_PAR_GC_GEN, RTS_DEFAULT_BALANCE_TEXT);
    usage_line(f, "-qa", "  -qa           pin each capability's OS thread to a CPU\n");
    usage_patches(f, RTS_USAGE_QA);
    usage_patches(f, RTS_USAGE_GC);
    fprintf(f,
        "\n"
        "  -A<size>      nursery (allocation area) size per capability (default %s, min %s)\n"
        "  -M<size>      maximum heap size; 0 = unlimited (default 0)\n"
        "  -F<n>         collect the old generation when it exceeds <n> x its live data\n"
        "                at the last major GC (default %g)\n"
        "  -O<size>      no major GC while the old generation is smaller than <size>\n"
        "                (default %s)\n"
        "  --aging=<0|1> 1 (default): a minor GC keeps the nursery's survivors young for\n"
        "                one more minor GC before promoting them, as GHC does; 0: it\n"
        "                promotes them at once\n"
        "  --sync-defer=<size>  while the GC a capability asked for waits for the others\n"
        "                to stop, it runs on in up to <size> more nursery (default %s;\n"
        "                0: it waits)\n"
        "  -K<size>      maximum stack size of a thread (default %s)\n"
        "  -ki<size>     initial stack size of a thread (default %s; at most -K)\n",
        a, amin, RTS_DEFAULT_OLD_GEN_FACTOR, omin, sd, kk, ki);
    usage_patches(f, RTS_USAGE_STACK);
    fputs(
        "\n"
        "  -s[<file>]    print a GC summary at exit to <file> (default stderr; -sstderr\n"
        "                is stderr too)\n"
        "  -S[<file>]    like -s, plus one line per GC\n"
        "  --machine-readable  print -s statistics as key/value pairs for tools\n"
        "  --numa        each capability's nursery and GC to-space on its NUMA node (with\n"
        "                -qa, the node of its CPU; else nodes round-robin, the thread bound\n"
        "                to its node); nothing to do on one node. Needs libnuma\n"
        "  --numa=<mask> the same, on the nodes of <mask> only (bit i: node i; decimal or 0x)\n"
        "  --io-manager=<m>  the IO manager's back end: uring (io_uring, liburing), epoll,\n"
        "                or auto (default: io_uring when the kernel allows it, else epoll)\n"
        "  -l[<file>]    write an eventlog to <file> (default <prog>.eventlog, <prog> the\n"
        "                script run or else the executable), in GHC's binary format:\n"
        "                ThreadScope and ghc-events read it\n"
        "  --eventlog-format=<f>  the eventlog's format: ghc (the default) or chrome\n"
        "                (Chrome trace JSON, which Perfetto opens; default file\n"
        "                <prog>.eventlog.json)\n"
        "  -p            write a time profile by procedure to <prog>.prof, from samples\n"
        "                of the running threads every 1 ms\n"
        "  -po<stem>     the same, to <stem>.prof\n"
        "  -DS           sanity-check the heap before and after every GC (slow)\n"
        "  -DG<n>        collector stress: a minor GC every n allocations (slow)\n", f);
    usage_missing_patches(f);
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
    for (const RtsPatch *const *p = rts_patches; *p; p++)
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
    if (!rts_cfg->resolved)
        rts_fatal("--info before the options were resolved (rts_config_resolve)");
    char *buf = malloc(4096);
    if (buf == NULL)
        return;
    unsigned n = rts_cfg->n_caps;
    put_pair(f, false, "NUMA (--numa)", numa_explain(buf, 4096, rts_opts.numa, rts_opts.numa_mask,
                                                     rts_opts.pin_caps, n));
    free(buf);
}

void rts_config_resolve(void)
{
    RtsConfig c = { 0 };
    c.n_caps = rts_opts.n_caps_auto ? affinity_default_caps() : rts_opts.n_caps;
    c.gc_threads = rts_opts.gc_threads;
    if (c.gc_threads > c.n_caps) {
        c.gc_threads = c.n_caps;
        c.gc_threads_clamped = true;
    }
    rts_config_set(&c);
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
    put_pair(f, false, "IO manager", io_choose((IoChoice)rts_opts.io_manager, why, sizeof why) == 0
                                     ? io_choice_info() : why);
    char why2[256];              /* whether the uring back end can run here (tests: needs=io_uring) */
    put_pair(f, false, "io_uring", YESNO(io_choose(IO_CHOOSE_URING, why2, sizeof why2) == 0));
    io_choose((IoChoice)rts_opts.io_manager, why, sizeof why);
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
