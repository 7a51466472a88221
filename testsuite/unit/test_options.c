/* Unit test: RTS option parsing (runtime/rts/options.c), good and bad. */
#include "rtslab_options.h"
#include "rts_config.h"
#include "unit/check.h"
#include "base/util.h"            /* base_cfg */
#include "rts/rts.h"              /* opts_read, opts_resolve */
#include "sm/block.h"             /* BLOCK_SIZE */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static RtsOptions o;
static char err[256];

#define KB ((size_t)1 << 10)
#define MB ((size_t)1 << 20)
#define GB ((size_t)1 << 30)

/* Fresh defaults, then one word that must parse. */
static int word(const char *w)
{
    rts_options_free(&o);
    rts_options_defaults(&o);
    err[0] = '\0';
    int rc = rts_options_parse_word(&o, w, err, sizeof err);
    if (rc != 0) fprintf(stderr, "unexpected error for %s: %s\n", w, err);
    return rc;
}

/* Fresh defaults, then one word that must fail with exactly `msg`. */
static void bad(const char *w, const char *msg)
{
    rts_options_free(&o);
    rts_options_defaults(&o);
    err[0] = '\0';
    int rc = rts_options_parse_word(&o, w, err, sizeof err);
    CHECK_EQ_INT(rc, -1);
    CHECK_STR(err, msg);
}

static size_t size_of(const char *s)
{
    size_t v = (size_t)-1;
    CHECK_EQ_INT(rts_parse_size(s, &v), 0);
    return v;
}

/* Splits `args` at spaces into a NULL-terminated argv, parses it (with `env`), and returns
 * the remaining arguments joined by single spaces in `out`. */
static int parse_cmdline(const char *env, const char *args, char *out, size_t outlen)
{
    char *copy = strdup(args);
    char *argv[64];
    int argc = 0;
    for (char *t = strtok(copy, " "); t; t = strtok(NULL, " ")) argv[argc++] = t;
    argv[argc] = NULL;

    rts_options_free(&o);
    rts_options_defaults(&o);
    err[0] = '\0';
    int rc = rts_options_parse(&o, &argc, argv, env, err, sizeof err);
    out[0] = '\0';
    if (rc == 0) {
        CHECK(argv[argc] == NULL);
        for (int i = 0; i < argc; i++) {
            if (i) strncat(out, " ", outlen - strlen(out) - 1);
            strncat(out, argv[i], outlen - strlen(out) - 1);
        }
    }
    free(copy);
    return rc;
}

static void test_defaults(void)
{
    rts_options_defaults(&o);
    CHECK_EQ_INT(o.n_caps, 1);
    CHECK(!o.n_caps_auto);
    CHECK(o.alloc_area == MB);
    CHECK(o.max_heap == 0);
    CHECK(o.old_gen_factor == 2.0);
    CHECK(o.aging);
    CHECK_EQ_INT((long long)o.sync_defer, (long long)RTS_DEFAULT_SYNC_DEFER);
    CHECK(o.max_stack == 512 * MB);
    CHECK(o.initial_stack == KB);
    CHECK(o.par_gc);
    CHECK_EQ_INT(o.par_gc_gen, 0);
    CHECK(o.balance);
    CHECK_EQ_INT(o.balance_gen, RTS_DEFAULT_BALANCE_GEN);
    CHECK_EQ_INT(o.balance_gen, 1);      /* a patch may resolve it otherwise (base_cfg) */
    CHECK(!o.balance_gen_given);
    CHECK_EQ_INT(o.gc_threads, 0);
    CHECK(!o.pin_caps);
    CHECK_EQ_INT(o.stats, RTS_STATS_NONE);
    CHECK(o.stats_file == NULL);
    CHECK(!o.machine_readable);
    CHECK(!o.eventlog);
    CHECK(o.eventlog_file == NULL);
    CHECK(!o.sanity && !o.show_info && !o.show_help);
}

