/* A program that embeds the runtime through its C API, built by install.sh against an
 * installed rtslab (make install DESTDIR=...) with `pkg-config --cflags --libs rtslab`: the
 * headers, the library and rtslab.pc are enough. Not built by the Makefile.
 * It builds a list of 100000 fixnums on the heap (enough allocation for several minor GCs
 * at -A64k) and prints its length and sum. */
#include <stdio.h>
#include <rtslab.h>

enum { S_LIST, S_NSLOTS };

static RtsStep main_code(RtsCap *cap)
{
    rts_set_slot(cap, S_LIST, RTS_NIL);
    for (intptr_t i = 1; i <= 100000; i++)
        rts_set_slot(cap, S_LIST, rts_cons(cap, rts_fixnum(i), rts_slot(cap, S_LIST)));
    intptr_t n = 0, sum = 0;
    for (Value l = rts_slot(cap, S_LIST); l != RTS_NIL; l = rts_cdr(l)) {
        n++;
        sum += rts_fixnum_val(rts_car(l));
    }
    printf("embedded: %ld cells, sum %ld\n", (long)n, (long)sum);
    return RTS_FINISH;
}

int main(int argc, char **argv)
{
    rts_init(&argc, &argv);
    rts_run_main(main_code, S_NSLOTS);
    rts_exit(0);
}
