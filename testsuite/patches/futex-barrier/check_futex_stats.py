#!/usr/bin/env python3
"""The futex-barrier patch's counters after a run of many GCs (Note [Futex barrier] in
runtime/sync/wait_futex_barrier.c).

    check_futex_stats.py --caps N [--min-gcs G] [--min KEY=N]... -- PROGRAM ARGS... +RTS ... -RTS
    check_futex_stats.py --caps N --preload SHIM.so [--errno E] [--min-gcs G] -- PROGRAM ...

Runs the program with `-s --machine-readable` added (its stderr), and checks, per barrier
kind (enter, arrival, gc_done, leave):
  - no FUTEX_WAKE where nobody slept: futex_wakes is 0 wherever announced is 0, and at most
    announced for the kinds with one waker per sync (enter, arrival, leave: a sync's wake
    needs an announcement of that same sync, since every wait of a sync ends before the next
    sync can wake that word);
  - every wake is counted once: enter and leave get exactly one sync_wake per GC (the go and
    the release), with or without a system call; arrival gets one per sync (the last to
    arrive) when there is more than one capability, none with one;
  - the futex waits are the sleeps, and no more than the announcements;
  - at least G GCs ran (default 100), and each --min KEY=N: the statistic KEY is at least N.
Prints "futex stats ok: ..." and exits 0, or the failed checks and exits 1.

With --preload, every futex call the runtime makes fails (Note [When futex fails] in
runtime/sync/wait_futex_barrier.c): SHIM.so (futex_fail.c) is preloaded and refuses each
with errno E (default 38, ENOSYS), and the program's stdout is passed on. Checks instead:
  - it exits 0 after at least G GCs on N capabilities;
  - the shim refused some calls (else nothing was tested) and the runtime counted each of
    them (the sum of rtslab_barrier_<kind>_futex_errors is the shim's count);
  - the failed calls are bounded: at most 2 per capability in the whole run (about one per
    thread waiting or waking when the first failed), where a wait that loops on a failing
    FUTEX_WAIT makes one per pass, thousands in such a run;
  - waits fell back to polling (rtslab_barrier_<kind>_polled_waits > 0).
Prints "futex fail ok: ..." and exits 0, or the failed checks and exits 1."""
import ast
import os
import re
import subprocess
import sys

KINDS = ("enter", "arrival", "gc_done", "leave")


