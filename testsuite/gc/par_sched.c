/* Threads across capabilities.
 *   par_sched pingpong N   two threads started on capabilities 0 and 1 bounce a counter N
 *                          times through two MVars: every wake-up crosses capabilities
 *                          (through inboxes); they must see every value in order and finish
 *                          where they started
 *   par_sched spread N     N threads that each allocate a little are forked, spread over the
 *                          capabilities (Note [Spreading deterministically]) and joined;
 *                          prints how many capabilities ran them
 *   par_sched pin          (with -qa) a thread started on each capability checks that its OS
 *                          thread is pinned to exactly the CPU -qa gives that capability
 *   par_sched idle SECS    (with -N2 or more) the main thread sleeps SECS while every other
 *                          capability idles, with no work and no GC; counts how often the
 *                          idle capabilities' OS threads ran meanwhile (Note [Counting
 *                          idle wake-ups]) */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "rtslab.h"
#include "os/affinity.h"
#include "sched/capability.h"
#include "sync/stw.h"

static long n = 1000;
static const char *mode = "pingpong";
static long bad;

/* --- pingpong ------------------------------------------------------------------------------ */

enum { P_SIDE, P_IN, P_OUT, P_I, P_WAIT, P_NSLOTS };

/* Side 0 puts i on OUT and takes i+1 back from IN; side 1 takes i and puts i+1. */
static RtsStep pinger(RtsCap *cap)
{
    intptr_t side = rts_fixnum_val(rts_slot(cap, P_SIDE));
    for (;;) {
        intptr_t i = rts_fixnum_val(rts_slot(cap, P_I));
        if (i >= n) {
            rts_set_result(cap, rts_fixnum(rts_cap_no(cap)));
            return RTS_FINISH;
        }
        Value got;
        if ((i & 1) == side) {                          /* my turn to send i */
            if (!rts_mvar_put(cap, rts_slot(cap, P_OUT), rts_fixnum(i))) {
                rts_set_slot(cap, P_I, rts_fixnum(i + 1));
                return RTS_BLOCK;
            }
            rts_set_slot(cap, P_I, rts_fixnum(i + 1));
            continue;
        }
        if (rts_slot(cap, P_WAIT) == RTS_FALSE) {       /* receive i */
            if (!rts_mvar_take(cap, rts_slot(cap, P_IN), &got)) {
                rts_set_slot(cap, P_WAIT, RTS_TRUE);
                return RTS_BLOCK;
            }
        } else {
            got = rts_result(cap);
            rts_set_slot(cap, P_WAIT, RTS_FALSE);
        }
        if (got != rts_fixnum(i))
            __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
        rts_cons(cap, got, RTS_NIL);
        rts_set_slot(cap, P_I, rts_fixnum(i + 1));
    }
}

/* --- spread --------------------------------------------------------------------------------- */

enum { W_K, W_NSLOTS };

static RtsStep spreader(RtsCap *cap)
{
    intptr_t k = rts_fixnum_val(rts_slot(cap, W_K));
    Value l = RTS_NIL;
    for (int i = 0; i < 200; i++)
        l = rts_cons(cap, rts_fixnum(k + i), l);
    intptr_t sum = 0;
    for (; l != RTS_NIL; l = rts_cdr(l))
        sum += rts_fixnum_val(rts_car(l));
    if (sum != 200 * k + 199 * 200 / 2)
        __atomic_fetch_add(&bad, 1, __ATOMIC_RELAXED);
    rts_set_result(cap, rts_fixnum(rts_cap_no(cap)));
    return RTS_FINISH;
}

/* --- pin ------------------------------------------------------------------------------------ */

static RtsStep pin_checker(RtsCap *cap)
{
    cpu_set_t set;
    int cpu = affinity_cpu_for_cap(rts_cap_no(cap));
    bool ok = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) == 1 && CPU_ISSET(cpu, &set);
    rts_set_result(cap, rts_bool(ok));
    return RTS_FINISH;
}

