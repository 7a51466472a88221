/* Start-up and shut-down of the runtime. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "rts/rts.h"
#include "os/timer.h"
#include "os/numa.h"
#include "os/affinity.h"
#include "sync/stw.h"
#include "sm/gc.h"
#include "sched/thread.h"
#include "sched/schedule.h"
#include "sched/profile.h"
#include "io/iomgr.h"
#include "stats/stats.h"
#include "rts/patch.h"
#include "trace/eventlog.h"

/* The layers' hooks (runtime/README.md: a lower layer calls up only through these). */
static const StwHooks stw_hooks = { cap_interrupt, gc_follower_work };
static const GcClient gc_client = { sched_cap_roots, sched_after_gc, sched_thread_cap };

static void rts_shutdown(int status) __attribute__((noreturn));

static int stdout_errno;
static int exiting;              /* atomic: the orderly exit has begun */

/* Note [Signals]
 * SIGINT and SIGTERM are blocked in every thread of the runtime (they inherit the mask set
 * here before any is started) and taken by one thread with sigwait, so what it does on one
 * need not be async-signal-safe. The first interrupts the main thread (Note [Interrupting
 * the main thread] in sched/schedule.c): uncaught, the program ends as after an error, with
 * stdout flushed and -s and the eventlog written, exit 130 (SIGINT) or 143 (SIGTERM). A
 * second, while the first is still pending or the exit under way, kills the process at
 * once, as GHC's second ^C does. SIGPIPE is ignored: see rts_init. */
static void *signal_loop(void *arg)
{
    sigset_t *set = arg;
    for (;;) {
        int sig;
        if (sigwait(set, &sig) != 0)
            continue;
        if (!__atomic_load_n(&exiting, __ATOMIC_SEQ_CST) && sched_interrupt_main(sig))
            continue;
        signal(sig, SIG_DFL);                 /* the second: die of it */
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, NULL);
        raise(sig);
        _exit(128 + sig);
    }
    return NULL;
}

static sigset_t signal_set;

/* Blocks the signals, before any thread is started. A signal ignored when the process started
 * stays ignored (a shell's background job ignores SIGINT, so that ^C at the terminal leaves
 * it alone). One that comes before signals_start stays pending until its thread takes it. */
static void signals_block(void)
{
    sigemptyset(&signal_set);
    const int sigs[] = { SIGINT, SIGTERM };
    for (int i = 0; i < 2; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(&signal_set, sigs[i]);
    }
    pthread_sigmask(SIG_BLOCK, &signal_set, NULL);
}

/* Starts the thread that takes them, once the capabilities it interrupts exist: creating it
 * then is what makes them visible to it. */
static void signals_start(void)
{
    sigset_t *set = &signal_set;
    pthread_t t;
    if (pthread_create(&t, NULL, signal_loop, set) != 0)
        base_fatal("cannot start the signal thread");
    pthread_detach(t);
}

void rts_note_stdout_error(int e)
{
    int none = 0;
    __atomic_compare_exchange_n(&stdout_errno, &none, e, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

/* -? and --info end here: 0, or 1 with the reason when stdout could not take what they
 * printed (before: 0 either way; `+RTS -? > /dev/full` said nothing). */
static void __attribute__((noreturn)) exit_after_printing(void)
{
    errno = 0;
    if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
        fprintf(stderr, "rtslab: cannot write to stdout: %s\n", strerror(errno ? errno : EIO));
        exit(1);
    }
    exit(0);
}

/* Descriptors 0-2 closed at start-up would be taken by the first ones the runtime opens:
 * with stdout closed the IO manager's eventfd became descriptor 1, and `(display ...)`
 * wrote into it and exited 0. Each closed one gets /dev/null, opened the wrong way round
 * (stdin for writing, stdout and stderr for reading), so that it stays reserved and a use
 * of it still fails with EBADF, reported as a write to a closed stdout is (as GHC and most
 * runtimes reserve them). */
static void reserve_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
            int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (got >= 0 && got != fd)      /* not the lowest free one: leave it */
                close(got);
        }
}

