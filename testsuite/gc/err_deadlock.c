/* Error path: deadlock. When no thread can run and none sleeps, the runtime reports
 * "thread blocked indefinitely in an MVar operation" and exits 1.
 *
 * usage: err_deadlock MODE
 *   take     main takes from an empty MVar no one will fill                    -> exit 1
 *   read     main reads an empty MVar no one will fill                         -> exit 1
 *   put      main puts twice into one MVar no one takes from                   -> exit 1
 *   mutual   main and a forked thread each wait for the other's MVar           -> exit 1
 *   join     main joins a thread that waits on an MVar no one will fill        -> exit 1
 *   orphan   a forked thread blocks forever, main finishes anyway              -> exit 0
 *   sleeper  main waits on an MVar that a sleeping thread fills later          -> exit 0
 * Each mode prints "main: waiting" before main blocks (it must reach stdout even when the
 * process then dies of the deadlock) and "main: done" when main finishes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab.h"

enum { MODE_TAKE, MODE_READ, MODE_PUT, MODE_MUTUAL, MODE_JOIN, MODE_ORPHAN, MODE_SLEEPER };
static const char *const mode_names[] = { "take", "read", "put", "mutual", "join", "orphan",
                                          "sleeper" };
static int mode = -1;

/* The forked thread: takes (or puts, per the mode) and finishes. Slots: its two MVars. */
enum { F_PC, F_MINE, F_THEIRS, F_NSLOTS };

static RtsStep forked(RtsCap *cap)
{
    Value pcv = rts_slot(cap, F_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    Value out;
    switch (pc) {
    case 0:
        if (mode == MODE_SLEEPER) {
            rts_set_slot(cap, F_PC, rts_fixnum(2));
            rts_sleep(cap, 0.05);
            return RTS_BLOCK;
        }
        /* mutual: wait for main's MVar first, then fill ours; join/orphan: wait forever */
        rts_set_slot(cap, F_PC, rts_fixnum(1));
        if (!rts_mvar_take(cap, rts_slot(cap, F_THEIRS), &out))
            return RTS_BLOCK;
        /* fall through */
    case 1:
        if (!rts_mvar_put(cap, rts_slot(cap, F_MINE), rts_fixnum(1)))
            return RTS_BLOCK;
        return RTS_FINISH;
    case 2:                                    /* slept: now fill main's MVar */
        rts_set_slot(cap, F_PC, rts_fixnum(3));
        if (!rts_mvar_put(cap, rts_slot(cap, F_THEIRS), rts_fixnum(42)))
            return RTS_BLOCK;
        /* fall through */
    default:
        return RTS_FINISH;
    }
}

enum { M_PC, M_A, M_B, M_T, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    Value out;
    switch (pc) {
    case 0:
        rts_set_slot(cap, M_A, rts_new_mvar(cap));
        rts_set_slot(cap, M_B, rts_new_mvar(cap));
        if (mode == MODE_MUTUAL || mode == MODE_JOIN || mode == MODE_ORPHAN
            || mode == MODE_SLEEPER) {
            Value t = rts_thread_new(cap, forked, F_NSLOTS);
            rts_set_slot(cap, M_T, t);
            /* The thread's own MVar is B, the one it waits for is A. */
            rts_thread_set_slot(cap, t, F_MINE, rts_slot(cap, M_B));
            rts_thread_set_slot(cap, t, F_THEIRS, rts_slot(cap, M_A));
            rts_thread_start(cap, t);
        }
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        printf("main: waiting\n");
        switch (mode) {
        case MODE_TAKE:
            if (!rts_mvar_take(cap, rts_slot(cap, M_A), &out)) return RTS_BLOCK;
            break;
        case MODE_READ:
            if (!rts_mvar_read(cap, rts_slot(cap, M_A), &out)) return RTS_BLOCK;
            break;
        case MODE_PUT:
            if (!rts_mvar_put(cap, rts_slot(cap, M_A), rts_fixnum(1))) {
                printf("main: the first put blocked\n");
                return RTS_FINISH;
            }
            if (!rts_mvar_put(cap, rts_slot(cap, M_A), rts_fixnum(2))) return RTS_BLOCK;
            break;
        case MODE_MUTUAL:       /* wait for the thread's MVar, then fill the one it waits for */
            rts_set_slot(cap, M_PC, rts_fixnum(2));
            if (!rts_mvar_take(cap, rts_slot(cap, M_B), &out)) return RTS_BLOCK;
            return RTS_NEXT;
        case MODE_JOIN:
            if (!rts_thread_join(cap, rts_slot(cap, M_T))) return RTS_BLOCK;
            break;
        case MODE_ORPHAN:
            return RTS_YIELD;                  /* let the thread block, then finish */
        case MODE_SLEEPER:
            rts_set_slot(cap, M_PC, rts_fixnum(3));
            if (!rts_mvar_take(cap, rts_slot(cap, M_A), &out)) return RTS_BLOCK;
            return RTS_NEXT;
        }
        /* fall through */
    case 1:
        printf("main: done\n");
        return RTS_FINISH;
    case 2:                                    /* mutual: got B (never happens) */
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        if (!rts_mvar_put(cap, rts_slot(cap, M_A), rts_fixnum(2))) return RTS_BLOCK;
        return RTS_NEXT;
    case 3:                                    /* sleeper: the value is in the result */
        printf("main: got %ld from the sleeper\n", (long)rts_fixnum_val(rts_result(cap)));
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        return RTS_NEXT;
    }
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    for (int i = 0; argc > 1 && i < (int)(sizeof mode_names / sizeof *mode_names); i++)
        if (strcmp(argv[1], mode_names[i]) == 0)
            mode = i;
    if (mode < 0) {
        fprintf(stderr, "usage: err_deadlock take|read|put|mutual|join|orphan|sleeper\n");
        return 2;
    }
    rts_run_main(main_code, M_NSLOTS);
    printf("main: exiting\n");
    rts_exit(0);
}
