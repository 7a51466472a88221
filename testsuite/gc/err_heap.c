/* Error path: heap exhaustion under -M. Allocates data and keeps all of it reachable from a
 * list in a frame slot, so no GC can free any of it.
 *
 * usage: err_heap [small|large|thread [LIMIT]]
 *   small   conses 4-field vectors onto the list (the nursery / minor GC path)
 *   large   conses 64k bytevectors onto the list (the large-object path)
 *   thread  a forked thread does what `small' does while main waits to join it
 * With LIMIT (a size, e.g. 16m) it stops after LIMIT bytes of live data, prints
 * "allocated LIMIT live: ok" and exits 0; without it, it goes on until -M stops it (exit 251,
 * "heap overflow"). As a safety net it stops after 2g and exits 3 ("no heap overflow"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "rtslab.h"

enum { MODE_SMALL, MODE_LARGE };

static int mode = MODE_SMALL;
static bool threaded;
static size_t limit;                          /* 0: until the heap overflows */
static const size_t SAFETY = (size_t)2 << 30;
static const size_t LARGE_BYTES = 64 << 10;

/* Frame slots of the allocator. */
enum { A_LIST, A_BYTES, A_NSLOTS };

/* Allocates 500 items per call, then returns RTS_NEXT (a safe point). */
static RtsStep allocator(RtsCap *cap)
{
    if (rts_slot(cap, A_LIST) == RTS_FALSE) {          /* first call */
        rts_set_slot(cap, A_LIST, RTS_NIL);
        rts_set_slot(cap, A_BYTES, rts_fixnum(0));
    }
    size_t bytes = (size_t)rts_fixnum_val(rts_slot(cap, A_BYTES));
    for (int k = 0; k < 500; k++) {
        Value item;
        if (mode == MODE_SMALL) {
            item = rts_make_vector(cap, 4, rts_fixnum((intptr_t)bytes));
            bytes += 5 * sizeof(Value);
        } else {
            item = rts_make_raw(cap, T_BYTEVECTOR, LARGE_BYTES);
            raw_bytes(item)[0] = (uint8_t)k;
            bytes += LARGE_BYTES;
        }
        Value cell = rts_cons(cap, item, rts_slot(cap, A_LIST));   /* item is protected */
        rts_set_slot(cap, A_LIST, cell);
        bytes += 3 * sizeof(Value);
        if ((limit && bytes >= limit) || bytes >= SAFETY) {
            /* Walk the list: everything must still be there. */
            size_t n = 0;
            for (Value l = rts_slot(cap, A_LIST); l != RTS_NIL; l = rts_cdr(l))
                n++;
            if (bytes >= SAFETY && !limit) {
                printf("no heap overflow after %zu bytes (%zu items)\n", bytes, n);
                fflush(stdout);
                rts_exit(3);
            }
            printf("allocated %zu live in %zu items: ok\n", limit, n);
            rts_set_result(cap, rts_fixnum((intptr_t)n));
            if (rts_stack_depth(cap) == 1)    /* a thread of its own */
                return RTS_FINISH;
            rts_pop_frame(cap);               /* a call from main: return to it */
            return RTS_NEXT;
        }
    }
    rts_set_slot(cap, A_BYTES, rts_fixnum((intptr_t)bytes));
    return RTS_NEXT;
}

enum { M_PC, M_THREAD, M_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    Value pcv = rts_slot(cap, M_PC);
    intptr_t pc = rts_is_fixnum(pcv) ? rts_fixnum_val(pcv) : 0;
    switch (pc) {
    case 0:
        if (!threaded) {                      /* run the allocator as a call from main */
            rts_set_slot(cap, M_PC, rts_fixnum(2));
            rts_push_frame(cap, allocator, A_NSLOTS);
            return RTS_NEXT;
        }
        {
            Value t = rts_thread_new(cap, allocator, A_NSLOTS);
            rts_set_slot(cap, M_THREAD, t);
            rts_thread_start(cap, t);
        }
        rts_set_slot(cap, M_PC, rts_fixnum(1));
        if (!rts_thread_join(cap, rts_slot(cap, M_THREAD)))
            return RTS_BLOCK;
        return RTS_NEXT;
    case 1:                                   /* joined */
        printf("main: joined the allocator: %ld items\n", (long)rts_fixnum_val(rts_result(cap)));
        return RTS_FINISH;
    default:                                  /* the allocator frame returned */
        printf("main: the allocator returned %ld items\n", (long)rts_fixnum_val(rts_result(cap)));
        return RTS_FINISH;
    }
}

static size_t parse_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    size_t mult = 1;
    if (*end == 'k' || *end == 'K') mult = (size_t)1 << 10;
    else if (*end == 'm' || *end == 'M') mult = (size_t)1 << 20;
    else if (*end == 'g' || *end == 'G') mult = (size_t)1 << 30;
    return (size_t)(v * (double)mult);
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    if (argc > 1) {
        if (strcmp(argv[1], "small") == 0) mode = MODE_SMALL;
        else if (strcmp(argv[1], "large") == 0) mode = MODE_LARGE;
        else if (strcmp(argv[1], "thread") == 0) threaded = true;
        else {
            fprintf(stderr, "usage: err_heap [small|large|thread [LIMIT]]\n");
            return 2;
        }
    }
    if (argc > 2) limit = parse_size(argv[2]);
    rts_run_main(main_code, M_NSLOTS);
    printf("ok\n");
    rts_exit(0);
}