def main():
    args = sys.argv[1:]
    caps, min_gcs, mins, preload, err = None, 100, [], None, 38
    while args and args[0] != "--":
        if args[0] == "--caps":
            caps = int(args[1]); args = args[2:]
        elif args[0] == "--preload":
            preload = args[1]; args = args[2:]
        elif args[0] == "--errno":
            err = int(args[1]); args = args[2:]
        elif args[0] == "--min-gcs":
            min_gcs = int(args[1]); args = args[2:]
        elif args[0] == "--min":
            key, _, v = args[1].partition("=")
            mins.append((key, int(v))); args = args[2:]
        else:
            sys.exit("check_futex_stats: unknown argument %r" % args[0])
    if caps is None or not args or len(args) < 2:
        sys.exit(__doc__)
    cmd = args[1:] + ["+RTS", "-s", "--machine-readable", "-RTS"]
    env = None
    if preload:
        env = dict(os.environ, LD_PRELOAD=os.path.abspath(preload), FUTEX_FAIL_ERRNO=str(err))
    p = subprocess.run(cmd, stdout=subprocess.PIPE if preload else subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600, env=env)
    if preload:
        sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.exit("check_futex_stats: %s exited %d:\n%s" % (cmd[0], p.returncode, p.stderr[-2000:]))
    lines = [l for l in p.stderr.splitlines() if l.startswith((" [(", " ,(", " ]"))]
    d = dict(ast.literal_eval("\n".join(lines)))
    fails = []

    def check(ok, msg):
        if not ok:
            fails.append(msg)

    def n(key):
        if key not in d:
            fails.append("no key %s (a build without the futex-barrier patch?)" % key)
            return 0
        return int(d[key])

    if preload:
        return check_fail(p.stderr, preload, caps, err, min_gcs, n, check, fails)

    gcs, syncs = n("num_GCs"), n("rtslab_stw_syncs")
    check(n("n_capabilities") == caps, "n_capabilities %s, expected %d" % (d.get("n_capabilities"), caps))
    check(gcs >= min_gcs, "only %d GCs (wanted at least %d)" % (gcs, min_gcs))
    for key, want in mins:
        check(n(key) >= want, "%s %d, wanted at least %d" % (key, n(key), want))
    summary = []
    for k in KINDS:
        key = "rtslab_barrier_%s_" % k
        ann, fw, fk, quiet, sleeps = (n(key + "announced"), n(key + "futex_waits"),
                                      n(key + "futex_wakes"), n(key + "wakes_without_syscall"),
                                      n(key + "sleeps"))
        check(fw == sleeps, "%s: futex_waits %d != sleeps %d" % (k, fw, sleeps))
        check(fw <= ann, "%s: futex_waits %d > announced %d" % (k, fw, ann))
        if ann == 0:
            check(fk == 0, "%s: %d FUTEX_WAKE calls though nobody ever slept" % (k, fk))
        if k != "gc_done":
            check(fk <= ann, "%s: %d FUTEX_WAKE calls for %d announcements" % (k, fk, ann))
        if k in ("enter", "leave"):
            check(fk + quiet == gcs, "%s: %d + %d wakes for %d GCs" % (k, fk, quiet, gcs))
        if k == "arrival":
            # The last sync is the exit's: its last follower counts its wake after the count
            # reached 0, and the leader, no longer waiting, may write this report first. So
            # the exit sync's one wake may be missing, never more, never an extra one.
            want = syncs if caps > 1 else 0
            check(want - (1 if want else 0) <= fk + quiet <= want,
                  "arrival: %d + %d wakes, expected %d (or %d, the exit's not yet counted)"
                  % (fk, quiet, want, max(want - 1, 0)))
        summary.append("%s %d/%d/%d" % (k, ann, fk, quiet))
    if fails:
        print("\n".join("check_futex_stats: " + f for f in fails), file=sys.stderr)
        return 1
    print("futex stats ok: %d GCs, %d syncs on %d capabilities; announced/futex wakes/"
          "no-syscall wakes: %s" % (gcs, syncs, caps, ", ".join(summary)))
    return 0


def check_fail(stderr, preload, caps, err, min_gcs, n, check, fails):
    """--preload: the checks of a run whose every futex call failed."""
    m = re.search(r"^futex_fail: (\d+) futex calls refused", stderr, re.M)
    if not m:
        sys.exit("check_futex_stats: no report from the shim %s:\n%s" % (preload, stderr[-2000:]))
    refused = int(m.group(1))
    gcs = n("num_GCs")
    errors = sum(n("rtslab_barrier_%s_futex_errors" % k) for k in KINDS)
    polled = sum(n("rtslab_barrier_%s_polled_waits" % k) for k in KINDS)
    bound = 2 * caps
    check(n("n_capabilities") == caps, "n_capabilities %d, expected %d" % (n("n_capabilities"), caps))
    check(gcs >= min_gcs, "only %d GCs (wanted at least %d)" % (gcs, min_gcs))
    check(refused > 0, "the shim refused no futex call: nothing was tested")
    check(refused <= bound, "%d futex calls failed in %d GCs (at most %d wanted): the waits "
          "loop on a failing futex" % (refused, gcs, bound))
    check(errors == refused, "the runtime counted %d failed futex calls, the shim refused %d"
          % (errors, refused))
    check(polled > 0, "no wait fell back to polling")
    if fails:
        print("\n".join("check_futex_stats: " + f for f in fails), file=sys.stderr)
        return 1
    print("futex fail ok: %d GCs on %d capabilities, errno %d: %d futex calls failed (at most "
          "%d), %d waits polled" % (gcs, caps, err, refused, bound, polled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
