/* Test: the RTS_ASSERTs of sync/ and sched/ (Note [Assertions] in base/util.h) hold on the
 * protocol's own path and catch a break of what they check. In a debug build (make
 * check-sanitize's) each break below runs in a child process, which must abort naming the
 * condition: a spinlock released by a thread that does not hold it, an object lock taken
 * while one is held (objlock.h: at most one at a time), an object lock released that is not
 * held, a state that Note [Capability states] does not have, a GC started or a sync released
 * with no sync in progress (Note [Stop the world]). Without RTS_DEBUG the checks compile to
 * nothing, so the children are not run: the breaks would go unnoticed, or worse.
 *
 *   test_invariants */
#include "sched/objlock.h"
#include "sync/spinlock.h"
#include "sync/stw.h"
#include "unit/check.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void interrupt(unsigned no) { (void)no; }
static bool follower_work(unsigned no) { (void)no; return false; }
static const StwHooks hooks = { interrupt, follower_work };

/* A capability and an MVar-like object of its own, outside any heap: obj_lock and
 * obj_unlock touch only the header and the capability's counters. */
static Capability cap;
static _Alignas(16) Value mvar[2];

static void unlock_free_spinlock(void)
{
    static SpinLock l = SPINLOCK_INIT("test");
    spin_unlock(&l);
}

static void obj_lock_twice(void)
{
    Value other[2] __attribute__((aligned(16))) = { obj_make_header(T_MVAR, 1), 0 };
    obj_lock(&cap, (Value)mvar);
    obj_lock(&cap, (Value)other);
}

static void obj_unlock_free(void)
{
    obj_unlock(&cap, (Value)mvar);
}

static void bad_state(void)
{
    stw_set_state(0, 7);
}

static void start_gc_unsynced(void)
{
    stw_start_gc(false);
}

static void release_unsynced(void)
{
    stw_release();
}

static void expect_abort(const char *what, void (*fn)(void), const char *condition)
{
    char err[2048];
    int status = check_in_child(fn, err, sizeof err);
    if (!CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT))
        fprintf(stderr, "test_invariants: %s: not aborted; stderr: %s\n", what, err);
    if (!CHECK(strstr(err, "rtslab: fatal: assertion failed: ") != NULL
               && strstr(err, condition) != NULL))
        fprintf(stderr, "test_invariants: %s: wanted \"%s\" in: %s\n", what, condition, err);
}

int main(void)
{
    mvar[0] = obj_make_header(T_MVAR, 1);
    stw_init(1, &hooks);

    /* The path the protocol takes, with one member: every check on it holds. */
    SpinLock l = SPINLOCK_INIT("test");
    spin_lock(&l);
    spin_unlock(&l);
    obj_lock(&cap, (Value)mvar);
    CHECK(obj_locked((Value)mvar));
    obj_unlock(&cap, (Value)mvar);
    CHECK(!obj_locked((Value)mvar));
    stw_set_state(0, STW_IDLE);
    stw_set_state(0, STW_RUNNING);
    for (int i = 0; i < 3; i++) {
        CHECK(stw_try_lead(0, SYNC_GC));
        StwTakingPart part;
        stw_stop_all(0, &part);
        CHECK_EQ_INT(part.n, 1);
        stw_start_gc(false);
        stw_await_gc_threads(0);
        stw_release();
        CHECK(!stw_pending());
    }

    if (RTS_DEBUG) {
        expect_abort("spinlock not held", unlock_free_spinlock, "&l->locked");
        expect_abort("two object locks", obj_lock_twice, "!cap->defer_wakes");
        expect_abort("object lock not held", obj_unlock_free,
                     "cap->defer_wakes && obj_locked(obj)");
        expect_abort("no such state", bad_state, "state == STW_RUNNING || state == STW_IDLE");
        expect_abort("GC with no sync", start_gc_unsynced, "== SYNC_GC && stw_all_arrived()");
        expect_abort("release with no sync", release_unsynced, "(w & 3) == SYNC_GC");
        printf("invariants: 6 breaks tried\n");
    } else {
        printf("invariants: checks off (not a debug build)\n");
    }
    return check_done();
}
