#!/usr/bin/env python3
"""The futex-barrier patch when every futex call fails (Note [When futex fails] in
runtime/sync/wait_futex_barrier.c).

    check_futex_fail.py --caps N --preload SHIM.so [--errno E] [--min-gcs G] -- PROGRAM ARGS...

Runs the program with SHIM.so (futex_fail.c: every futex call the runtime makes fails with
errno E, default 38, ENOSYS) preloaded and `+RTS -s --machine-readable -RTS` added; its
stdout is passed on (for the test's own checks). Checks:
  - it exits 0 after at least G GCs (default 100) on N capabilities;
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
    caps, preload, err, min_gcs = None, None, 38, 100
    while args and args[0] != "--":
        if args[0] == "--caps":
            caps = int(args[1]); args = args[2:]
        elif args[0] == "--preload":
            preload = args[1]; args = args[2:]
        elif args[0] == "--errno":
            err = int(args[1]); args = args[2:]
        elif args[0] == "--min-gcs":
            min_gcs = int(args[1]); args = args[2:]
        else:
            sys.exit("check_futex_fail: unknown argument %r" % args[0])
    if caps is None or preload is None or len(args) < 2:
        sys.exit(__doc__)
    env = dict(os.environ, LD_PRELOAD=os.path.abspath(preload), FUTEX_FAIL_ERRNO=str(err))
    cmd = args[1:] + ["+RTS", "-s", "--machine-readable", "-RTS"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=600, env=env)
    sys.stdout.write(p.stdout)
    if p.returncode != 0:
        sys.exit("check_futex_fail: %s exited %d:\n%s" % (cmd[0], p.returncode, p.stderr[-2000:]))
    m = re.search(r"^futex_fail: (\d+) futex calls refused", p.stderr, re.M)
    if not m:
        sys.exit("check_futex_fail: no report from the shim %s:\n%s" % (preload, p.stderr[-2000:]))
    refused = int(m.group(1))
    lines = [l for l in p.stderr.splitlines() if l.startswith((" [(", " ,(", " ]"))]
    d = dict(ast.literal_eval("\n".join(lines)))
    fails = []

    def check(ok, msg):
        if not ok:
            fails.append(msg)

    def n(key):
        if key not in d:
            fails.append("no key %s (a build without the futex-barrier patch, or without "
                         "its handling of futex errors?)" % key)
            return 0
        return int(d[key])

    gcs = n("num_GCs")
    errors = sum(n("rtslab_barrier_%s_futex_errors" % k) for k in KINDS)
    polled = sum(n("rtslab_barrier_%s_polled_waits" % k) for k in KINDS)
    bound = 2 * caps
    check(n("n_capabilities") == caps, "n_capabilities %s, expected %d" % (d.get("n_capabilities"), caps))
    check(gcs >= min_gcs, "only %d GCs (wanted at least %d)" % (gcs, min_gcs))
    check(refused > 0, "the shim refused no futex call: nothing was tested")
    check(refused <= bound, "%d futex calls failed in %d GCs (at most %d wanted): the waits "
          "loop on a failing futex" % (refused, gcs, bound))
    check(errors == refused, "the runtime counted %d failed futex calls, the shim refused %d"
          % (errors, refused))
    check(polled > 0, "no wait fell back to polling")
    if fails:
        print("\n".join("check_futex_fail: " + f for f in fails), file=sys.stderr)
        return 1
    print("futex fail ok: %d GCs on %d capabilities, errno %d: %d futex calls failed (at most "
          "%d), %d waits polled" % (gcs, caps, err, refused, bound, polled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
