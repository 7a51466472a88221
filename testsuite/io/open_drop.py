#!/usr/bin/env python3
"""Runs testsuite/io/open_drop.scm under a low descriptor limit (issue 45, item 7).

    open_drop.py RTSLAB N LIMIT [lower] [-- RTS options...]

Without `lower`: the child starts with RLIMIT_NOFILE's soft limit at LIMIT (resource.setrlimit
before exec): the dropped ports' descriptors must make the GC run (Note [External resources]
in runtime/sm/finalize.h). With `lower`: the child starts at 4 x LIMIT (its descriptor budget,
read at start-up, is then LIMIT), and once it says "ready" the test lowers its limit to
LIMIT with prlimit; the budget is never reached, and the opens that fail with EMFILE must be
retried after a major GC. The child's output and exit status are passed through."""
import os
import resource
import subprocess
import sys


def main():
    args = sys.argv[1:]
    rts = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    rtslab, n, limit = args[0], int(args[1]), int(args[2])
    lower = len(args) > 3 and args[3] == "lower"
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    start = 4 * limit if lower else limit
    if hard != resource.RLIM_INFINITY and hard < start:
        print("open_drop.py: the hard descriptor limit %d is below %d" % (hard, start))
        return 1
    prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "open_drop.scm")
    cmd = [rtslab, prog, str(n), str(4 * limit if lower else limit)] + (["wait"] if lower else [])
    if rts:
        cmd += ["+RTS"] + rts + ["-RTS"]
    child = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (start, hard)))
    if lower:
        line = child.stdout.readline()
        if line.strip() != "ready":
            print("open_drop.py: expected 'ready', got %r" % line)
            child.kill()
            return 1
        resource.prlimit(child.pid, resource.RLIMIT_NOFILE, (limit, hard))
        child.stdin.write("go\n")
        child.stdin.flush()
    out, _ = child.communicate()
    sys.stdout.write(out)
    print("status %d" % child.returncode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
