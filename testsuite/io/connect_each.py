#!/usr/bin/env python3
"""tcp-connect and a name of two addresses: connect_each.py BUILD MANAGER.

Runs testsuite/io/connect_each.scm in a mount namespace of its own (unshare -m), where a
hosts file is bound over /etc/hosts that adds the name rtslab-dual-stack for ::1 and then
127.0.0.1 (getaddrinfo gives them in that order); the machine's own /etc/hosts is untouched.
"""
import os
import subprocess
import sys
import tempfile

build, manager = sys.argv[1], sys.argv[2]
src = os.path.dirname(os.path.abspath(__file__))
with tempfile.TemporaryDirectory() as tmp:
    hosts = os.path.join(tmp, "hosts")
    with open("/etc/hosts") as f, open(hosts, "w") as g:
        g.write(f.read() + "\n::1 rtslab-dual-stack\n127.0.0.1 rtslab-dual-stack\n")
    p = subprocess.run(["unshare", "-m", "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"',
                        hosts, os.path.join(build, "rtslab"), os.path.join(src, "connect_each.scm"),
                        "rtslab-dual-stack", "+RTS", "--io-manager=" + manager, "-N2", "-RTS"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                       timeout=120)
print(p.stdout.decode(errors="replace").strip())
print("status", p.returncode)
