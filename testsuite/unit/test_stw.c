/* Unit test: the stop-the-world protocol (runtime/sync/stw.c) with fake members, under the
 * torture of stw_torture.h (which says what it checks).
 *
 *   test_stw [MEMBERS [START [ROUNDS]]]
 * MEMBERS pthreads (2..16; 4 if not given), ROUNDS syncs (2300 if not given); START
 * (strtoul's base 0) is the number of the sync before the first, so that the syncs cross the
 * wrap of the 30-bit sync number (Note [Counters that wrap] in sync/stw.h) where START is
 * just below it. */
#include "unit/stw_torture.h"

int main(int argc, char **argv)
{
    unsigned members = argc > 1 ? (unsigned)atoi(argv[1]) : 4;
    unsigned rounds = argc > 3 ? (unsigned)atoi(argv[3]) : 2300;
    if (argc > 4 || members < 2 || members > STW_TORTURE_MAX || rounds <= ROUNDS_BASIC) {
        fprintf(stderr, "usage: test_stw [MEMBERS(2..%d) [START [ROUNDS(>%d)]]]\n",
                STW_TORTURE_MAX, ROUNDS_BASIC);
        return 2;
    }
    stw_torture(members, rounds, argc > 2 ? argv[2] : NULL);
    return check_done();
}
