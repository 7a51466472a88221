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

static const RtsPatchOption options[] = {
    { "-kc", offsetof(RtsOptions, stack_chunk), RTS_DEFAULT_STACK_CHUNK, RTS_NO_FIELD,
      RTS_USAGE_STACK, "  -kc<size>     stack chunk size (default %s, min 1k)\n" },
    { "-kb", offsetof(RtsOptions, stack_buffer), RTS_DEFAULT_STACK_BUFFER, RTS_NO_FIELD,
      RTS_USAGE_STACK,
      "  -kb<size>     of a full chunk's top frames, up to <size> bytes move into the\n"
      "                next chunk (default %s)\n" },
    { NULL, 0, 0, 0, 0, NULL },
};

/* GHC's rule (RtsFlags.c): -kb at most half of -kc. The message leads with the option the
 * user gave: -kc when it is not the default (before: `-kc1k` alone was reported as a bad
 * -kb1k, which the user had not given), and says which value is the default. */
static int check(const RtsOptions *o, char *err, size_t errlen)
{
    if (o->stack_buffer > o->stack_chunk / 2) {
        char kb[32], kc[32];
        rts_fmt_size(kb, sizeof kb, o->stack_buffer);
        rts_fmt_size(kc, sizeof kc, o->stack_chunk);
        if (o->stack_chunk != RTS_DEFAULT_STACK_CHUNK)
            snprintf(err, errlen, "rtslab: -kc%s: the stack chunk size must be at least twice "
                     "the stack chunk buffer (-kb%s%s)", kc, kb,
                     o->stack_buffer == RTS_DEFAULT_STACK_BUFFER ? ", the default" : "");
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
    rts_fmt_size(kc, sizeof kc, rts_opts.stack_chunk);
    rts_fmt_size(kb, sizeof kb, rts_opts.stack_buffer);
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

const RtsPatch rts_patch_stack_chunks = {
    .options = options,
    .info_after = "io_uring",
    .info = info,
    .check = check,
    .stats = &stats,
    .name = "stack-chunks",
};
#endif
