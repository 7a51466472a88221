#!/usr/bin/env python3
"""Runs a program with `-s<file> --machine-readable` added to its RTS options and checks the
gen0-steal counters (docs/stats.md) against floors:

    check_steals.py [--min-minor-steals N] [--min-major-steals N] [--max-minor-steals N]
                    [--min-minor-balance F] [--max-major-balance F] [--runs K]
                    [--min KEY=N]... [--max KEY=N]...
                    -- PROGRAM ARGS... [+RTS ... -RTS]

--min KEY=N: the counter KEY of --machine-readable (e.g. rtslab_major_work_yields), summed
over the runs, reaches N (a floor, like the steals'); --max KEY=N: KEY is at most N in every
run.

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
    ap.add_argument("--max-major-balance", type=float, default=-1.0,
                    help="a ceiling on the major GCs' work balance, on every run")
    ap.add_argument("--min", action="append", default=[], metavar="KEY=N",
                    help="a floor on counter KEY, summed over the runs")
    ap.add_argument("--max", action="append", default=[], metavar="KEY=N",
                    help="a ceiling on counter KEY, on every run")
    ap.add_argument("--runs", type=int, default=3,
                    help="runs at most, for the floors (Note [Floors under load])")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    if not cmd:
        ap.error("no program")

    def key_bounds(specs, what):
        out = []
        for spec in specs:
            key, eq, n = spec.partition("=")
            if not eq or not key or not n.isdigit():
                ap.error(f"{what} {spec!r}: want KEY=N")
            out.append((key, int(n)))
        return out
    mins, maxs = key_bounds(a.min, "--min"), key_bounds(a.max, "--max")
    totals = {k: 0 for k, _ in mins}
    # Note [Floors under load]: whether the second GC thread gets a CPU during a GC is the
    # kernel's choice, so on a loaded machine one run may steal little. The floors on what
    # must happen (steals, a balance) may therefore be met over up to --runs runs: steals
    # summed, the balance by its best run; what must never happen (more steals than tries,
    # steals where none are allowed, a failed run) is checked on every run.
    total_ms = total_mt = total_js = 0
    best_bal, summary = 0.0, ""
    for run in range(1, a.runs + 1):
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
            print(f"steals FAILED: the program exited {p.returncode} (run {run})")
            return 1
        kv = dict(re.findall(r'\("([^"]+)", "([^"]*)"\)', text))
        keys = ["rtslab_minor_steals", "rtslab_minor_steal_tries", "rtslab_major_steals",
                "rtslab_major_steal_tries", "rtslab_minor_work_balance",
                "rtslab_major_work_balance"]
        missing = [k for k in keys + [k for k, _ in mins + maxs] if k not in kv]
        if missing:
            print("steals FAILED: no key " + ", ".join(missing))
            return 1
        ms, mt = int(kv["rtslab_minor_steals"]), int(kv["rtslab_minor_steal_tries"])
        js = int(kv["rtslab_major_steals"])
        bal = float(kv["rtslab_minor_work_balance"])
        summary = (f"minor {ms} steals of {mt} tries, balance {100 * bal:.2f}%; major {js} "
                   f"steals, balance {100 * float(kv['rtslab_major_work_balance']):.2f}%"
                   + "".join(f"; {k} {kv[k]}" for k, _ in mins + maxs))
        bad = []
        if ms > mt:
            bad.append(f"{ms} minor steals of {mt} tries")
        bad += [f"{k} {kv[k]} > {n}" for k, n in maxs if int(kv[k]) > n]
        if a.max_minor_steals >= 0 and ms > a.max_minor_steals:
            bad.append(f"{ms} minor steals > {a.max_minor_steals}")
        jbal = float(kv["rtslab_major_work_balance"])
        if a.max_major_balance >= 0 and jbal > a.max_major_balance:
            bad.append(f"major work balance {100 * jbal:.2f}% > {100 * a.max_major_balance:.2f}%")
        if bad:
            print("steals FAILED: " + "; ".join(bad) + " (" + summary + ")")
            return 1
        total_ms, total_mt, total_js = total_ms + ms, total_mt + mt, total_js + js
        best_bal = max(best_bal, bal)
        for k, _ in mins:
            totals[k] += int(kv[k])
        if (total_ms >= a.min_minor_steals and total_js >= a.min_major_steals
                and best_bal >= a.min_minor_balance
                and all(totals[k] >= n for k, n in mins)):
            more = f" (over {run} runs: {total_ms} minor steals)" if run > 1 else ""
            print("steals ok: " + summary + more)
            return 0
    bad = []
    if total_ms < a.min_minor_steals:
        bad.append(f"{total_ms} minor steals < {a.min_minor_steals}")
    if total_js < a.min_major_steals:
        bad.append(f"{total_js} major steals < {a.min_major_steals}")
    bad += [f"{k} {totals[k]} < {n}" for k, n in mins if totals[k] < n]
    if best_bal < a.min_minor_balance:
        bad.append(f"minor work balance {100 * best_bal:.2f}% < {100 * a.min_minor_balance:.2f}%")
    print(f"steals FAILED over {a.runs} runs: " + "; ".join(bad) + " (last: " + summary + ")")
    return 1


if __name__ == "__main__":
    sys.exit(main())