static void test_sizes(void)
{
    CHECK(size_of("0") == 0);
    CHECK(size_of("100") == 100);
    CHECK(size_of("4k") == 4 * KB);
    CHECK(size_of("4K") == 4 * KB);
    CHECK(size_of("64m") == 64 * MB);
    CHECK(size_of("64M") == 64 * MB);
    CHECK(size_of("2g") == 2 * GB);
    CHECK(size_of("2G") == 2 * GB);
    CHECK(size_of("1.5m") == 3 * MB / 2);
    CHECK(size_of("0.5k") == 512);
    CHECK(size_of("1.25g") == 5 * GB / 4);
    CHECK(size_of("1.0000000000001k") == KB);
    CHECK(size_of("007k") == 7 * KB);

    size_t v;
    const char *badsz[] = { "", "k", "m", "-1", "+1", " 1", "1 ", "1.", ".5", "1.k", "1x",
                            "1kk", "1kb", "1mB", "1k2", "1e3", "0x10", "1,5",
                            "99999999999999999999999", "18446744073709551616",
                            "17179869184g", NULL };
    for (int i = 0; badsz[i]; i++) {
        if (rts_parse_size(badsz[i], &v) != -1) {
            fprintf(stderr, "size \"%s\" accepted\n", badsz[i]);
            CHECK(0);
        }
    }
    CHECK_EQ_INT(rts_parse_size(NULL, &v), -1);
    char max[32];
    snprintf(max, sizeof max, "%zu", SIZE_MAX);
    CHECK_EQ_INT(rts_parse_size(max, &v), 0);
    CHECK(v == SIZE_MAX);
}

static void test_good_words(void)
{
    CHECK_EQ_INT(word("-N"), 0);
    CHECK(o.n_caps_auto);
    CHECK_EQ_INT(word("-N4"), 0);
    CHECK_EQ_INT(o.n_caps, 4);
    CHECK(!o.n_caps_auto);
    CHECK_EQ_INT(word("-N1"), 0);
    CHECK_EQ_INT(o.n_caps, 1);
    CHECK_EQ_INT(word("-N4096"), 0);
    CHECK_EQ_INT(o.n_caps, 4096);

    CHECK_EQ_INT(word("-A4k"), 0);
    CHECK(o.alloc_area == 4 * KB);
    CHECK_EQ_INT(word("-A64k"), 0);
    CHECK(o.alloc_area == 64 * KB);
    CHECK_EQ_INT(word("-A1.5m"), 0);
    CHECK(o.alloc_area == 3 * MB / 2);
    CHECK_EQ_INT(word("-A4097"), 0); /* rounded up to a block */
    CHECK(o.alloc_area == 8 * KB);
    CHECK_EQ_INT(word("-A5k"), 0);
    CHECK(o.alloc_area == 8 * KB);
    CHECK_EQ_INT(word("-A2G"), 0);
    CHECK(o.alloc_area == 2 * GB);

    CHECK_EQ_INT(word("-M0"), 0);
    CHECK(o.max_heap == 0);
    CHECK_EQ_INT(word("-M4k"), 0);
    CHECK(o.max_heap == 4 * KB);
    CHECK_EQ_INT(word("-M100m"), 0);
    CHECK(o.max_heap == 100 * MB);
    CHECK_EQ_INT(word("-M10000"), 0);
    CHECK(o.max_heap == 12 * KB);

    CHECK_EQ_INT(word("--aging=0"), 0);
    CHECK(!o.aging);
    CHECK_EQ_INT(word("--aging=1"), 0);
    CHECK(o.aging);
    CHECK_EQ_INT(word("--sync-defer=0"), 0);
    CHECK_EQ_INT((long long)o.sync_defer, 0);
    CHECK_EQ_INT(word("--sync-defer=1"), 0);        /* rounded up to a block */
    CHECK_EQ_INT((long long)o.sync_defer, 4096);
    CHECK_EQ_INT(word("--sync-defer=64m"), 0);
    CHECK_EQ_INT((long long)o.sync_defer, 64LL << 20);

    CHECK_EQ_INT(word("-F3"), 0);
    CHECK(o.old_gen_factor == 3.0);
    CHECK_EQ_INT(word("-F1.5"), 0);
    CHECK(o.old_gen_factor == 1.5);
    CHECK_EQ_INT(word("-F0.25"), 0);
    CHECK(o.old_gen_factor == 0.25);

    CHECK(o.min_old_gen == 4 * MB);         /* the default, RTS_MIN_OLD_GEN_LIMIT */
    CHECK_EQ_INT(word("-O1m"), 0);
    CHECK(o.min_old_gen == MB);
    CHECK_EQ_INT(word("-O4k"), 0);
    CHECK(o.min_old_gen == 4 * KB);
    CHECK_EQ_INT(word("-O10000"), 0);       /* rounded up to a block */
    CHECK(o.min_old_gen == 12 * KB);

    CHECK_EQ_INT(word("-K1g"), 0);
    CHECK(o.max_stack == GB);
    CHECK_EQ_INT(word("-K1k"), 0);
    CHECK(o.max_stack == KB);
    CHECK_EQ_INT(word("-ki4k"), 0);
    CHECK(o.initial_stack == 4 * KB);
    CHECK_EQ_INT(word("-ki1025"), 0); /* rounded up to a word */
    CHECK(o.initial_stack == KB + sizeof(void *));

    CHECK_EQ_INT(word("-qg"), 0);
    CHECK(!o.par_gc);
    CHECK_EQ_INT(word("-qg1"), 0);
    CHECK(o.par_gc);
    CHECK_EQ_INT(o.par_gc_gen, 1);
    CHECK_EQ_INT(word("-qg0"), 0);
    CHECK(o.par_gc);
    CHECK_EQ_INT(o.par_gc_gen, 0);
    CHECK_EQ_INT(word("-qb"), 0);
    CHECK(!o.balance);
    CHECK_EQ_INT(word("-qb0"), 0);
    CHECK(o.balance);
    CHECK_EQ_INT(o.balance_gen, 0);
    CHECK_EQ_INT(word("-qb2"), 0);
    CHECK_EQ_INT(o.balance_gen, 2);
    CHECK_EQ_INT(word("-qn3"), 0);
    CHECK_EQ_INT(o.gc_threads, 3);
    CHECK_EQ_INT(word("-qa"), 0);
    CHECK(o.pin_caps);

    CHECK_EQ_INT(word("-s"), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_SUMMARY);
    CHECK(o.stats_file == NULL);
    CHECK_EQ_INT(word("-sstderr"), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_SUMMARY);
    CHECK(o.stats_file == NULL);
    CHECK_EQ_INT(word("-sout.txt"), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_SUMMARY);
    CHECK(o.stats_file && strcmp(o.stats_file, "out.txt") == 0);
    CHECK_EQ_INT(word("-S"), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_VERBOSE);
    CHECK(o.stats_file == NULL);
    CHECK_EQ_INT(word("-S/tmp/gc.log"), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_VERBOSE);
    CHECK(o.stats_file && strcmp(o.stats_file, "/tmp/gc.log") == 0);
    CHECK_EQ_INT(word("--machine-readable"), 0);
    CHECK(o.machine_readable);

    CHECK_EQ_INT(word("-l"), 0);
    CHECK(o.eventlog);
    CHECK(o.eventlog_file == NULL);
    CHECK_EQ_INT(word("-ltrace.json"), 0);
    CHECK(o.eventlog);
    CHECK(o.eventlog_file && strcmp(o.eventlog_file, "trace.json") == 0);

    CHECK(!o.profile);
    CHECK_EQ_INT(word("-p"), 0);
    CHECK(o.profile);
    CHECK(o.profile_stem == NULL);
    CHECK_EQ_INT(word("-pomine"), 0);
    CHECK(o.profile);
    CHECK(o.profile_stem && strcmp(o.profile_stem, "mine") == 0);

    CHECK_EQ_INT(word("-DS"), 0);
    CHECK(o.sanity);
    CHECK_EQ_INT(word("--info"), 0);
    CHECK(o.show_info);
    CHECK_EQ_INT(word("-?"), 0);
    CHECK(o.show_help);

    /* Later words win; a replaced file name is freed (ASan would report a leak). */
    rts_options_free(&o);
    rts_options_defaults(&o);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-sa", err, sizeof err), 0);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-Sb", err, sizeof err), 0);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-la", err, sizeof err), 0);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-lb", err, sizeof err), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_VERBOSE);
    CHECK(strcmp(o.stats_file, "b") == 0 && strcmp(o.eventlog_file, "b") == 0);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-N8", err, sizeof err), 0);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-N", err, sizeof err), 0);
    CHECK(o.n_caps_auto);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-N2", err, sizeof err), 0);
    CHECK(!o.n_caps_auto);
    CHECK_EQ_INT(o.n_caps, 2);
    rts_options_free(&o);
    CHECK(o.stats_file == NULL && o.eventlog_file == NULL);
    rts_options_free(&o); /* twice is harmless */
}

