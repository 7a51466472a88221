#!/usr/bin/env python3
"""Compares two ways for a futex barrier's waker to know whether anyone sleeps (issue 32,
section 3): rtslab's count of announced sleepers beside the word, and OCaml 5.3's
"contested" bit in the futex word itself. wake_protocols.c says what each does.

Builds wake_protocols.c K ways (seeded padding before the code: code layout as a random
factor, as the benchmark runner does for rtslab), runs every setting R times per layout and
protocol, interleaved, and prints per setting the time per barrier round of each protocol,
contested / count with its 95 % interval over layouts and runs (testsuite/benchstats.py),
and the futex calls per round.

    python3 experiments/futex-barrier/wake_protocols.py [--layouts 5] [--reps 3]

Both protocols run in the same binary of each layout, so the interval is paired by layout
(testsuite/benchstats.py).
"""
import argparse
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "testsuite"))
import benchstats  # noqa: E402

# (threads, spins, work_ns, rounds): -N2 and -N4 on 2 cores; the futex-barrier patch's
# default spins (1000 with a CPU per capability, 30 oversubscribed) and none; no work between
# barriers (the protocol alone) and 20 us (a small GC's share).
SETTINGS = [(t, s, w, 200000 if w == 0 else 20000)
            for t in (2, 4) for s in (1000, 30, 0) for w in (0, 20000)]


def build(tmp, seed):
    pad = random.Random(seed).randrange(0, 4096)
    exe = os.path.join(tmp, "wp-%d" % seed)
    subprocess.run(["gcc", "-O2", "-pthread", "-fno-toplevel-reorder", "-DLAYOUT_PAD=%d" % pad,
                    "-o", exe, os.path.join(HERE, "wake_protocols.c")], check=True)
    return exe


def run(exe, proto, setting):
    t, s, w, r = setting
    out = subprocess.run([exe, proto, str(t), str(s), str(r), str(w)], check=True,
                         capture_output=True, text=True, timeout=300).stdout
    return {k: float(v) for k, v in re.findall(r"(\w+)=([0-9.]+)", out)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help="layouts of the program, each running both protocols (default %d; "
                         "fewer than 3 is a screen)" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--reps", type=int, default=3, help="runs per layout, protocol and setting")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        exes = {k: build(tmp, k) for k in range(1, a.layouts + 1)}
        res = {}                                  # (setting, proto) -> {layout: [run, ...]}
        order = [(s, p, k) for s in SETTINGS for p in ("count", "contested") for k in exes]
        for rep in range(a.reps):
            rng.shuffle(order)
            for s, p, k in order:
                res.setdefault((s, p), {}).setdefault(k, []).append(run(exes[k], p, s))
            print("rep %d of %d done" % (rep + 1, a.reps), file=sys.stderr)
    note = benchstats.design(a.layouts, a.reps)
    print("%d layouts x %d runs per protocol and setting%s; ns per barrier round (mean of layout"
          " means), contested / count with its 95 %% interval (paired by layout), futex waits "
          "and wakes per round" % (a.layouts, a.reps, " (" + note + ")" if note else ""))
    print("%-7s %-5s %-8s | %10s %10s | %-24s | %-13s %-13s" % (
        "threads", "spins", "work_ns", "count", "contested", "contested / count",
        "waits cnt/con", "wakes cnt/con"))
    for s in SETTINGS:
        val = {p: benchstats.sample_of(
            [dict(x, layout=k) for k, xs in res[(s, p)].items() for x in xs], "ns_per_round")
            for p in ("count", "contested")}
        ci = benchstats.ratio_ci(val["count"], val["contested"])
        calls = {}
        for p in ("count", "contested"):
            xs = [x for xs in res[(s, p)].values() for x in xs]
            calls[p] = (sum(x["futex_waits_per_round"] for x in xs) / len(xs),
                        sum(x["futex_wakes_per_round"] for x in xs) / len(xs))
        print("%-7d %-5d %-8d | %10.0f %10.0f | %-24s | %5.2f / %-5.2f %5.2f / %-5.2f" % (
            s[0], s[1], s[2], benchstats.mean(val["count"]), benchstats.mean(val["contested"]),
            benchstats.fmt_ci(ci), calls["count"][0], calls["contested"][0],
            calls["count"][1], calls["contested"][1]))


if __name__ == "__main__":
    main()