/* --- idle ------------------------------------------------------------------------------------
 *
 * Note [Counting idle wake-ups]
 * An idle capability must sleep until it is given work or a GC needs it (never poll nor
 * spin), so while the main thread sleeps, with no other thread and no GC, the other
 * capabilities' OS threads should not run at all. The kernel counts every time a thread
 * stops running, /proc/self/task/TID/status: voluntary_ctxt_switches (it blocked: a thread
 * that wakes and goes back to sleep adds one) and nonvoluntary_ctxt_switches (it was
 * preempted). Their sum over the sleep, per idle capability, is how many times it was woken
 * and ran: a count, so a loaded machine or a sanitizer's slowdown does not change it. Once
 * settled it is 0; IDLE_MAX_RUNS allows a capability that had not yet gone back to sleep
 * after its probe (below) to finish doing so. An idle wait that polled (a timed wait of a few
 * ms, woken by every timer tick) would count hundreds. A thread that spun without blocking
 * might not be preempted on a machine with free cores, so each must also be asleep (State S)
 * at the end. A probe thread started on each capability records the TID of its OS thread.
 */

#define IDLE_SETTLE_SECS 0.2   /* for the capabilities to go back to sleep after the probes */
#define IDLE_MAX_RUNS    2     /* times an idle capability may run while main sleeps */

static pid_t *cap_tid;         /* the OS thread of each capability */

static RtsStep tid_probe(RtsCap *cap)
{
    cap_tid[rts_cap_no(cap)] = (pid_t)syscall(SYS_gettid);
    return RTS_FINISH;
}

typedef struct { long runs; char state; } TaskSample;

/* The context switches of OS thread `tid` so far, and its state; false if unreadable. */
static bool sample_task(pid_t tid, TaskSample *out)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", (long)tid);
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "par_sched: cannot open %s\n", path);
        return false;
    }
    long vol = -1, nonvol = -1;
    out->state = '?';
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "voluntary_ctxt_switches: %ld", &vol);
        sscanf(line, "nonvoluntary_ctxt_switches: %ld", &nonvol);
        sscanf(line, "State: %c", &out->state);
    }
    fclose(f);
    if (vol < 0 || nonvol < 0 || out->state == '?') {
        fprintf(stderr, "par_sched: %s lacks the context switch counts or the state\n", path);
        return false;
    }
    out->runs = vol + nonvol;
    return true;
}

/* --- main ----------------------------------------------------------------------------------- */

enum { M_A, M_B, M_T, M_I, M_PC, M_NSLOTS };

/* Note [Spreading deterministically]
 * Capability 0 pushes a runnable thread only to a capability that is idle when it looks
 * (Note [Pushing work]); an idle capability stays idle until it is given work or woken for a
 * GC. Forking the 10 000 threads at once would run dozens of GCs, each waking every idle
 * capability, and on a loaded machine a woken capability's OS thread may not get a CPU to go
 * back to sleep before capability 0 has run every thread itself: "one capability", although
 * pushing works. So spread first collects (an empty nursery), waits until every other
 * capability is idle, forks a first wave of 2 threads per capability (a few KB: no GC) and
 * joins it. Capability 0 then pushes, before it runs the first of the wave, one thread to
 * each idle capability; a pushed thread must run where it was pushed, so more than one
 * capability runs the wave whatever the load. The rest are forked and joined after. */
#define SPREAD_MAX_POLLS 30000   /* 1 ms sleeps: 30 s for the others to go idle */

static bool others_idle(void)
{
    for (unsigned c = 1; c < cap_n_caps; c++)
        if (!stw_idle(c))
            return false;
    return true;
}

static void fork_spreaders(RtsCap *cap, long from, long to)
{
    for (long k = from; k < to; k++) {
        Value t = rts_thread_new(cap, spreader, W_NSLOTS);
        rts_set_field(cap, rts_slot(cap, M_T), (size_t)k, t);
        rts_thread_set_slot(cap, t, W_K, rts_fixnum(k));
        rts_thread_start(cap, t);
    }
}