static void test_bad_words(void)
{
    bad("-Xfoo", "rtslab: unknown RTS option: -Xfoo");
    bad("-", "rtslab: unknown RTS option: -");
    bad("--foo", "rtslab: unknown RTS option: --foo");
    bad("--info2", "rtslab: unknown RTS option: --info2");
    bad("-?x", "rtslab: unknown RTS option: -?x");
    bad("-q", "rtslab: unknown RTS option: -q");
    bad("-qx", "rtslab: unknown RTS option: -qx");
    bad("-qa1", "rtslab: unknown RTS option: -qa1");
    bad("-k", "rtslab: unknown RTS option: -k");
    bad("-kx4k", "rtslab: unknown RTS option: -kx4k");
    bad("-D", "rtslab: unknown RTS option: -D");
    bad("-DX", "rtslab: unknown RTS option: -DX");
    bad("-DSx", "rtslab: unknown RTS option: -DSx");
    bad("foo", "rtslab: unexpected RTS argument: foo");
    bad("+RTS", "rtslab: unexpected RTS argument: +RTS");

    bad("--aging=2", "rtslab: --aging=2: --aging= takes 1 or 0");
    bad("--aging=", "rtslab: --aging=: --aging= takes 1 or 0");
    bad("--aging=yes", "rtslab: --aging=yes: --aging= takes 1 or 0");
    bad("--aging", "rtslab: unknown RTS option: --aging");
    bad("--sync-defer=", "rtslab: bad size in RTS option --sync-defer=");
    bad("--sync-defer=-1m", "rtslab: bad size in RTS option --sync-defer=-1m");
    bad("--sync-defer=4q", "rtslab: bad size in RTS option --sync-defer=4q");
    bad("--sync-defer", "rtslab: unknown RTS option: --sync-defer");

    bad("-N0", "rtslab: -N0: the number of capabilities must be at least 1");
    bad("-N4097", "rtslab: -N4097: the number of capabilities must be at most 4096");
    bad("-N99999999999999999999",
        "rtslab: -N99999999999999999999: the number of capabilities must be at most 4096");
    bad("-Nx", "rtslab: bad number in RTS option -Nx");
    bad("-N-1", "rtslab: bad number in RTS option -N-1");
    bad("-N4x", "rtslab: bad number in RTS option -N4x");
    bad("-N1.5", "rtslab: bad number in RTS option -N1.5");

    bad("-A12q", "rtslab: bad size in RTS option -A12q");
    bad("-A", "rtslab: bad size in RTS option -A");
    bad("-Am", "rtslab: bad size in RTS option -Am");
    bad("-A-1m", "rtslab: bad size in RTS option -A-1m");
    bad("-A1mx", "rtslab: bad size in RTS option -A1mx");
    bad("-A1m ", "rtslab: bad size in RTS option -A1m ");
    bad("-A1.m", "rtslab: bad size in RTS option -A1.m");
    bad("-A99999999999999999999999k",
        "rtslab: bad size in RTS option -A99999999999999999999999k");
    bad("-A18446744073709551615", "rtslab: bad size in RTS option -A18446744073709551615");
    bad("-A1k", "rtslab: -A1k: the allocation area must be at least 4k");
    bad("-A0", "rtslab: -A0: the allocation area must be at least 4k");
    bad("-A4095", "rtslab: -A4095: the allocation area must be at least 4k");
    bad("-M1k", "rtslab: -M1k: the maximum heap size must be 0 (unlimited) or at least 4k");
    bad("-M", "rtslab: bad size in RTS option -M");
    bad("-M-5", "rtslab: bad size in RTS option -M-5");
    bad("-F0", "rtslab: -F0: the old generation factor must be greater than 0");
    bad("-O0", "rtslab: -O0: the minimum old generation size must be at least 4k");
    bad("-O1k", "rtslab: -O1k: the minimum old generation size must be at least 4k");
    bad("-O", "rtslab: bad size in RTS option -O");
    bad("-O2x", "rtslab: bad size in RTS option -O2x");
    bad("-F0.0", "rtslab: -F0.0: the old generation factor must be greater than 0");
    bad("-F", "rtslab: bad number in RTS option -F");
    bad("-F-2", "rtslab: bad number in RTS option -F-2");
    bad("-F2x", "rtslab: bad number in RTS option -F2x");
    bad("-Fnan", "rtslab: bad number in RTS option -Fnan");
    bad("-Finf", "rtslab: bad number in RTS option -Finf");
    bad("-F1e3", "rtslab: bad number in RTS option -F1e3");
    bad("-K", "rtslab: bad size in RTS option -K");
    bad("-K512", "rtslab: -K512: the maximum stack size must be at least 1k");
    bad("-ki100", "rtslab: -ki100: the initial stack size must be at least 1k");
    bad("-ki", "rtslab: bad size in RTS option -ki");
    bad("-qgx", "rtslab: bad generation in RTS option -qgx");
    bad("-qb-1", "rtslab: bad generation in RTS option -qb-1");
    bad("-qg256", "rtslab: -qg256: the generation must be at most 255");
    bad("-qn", "rtslab: bad number in RTS option -qn");
    bad("-qn0", "rtslab: -qn0: the number of GC threads must be at least 1");
    bad("-qn2x", "rtslab: bad number in RTS option -qn2x");
    /* a word is its row's name alone, or begins with the name of a row that takes a value
     * (Note [The option table]): neither is unknown */
    bad("-qa5", "rtslab: unknown RTS option: -qa5");
    bad("-px", "rtslab: unknown RTS option: -px");
    bad("-DSx", "rtslab: unknown RTS option: -DSx");
    bad("-?x", "rtslab: unknown RTS option: -?x");
    bad("--infox", "rtslab: unknown RTS option: --infox");
    bad("-k", "rtslab: unknown RTS option: -k");
    bad("-q", "rtslab: unknown RTS option: -q");
    bad("-po", "rtslab: -po: -po<stem> needs a file name stem");

    /* A short error buffer truncates, still NUL-terminated. */
    char small[10];
    rts_options_defaults(&o);
    CHECK_EQ_INT(rts_options_parse_word(&o, "-Xfoo", small, sizeof small), -1);
    CHECK_STR(small, "rtslab: u");
    CHECK_EQ_INT(rts_options_parse_word(&o, "-Xfoo", NULL, 0), -1);
}