/* Note [Output files]
 * The -s file, the eventlog (-l) and the profile (-p) are opened before the program runs,
 * each once, and never after: -s<file> and -l<file> in rts_init, the default eventlog file
 * (<prog>.eventlog: the program is named after rts_init, by rts_set_program_name) and the
 * profile by open_outputs, which the first rts_run_main calls first. A file that cannot be
 * opened ends the process there, saying why, before any of the program ran (before: -p's
 * file was opened at exit, and a bad -po<stem> was reported after the whole run). Once all
 * are open, two of them that are one file are refused: their descriptors are compared (the
 * same device and inode of a regular file), not their names, so `-lfoo -s./foo`, the default
 * -l with -s<prog>.eventlog, -poz with -lz.prof and links are all caught (before, names were
 * compared as text unless both files already existed: each of those exited 0 with the
 * eventlog overwritten by the summary). A device (/dev/null, a terminal) may take several. */
typedef struct {
    char label[4200];           /* "-lfoo", "-l (its default file, prog.eventlog)" */
    const char *what;
    int fd;
} OutputFile;

static bool same_output(const OutputFile *a, const OutputFile *b)
{
    struct stat sa, sb;
    return a->fd >= 0 && b->fd >= 0 && fstat(a->fd, &sa) == 0 && fstat(b->fd, &sb) == 0
           && S_ISREG(sa.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static void open_outputs(void)
{
    if (!trace_open() || !prof_open())
        exit(1);
    /* in the order they are written at exit: a later one would overwrite an earlier one */
    static OutputFile f[3];
    int n = 0;
    const char *name;
    if (base_cfg->eventlog) {
        f[n].fd = trace_file(&name);
        if (base_cfg->eventlog_file)
            snprintf(f[n].label, sizeof f[n].label, "-l%s", base_cfg->eventlog_file);
        else
            snprintf(f[n].label, sizeof f[n].label, "-l (its default file, %s)", name);
        f[n++].what = "eventlog";
    }
    if (base_cfg->stats_file) {
        f[n].fd = stats_file();
        snprintf(f[n].label, sizeof f[n].label, "-s%s", base_cfg->stats_file);
        f[n++].what = "statistics";
    }
    if (base_cfg->profile) {
        int fd = prof_file(&name);
        if (base_cfg->profile_stem)
            snprintf(f[n].label, sizeof f[n].label, "-po%s (%s)", base_cfg->profile_stem, name);
        else
            snprintf(f[n].label, sizeof f[n].label, "-p (its default file, %s)", name);
        f[n].what = "profile";
        f[n++].fd = fd;
    }
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (same_output(&f[i], &f[j]))
                base_die(1, "%s and %s name the same file: the %s would overwrite the %s",
                         f[i].label, f[j].label, f[j].what, f[i].what);
}

void rts_init(int *argc, char ***argv)
{
    char err[512];
    reserve_std_fds();
    if (opts_read(argc, *argv, getenv("RTSLAB_RTS"), err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        fprintf(stderr, "rtslab: use `+RTS -?' for the list of RTS options\n");
        exit(1);
    }
    opts_resolve();           /* Note [Options, resolved once] in base/util.h */
    const RtsOptions *given = rts_options();      /* the printing options */
    /* What -?, --info and --stats-keys print is held until exit_after_printing writes it:
     * a write that fails inside an fprintf leaves the stream's error flag but not its
     * errno, and the help of a build with every patch passed stdio's 4 KiB buffer (it
     * said "Input/output error" for a full disk). */
    static char print_buf[1 << 16];
    if (given->show_help || given->show_info || given->show_stats_keys
        || given->show_option_table)
        setvbuf(stdout, print_buf, _IOFBF, sizeof print_buf);
    if (given->show_option_table) {      /* Note [The option table] in rts/options.c */
        rts_options_print_table(stdout);
        exit_after_printing();
    }
    if (given->show_help) {
        rts_options_usage(stdout);
        exit_after_printing();
    }
    if (given->show_info) {
        rts_options_info(stdout);
        exit_after_printing();
    }
    for (const RtsPatch *const *p = patch_registry; *p; p++)   /* Note [Patch statistics] */
        if ((*p)->stats) stats_register((*p)->name, (*p)->stats);
    if (given->show_stats_keys) {
        stats_print_keys(stdout);
        exit_after_printing();
    }
    if (base_cfg->max_heap && base_cfg->max_heap < base_cfg->alloc_area)
        base_die(1, "maximum heap size (-M) is smaller than the allocation area (-A)");
    unsigned n = base_cfg->n_caps;
    /* the nurseries must fit in the machine (before: -A16383g touched 1 GB of block
     * descriptors and then reported "out of memory" without naming -A) */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t nurseries;
    bool too_big = __builtin_mul_overflow(base_cfg->alloc_area, (size_t)n, &nurseries);
    if (pages > 0 && page > 0 && (too_big || nurseries > (size_t)pages * (size_t)page))
        base_die(1, "the allocation areas (-A x -N, %zu x %u bytes) are more than the machine's "
                 "memory (%zu bytes)", base_cfg->alloc_area, n, (size_t)pages * (size_t)page);
    /* every capability has a nursery of -A (before: -M2m -A1m -N4 started, and the first
     * allocation reported a heap overflow) */
    if (base_cfg->max_heap && base_cfg->max_heap / n < base_cfg->alloc_area)
        base_die(1, "maximum heap size (-M, %zu bytes) is smaller than the allocation areas of "
                 "the %u capabilities (-A x -N, %zu x %u bytes)", base_cfg->max_heap, n,
                 base_cfg->alloc_area, n);
    if (base_cfg->gc_threads_clamped)         /* as GHC: clamped, with a warning */
        fprintf(stderr, "rtslab: warning: -qn%u is more than the %u capabilit%s: using -qn%u\n",
                given->gc_threads, n, n == 1 ? "y" : "ies", base_cfg->gc_threads);
    /* A write to a pipe whose reader has gone fails with EPIPE, an error in the writing
     * thread, instead of killing the process with its output half written (as GHC does). */
    signal(SIGPIPE, SIG_IGN);
    signals_block();
    stats_init();
    gc_on_done(stats_gc_done);
    base_set_exit_handler(rts_shutdown);
    sched_set_before_first_run(open_outputs);   /* Note [Output files] */
    char io_why[256];             /* Note [IO manager] in io/iomgr.h */
    if (io_choose((IoChoice)base_cfg->io_manager, io_why, sizeof io_why) != 0)
        base_die(1, "%s", io_why);
    stw_init(n, &stw_hooks);
    if (numa_init(base_cfg->numa, base_cfg->numa_mask, base_cfg->pin_caps, n, err, sizeof err) != 0)
        base_die(1, "%s", err);           /* Note [NUMA-local heap] in os/numa.h */
    sm_init(n);
    gc_set_client(&gc_client);
    gc_add_root(&sched_main_thread);
    cap_init_all(n);
    for (unsigned i = 0; i < n; i++)
        sm_cap_init(&cap_array[i].sm, i);
    trace_init((*argv)[0], n);
    prof_set_program((*argv)[0]);
    cap_attach(&cap_array[0]);
    signals_start();
    prof_init(n);                        /* Note [Time profile] in sched/profile.h */
    timer_start(cap_tick, RTS_TICK_MS * 1000L);
    stats_mutator_start();
}

/* rts_exit's work (base/util.h): stops every capability (a SYNC_EXIT: they park at a safe
 * point and never resume), then reports and exits. The heap is left to the OS: other OS
 * threads still exist. */
static void rts_shutdown(int status)
{
    __atomic_store_n(&exiting, 1, __ATOMIC_SEQ_CST);
    /* stdout first: a write that failed earlier left its error flag (Note [Write errors] in
     * scheme/port.c); a failure is reported below, once the rest is written */
    errno = 0;
    bool out_failed = fflush(stdout) != 0 || ferror(stdout);
    int out_errno = __atomic_load_n(&stdout_errno, __ATOMIC_RELAXED);
    if (!out_errno)
        out_errno = errno;
    Capability *cap = cap_self;
    if (cap && cap_n_caps > 1 && !stw_is_leader(cap->sm.no)) {
        while (!stw_try_lead(cap->sm.no, SYNC_EXIT))
            stw_follow(cap->sm.no);
        trace_begin(SPAN_STW_REQUEST, 0);
        stw_stop_all(cap->sm.no, NULL);
        trace_end(SPAN_STW_REQUEST);
    } else if (cap) {
        gc_stop_deferred(&cap->sm);      /* Note [Deferred GC requests] in sm/gc.h */
    }
    timer_stop();
    bool ok = trace_exit();
    ok &= stats_report();
    ok &= prof_report();
    /* closing stdout may report a deferred write error too */
    errno = 0;
    if (!out_failed && fclose(stdout) != 0) {
        out_failed = true;
        out_errno = errno;
    }
    /* after another error (a broken pipe raised in the writing thread) this would say it
     * twice */
    if (out_failed && status == 0)
        fprintf(stderr, "rtslab: cannot write to stdout: %s\n", strerror(out_errno ? out_errno : EIO));
    if (status == 0 && (out_failed || !ok))
        status = 1;
    fflush(NULL);
    exit(status);
}

void rts_set_program_name(const char *name)
{
    trace_set_program(name);
    prof_set_program(name);
}
