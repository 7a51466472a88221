#!/usr/bin/env python3
"""Runs a program with `-s<file> --machine-readable` and checks the spin-wait counters it
reports (docs/stats.md: rtslab_lock_<lock>_{acquisitions,spins,yields}).

    check_yields.py [--cpus K] [--stdout TEXT | --stdout-file FILE] [--check EXPR]...
                    -- PROGRAM ARGS...

--cpus K      run the program on the first K CPUs of this process's affinity mask, so that
              its capabilities outnumber the cores as much as the test wants (with one core,
              a capability that spins is always waiting for one that is not running)
--stdout TEXT the program's stdout, stripped, must be TEXT
--stdout-file FILE  the same, TEXT being FILE's contents, stripped (several lines)
--check EXPR  NAME OP NAME-or-NUMBER, OP one of = > >= <=; a NAME is a lock key's suffix
              (obj_yields, gc_work_spins, ...) or all_<field>, the sum over every lock
              (all_yields, all_spins, ...)

The program must exit 0. Prints "yields ok: " and the counters when every check holds; else
the failed checks, with exit status 1.
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

FIELDS = ("acquisitions", "spins", "yields")


def counters(path):
    with open(path, encoding="utf-8") as f:
        pairs = dict(ast.literal_eval(f.read().strip()))
    locks = {}
    for key, val in pairs.items():
        m = re.fullmatch(r"rtslab_lock_(\w+)_(" + "|".join(FIELDS) + ")", key)
        if m:
            locks[f"{m.group(1)}_{m.group(2)}"] = int(val)
    if not locks:
        sys.exit("check_yields: no rtslab_lock_* keys in the statistics")
    for field in FIELDS:
        locks[f"all_{field}"] = sum(v for k, v in locks.items()
                                    if k.endswith("_" + field) and not k.startswith("all_"))
    return locks


def value(name, c):
    if re.fullmatch(r"\d+", name):
        return int(name)
    if name not in c:
        sys.exit(f"check_yields: no counter '{name}' (have: {', '.join(sorted(c))})")
    return c[name]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpus", type=int)
    ap.add_argument("--stdout")
    ap.add_argument("--stdout-file")
    ap.add_argument("--check", action="append", default=[])
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    if not cmd:
        ap.error("no program")
    if a.stdout_file is not None:
        if a.stdout is not None:
            ap.error("--stdout and --stdout-file: give one")
        with open(a.stdout_file, encoding="utf-8") as f:
            a.stdout = f.read().strip()
    checks = []
    for e in a.check:
        m = re.fullmatch(r"\s*(\w+)\s*(>=|<=|=|>)\s*(\w+)\s*", e)
        if not m:
            ap.error(f"bad --check '{e}'")
        checks.append(m.groups())

    preexec = None
    if a.cpus:
        cpus = sorted(os.sched_getaffinity(0))[:a.cpus]
        if len(cpus) < a.cpus:
            sys.exit(f"check_yields: wanted {a.cpus} CPUs, this process may use {len(cpus)}")
        preexec = lambda: os.sched_setaffinity(0, cpus)   # noqa: E731

    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "stats")
        p = subprocess.run(cmd + ["+RTS", f"-s{stats}", "--machine-readable", "-RTS"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           preexec_fn=preexec)
        sys.stderr.write(p.stderr)
        if p.returncode != 0:
            sys.exit(f"check_yields: the program exited {p.returncode}")
        c = counters(stats)

    failed = []
    if a.stdout is not None and p.stdout.strip() != a.stdout:
        failed.append(f"stdout {p.stdout.strip()!r}, expected {a.stdout!r}")
    ops = {"=": lambda x, y: x == y, ">": lambda x, y: x > y,
           ">=": lambda x, y: x >= y, "<=": lambda x, y: x <= y}
    for lhs, op, rhs in checks:
        x, y = value(lhs, c), value(rhs, c)
        if not ops[op](x, y):
            failed.append(f"{lhs} {op} {rhs}: {x} {op} {y} is false")
    shown = " ".join(f"{k}={v}" for k, v in sorted(c.items()) if k.startswith("all_")
                     or any(k.startswith(e[0].rsplit("_", 1)[0] + "_") for e in checks))
    if failed:
        print("yields FAILED: " + "; ".join(failed) + " (" + shown + ")")
        return 1
    print("yields ok: " + shown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