static void test_cmdline(void)
{
    char out[512];

    CHECK_EQ_INT(parse_cmdline(NULL, "prog a b", out, sizeof out), 0);
    CHECK_STR(out, "prog a b");

    CHECK_EQ_INT(parse_cmdline(NULL, "prog", out, sizeof out), 0);
    CHECK_STR(out, "prog");

    CHECK_EQ_INT(parse_cmdline(NULL, "prog a +RTS -N4 -A64k -RTS b", out, sizeof out), 0);
    CHECK_STR(out, "prog a b");
    CHECK_EQ_INT(o.n_caps, 4);
    CHECK(o.alloc_area == 64 * KB);

    /* Several blocks; the last one runs to the end. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -N2 -RTS x +RTS -s -RTS y z +RTS -DS -M8m",
                               out, sizeof out), 0);
    CHECK_STR(out, "prog x y z");
    CHECK_EQ_INT(o.n_caps, 2);
    CHECK_EQ_INT(o.stats, RTS_STATS_SUMMARY);
    CHECK(o.sanity);
    CHECK(o.max_heap == 8 * MB);

    /* Later options win. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -N2 -RTS +RTS -N3 -A8k -A16k", out, sizeof out), 0);
    CHECK_STR(out, "prog");
    CHECK_EQ_INT(o.n_caps, 3);
    CHECK(o.alloc_area == 16 * KB);

    /* --RTS: removed, and everything after it belongs to the program. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog a +RTS -N2 --RTS +RTS -N8 -RTS -Xbad b",
                               out, sizeof out), 0);
    CHECK_STR(out, "prog a +RTS -N8 -RTS -Xbad b");
    CHECK_EQ_INT(o.n_caps, 2);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog --RTS +RTS -N8", out, sizeof out), 0);
    CHECK_STR(out, "prog +RTS -N8");
    CHECK_EQ_INT(o.n_caps, 1);

    /* -- is the program's and ends RTS processing too (GHC). */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -N2 -- +RTS -N8", out, sizeof out), 0);
    CHECK_STR(out, "prog -- +RTS -N8");
    CHECK_EQ_INT(o.n_caps, 2);

    /* A stray -RTS is removed; +RTS with nothing after is fine; argv[0] is never parsed. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog -RTS a +RTS", out, sizeof out), 0);
    CHECK_STR(out, "prog a");
    CHECK_EQ_INT(parse_cmdline(NULL, "+RTS a -N3", out, sizeof out), 0);
    CHECK_STR(out, "+RTS a -N3");
    CHECK_EQ_INT(o.n_caps, 1);

    /* Options outside a block are the program's. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog -N4 -s", out, sizeof out), 0);
    CHECK_STR(out, "prog -N4 -s");
    CHECK_EQ_INT(o.n_caps, 1);
    CHECK_EQ_INT(o.stats, RTS_STATS_NONE);

    /* The environment first, then argv: argv wins. */
    CHECK_EQ_INT(parse_cmdline("  -N3\t-A8k \n -s  ", "prog +RTS -N5 -RTS p", out, sizeof out), 0);
    CHECK_STR(out, "prog p");
    CHECK_EQ_INT(o.n_caps, 5);
    CHECK(o.alloc_area == 8 * KB);
    CHECK_EQ_INT(o.stats, RTS_STATS_SUMMARY);
    CHECK_EQ_INT(parse_cmdline("-Sgc.txt -DS", "prog", out, sizeof out), 0);
    CHECK_EQ_INT(o.stats, RTS_STATS_VERBOSE);
    CHECK(o.stats_file && strcmp(o.stats_file, "gc.txt") == 0);
    CHECK(o.sanity);
    CHECK_EQ_INT(parse_cmdline("", "prog", out, sizeof out), 0);
    CHECK_EQ_INT(parse_cmdline("   ", "prog", out, sizeof out), 0);

    /* Errors: from argv and from the environment. */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -Xfoo -RTS", out, sizeof out), -1);
    CHECK_STR(err, "rtslab: unknown RTS option: -Xfoo");
    CHECK_EQ_INT(parse_cmdline(NULL, "prog a +RTS -N4 -A12q", out, sizeof out), -1);
    CHECK_STR(err, "rtslab: bad size in RTS option -A12q");
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS foo", out, sizeof out), -1);
    CHECK_STR(err, "rtslab: unexpected RTS argument: foo");
    CHECK_EQ_INT(parse_cmdline("-N2 -N0", "prog +RTS -N4", out, sizeof out), -1);
    CHECK_STR(err, "rtslab: -N0: the number of capabilities must be at least 1 (in RTSLAB_RTS)");
    CHECK_EQ_INT(parse_cmdline("+RTS -N2", "prog", out, sizeof out), -1);
    CHECK_STR(err, "rtslab: unexpected RTS argument: +RTS (in RTSLAB_RTS)");
    /* -N<n> given, or not (-s's line of a patch says which) */
    CHECK_EQ_INT(parse_cmdline(NULL, "prog", out, sizeof out), 0);
    CHECK(!o.n_caps_given && !o.n_caps_auto && o.n_caps == 1);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -N1", out, sizeof out), 0);
    CHECK(o.n_caps_given && o.n_caps == 1);
    CHECK_EQ_INT(parse_cmdline("-N3", "prog +RTS -N", out, sizeof out), 0);
    CHECK(!o.n_caps_given && o.n_caps_auto);

    /* No argv at all: only the environment. */
    rts_options_free(&o);
    rts_options_defaults(&o);
    CHECK_EQ_INT(rts_options_parse(&o, NULL, NULL, "-N7", err, sizeof err), 0);
    CHECK_EQ_INT(o.n_caps, 7);
    rts_options_free(&o);
}

