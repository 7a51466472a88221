#!/usr/bin/env python3
"""Idle capabilities sleep in their IO back end's wait: idle.py BUILD MANAGER N.

Note [Idle in the ring] (runtime/io/iomgr.h): a capability with nothing to run sleeps in its
back end's wait (io_uring_enter, or epoll_wait), whether or not it has IO in flight, and a
capability whose threads sleep waits there with the earliest sleeper's time as the deadline
(an absolute timeout in the ring; epoll_wait's timeout). The program here runs at -N<N>: the
main thread prints "ready" and sleeps 2 s, so capability 0 waits for a sleeper's time and
every other capability has nothing at all to do; no IO is in flight anywhere. The script
reads the system call each of the process's threads is blocked in (/proc/PID/task/TID/
syscall) and counts those in the back end's wait: all N capabilities must be there (the
runtime's other threads, its timer and signal threads, never are). Before this change the
capabilities slept on a condition variable (futex), 0 of N. Then the sleep must end on time
(the ring's timeout wakes capability 0) and the program exit 0.
"""
import os
import platform
import subprocess
import sys
import tempfile
import time

build, manager, n = sys.argv[1], sys.argv[2], int(sys.argv[3])

# the system calls a back end sleeps in, by architecture (asm/unistd.h)
WAITS = {
    "x86_64": {"uring": {426}, "epoll": {232, 281, 441}},      # epoll_wait, epoll_pwait(2)
    "aarch64": {"uring": {426}, "epoll": {22, 441}},          # epoll_pwait(2)
}[platform.machine()][manager]
NAME = {"uring": "io_uring_enter", "epoll": "epoll_wait"}[manager]

prog = """
(define t0 (current-jiffy))
(display "ready ") (flush-output-port)
(sleep 2)
(define took (/ (- (current-jiffy) t0) (jiffies-per-second)))
(display (if (and (>= took 2) (< took 10)) "woke after the sleep" (list 'took took)))
(newline)
"""


def waits(pid):
    """The number of the process's threads blocked in the back end's wait."""
    k = 0
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/syscall" % (pid, tid)) as f:
                first = f.read().split()
        except OSError:
            continue
        if first and first[0].lstrip("-").isdigit() and int(first[0]) in WAITS:
            k += 1
    return k


with tempfile.TemporaryDirectory() as tmp:
    out = open(os.path.join(tmp, "out"), "w+b")
    p = subprocess.Popen([os.path.join(build, "rtslab"), "-e", prog, "+RTS", "-N%d" % n,
                          "--io-manager=" + manager, "-RTS"],
                         stdout=out, stdin=subprocess.DEVNULL)
    while b"ready" not in open(out.name, "rb").read() and p.poll() is None:
        time.sleep(0.01)
    # Sampled for up to a second (the sleep lasts 2 s): a capability may be on its way in.
    best = 0
    for _ in range(20):
        best = max(best, waits(p.pid))
        if best == n:
            break
        time.sleep(0.05)
    rc = p.wait(timeout=60)
    text = open(out.name, "rb").read().decode(errors="replace")
print("idle in the ring: %d of %d capabilities in %s" % (best, n, NAME))
print(text.strip())
print("status", rc)
