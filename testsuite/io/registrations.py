#!/usr/bin/env python3
"""The epoll back end registers a descriptor once: registrations.py BUILD CLIENTS LINES N.

Note [Registered once] (runtime/io/iomgr.c). Runs testsuite/io/echo.scm (CLIENTS clients,
each sending LINES lines, at -N<N>) on the epoll back end under `strace -f -c`, and counts
its epoll_ctl and epoll_wait calls. The program has 2 * CLIENTS + 1 sockets (a listener, a
client and a server end per client) and N eventfds; a registration per socket per
capability (a socket whose thread moved is registered on each capability it blocked on),
with room to spare, is at most 4 * sockets * N + N epoll_ctl calls, however many lines go
through. Before, every wait cost an ADD and a DEL: 2,566 epoll_ctl for 4,197 epoll_wait
at 20 clients of 50 lines at -N2.
"""
import os
import re
import subprocess
import sys
import tempfile

build, clients, lines, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
src = os.path.dirname(os.path.abspath(__file__))
# LeakSanitizer cannot run under ptrace (an ASan build would exit 1 at the end): off here
env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
with tempfile.TemporaryDirectory() as tmp:
    trace = os.path.join(tmp, "strace")
    p = subprocess.run(["strace", "-f", "-c", "-o", trace, "-e", "trace=epoll_ctl,epoll_wait,epoll_pwait",
                        os.path.join(build, "rtslab"), os.path.join(src, "echo.scm"), "127.0.0.1",
                        str(clients), str(lines), "+RTS", "-N%d" % n, "--io-manager=epoll", "-RTS"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                       timeout=300, env=env)
    counts = {}
    for line in open(trace):
        m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
        if m:
            counts[m.group(2)] = int(m.group(1))
print(p.stdout.decode(errors="replace").strip())
ctl = counts.get("epoll_ctl", 0)
waits = counts.get("epoll_wait", 0) + counts.get("epoll_pwait", 0)
sockets = 2 * clients + 1
bound = 4 * sockets * n + n
print("epoll_ctl %d, epoll_wait %d, bound %d" % (ctl, waits, bound))
print("registrations: " + ("at most the bound" if 0 < ctl <= bound else "over the bound"))
print("status", p.returncode)
