#include "rtslab_config.h"
#if RTS_PATCH_FUTEX_BARRIER
/* The futex-barrier patch's registration (Note [Patch registration] in rts/patch.h): -qw
 * (Note [Futex barrier] in sync/wait_futex_barrier.c). */
#include <stddef.h>
#include <string.h>
#include "rts_config.h"
#include "rts/patch.h"
#include "base/util.h"
#include "sync/wait.h"
#include "os/topology.h"

/* -qw's default with more capabilities than allowed CPUs (Note [Spinning when oversubscribed]
 * in sync/wait_futex_barrier.c); otherwise RTS_DEFAULT_WAIT_SPINS (sync/wait.h). */
#define RTS_OVERSUB_WAIT_SPINS     30

/* -qw<n>, as given (Note [The option table] in rts/options.c), and what it comes to here. */
static unsigned wait_spins;
static bool wait_spins_given;

static const RtsOption options[] = {
    { .name = "-qw", .syntax = "-qw<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,
      .var = &wait_spins, .given = &wait_spins_given, .max = 1000000000u,
      .dflt = RTS_DEFAULT_WAIT_SPINS, .noun = "the spin count",
      .dflt_text = "1000, or 30 with more capabilities than allowed CPUs",
      .what = "spins in a stop-the-world wait before sleeping in a futex",
      .section = RTS_USAGE_GC,
      .help = "  -qw<n>        spin <n> times in a stop-the-world wait before sleeping in a futex\n"
              "                (0..1000000000; default 1000, or 30 with more capabilities than\n"
              "                allowed CPUs; futex-barrier patch)\n" },
    { .name = NULL },
};

/* Note [Spinning when oversubscribed] in sync/wait_futex_barrier.c: decided once, set before
 * any wait. */
static void resolve(const RtsOptions *o, RtsConfig *c)
{
    (void)o;
    sync_set_spins(!wait_spins_given && c->n_caps > (unsigned)topo_get()->n_logical
                   ? RTS_OVERSUB_WAIT_SPINS : wait_spins);
}

static void info(FILE *f, RtsInfoPut put)
{
    char futex[128];
    if (!wait_spins_given)
        snprintf(futex, sizeof futex, "%u spins (%u with more capabilities than CPUs), then a "
                 "futex wait (-qw<n>)", (unsigned)RTS_DEFAULT_WAIT_SPINS,
                 (unsigned)RTS_OVERSUB_WAIT_SPINS);
    else
        snprintf(futex, sizeof futex, "%u spins, then a futex wait (-qw<n>)", wait_spins);
    put(f, "Stop-the-world waits", futex);
}

/* Statistics (Note [Patch statistics]): the barrier waits' futex calls (Note [Futex barrier]
 * in sync/wait_futex_barrier.c: the sleeps of the base's table are FUTEX_WAIT calls). */
static struct {
    uint64_t announced[WAIT_NKINDS], sleeps[WAIT_NKINDS], futex_wakes[WAIT_NKINDS],
             quiet_wakes[WAIT_NKINDS], futex_errors[WAIT_NKINDS], polled[WAIT_NKINDS];
} sum;

static void section_summarise(void)
{
    for (int k = 0; k < WAIT_NKINDS; k++) {
        SyncWaitStats w;
        sync_wait_stats((SyncWaitKind)k, &w);
        sum.announced[k] = w.announced;
        sum.sleeps[k] = w.sleeps;
        sum.futex_wakes[k] = w.futex_wakes;
        sum.quiet_wakes[k] = w.quiet_wakes;
        sum.futex_errors[k] = w.futex_errors;
        sum.polled[k] = w.polled;
    }
}

static void section_lines(FILE *f)
{
    fprintf(f, "  Futex barrier (-qw%u):   announced futex waits futex wakes  no-syscall wakes\n",
            sync_spins());
    for (int k = 0; k < WAIT_NKINDS; k++)
        fprintf(f, "    %-26s %8llu %11llu %11llu %17llu\n",
                sync_wait_kind_name((SyncWaitKind)k), (unsigned long long)sum.announced[k],
                (unsigned long long)sum.sleeps[k], (unsigned long long)sum.futex_wakes[k],
                (unsigned long long)sum.quiet_wakes[k]);
    int e = sync_futex_failed();         /* Note [When futex fails] in sync/wait_futex_barrier.c */
    if (e) {
        uint64_t errors = 0, polled = 0;
        for (int k = 0; k < WAIT_NKINDS; k++) {
            errors += sum.futex_errors[k];
            polled += sum.polled[k];
        }
        fprintf(f, "    futex failed (%s): %llu failed calls, then %llu waits polled as without "
                "the patch\n", strerror(e), (unsigned long long)errors,
                (unsigned long long)polled);
    }
}

static const RtsStatsKey section_keys[] = {      /* per barrier wait kind */
    { "announced", sum.announced, NULL },
    { "futex_waits", sum.sleeps, NULL },
    { "futex_wakes", sum.futex_wakes, NULL },
    { "wakes_without_syscall", sum.quiet_wakes, NULL },
    { "futex_errors", sum.futex_errors, NULL },
    { "polled_waits", sum.polled, NULL },
    { NULL, NULL, NULL },
};

static const RtsStatsSection stats = {
    .summarise = section_summarise,
    .lines_after = "Barrier waits",
    .lines = section_lines,
    .keys_after = "rtslab_barrier_*",
    .keys = section_keys,
};

const RtsPatch patch_futex_barrier = {
    .options = options,
    .info_after = "perf",
    .info = info,
    .resolve = resolve,
    .stats = &stats,
    .name = "futex-barrier",
};
#endif