/* A value of a base option that only a patch gives meaning to (-qb0: Note [The option
 * table] in options.c) is judged once everything is parsed: a later -qb<gen> or -qb
 * overrides it. */
static void test_claims(void)
{
    char out[512];

    CHECK_EQ_INT(parse_cmdline("-qb0", "prog +RTS -qb1", out, sizeof out), 0);
    CHECK(o.balance);
    CHECK_EQ_INT(o.balance_gen, 1);
    CHECK(o.balance_gen_given);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb0 -qb", out, sizeof out), 0);
    CHECK(!o.balance);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb2 -RTS x", out, sizeof out), 0);
    CHECK_STR(out, "prog x");
    CHECK_EQ_INT(o.balance_gen, 2);
#if RTS_PATCH_GEN0_STEAL
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb0", out, sizeof out), 0);
    CHECK(o.balance);
    CHECK_EQ_INT(o.balance_gen, 0);
    CHECK_EQ_INT(parse_cmdline("-qb0", "prog", out, sizeof out), 0);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb1 -qb0", out, sizeof out), 0);
    CHECK_EQ_INT(o.balance_gen, 0);
    rts_options_free(&o);
    rts_options_defaults(&o);
    CHECK_EQ_INT(rts_options_parse(&o, NULL, NULL, "-qb0", err, sizeof err), 0);
#else
    const char *qb0 = "rtslab: -qb0: the generation must be at least 1 in this build";
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb0", out, sizeof out), -1);
    CHECK_STR(err, qb0);
    CHECK_EQ_INT(parse_cmdline("-qb0", "prog", out, sizeof out), -1);
    CHECK_STR(err, qb0);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb1 -qb0", out, sizeof out), -1);
    CHECK_STR(err, qb0);
    CHECK_EQ_INT(parse_cmdline(NULL, "prog +RTS -qb00 -RTS a", out, sizeof out), -1);
    CHECK_STR(err, qb0);
    rts_options_free(&o);
    rts_options_defaults(&o);
    CHECK_EQ_INT(rts_options_parse(&o, NULL, NULL, "-qb0", err, sizeof err), -1);
    CHECK_STR(err, qb0);
#endif
    rts_options_free(&o);
}

