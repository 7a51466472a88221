#include "rtslab_config.h"
#if RTS_PATCH_STACK_CHUNKS
/* The stack-chunks patch's registration (Note [Patch registration] in rts/patch.h): -kc,
 * -kb (Note [Stack chunks]). */
#include <stddef.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include <string.h>
#include "sched/stack.h"

/* -kc<size>, -kb<size> (Note [The option table] in rts/options.c): stack_chunk_bytes and
 * stack_chunk_carry (sched/stack.h; Note [Stack chunks]) */
static const RtsOption options[] = {
    { .name = "-kc", .syntax = "-kc<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,
      .var = &stack_chunk_bytes, .min = 1024, .dflt = STACK_CHUNK_DEFAULT,
      .grain = sizeof(void *),
      .noun = "the stack chunk size", .what = "stack chunk size", .section = RTS_USAGE_STACK,
      .help = "  -kc<size>     stack chunk size (default {default}, min {min})\n" },
    { .name = "-kb", .syntax = "-kb<size>", .kind = RTS_OPT_SIZE, .type = RTS_T_SIZE,
      .var = &stack_chunk_carry, .dflt = STACK_CARRY_DEFAULT, .grain = sizeof(void *),
      .what = "of a full chunk's top frames, up to <size> bytes move into the next chunk",
      .section = RTS_USAGE_STACK,
      .help = "  -kb<size>     of a full chunk's top frames, up to <size> bytes move into the\n"
              "                next chunk (default {default})\n" },
    { .name = NULL },
};

/* GHC's rule (RtsFlags.c): -kb at most half of -kc. The message leads with the option the
 * user gave: -kc when it is not the default (before: `-kc1k` alone was reported as a bad
 * -kb1k, which the user had not given), and says which value is the default. */
static int check(const RtsOptions *o, char *err, size_t errlen)
{
    (void)o;
    if (stack_chunk_carry > stack_chunk_bytes / 2) {
        char kb[32], kc[32];
        opts_fmt_size(kb, sizeof kb, stack_chunk_carry);
        opts_fmt_size(kc, sizeof kc, stack_chunk_bytes);
        if (stack_chunk_bytes != STACK_CHUNK_DEFAULT)
            snprintf(err, errlen, "rtslab: -kc%s: the stack chunk size must be at least twice "
                     "the stack chunk buffer (-kb%s%s)", kc, kb,
                     stack_chunk_carry == STACK_CARRY_DEFAULT ? ", the default" : "");
        else
            snprintf(err, errlen, "rtslab: -kb%s: the stack chunk buffer must be at most half "
                     "the stack chunk size (-kc%s, the default)", kb, kc);
        return -1;
    }
    return 0;
}

static void info(FILE *f, RtsInfoPut put)
{
    char chunks[128], kc[32], kb[32];
    opts_fmt_size(kc, sizeof kc, stack_chunk_bytes);
    opts_fmt_size(kb, sizeof kb, stack_chunk_carry);
    snprintf(chunks, sizeof chunks, "chunks of %s (-kc), %s carried over (-kb)", kc, kb);
    put(f, "Stack chunks", chunks);
}

/* Statistics (Note [Patch statistics]): the chunks (Note [Stack chunks]), the stack objects
 * the GCs scanned and the linked chunks minor GCs did not. */
static struct {
    uint64_t stack_scanned, stack_skipped;
    uint64_t linked, allocated, reused, underflows;     /* at exit */
} st;

static void section_init(void)
{
    memset(&st, 0, sizeof st);
}

static void section_gc_done(const GcRecord *r)
{
    uint64_t scanned = r->stack_scans;
    StackChunkCounts sc;
    stack_chunk_counts(&sc);
    st.stack_scanned += scanned;
    if (!r->major && sc.live > (int64_t)scanned)
        st.stack_skipped += (uint64_t)sc.live - scanned;
}

static void section_summarise(void)
{
    StackChunkCounts sc;
    stack_chunk_counts(&sc);
    st.linked = (uint64_t)sc.linked;
    st.allocated = (uint64_t)sc.allocated;
    st.reused = (uint64_t)sc.reused;
    st.underflows = (uint64_t)sc.underflows;
}

static void section_lines(FILE *f)
{
    fprintf(f, "  Stack chunks: %llu linked (%llu allocated, %llu reused), %llu underflows; "
               "GC scanned %llu stack objects, skipped %llu clean chunks\n",
            (unsigned long long)st.linked, (unsigned long long)st.allocated,
            (unsigned long long)st.reused, (unsigned long long)st.underflows,
            (unsigned long long)st.stack_scanned, (unsigned long long)st.stack_skipped);
}

static const RtsStatsKey section_keys[] = {
    { "rtslab_stack_chunks_linked", &st.linked, NULL },
    { "rtslab_stack_chunks_allocated", &st.allocated, NULL },
    { "rtslab_stack_chunks_reused", &st.reused, NULL },
    { "rtslab_stack_underflows", &st.underflows, NULL },
    { "rtslab_stack_objects_scanned", &st.stack_scanned, NULL },
    { "rtslab_stack_chunks_skipped", &st.stack_skipped, NULL },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .init = section_init,
    .gc_done = section_gc_done,
    .summarise = section_summarise,
    .lines_after = "Stop the world",
    .lines = section_lines,
    .keys_after = "rtslab_stw_max_seconds",
    .keys = section_keys,
};

const RtsPatch patch_stack_chunks = {
    .options = options,
    .info_after = "io_uring",
    .info = info,
    .check = check,
    .stats = &stats,
    .name = "stack-chunks",
};
#endif
