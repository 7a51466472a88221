#!/usr/bin/env python3
"""Deferred GC requests (Note [Deferred GC requests] in runtime/sm/gc.h), by their counters.

    sync_defer.py [--cpus K] --check EXPR... -- PROGRAM ARGS... +RTS ... -RTS

Runs the program with `-s<file> --machine-readable` added to its RTS options, on the first K
CPUs of this process's affinity mask when --cpus is given (on one CPU, capabilities that
must stop for a GC are never running when the GC is asked for, so a request with
--sync-defer above 0 always runs on), and checks the keys rtslab_stw_* (docs/stats.md):
EXPR is NAME OP NAME-or-NUMBER with OP one of = > >= <=, NAME a key without its
`rtslab_stw_` prefix (syncs, deferred_syncs, deferred_blocks, deferred_blocks_max). The
program must exit 0. Prints its stdout, then "sync_defer ok: " and the counters, or the failed checks with
exit status 1.
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpus", type=int)
    ap.add_argument("--check", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if "-RTS" not in cmd:
        ap.error("the program's RTS options must end with -RTS")
    checks = []
    for e in a.check:
        m = re.fullmatch(r"\s*(\w+)\s*(>=|<=|=|>)\s*(\w+)\s*", e)
        if not m:
            ap.error(f"bad --check '{e}'")
        checks.append(m.groups())
    preexec = None
    if a.cpus:
        cpus = sorted(os.sched_getaffinity(0))[:a.cpus]
        preexec = lambda: os.sched_setaffinity(0, cpus)  # noqa: E731
    with tempfile.TemporaryDirectory() as d:
        stats = os.path.join(d, "stats")
        i = cmd.index("-RTS")
        run = cmd[:i] + ["-s" + stats, "--machine-readable"] + cmd[i:]
        p = subprocess.run(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=preexec, timeout=600)
        if p.returncode != 0:
            sys.stdout.write(p.stdout)
            sys.stderr.write(p.stderr)
            sys.exit(f"sync_defer: the program exited {p.returncode}")
        with open(stats, encoding="utf-8") as f:
            pairs = dict(ast.literal_eval(f.read().strip()))
    c = {k[len("rtslab_stw_"):]: float(v) for k, v in pairs.items()
         if k.startswith("rtslab_stw_")}
    if "deferred_syncs" not in c:
        sys.exit("sync_defer: no rtslab_stw_deferred_syncs in the statistics")

    def value(name):
        if re.fullmatch(r"\d+", name):
            return float(name)
        if name not in c:
            sys.exit(f"sync_defer: no key rtslab_stw_{name} (have: {', '.join(sorted(c))})")
        return c[name]

    ops = {"=": lambda x, y: x == y, ">": lambda x, y: x > y,
           ">=": lambda x, y: x >= y, "<=": lambda x, y: x <= y}
    shown = " ".join(f"{k}={c[k]:g}" for k in sorted(c))
    failed = [f"{l} {op} {r}: {value(l):g} {op} {value(r):g} is false"
              for l, op, r in checks if not ops[op](value(l), value(r))]
    if failed:
        for f in failed:
            print("sync_defer FAILED:", f, f"({shown})")
        sys.exit(1)
    sys.stdout.write(p.stdout)
    print("sync_defer ok:", shown)


if __name__ == "__main__":
    main()