/* Reads what `fn` writes to a FILE * into a malloc'd string. */
static char *capture(void (*fn)(void *))
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return strdup("");
    fn(f);
    long n = ftell(f);
    rewind(f);
    char *buf = calloc((size_t)n + 1, 1);
    CHECK(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return buf;
}

static void test_usage_info(void)
{
    char *u = capture(rts_options_usage);
    const char *opts[] = { "+RTS", "-RTS", "--RTS", "RTSLAB_RTS", "-?", "--info", "-N<n>",
                           "-qg<gen>", "-qb<gen>", "-qn<n>", "-qa", "-A<size>", "-M<size>",
                           "-F<n>", "-K<size>", "-ki<size>",
                           "-s[<file>]",
                           "-S[<file>]", "--machine-readable", "-l[<file>]", "-DS",
                           "default 1m", "default 512m", "default 1k",
                           "default 2)", NULL };
    for (int i = 0; opts[i]; i++) {
        if (!strstr(u, opts[i])) {
            fprintf(stderr, "usage lacks %s\n", opts[i]);
            CHECK(0);
        }
    }
    CHECK(strchr(u, '{') == NULL);       /* every {default}, {min}, {max} replaced */
    free(u);

    char *no_args[] = { "test_options", NULL };   /* --info shows the options in force: */
    int no_argc = 1;                                /* the defaults */
    CHECK_EQ_INT(opts_read(&no_argc, no_args, NULL, err, sizeof err), 0);
    opts_resolve();                /* Note [Options, resolved once] in base/util.h */
    /* without -qn a parallel GC uses every capability */
    CHECK(base_cfg->resolved && base_cfg->n_caps >= 1 && base_cfg->gc_threads == base_cfg->n_caps);
    CHECK(base_cfg->nursery_blocks * BLOCK_SIZE == RTS_DEFAULT_ALLOC_AREA);
    CHECK(base_cfg->min_old_gen_blocks * BLOCK_SIZE == RTS_MIN_OLD_GEN_LIMIT);
    char *info = capture(rts_options_info);
    const char *first = " [(\"RTS name\",\"rtslab\")\n";
    CHECK(strncmp(info, first, strlen(first)) == 0);
    CHECK(strstr(info, " ,(\"Version\",\"" RTSLAB_VERSION "\")\n") != NULL);
    CHECK(strstr(info, " ,(\"Configure args\",\"") != NULL);
    /* a "Patch NAME" pair for every patch of the tree, YES when it is compiled in */
    char known[256];
    snprintf(known, sizeof known, "%s", RTSLAB_PATCHES_KNOWN);
    for (char *save = NULL, *name = strtok_r(known, " ", &save); name && strcmp(name, "none");
         name = strtok_r(NULL, " ", &save)) {
        char key[96], on[96];
        snprintf(key, sizeof key, ",(\"Patch %s\",\"", name);
        CHECK(strstr(info, key) != NULL);
        snprintf(on, sizeof on, " %s ", name);
        char list[256];
        snprintf(list, sizeof list, " %s ", RTSLAB_PATCHES);
        snprintf(key, sizeof key, ",(\"Patch %s\",\"%s\")", name, strstr(list, on) ? "YES" : "NO");
        CHECK(strstr(info, key) != NULL);
    }
#if RTS_PATCH_SPIN_YIELD
    CHECK(strstr(info, ",(\"Spin-wait yield\",\"every ") != NULL);
#endif
    /* what a patch adds to --info */
#if RTS_PATCH_PHYS_CAPS
    /* the machine as -N and -qa see it (testsuite/patches/phys-caps checks the values) */
    CHECK(strstr(info, ",(\"Patch phys-caps\",\"YES\")") != NULL);
    CHECK(strstr(info, ",(\"Default capabilities (-N)\",\"") != NULL);
    CHECK(strstr(info, ",(\"Pin order (-qa)\",\"") != NULL);
    CHECK(strstr(u = capture(rts_options_usage), "one capability per physical core") != NULL);
    free(u);
#endif
    CHECK(strstr(info, ",(\"liburing\",\"") != NULL);
    CHECK(strstr(info, ",(\"libnuma\",\"") != NULL);
#if RTS_PATCH_GEN0_STEAL
    CHECK(strstr(info, ",(\"GC work stealing\",\"generations >= 1 (without -qb<gen>: 0 with -A of "
                       "32m or more, else 1)\")") != NULL);
#endif
    CHECK(strstr(info, ",(\"Debug\",\"") != NULL);
    size_t len = strlen(info);
    CHECK(len > 4 && strcmp(info + len - 3, " ]\n") == 0);
    free(info);
}