/* Joins the threads from M_I up to `to`, adding their capabilities to the mask in M_A. */
static bool join_spreaders(RtsCap *cap, long to)
{
    for (intptr_t k = rts_fixnum_val(rts_slot(cap, M_I)); k < to; k++) {
        rts_set_slot(cap, M_I, rts_fixnum(k));
        if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)k)))
            return false;
        intptr_t c = rts_fixnum_val(rts_result(cap));
        rts_set_slot(cap, M_A, rts_fixnum(rts_fixnum_val(rts_slot(cap, M_A)) | ((intptr_t)1 << (c % 62))));
    }
    rts_set_slot(cap, M_I, rts_fixnum(to));
    return true;
}

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    if (!strcmp(mode, "pingpong")) {
        if (pc == 0) {
            rts_set_slot(cap, M_A, rts_new_mvar(cap));
            rts_set_slot(cap, M_B, rts_new_mvar(cap));
            rts_set_slot(cap, M_T, rts_make_vector(cap, 2, RTS_FALSE));
            for (int side = 0; side < 2; side++) {
                Value t = rts_thread_new(cap, pinger, P_NSLOTS);
                rts_set_field(cap, rts_slot(cap, M_T), (size_t)side, t);
                rts_thread_set_slot(cap, t, P_SIDE, rts_fixnum(side));
                rts_thread_set_slot(cap, t, P_I, rts_fixnum(0));
                rts_thread_set_slot(cap, t, P_OUT, rts_slot(cap, side ? M_A : M_B));
                rts_thread_set_slot(cap, t, P_IN, rts_slot(cap, side ? M_B : M_A));
                rts_thread_start_on(cap, t, (unsigned)side);    /* side s on capability s */
            }
            rts_set_slot(cap, M_PC, rts_fixnum(pc = 1));
        }
        for (; pc <= 2; pc++) {
            rts_set_slot(cap, M_PC, rts_fixnum(pc));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)pc - 1)))
                return RTS_BLOCK;
            if (pc == 1)
                rts_set_slot(cap, M_I, rts_result(cap));     /* side 0's last capability */
        }
        printf("pingpong: %ld messages, %ld out of order; the two sides finished on %s\n", n, bad,
               rts_n_caps() == 1 ? "one capability"
               : rts_slot(cap, M_I) != rts_result(cap) ? "different capabilities" : "the same capability");
        return RTS_FINISH;
    }
    if (!strcmp(mode, "spread")) {
        /* Note [Spreading deterministically]: the forks wait until every other capability is
         * idle, and the first wave is small enough to need no GC before it is pushed. */
        long wave = 2 * (long)rts_n_caps();
        if (wave > n) wave = n;
        if (pc == 0) {
            rts_set_slot(cap, M_T, rts_make_vector(cap, (size_t)n, RTS_FALSE));
            rts_set_slot(cap, M_A, rts_fixnum(0));           /* mask of capabilities seen */
            rts_set_slot(cap, M_I, rts_fixnum(0));           /* polls so far */
            rts_set_slot(cap, M_PC, rts_fixnum(pc = 1));
            rts_gc(cap, false);                              /* an empty nursery for wave 1 */
        }
        if (pc == 1) {
            if (!others_idle()) {
                intptr_t polls = rts_fixnum_val(rts_slot(cap, M_I));
                if (polls >= SPREAD_MAX_POLLS) {
                    printf("spread: the other capabilities never went idle\n");
                    return RTS_FINISH;
                }
                rts_set_slot(cap, M_I, rts_fixnum(polls + 1));
                rts_sleep(cap, 0.001);
                return RTS_BLOCK;
            }
            fork_spreaders(cap, 0, wave);
            rts_set_slot(cap, M_I, rts_fixnum(0));
            rts_set_slot(cap, M_PC, rts_fixnum(pc = 2));
        }
        if (pc == 2 && !join_spreaders(cap, wave))
            return RTS_BLOCK;
        if (pc == 2) {
            fork_spreaders(cap, wave, n);
            rts_set_slot(cap, M_PC, rts_fixnum(pc = 3));
        }
        if (!join_spreaders(cap, n))
            return RTS_BLOCK;
        int used = __builtin_popcountl((unsigned long)rts_fixnum_val(rts_slot(cap, M_A)));
        printf("spread: %ld threads joined, %ld bad; ran on %s\n", n, bad,
               used == 1 ? "one capability" : used >= 2 ? "several capabilities" : "none");
        return RTS_FINISH;
    }
    if (!strcmp(mode, "pin")) {
        if (pc == 0) {
            rts_set_slot(cap, M_T, rts_make_vector(cap, rts_n_caps(), RTS_FALSE));
            for (unsigned c = 0; c < rts_n_caps(); c++) {
                Value t = rts_thread_new(cap, pin_checker, 1);
                rts_set_field(cap, rts_slot(cap, M_T), c, t);
                rts_thread_start_on(cap, t, c);
            }
            rts_set_slot(cap, M_I, rts_fixnum(0));
            rts_set_slot(cap, M_PC, rts_fixnum(1));
        }
        for (intptr_t c = rts_fixnum_val(rts_slot(cap, M_I)); c < (intptr_t)rts_n_caps(); c++) {
            rts_set_slot(cap, M_I, rts_fixnum(c));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)c)))
                return RTS_BLOCK;
            if (rts_result(cap) != RTS_TRUE)
                bad++;
        }
        printf("pin: %u capabilities, %ld not pinned as -qa says\n", rts_n_caps(), bad);
        return RTS_FINISH;
    }
    /* idle: Note [Counting idle wake-ups] */
    static TaskSample *before;
    unsigned nc = rts_n_caps();
    if (pc == 0) {
        if (nc < 2) {
            printf("idle: needs -N2 or more (there are no idle capabilities to watch)\n");
            bad++;
            return RTS_FINISH;
        }
        cap_tid = calloc(nc, sizeof *cap_tid);
        before = calloc(nc, sizeof *before);
        if (!cap_tid || !before) abort();
        rts_set_slot(cap, M_T, rts_make_vector(cap, nc, RTS_FALSE));
        for (unsigned c = 1; c < nc; c++) {
            Value t = rts_thread_new(cap, tid_probe, 1);
            rts_set_field(cap, rts_slot(cap, M_T), c, t);
            rts_thread_start_on(cap, t, c);
        }
        rts_set_slot(cap, M_I, rts_fixnum(1));
        rts_set_slot(cap, M_PC, rts_fixnum(pc = 1));
    }
    if (pc == 1) {
        for (intptr_t c = rts_fixnum_val(rts_slot(cap, M_I)); c < (intptr_t)nc; c++) {
            rts_set_slot(cap, M_I, rts_fixnum(c));
            if (!rts_thread_join(cap, rts_field(rts_slot(cap, M_T), (size_t)c)))
                return RTS_BLOCK;
        }
        rts_set_slot(cap, M_PC, rts_fixnum(2));
        rts_sleep(cap, IDLE_SETTLE_SECS);
        return RTS_BLOCK;
    }
    if (pc == 2) {
        for (unsigned c = 1; c < nc; c++) {
            if (cap_tid[c] == 0 || cap_tid[c] == (pid_t)syscall(SYS_gettid)) {
                printf("idle: capability %u's OS thread is not its own\n", c);
                bad++;
                return RTS_FINISH;
            }
            if (!sample_task(cap_tid[c], &before[c])) {
                bad++;
                return RTS_FINISH;
            }
        }
        rts_set_slot(cap, M_PC, rts_fixnum(3));
        rts_sleep(cap, (double)n);
        return RTS_BLOCK;
    }
    long runs = 0, most = 0;
    unsigned asleep = 0;
    for (unsigned c = 1; c < nc; c++) {
        TaskSample after;
        if (!sample_task(cap_tid[c], &after)) {
            bad++;
            return RTS_FINISH;
        }
        long r = after.runs - before[c].runs;
        runs += r;
        if (r > most) most = r;
        if (after.state == 'S')
            asleep++;
    }
    bool ok = most <= IDLE_MAX_RUNS && asleep == nc - 1;
    printf("idle: %u capabilities; while main slept %ld s the %u idle ones ran %ld times (at "
           "most %ld each, %d allowed), %u asleep at the end: %s\n", nc, n, nc - 1, runs, most,
           IDLE_MAX_RUNS, asleep, ok ? "they slept" : "NOT IDLE");
    if (!ok) bad++;
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) mode = argv[1];
    if (argc > 2) n = atol(argv[2]);
    rts_run_main(main_code, M_NSLOTS);
    rts_exit(bad ? 1 : 0);
}
