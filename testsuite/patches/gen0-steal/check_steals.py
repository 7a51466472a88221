#!/usr/bin/env python3
"""Runs a program with `-s<file> --machine-readable` added to its RTS options and checks the
gen0-steal counters (docs/stats.md) against floors:

    check_steals.py [--min-minor-steals N] [--min-major-steals N] [--max-minor-steals N]
                    [--min-minor-balance F] -- PROGRAM ARGS... [+RTS ... -RTS]

Prints "steals ok: ..." and exits 0 when every floor holds; otherwise says which did not and
exits 1. The program's own stdout is passed through (so a TESTS line can check it too)."""
import argparse
import os
import re
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--min-minor-steals", type=int, default=0)
    ap.add_argument("--max-minor-steals", type=int, default=-1)
    ap.add_argument("--min-major-steals", type=int, default=0)
    ap.add_argument("--min-minor-balance", type=float, default=0.0)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no program")
    fd, path = tempfile.mkstemp(prefix="gen0-steal-", suffix=".stats")
    os.close(fd)
    try:
        p = subprocess.run(cmd + ["+RTS", "-s" + path, "--machine-readable", "-RTS"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        with open(path) as f:
            text = f.read()
    finally:
        os.unlink(path)
    if p.returncode != 0:
        print(f"steals FAILED: the program exited {p.returncode}")
        return 1
    kv = dict(re.findall(r'\("([^"]+)", "([^"]*)"\)', text))
    keys = ["rtslab_minor_steals", "rtslab_minor_steal_tries", "rtslab_major_steals",
            "rtslab_major_steal_tries", "rtslab_minor_work_balance", "rtslab_major_work_balance"]
    missing = [k for k in keys if k not in kv]
    if missing:
        print("steals FAILED: no key " + ", ".join(missing))
        return 1
    ms, mt = int(kv["rtslab_minor_steals"]), int(kv["rtslab_minor_steal_tries"])
    js = int(kv["rtslab_major_steals"])
    bal = float(kv["rtslab_minor_work_balance"])
    bad = []
    if ms > mt:
        bad.append(f"{ms} minor steals of {mt} tries")
    if ms < a.min_minor_steals:
        bad.append(f"{ms} minor steals < {a.min_minor_steals}")
    if a.max_minor_steals >= 0 and ms > a.max_minor_steals:
        bad.append(f"{ms} minor steals > {a.max_minor_steals}")
    if js < a.min_major_steals:
        bad.append(f"{js} major steals < {a.min_major_steals}")
    if bal < a.min_minor_balance:
        bad.append(f"minor work balance {100 * bal:.2f}% < {100 * a.min_minor_balance:.2f}%")
    summary = (f"minor {ms} steals of {mt} tries, balance {100 * bal:.2f}%; major {js} steals, "
               f"balance {100 * float(kv['rtslab_major_work_balance']):.2f}%")
    if bad:
        print("steals FAILED: " + "; ".join(bad) + " (" + summary + ")")
        return 1
    print("steals ok: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
