#!/usr/bin/env python3
"""The peak resident memory of one run: maxrss.py LIMIT_MB PROGRAM ARGS...

Runs the command, prints its stdout, its exit status and whether its peak resident set
(ru_maxrss from wait4) stayed under LIMIT_MB: "maxrss under N MB" or "maxrss M MB, over N MB".
A memory bound, not a timing: what a run touches does not depend on the machine's speed.
"""
import os
import subprocess
import sys

limit_mb = int(sys.argv[1])
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE)
out = p.stdout.read()
_, status, usage = os.wait4(p.pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("status", os.waitstatus_to_exitcode(status))
mb = usage.ru_maxrss / 1024
print("maxrss under %d MB" % limit_mb if mb < limit_mb else "maxrss %.0f MB, over %d MB" % (mb, limit_mb))