/* --numa, --numa=<mask> (Note [NUMA-local heap] in os/numa.h): GHC's decimal mask, or hex
 * after 0x; malformed, zero or wider than 64 bits is an error in every build, and a good
 * one is an error saying NUMA support is not built in where configure found no libnuma. */
static void test_numa(void)
{
    rts_options_defaults(&o);
    CHECK(!o.numa);
#if HAVE_LIBNUMA
    if (CHECK_EQ_INT(word("--numa"), 0)) {
        CHECK(o.numa);
        CHECK(o.numa_mask == ~0ull);
    }
    static const struct { const char *w; unsigned long long mask; } good[] = {
        { "--numa=1", 1 }, { "--numa=3", 3 }, { "--numa=10", 10 }, { "--numa=0x10", 16 },
        { "--numa=0XaF", 0xaf }, { "--numa=007", 7 },
        { "--numa=18446744073709551615", ~0ull }, { "--numa=0xffffffffffffffff", ~0ull },
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        if (CHECK_EQ_INT(word(good[i].w), 0)) {
            CHECK(o.numa);
            CHECK(o.numa_mask == good[i].mask);
        }
#else
    bad("--numa", "rtslab: --numa: NUMA support is not built in (configure found no libnuma, "
        "or was given --without-libnuma)");
    bad("--numa=3", "rtslab: --numa=3: NUMA support is not built in (configure found no "
        "libnuma, or was given --without-libnuma)");
#endif
    static const char *const malformed[] = {
        "--numa=", "--numa=0x", "--numa=x1", "--numa=1a", "--numa=-1", "--numa=0x1g",
        "--numa= 1", "--numa=1.5", "--numa=3k",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++) {
        char msg[200];
        snprintf(msg, sizeof msg, "rtslab: bad node mask in RTS option %s (a number, decimal "
                 "or 0x hex; bit i is NUMA node i)", malformed[i]);
        bad(malformed[i], msg);
    }
    bad("--numa=0", "rtslab: --numa=0: the node mask names no node");
    bad("--numa=0x0", "rtslab: --numa=0x0: the node mask names no node");
    bad("--numa=18446744073709551616",
        "rtslab: --numa=18446744073709551616: the node mask must fit in 64 bits (nodes 0..63)");
    bad("--numa=0x10000000000000000",
        "rtslab: --numa=0x10000000000000000: the node mask must fit in 64 bits (nodes 0..63)");
    /* GHC once took --numa-debug for --numa (its commit "Error on invalid --numa flags") */
    bad("--numa-debug", "rtslab: unknown RTS option: --numa-debug");
    bad("--numax", "rtslab: unknown RTS option: --numax");
    bad("-numa", "rtslab: unknown RTS option: -numa");
}

/* Note [A fixed layout] in rtslab_options.h: the installed struct is the same in every build,
 * with or without the patches (this test runs in each). On LP64 its size and the offsets of
 * its fields are what they were when the words that are now unused_N held patches' options. */
#if defined(__LP64__)
_Static_assert(sizeof(RtsOptions) == RTS_OPTIONS_SIZE, "RtsOptions changed its layout");
_Static_assert(offsetof(RtsOptions, unused_56) == 56, "RtsOptions: unused_56 moved");
_Static_assert(offsetof(RtsOptions, n_caps_given) == 5, "RtsOptions: n_caps_given moved");
_Static_assert(offsetof(RtsOptions, alloc_area) == 8, "RtsOptions: alloc_area moved");
_Static_assert(offsetof(RtsOptions, balance_gen) == 84, "RtsOptions: balance_gen moved");
_Static_assert(offsetof(RtsOptions, unused_92) == 92, "RtsOptions: unused_92 moved");
_Static_assert(offsetof(RtsOptions, show_option_table) == 96, "RtsOptions: show_option_table moved");
_Static_assert(offsetof(RtsOptions, pin_caps) == 97, "RtsOptions: pin_caps moved");
_Static_assert(offsetof(RtsOptions, unused_100) == 100, "RtsOptions: unused_100 moved");
_Static_assert(offsetof(RtsOptions, stats) == 104, "RtsOptions: stats moved");
_Static_assert(offsetof(RtsOptions, unused_176) == 176, "RtsOptions: unused_176 moved");
/* --sync-defer took the first reserved word (Note [Deferred GC requests] in sm/gc.h) */
_Static_assert(offsetof(RtsOptions, sync_defer) == 192, "RtsOptions: sync_defer moved");
_Static_assert(offsetof(RtsOptions, reserved) == 200, "RtsOptions: reserved moved");
#endif

static void test_layout(void)
{
#if defined(__LP64__)
    CHECK_EQ_INT((long long)sizeof(RtsOptions), RTS_OPTIONS_SIZE);
#endif
    CHECK(sizeof(RtsOptions) >= offsetof(RtsOptions, reserved) + 7 * sizeof(unsigned long long));
}

int main(void)
{
    test_layout();
    test_defaults();
    test_sizes();
    test_good_words();
    test_bad_words();
    test_cmdline();
    test_claims();
    test_usage_info();
    test_numa();
    rts_options_free(&o);
    return check_done();
}
