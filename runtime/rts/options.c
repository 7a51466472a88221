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
 * (never accepted and ignored). Its value is parsed first in every build, so a malformed
 * value is reported as such; then the patch's island takes it, and the island's #else says
 * that it needs the patch (needs_patch). The message names the configure flag, which
 * needs_patch finds in RTSLAB_PATCH_OPTIONS (configure.ac's RTSLAB_PATCH lines), so these
 * sources name no patch outside its islands and the base, with every patch stripped
 * (`make patches`), says only that the option is not in this build. An option whose meaning
 * depends on others (-qb0 against a later -qb<gen>) is judged once all the options are
 * parsed, as the command line overrides RTSLAB_RTS (check_patch_options). The -? text lists
 * a patch's options in builds with it, and the options of the patches a build lacks at its
 * end; --info lists every patch of the tree, on or off.
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
#if RTS_PATCH_GEN0_STEAL
#include "sm/gc.h"              /* --info: gc_balance_gen */
#endif
#include "io/iomgr.h"
#if RTS_PATCH_PHYS_CAPS
#include "os/affinity.h"
#include "os/cpu_quota.h"       /* --info: "CPU quota" */
#endif

#define RTS_OPT_MAX_CAPS   4096u          /* -N<n>, -qn<n> */
#define RTS_OPT_MAX_GC_STRESS 1000000000u /* -DG<n> */
#define RTS_OPT_MAX_GEN    255u           /* -qg<gen>, -qb<gen> */
#define RTS_OPT_MAX_SPIN_YIELD 1000000000u /* -qy<n> */
#if !RTS_PATCH_IDLE_OPTOUT
#define RTS_MAX_IDLE_OPTOUT 1000000u      /* -qi<n>: parsed (then refused) without the patch */
#endif
#define RTS_OPT_HEAP_GRAIN ((size_t)4096) /* -A, -M, -O round up to this */
#define RTS_OPT_MIN_STACK  ((size_t)1024) /* -K, -ki, -kc: at least 1k */
#if !RTS_PATCH_FUTEX_BARRIER
#define RTS_MAX_WAIT_SPINS 1000000000u    /* -qw<n>: parsed (then refused) without the patch */
#endif

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
__attribute__((unused))  /* a build with every such patch calls it nowhere */
static int needs_patch(char *err, size_t errlen, const char *w, const char *what)
{
    char name[64];
    if (patch_of_option(w, name, sizeof name))
        return fail(err, errlen, "%s: %s a build with --enable-%s", w, what, name);
    return fail(err, errlen, "%s: %s a patch this build does not have", w, what);
}

void rts_options_defaults(RtsOptions *o)
{
    memset(o, 0, sizeof *o);
    o->n_caps = 1;
    o->n_caps_auto = false;
    o->alloc_area = RTS_DEFAULT_ALLOC_AREA;
    o->max_heap = 0;
    o->old_gen_factor = RTS_DEFAULT_OLD_GEN_FACTOR;
    o->min_old_gen = RTS_MIN_OLD_GEN_LIMIT;
    o->max_stack = RTS_DEFAULT_MAX_STACK;
    o->initial_stack = RTS_DEFAULT_INITIAL_STACK;
#if RTS_PATCH_STACK_CHUNKS
    o->stack_chunk = RTS_DEFAULT_STACK_CHUNK;
    o->stack_buffer = RTS_DEFAULT_STACK_BUFFER;
#endif
    o->par_gc = true;
    o->par_gc_gen = RTS_DEFAULT_PAR_GC_GEN;
    o->balance = true;
    o->balance_gen = RTS_DEFAULT_BALANCE_GEN;
#if RTS_PATCH_FUTEX_BARRIER
    o->wait_spins = RTS_DEFAULT_WAIT_SPINS;
    o->wait_spins_auto = true;
#endif
    o->gc_threads = 0;
    o->pin_caps = false;
#if RTS_PATCH_SPIN_YIELD
    o->spin_yield = RTS_DEFAULT_SPIN_YIELD;
#endif
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
#if RTS_PATCH_IDLE_OPTOUT
    o->idle_optout = RTS_DEFAULT_IDLE_OPTOUT;
#endif
    o->io_manager = IO_CHOOSE_AUTO;
    o->show_info = false;
    o->show_help = false;
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

int rts_options_parse_word(RtsOptions *o, const char *w, char *err, size_t errlen)
{
    if (w[0] != '-') return fail(err, errlen, "unexpected RTS argument: %s", w);

    switch (w[1]) {
    case 'N': {
        if (w[2] == '\0') {
            o->n_caps_auto = true;
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
        if (w[2] == 'c') {
            size_t chunk;
            if (stack_size(w, w + 3, "stack chunk size", &chunk, err, errlen) != 0)
                return -1;
#if RTS_PATCH_STACK_CHUNKS
            o->stack_chunk = chunk;
            return 0;
#else
            (void)chunk;
            return needs_patch(err, errlen, w, "stack chunks need");
#endif
        }
        if (w[2] == 'b') {
            size_t buf;
            if (rts_parse_size(w + 3, &buf) != 0 || round_up(&buf, sizeof(void *)) != 0)
                return fail(err, errlen, "bad size in RTS option %s", w);
#if RTS_PATCH_STACK_CHUNKS
            o->stack_buffer = buf;
            return 0;
#else
            (void)buf;
            return needs_patch(err, errlen, w, "stack chunks need");
#endif
        }
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
        case 'y': {
            unsigned n;
            if (parse_uint(w + 3, RTS_OPT_MAX_SPIN_YIELD, &n) != 0)
                return fail(err, errlen, "bad number in RTS option %s", w);
            if (n < 1 || n > RTS_OPT_MAX_SPIN_YIELD)
                return fail(err, errlen, "%s: the spins between yields must be from 1 to %u", w,
                            RTS_OPT_MAX_SPIN_YIELD);
#if RTS_PATCH_SPIN_YIELD
            o->spin_yield = n;
            return 0;
#else
            return needs_patch(err, errlen, w, "yielding spin-waits need");
#endif
        }
        case 'w': {
            unsigned n;
            if (parse_uint(w + 3, RTS_MAX_WAIT_SPINS, &n) != 0)
                return fail(err, errlen, "bad number in RTS option %s", w);
            if (n > RTS_MAX_WAIT_SPINS)
                return fail(err, errlen, "%s: the spin count must be at most %u", w,
                            RTS_MAX_WAIT_SPINS);
#if RTS_PATCH_FUTEX_BARRIER
            o->wait_spins = n;
            o->wait_spins_auto = false;
            return 0;
#else
            return needs_patch(err, errlen, w, "futex barriers need");
#endif
        }
        case 'i': {
            unsigned n;
            if (parse_uint(w + 3, RTS_MAX_IDLE_OPTOUT, &n) != 0)
                return fail(err, errlen, "bad number in RTS option %s", w);
            if (n > RTS_MAX_IDLE_OPTOUT)
                return fail(err, errlen, "%s: the number of GCs must be at most %u", w,
                            RTS_MAX_IDLE_OPTOUT);
#if RTS_PATCH_IDLE_OPTOUT
            o->idle_optout = n;
            return 0;
#else
            return needs_patch(err, errlen, w, "idle capabilities opting out of GC need");
#endif
        }
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
        if (strncmp(w, "--io-manager=", 13) == 0) {   /* Note [IO manager] in io/iomgr.h */
            const char *v = w + 13;
            if (strcmp(v, "auto") == 0) o->io_manager = IO_CHOOSE_AUTO;
            else if (strcmp(v, "uring") == 0) o->io_manager = IO_CHOOSE_URING;
            else if (strcmp(v, "epoll") == 0) o->io_manager = IO_CHOOSE_EPOLL;
            else return fail(err, errlen, "%s: --io-manager= takes auto, uring or epoll", w);
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
#if !RTS_PATCH_GEN0_STEAL
    if (o->balance && o->balance_gen == 0)
        return needs_patch(err, errlen, "-qb0", "work stealing in minor GCs needs");
#else
    (void)o;
    (void)err;
    (void)errlen;
#endif
    return 0;
}

static const char *fmt_size(char *buf, size_t len, size_t v);

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
#if RTS_PATCH_STACK_CHUNKS
    if (o->stack_buffer > o->stack_chunk / 2) {          /* GHC's rule (RtsFlags.c) */
        char kb[32], kc[32];
        return fail(err, errlen, "-kb%s: the stack chunk buffer must be at most half the "
                    "stack chunk size (-kc%s)", fmt_size(kb, sizeof kb, o->stack_buffer),
                    fmt_size(kc, sizeof kc, o->stack_chunk));
    }
#endif
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

/* -N and -qa: Note [Capabilities on physical cores] in os/affinity.c */
#if RTS_PATCH_PHYS_CAPS
#define USAGE_N  "  -N            use one capability per physical core in the CPU mask, or\n" \
                 "                fewer under a cgroup CPU quota (+RTS --info shows why)\n"
#define USAGE_QA "  -qa           pin each capability's OS thread to a CPU: one per physical\n" \
                 "                core (spread over packages and NUMA nodes), then second threads\n"
#else
#define USAGE_N  "  -N            use as many capabilities as the machine has\n"
#define USAGE_QA "  -qa           pin each capability's OS thread to a CPU\n"
#endif

#if RTS_PATCH_IDLE_OPTOUT
#define USAGE_QI "  -qi<n>        an idle capability opts out of GCs once it took part in <n> since\n" \
                 "                it went idle (0..1000000; default 1; 0: never)\n"
#else
#define USAGE_QI ""
#endif

#if RTS_PATCH_SPIN_YIELD
#define USAGE_QY "  -qy<n>        spin-waits (spinlocks, the GC's look-for-work loop) yield the CPU\n" \
                 "                every <n> spins (default %u)\n"
#define USAGE_QY_ARGS (unsigned)RTS_DEFAULT_SPIN_YIELD,
#else
#define USAGE_QY ""
#define USAGE_QY_ARGS
#endif

#if RTS_PATCH_STACK_CHUNKS
#define USAGE_KC "  -kc<size>     stack chunk size (default %s, min 1k)\n" \
                 "  -kb<size>     of a full chunk's top frames, up to <size> bytes move into the\n" \
                 "                next chunk (default %s)\n"
#define USAGE_KC_ARGS , kc, kb
#else
#define USAGE_KC ""
#define USAGE_KC_ARGS
#endif

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
    char a[32], ki[32], kk[32], amin[32], omin[32];
    fmt_size(a, sizeof a, RTS_DEFAULT_ALLOC_AREA);
    fmt_size(amin, sizeof amin, RTS_MIN_ALLOC_AREA);
    fmt_size(omin, sizeof omin, RTS_MIN_OLD_GEN_LIMIT);
    fmt_size(kk, sizeof kk, RTS_DEFAULT_MAX_STACK);
    fmt_size(ki, sizeof ki, RTS_DEFAULT_INITIAL_STACK);
#if RTS_PATCH_STACK_CHUNKS
    char kc[32], kb[32];
    fmt_size(kc, sizeof kc, RTS_DEFAULT_STACK_CHUNK);
    fmt_size(kb, sizeof kb, RTS_DEFAULT_STACK_BUFFER);
#endif

    fprintf(f,
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
        "\n"
        USAGE_N
        "  -N<n>         use <n> capabilities (1..%u; default 1)\n"
        "  -qg           use sequential GC\n"
        "  -qg<gen>      use parallel GC only for generations >= <gen> (default %d)\n"
        "  -qb           no load balancing in parallel GC\n"
        "  -qb<gen>      load-balance in parallel GC only for generations >= <gen>\n"
        "                (default %s)\n"
        "  -qn<n>        use <n> GC threads (default: one per capability; at most\n"
        "                one per capability)\n"
        USAGE_QA
        USAGE_QI
        USAGE_QY
#if RTS_PATCH_FUTEX_BARRIER
        "  -qw<n>        spin <n> times in a stop-the-world wait before sleeping in a futex\n"
        "                (0..1000000000; default 1000, or 30 with more capabilities than\n"
        "                allowed CPUs; futex-barrier patch)\n"
#endif
        "\n"
        "  -A<size>      nursery (allocation area) size per capability (default %s, min %s)\n"
        "  -M<size>      maximum heap size; 0 = unlimited (default 0)\n"
        "  -F<n>         collect the old generation when it exceeds <n> x its live data\n"
        "                at the last major GC (default %g)\n"
        "  -O<size>      no major GC while the old generation is smaller than <size>\n"
        "                (default %s)\n"
        "  -K<size>      maximum stack size of a thread (default %s)\n"
        "  -ki<size>     initial stack size of a thread (default %s; at most -K)\n"
        USAGE_KC
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
        "  -DG<n>        collector stress: a minor GC every n allocations (slow)\n",
        RTS_OPT_MAX_CAPS, RTS_DEFAULT_PAR_GC_GEN, RTS_DEFAULT_BALANCE_TEXT,
        USAGE_QY_ARGS a, amin, RTS_DEFAULT_OLD_GEN_FACTOR, omin, kk, ki USAGE_KC_ARGS);
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
#if RTS_PATCH_PHYS_CAPS

/* The machine as -N and -qa see it (Note [Capabilities on physical cores] in os/affinity.c),
 * for the options in force (rts_opts: --info comes after the other options are parsed). */
static void phys_caps_info(FILE *f)
{
    const Topology *t = topo_get();
    unsigned n = rts_opts.n_caps_auto ? affinity_default_caps() : rts_opts.n_caps;
    size_t len = 12 * (size_t)n + 512;
    char *buf = malloc(len);
    if (buf == NULL)
        return;
    snprintf(buf, len, "logical CPUs %d (online %d), physical cores %d, packages %d, "
             "NUMA nodes %d (source %s, mask %s, root %s)", t->n_logical, t->n_online,
             t->n_physical, t->n_packages, t->n_nodes, t->source, t->mask_source,
             t->root[0] ? t->root : "/");
    put_pair(f, false, "CPU topology", buf);
    put_pair(f, false, "CPU quota", cpu_quota_format(cpu_quota(), buf, len));
    put_pair(f, false, "Default capabilities (-N)", affinity_explain_default(buf, len));
    if (rts_opts.n_caps_auto)
        snprintf(buf, len, "%u (-N)", n);
    else
        snprintf(buf, len, "%u (-N%u)", n, n);
    put_pair(f, false, "Capabilities", buf);
    put_pair(f, false, "Pin order (-qa)", affinity_format_placement(buf, len, n));
    put_pair(f, false, "Pinned", rts_opts.pin_caps ? "YES (-qa)" : "NO (no -qa)");
    free(buf);
}
#endif

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
    char *buf = malloc(4096);
    if (buf == NULL)
        return;
    unsigned n = rts_opts.n_caps_auto ? affinity_default_caps() : rts_opts.n_caps;
    put_pair(f, false, "NUMA (--numa)", numa_explain(buf, 4096, rts_opts.numa, rts_opts.numa_mask,
                                                     rts_opts.pin_caps, n));
    free(buf);
}

void rts_options_info(void *file)
{
    FILE *f = file;
    put_pair(f, true, "RTS name", "rtslab");
    put_pair(f, false, "Version", RTSLAB_VERSION);
    numa_info(f);
    put_pair(f, false, "Configure args", RTSLAB_CONFIGURE_ARGS);
#if RTS_PATCH_IDLE_OPTOUT
    char optout[80];
    if (rts_opts.idle_optout)
        snprintf(optout, sizeof optout, "after %u GC(s) idle (-qi<n>; 0: never)", rts_opts.idle_optout);
    else
        snprintf(optout, sizeof optout, "never (-qi0)");
    put_pair(f, false, "Idle capabilities opt out of GC", optout);
#endif
    put_pair(f, false, "Patches", RTSLAB_PATCHES);
    info_patches(f);
#if RTS_PATCH_SPIN_YIELD
    char spin[64];
    snprintf(spin, sizeof spin, "every %u spins (-qy<n>; configure's default %d)",
             rts_opts.spin_yield, (int)RTS_SPIN_YIELD_SPINS);
    put_pair(f, false, "Spin-wait yield", spin);
#endif
    put_pair(f, false, "liburing", YESNO(HAVE_LIBURING));
    char why[256];
    put_pair(f, false, "IO manager", io_choose((IoChoice)rts_opts.io_manager, why, sizeof why) == 0
                                     ? io_choice_info() : why);
    char why2[256];              /* whether the uring back end can run here (tests: needs=io_uring) */
    put_pair(f, false, "io_uring", YESNO(io_choose(IO_CHOOSE_URING, why2, sizeof why2) == 0));
    io_choose((IoChoice)rts_opts.io_manager, why, sizeof why);
#if RTS_PATCH_STACK_CHUNKS
    char chunks[128], kc[32], kb[32];
    fmt_size(kc, sizeof kc, rts_opts.stack_chunk);
    fmt_size(kb, sizeof kb, rts_opts.stack_buffer);
    snprintf(chunks, sizeof chunks, "chunks of %s (-kc), %s carried over (-kb)", kc, kb);
    put_pair(f, false, "Stack chunks", chunks);
#endif
    put_pair(f, false, "libnuma", YESNO(HAVE_LIBNUMA));
#if RTS_PATCH_GEN0_STEAL
    char steal[160];
    if (rts_opts.balance)
        snprintf(steal, sizeof steal, "generations >= %u (without -qb<gen>: 0 with -A of 32m "
                 "or more, else 1)", gc_balance_gen());
    else
        snprintf(steal, sizeof steal, "off (-qb)");
    put_pair(f, false, "GC work stealing", steal);
#endif
    put_pair(f, false, "perf", YESNO(HAVE_PERF));
#if RTS_PATCH_FUTEX_BARRIER
    char futex[128];
    if (rts_opts.wait_spins_auto)
        snprintf(futex, sizeof futex, "%u spins (%u with more capabilities than CPUs), then a "
                 "futex wait (-qw<n>)", (unsigned)RTS_DEFAULT_WAIT_SPINS,
                 (unsigned)RTS_OVERSUB_WAIT_SPINS);
    else
        snprintf(futex, sizeof futex, "%u spins, then a futex wait (-qw<n>)", rts_opts.wait_spins);
    put_pair(f, false, "Stop-the-world waits", futex);
#endif
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
#if RTS_PATCH_PHYS_CAPS
    phys_caps_info(f);
#endif
    fputs(" ]\n", f);
}
