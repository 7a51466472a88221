#!/usr/bin/env python3
"""The headline figures of the patches and the experiments, re-derived with the interval
of issue 42 (testsuite/benchstats.py: t over the layout means) from the raw runs kept in
experiments/*/results/, beside the value first published (issue 42, item 5).

    python3 experiments/figures.py [--markdown]

Each figure names where it is quoted (a patch's commit message is docs/patches/NAME.md), the
value as published, and how to get it from the raw runs: the same programs, configurations
and metric, through benchstats. Its design (layouts x runs per configuration) is read from
the runs, not from the text that quoted it. Then:

  survived          K >= 5 layouts a side and the new interval says what the old one said
                    (moved the same way, or not moved);
  did not survive   K >= 5 and it does not;
  screen            K < 5 (fewer layouts than a claim wants, benchstats.CLAIM_LAYOUTS), or
                    no raw runs were kept: the figure stands as a screen of its design, and
                    experiments/README.md gives the command that measures it at K >= 5.

Nothing is run: this reads files. --markdown prints experiments/README.md's table.
"""

import argparse
import ast
import gzip
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchlib  # noqa: E402
import benchstats as bs  # noqa: E402


def load(rel):
    path = os.path.join(HERE, rel)
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


# --- samples from each experiment's raw runs ------------------------------------------------

def bench_samples(data, config, get, programs=None):
    """{program: sample} of bench.py's runs.json DATA for CONFIG (its label), GET a function
    of a run; programs with a failed run, or without the value, left out."""
    out = {}
    for r in data["runs"]:
        if r["config"] != config or (programs and r["program"] not in programs):
            continue
        out.setdefault(r["program"], []).append(r)
    samples = {}
    for p, runs in out.items():
        if not all(r["ok"] for r in runs):
            continue
        s = bs.sample_of(runs, lambda r: (lambda v: v if isinstance(v, float) else None)(get(r)))
        if s:
            samples[p] = s
    return samples


def stat(key):
    return lambda r: r["stats"].get(key)


def metric(name):
    """A run's value of benchlib's metric NAME (a function of its statistics)."""
    return lambda r: benchlib.METRICS[name].get(r["stats"])


def not_server(p):
    return ":" not in p


def bench_geomean(data, a, b, get, keep=not_server):
    """benchstats.geomean_ci of B against A over the programs both have with positive runs
    (as the runner's Geometric Mean row), and the programs' count."""
    sa, sb = bench_samples(data, a, get), bench_samples(data, b, get)
    pairs = [(sa[p], sb[p]) for p in sorted(sa) if p in sb and keep(p)
             and min(min(v) for v in sa[p].values()) > 0
             and min(min(v) for v in sb[p].values()) > 0]
    return bs.geomean_ci(pairs), len(pairs)


def bench_program(data, a, b, get, program):
    sa, sb = bench_samples(data, a, get), bench_samples(data, b, get)
    return bs.ratio_ci(sa[program], sb[program])


def design_of(samples):
    """(K, runs per layout) of samples: the fewest layouts and the mean runs per layout."""
    k = min(len([v for v in s.values() if v]) for s in samples)
    n = sum(len(v) for s in samples for v in s.values())
    return k, n / sum(len([v for v in s.values() if v]) for s in samples)


def bench_design(data, configs):
    ss = [s for c in configs for s in bench_samples(data, c, stat("total_wall_seconds"))
          .values()]
    return design_of(ss)


def by_layout(runs, get):
    return bs.sample_of(runs, get)


def literal(x):
    """A dict stored as its repr (as one experiment's results.json keeps its -s parses)."""
    return ast.literal_eval(x) if isinstance(x, str) else x


# --- the figures -----------------------------------------------------------------------------

def throughput(ci):
    """A time ratio's CI as a throughput ratio (1 / it): the interval turned round."""
    inv = bs.CI(1 / ci.ratio, None if ci.hi is None else 1 / ci.hi,
                None if ci.lo is None else 1 / ci.lo, ci.k, ci.df, ci.paired, ci.exact)
    return inv


def matrix_program(rel, a, b, program, m="elapsed"):
    d = load(rel)
    ci = bench_program(d, a, b, metric(m), program)
    return ci, design_of([bench_samples(d, c, stat("total_wall_seconds"))[program]
                          for c in (a, b)]), 1


def matrix(role, patch, n, m="elapsed"):
    d = load("patch-matrix/results/layouts-2026-11-26/matrix-norm/runs.json.gz")
    a, b = ((f"baseline -N{n}", f"{patch} -N{n}") if role == "alone"
            else (f"allbut-{patch} -N{n}", f"all-patches -N{n}"))
    keep = not_server if m != "rps" else (lambda p: not not_server(p))
    ci, k = bench_geomean(d, a, b, metric(m), keep)
    return ci, bench_design(d, [a, b]), k


def aging5(n, get):
    d = load("request-server/results/aging-layouts5/20261129-035026-norm/runs.json.gz")
    a, b = f"baseline -N{n} --aging=0", f"baseline -N{n}"
    ci, k = bench_geomean(d, a, b, get)
    return ci, bench_design(d, [a, b]), k


def eventlog(part, a, b, program=None):
    rel = {"on": "eventlog/results/on/20261127-133403-norm/runs.json.gz",
           "off": "eventlog/results/off/20261127-134027-norm/runs.json.gz"}[part]
    d = load(rel)
    labels = [c["label"] for c in d["configs"]]
    a, b = labels[a], labels[b]
    if program:
        get = metric("mutator")
        return bench_program(d, a, b, get, program), bench_design(d, [a, b]), 1
    ci, n = bench_geomean(d, a, b, metric("elapsed"))
    return ci, bench_design(d, [a, b]), n


# Every figure: (what, where it is quoted, the value published, the claim it made, how to
# re-derive it or None where no raw runs were kept, the design published where there are
# none). claim: "down" / "up" (moved that way) or "none" (not moved).
DP = "docs/patches/"
# The figures of the experiments that are no patch's.
FIGURES = [
    ("eventlog on (binary), smp/threadring mutator", "eventlog/README, CHANGES",
     "+67.6 % [+60.5, +75.3]", "up", lambda: eventlog("on", 0, 1, "smp/threadring"), None),
    ("eventlog on (binary), smp/thread-churn mutator", "eventlog/README, CHANGES",
     "+13.1 % [+10.4, +15.3]", "up", lambda: eventlog("on", 0, 1, "smp/thread-churn"), None),
    ("eventlog off, 5 programs, elapsed geomean", "eventlog/README, CHANGES",
     "+0.7 % [-2.2, +3.7]", "none", lambda: eventlog("off", 0, 1), None),
    ("aging's cost at -N1, 11 GC-heavy programs, elapsed", "CHANGES",
     "+1.4 % [+0.7, +2.1]", "up", None, "one binary x 3 runs, no raw runs kept"),
    ("aging's cost at -N1, GC time", "CHANGES", "-6.3 % [-7.6, -5.0]", "down", None,
     "one binary x 3 runs, no raw runs kept"),
    ("aging's cost at -N1, elapsed, 5 layouts (after issue 43's fix)", "docs/rts-options.md",
     "+1.3 % [+0.7, +2.0]", "up", lambda: aging5(1, metric("elapsed")), None),
    ("aging's cost at -N1, GC time, 5 layouts", "docs/rts-options.md",
     "-5.0 % [-6.5, -3.6]", "down", lambda: aging5(1, metric("gc")), None),
    ("aging's cost at -N2, elapsed, 5 layouts", "docs/rts-options.md",
     "+4.9 % [-0.3, +10.4]", "none", lambda: aging5(2, metric("elapsed")), None),
    ("aging's cost at -N2, GC time, 5 layouts", "docs/rts-options.md",
     "+10.6 % [+1.8, +20.1]", "up", lambda: aging5(2, metric("gc")), None),
    ("+RTS -p on, against off: elapsed, tak, nfib, deriv", "CHANGES", "+1.0 % [-4.7, +6.9]", "none", None,
     "3 layouts x 3 runs, no raw runs kept"),
    ("request server soak, RSS growth 10k -> 210k connections", "CHANGES",
     "epoll +1.3 %, uring +3.3 %", "none", None, "one run per back end"),
]

# Each patch's figures. This file, like experiments/README.md, names every patch and stays
# in the fork's tree only (tools/mkpatches.py's QUEUE_REPORT).
# spin-yield
LAYOUTS5 = "spin-yield/results/layouts5/results.json.gz"


def spin_yield(setting, path="spin-yield/results/layouts-2026-11-26/results.json.gz"):
    d = load(path)
    progs = sorted({r["program"] for r in d["runs"]})
    pairs = []
    for p in progs:
        cell = {v: [r for r in d["runs"] if r["setting"] == setting and r["program"] == p
                    and r["variant"] == v] for v in ("baseline", "spin-yield")}
        pairs.append((by_layout(cell["baseline"], "elapsed"),
                      by_layout(cell["spin-yield"], "elapsed")))
    return bs.geomean_ci(pairs), design_of([s for pr in pairs for s in pr]), len(pairs)


def spin_yield_program(setting, program, key="elapsed"):
    d = load("spin-yield/results/layouts-2026-11-26/results.json.gz")
    s = [by_layout([r for r in d["runs"] if r["setting"] == setting and r["program"] == program
                    and r["variant"] == v], key) for v in ("baseline", "spin-yield")]
    return bs.ratio_ci(*s), design_of(s), 1


def spin_yield_spins(setting):
    """The lock spins, geometric mean over the programs whose baseline spun at all."""
    d = load("spin-yield/results/layouts-2026-11-26/results.json.gz")
    pairs = []
    for p in sorted({r["program"] for r in d["runs"]}):
        s = [by_layout([r for r in d["runs"] if r["setting"] == setting and r["program"] == p
                        and r["variant"] == v], "spins") for v in ("baseline", "spin-yield")]
        if all(min(min(v) for v in x.values()) > 0 for x in s):
            pairs.append(tuple(s))
    return bs.geomean_ci(pairs), design_of([x for pr in pairs for x in pr]), len(pairs)


FIGURES += [
    ("spin-yield, parallel+smp elapsed geomean, -N4", DP + "spin-yield.md, spin-yield/README, "
     "CHANGES", "-13.0 % [-15.4, -10.3]", "down", lambda: spin_yield("N4"), None),
    ("spin-yield, parallel+smp elapsed geomean, -N8", DP + "spin-yield.md, spin-yield/README",
     "-10.3 % [-15.0, -5.4]", "down", lambda: spin_yield("N8"), None),
    ("spin-yield, parallel+smp elapsed geomean, -N2", DP + "spin-yield.md, spin-yield/README",
     "+1.0 % [-2.9, +4.5]", "none", lambda: spin_yield("N2"), None),
    ("spin-yield, smp/sieve elapsed -N4", DP + "spin-yield.md, spin-yield/README",
     "-77.4 %", "down", lambda: spin_yield_program("N4", "smp/sieve"), None),
    ("spin-yield, smp/thread-churn elapsed -N4", DP + "spin-yield.md, spin-yield/README",
     "-38.7 %", "down", lambda: spin_yield_program("N4", "smp/thread-churn"), None),
    ("spin-yield, lock spins -N4, geomean of the programs' ratios", DP + "spin-yield.md, "
     "spin-yield/README", "4.1e9 -> 2.3e7 (sums)", "down", lambda: spin_yield_spins("N4"), None),
    ("spin-yield, parallel+smp elapsed geomean, -N4, 5 layouts (after issue 43's fix)",
     DP + "spin-yield.md, spin-yield/README", "-14.2 % [-15.0, -13.5]", "down",
     lambda: spin_yield("N4", LAYOUTS5), None),
    ("spin-yield, parallel+smp elapsed geomean, -N8, 5 layouts", DP + "spin-yield.md, "
     "spin-yield/README", "-10.6 % [-11.4, -9.9]", "down", lambda: spin_yield("N8", LAYOUTS5),
     None),
    ("spin-yield, parallel+smp elapsed geomean, -N2, 5 layouts", DP + "spin-yield.md, "
     "spin-yield/README", "-0.5 % [-2.3, +1.3]", "none", lambda: spin_yield("N2", LAYOUTS5),
     None),
    ("matrix: spin-yield alone, -N4, suite elapsed geomean", "patch-matrix/README",
     "-8.7 % [-10.0, -7.4]", "down", lambda: matrix("alone", "spin-yield", 4), None),
]


# gen0-steal
def gen0_steal(a, b, m):
    """As its pairs.txt: elapsed is the runner's wall clock of each run (wall_seconds)."""
    d = load("gen0-steal/results/layouts-2026-11-26/runs.json.gz")
    get = (lambda r: r["wall_seconds"]) if m == "wall" else metric(m)
    ci, n = bench_geomean(d, a, b, get)
    return ci, bench_design(d, [a, b]), n


def gen0_steal5(m):
    d = load("gen0-steal/results/layouts5-N2/20261129-041307-norm/runs.json.gz")
    a, b = "baseline -N2", "gen0-steal -N2 -qb0"
    ci, n = bench_geomean(d, a, b, metric(m))
    return ci, bench_design(d, [a, b]), n


FIGURES += [
    ("gen0-steal before its back-off, -N4, suite elapsed geomean", DP + "gen0-steal.md, "
     "gen0-steal/README", "+80.4 % [+77.3, +83.7]", "up",
     lambda: gen0_steal("baseline -N4", "gen0-steal@8107e60 -N4", "wall"), None),
    ("gen0-steal -qb0, -N4, suite elapsed geomean", DP + "gen0-steal.md, gen0-steal/README",
     "+0.5 % [-1.1, +2.2]", "none",
     lambda: gen0_steal("baseline -N4", "gen0-steal -N4 -qb0", "wall"), None),
    ("gen0-steal default, -N4, suite elapsed geomean", DP + "gen0-steal.md, gen0-steal/README",
     "+1.6 % [-0.2, +3.5]", "none",
     lambda: gen0_steal("baseline -N4", "gen0-steal -N4", "wall"), None),
    ("gen0-steal -qb0, -N2, suite elapsed geomean", DP + "gen0-steal.md, gen0-steal/README",
     "+0.8 % [-1.7, +3.3]", "none",
     lambda: gen0_steal("baseline -N2", "gen0-steal -N2 -qb0", "wall"), None),
    ("gen0-steal -qb0, -N2, suite GC time geomean", DP + "gen0-steal.md, gen0-steal/README",
     "-12.7 % [-16.8, -8.5]", "down",
     lambda: gen0_steal("baseline -N2", "gen0-steal -N2 -qb0", "gc"), None),
    ("gen0-steal -qb0, -N2, suite elapsed geomean, 5 layouts (after issue 43's fix)",
     DP + "gen0-steal.md, gen0-steal/README", "-1.3 % [-3.3, +0.8]", "none",
     lambda: gen0_steal5("elapsed"), None),
    ("gen0-steal -qb0, -N2, suite GC time geomean, 5 layouts (after issue 43's fix)",
     DP + "gen0-steal.md, gen0-steal/README", "-9.1 % [-14.5, -3.4]", "down",
     lambda: gen0_steal5("gc"), None),
    ("gen0-steal, skewed_live minor balance at -N2 (-A1m..-A32m)", DP + "gen0-steal.md",
     "71.0-97.8 % by -A", "none", None, "one binary x 3 runs per -A (a counter)"),
    ("gen0-steal, -N1 instructions (callgrind, gcbench)", DP + "gen0-steal.md",
     "+0.005 %", "none", None, "one binary, one run (instructions: deterministic)"),
    ("matrix: gen0-steal alone, -N4, suite elapsed geomean", "patch-matrix/README",
     "-0.1 % [-1.5, +1.2]", "none", lambda: matrix("alone", "gen0-steal", 4), None),
]


# phys-caps
PHYS5 = "phys-caps/results/layouts5/sim/20261129-044114-norm/runs.json.gz"


def phys_caps(cpu, path="phys-caps/results/layouts-2026-11-26/sim-runs.json.gz"):
    d = load(path)
    get = (lambda r: r["user_seconds"] + r["sys_seconds"]) if cpu else \
        (lambda r: r["wall_seconds"])
    sp = bench_samples(d, "phys-caps -N", get)
    sb = bench_samples(d, "baseline -N", get)
    # throughput, patch over baseline: the baseline's time over the patch's
    pairs = [(sp[p], sb[p]) for p in sorted(sp) if p in sb]
    return bs.geomean_ci(pairs), design_of([s for pr in pairs for s in pr]), len(pairs)


FIGURES += [
    ("phys-caps default -N, SIMULATED SMT, wall throughput geomean", DP + "phys-caps.md, "
     "phys-caps/README", "1.192x [1.177, 1.208]", "up", lambda: phys_caps(False), None),
    ("phys-caps default -N, SIMULATED SMT, CPU throughput geomean", DP + "phys-caps.md, "
     "phys-caps/README", "1.174x [1.161, 1.187]", "up", lambda: phys_caps(True), None),
    ("phys-caps default -N, SIMULATED SMT, wall throughput geomean, 5 layouts (after issue 43's "
     "fix)", DP + "phys-caps.md, phys-caps/README", "1.31x [1.29, 1.34]", "up",
     lambda: phys_caps(False, PHYS5), None),
    ("phys-caps default -N, SIMULATED SMT, CPU throughput geomean, 5 layouts", DP +
     "phys-caps.md, phys-caps/README", "1.25x [1.23, 1.27]", "up",
     lambda: phys_caps(True, PHYS5), None),
    ("phys-caps, the patch's default against the best manual -N, wall", DP + "phys-caps.md, "
     "phys-caps/README", "1.005 (baseline's 0.841)", "none", None,
     "ratios of medians, 3 layouts x 1 run; the best -N picked after the runs: no interval"),
    ("phys-caps, earlier single-binary figures (CPU +10 %, 1.004 of best -N)", DP +
     "phys-caps.md, phys-caps/README", "mandel +18 %, nbody +21 %", "up", None,
     "one binary per build, loaded machine"),
]


# stack-chunks
CHUNKS5 = "stack-chunks/results/layouts5/results.json.gz"


def stack_chunks(exp, key, name=None, depth=None,
                 path="stack-chunks/results/layouts-2026-11-26/results.json.gz"):
    d = load(path)
    runs = [r for r in d["runs"] if r["exp"] == exp and (name is None or r.get("name") == name)
            and (depth is None or r.get("depth") == depth)]
    get = (lambda r: r[key]) if exp == "gc_depth" else \
        (lambda r: float(r["stats"][key]))
    s = {b: by_layout([r for r in runs if r["build"] == b], get)
         for b in ("baseline", "stack-chunks")}
    if exp == "gc_depth":           # published as baseline / patch, "x less"
        ci = bs.ratio_ci(s["stack-chunks"], s["baseline"])
    else:
        ci = bs.ratio_ci(s["baseline"], s["stack-chunks"])
    return ci, design_of(list(s.values())), 1


FIGURES += [
    ("stack-chunks, 100 minor GCs at 1M frames, baseline / patch pause", DP + "stack-chunks.md,"
     " stack-chunks/README, CHANGES", "1789x [1491, 2177]", "up",
     lambda: stack_chunks("gc_depth", "gc_total_ms", depth=1000000), None),
    ("stack-chunks, 100 minor GCs at 1k frames, baseline / patch pause", DP + "stack-chunks.md",
     "1.79x [1.47, 2.22]", "up",
     lambda: stack_chunks("gc_depth", "gc_total_ms", depth=1000), None),
    ("stack-chunks, 100 minor GCs at 10k frames, baseline / patch pause", DP +
     "stack-chunks.md, stack-chunks/README", "11.1x [9.17, 13.4]", "up",
     lambda: stack_chunks("gc_depth", "gc_total_ms", depth=10000), None),
    ("stack-chunks, 100 minor GCs at 100k frames, baseline / patch pause", DP +
     "stack-chunks.md, stack-chunks/README", "152x [126, 187]", "up",
     lambda: stack_chunks("gc_depth", "gc_total_ms", depth=100000), None),
    ("stack-chunks, gc/deep-stack norm -N1 elapsed", DP + "stack-chunks.md, CHANGES",
     "-71.4 % [-72.4, -70.4]", "down",
     lambda: stack_chunks("programs", "total_wall_seconds", name="deep-stack norm -N1"), None),
    ("stack-chunks, gc/deep-stack norm -N1 GC time", DP + "stack-chunks.md",
     "-85.7 % [-86.2, -85.1]", "down",
     lambda: stack_chunks("programs", "GC_wall_seconds", name="deep-stack norm -N1"), None),
    ("stack-chunks, deep.scm 1M frames GC time", DP + "stack-chunks.md, CHANGES",
     "+59.1 % [+49.7, +69.1]", "up",
     lambda: stack_chunks("programs", "GC_wall_seconds", name="deep.scm (1M frames) -N1"), None),
    ("stack-chunks, deep.scm 1M frames elapsed", DP + "stack-chunks.md, stack-chunks/README",
     "-4.3 % [-8.7, +0.0]", "none",
     lambda: stack_chunks("programs", "total_wall_seconds", name="deep.scm (1M frames) -N1"),
     None),
    ("stack-chunks, binary-trees 17 -N1 elapsed", DP + "stack-chunks.md, stack-chunks/README",
     "+2.8 % [-1.0, +6.2]", "none",
     lambda: stack_chunks("programs", "total_wall_seconds", name="binary-trees 17 -N1"), None),
    ("stack-chunks, binary-trees 17 -N2 elapsed", DP + "stack-chunks.md, stack-chunks/README",
     "-0.9 % [-6.5, +4.1]", "none",
     lambda: stack_chunks("programs", "total_wall_seconds", name="binary-trees 17 -N2"), None),
    ("stack-chunks, 100 minor GCs at 1M frames, baseline / patch pause, 5 layouts (after "
     "issue 43's fix)", DP + "stack-chunks.md, stack-chunks/README", "1156x [1088, 1228]", "up",
     lambda: stack_chunks("gc_depth", "gc_total_ms", depth=1000000, path=CHUNKS5), None),
    ("stack-chunks, gc/deep-stack norm -N1 elapsed, 5 layouts", DP + "stack-chunks.md, "
     "stack-chunks/README", "-66.1 % [-66.7, -65.4]", "down",
     lambda: stack_chunks("programs", "total_wall_seconds", name="deep-stack norm -N1",
                          path=CHUNKS5), None),
    ("stack-chunks, deep.scm 1M frames GC time, 5 layouts", DP + "stack-chunks.md, "
     "stack-chunks/README", "+48.8 % [+46.3, +51.5]", "up",
     lambda: stack_chunks("programs", "GC_wall_seconds", name="deep.scm (1M frames) -N1",
                          path=CHUNKS5), None),
    ("stack-chunks, binary-trees 17 -N2 elapsed, 5 layouts", DP + "stack-chunks.md, "
     "stack-chunks/README", "-1.3 % [-2.2, -0.3]", "down",
     lambda: stack_chunks("programs", "total_wall_seconds", name="binary-trees 17 -N2",
                          path=CHUNKS5), None),
    ("stack-chunks, earlier single-binary figures (deep-stack 0.19-0.25x, RSS 1.9x)", DP +
     "stack-chunks.md, stack-chunks/README", "0.19-0.25x elapsed", "down", None,
     "one binary per build, loaded machine"),
]


# futex-barrier
def futex_a(n, what):
    d = load("futex-barrier/results/layouts-2026-11-26-N2/results.json.gz")
    part = d["parts"]["a"]
    if what == "elapsed":
        get = lambda r: literal(r["metrics"]).get("simple_alloc_elapsed")
    else:
        get = lambda r: literal(r["stats"]).get("stw_mean_us")
    s = [by_layout(part[f"{v} -N{n}"], get) for v in ("baseline", "patch")]
    return bs.ratio_ci(*s), design_of(s), 1


def futex_suite(what):
    d = load("futex-barrier/results/layouts-2026-11-26-N2/suite-runs.json.gz")
    get = stat("rtslab_stw_mean_seconds") if what == "stw_mean" else metric(what)
    ci, n = bench_geomean(d, "baseline -N2", "futex-barrier -N2", get)
    return ci, bench_design(d, ["baseline -N2", "futex-barrier -N2"]), n


def futex_suite5(what):
    d = load("futex-barrier/results/suite-layouts5/20261129-034513-norm/runs.json.gz")
    get = stat("rtslab_stw_mean_seconds") if what == "stw_mean" else metric(what)
    ci, n = bench_geomean(d, "baseline -N2", "futex-barrier -N2", get)
    return ci, bench_design(d, ["baseline -N2", "futex-barrier -N2"]), n


FIGURES += [
    ("futex-barrier, simple_alloc elapsed -N4", DP + "futex-barrier.md",
     "-33.0 % [-38.3, -27.1]", "down", lambda: futex_a(4, "elapsed"), None),
    ("futex-barrier, simple_alloc elapsed -N8", DP + "futex-barrier.md",
     "-36.1 % [-41.3, -30.5]", "down", lambda: futex_a(8, "elapsed"), None),
    ("futex-barrier, simple_alloc elapsed -N1", DP + "futex-barrier.md",
     "not moved", "none", lambda: futex_a(1, "elapsed"), None),
    ("futex-barrier, simple_alloc elapsed -N2", DP + "futex-barrier.md, futex-barrier/README",
     "-6.9 % [-17.8, +6.3]", "none", lambda: futex_a(2, "elapsed"), None),
    ("futex-barrier, simple_alloc STW mean -N2", DP + "futex-barrier.md, futex-barrier/README",
     "-37.4 % [-56.1, -8.7]", "down", lambda: futex_a(2, "stw"), None),
    ("futex-barrier, simple_alloc STW mean -N4", DP + "futex-barrier.md, futex-barrier/README",
     "-67.8 % [-71.1, -64.3]", "down", lambda: futex_a(4, "stw"), None),
    ("futex-barrier, simple_alloc STW mean -N8", DP + "futex-barrier.md, futex-barrier/README",
     "-71.3 % [-74.1, -68.0]", "down", lambda: futex_a(8, "stw"), None),
    ("futex-barrier, suite -N2 STW mean geomean", DP + "futex-barrier.md, futex-barrier/README",
     "-19.7 % [-28.5, -14.3]", "down", lambda: futex_suite("stw_mean"), None),
    ("futex-barrier, suite -N2 GC time geomean", DP + "futex-barrier.md, futex-barrier/README",
     "-15.9 % [-19.3, -12.6]", "down", lambda: futex_suite("gc"), None),
    ("futex-barrier, suite -N2 elapsed geomean", DP + "futex-barrier.md, futex-barrier/README",
     "-0.4 % [-3.0, +2.1]", "none", lambda: futex_suite("elapsed"), None),
    ("futex-barrier, suite -N2 STW mean geomean, 5 layouts (after issue 43's fix)",
     DP + "futex-barrier.md, futex-barrier/README", "-16.4 % [-27.1, -4.1]", "down",
     lambda: futex_suite5("stw_mean"), None),
    ("futex-barrier, suite -N2 GC time geomean, 5 layouts (after issue 43's fix)",
     DP + "futex-barrier.md, futex-barrier/README", "-7.6 % [-14.5, -0.2]", "down",
     lambda: futex_suite5("gc"), None),
    ("futex-barrier, suite -N2 elapsed geomean, 5 layouts (after issue 43's fix)",
     DP + "futex-barrier.md, futex-barrier/README", "-0.4 % [-3.1, +2.5]", "none",
     lambda: futex_suite5("elapsed"), None),
    ("futex-barrier, gc/deep-stack elapsed -N2", DP + "futex-barrier.md, patch-matrix/README",
     "-3.8 % [-12.0, +4.9]", "none",
     lambda: matrix_program("patch-matrix/results/layouts-2026-11-26/futex/runs.json.gz",
                            "baseline -N2", "futex-barrier -N2", "gc/deep-stack"), None),
    ("futex-barrier, gc/deep-stack context switches -N2", "futex-barrier/README, CHANGES",
     "-82.5 %", "down",
     lambda: matrix_program("patch-matrix/results/layouts-2026-11-26/futex/runs.json.gz",
                            "baseline -N2", "futex-barrier -N2", "gc/deep-stack", "ctxsw"), None),
    ("futex-barrier, gc/deep-stack context switches -N4", "futex-barrier/README, CHANGES",
     "-83.8 %", "down",
     lambda: matrix_program("patch-matrix/results/layouts-2026-11-26/futex/runs.json.gz",
                            "baseline -N4", "futex-barrier -N4", "gc/deep-stack", "ctxsw"), None),
    ("futex-barrier, earlier single-binary figures (processes 2.54x vs 4.73x; 7.7 vs 66.5 us "
     "sleeps)", DP + "futex-barrier.md", "2.54x against 4.73x", "down", None,
     "one binary per build, 7 runs (results/results.json)"),
    ("matrix: futex-barrier alone, -N4, suite elapsed geomean", "patch-matrix/README",
     "-5.5 % [-6.8, -4.1]", "down", lambda: matrix("alone", "futex-barrier", 4), None),
]


# idle-optout
IDLE5 = "idle-optout/results/layouts5/layouts5.json.gz"


def idle_optout(n, what, path="idle-optout/results/layouts-2026-11-26/layouts.json.gz"):
    d = load(path)
    get = lambda r: r["metrics"]["busy_one_" + what]
    s = {b: by_layout([r for r in d["runs"] if r["build"] == b and r["N"] == n], get)
         for b in ("baseline", "idle-optout")}
    return bs.ratio_ci(s["baseline"], s["idle-optout"]), design_of(list(s.values())), 1


def idle_wakeups(n):
    d = load("idle-optout/results/layouts-2026-11-26/layouts.json.gz")
    get = lambda r: float(r["stats"]["rtslab_idle_gc_wakeups"])
    s = {b: by_layout([r for r in d["runs"] if r["build"] == b and r["N"] == n], get)
         for b in ("baseline", "idle-optout")}
    return bs.ratio_ci(s["baseline"], s["idle-optout"]), design_of(list(s.values())), 1


FIGURES += [
    ("idle-optout, busy_one -N16 elapsed", DP + "idle-optout.md, idle-optout/README, CHANGES",
     "-82.9 % [-83.7, -82.0]", "down", lambda: idle_optout(16, "elapsed"), None),
    ("idle-optout, busy_one -N16 CPU", DP + "idle-optout.md, idle-optout/README, CHANGES",
     "-89.4 % [-89.9, -88.9]", "down", lambda: idle_optout(16, "cpu"), None),
    ("idle-optout, busy_one -N1 elapsed", DP + "idle-optout.md, idle-optout/README",
     "+2.6 % [-5.1, +10.7]", "none", lambda: idle_optout(1, "elapsed"), None),
    ("idle-optout, busy_one -N16 elapsed, 5 layouts (after issue 43's fix)",
     DP + "idle-optout.md, idle-optout/README", "-86.5 % [-86.9, -86.0]", "down",
     lambda: idle_optout(16, "elapsed", IDLE5), None),
    ("idle-optout, busy_one -N16 CPU, 5 layouts", DP + "idle-optout.md, idle-optout/README",
     "-92.0 % [-92.3, -91.8]", "down", lambda: idle_optout(16, "cpu", IDLE5), None),
    ("idle-optout, busy_one -N1 elapsed, 5 layouts", DP + "idle-optout.md, idle-optout/README",
     "-5.1 % [-16.2, +7.6]", "none", lambda: idle_optout(1, "elapsed", IDLE5), None),
    ("idle-optout, busy_one -N16 idle wake-ups for GC", DP + "idle-optout.md",
     "14 against 24,159", "down", lambda: idle_wakeups(16), None),
    ("idle-optout, earlier single-binary figures (-N16/-N1 1.01x vs 4.63x; suite CPU)", DP +
     "idle-optout.md", "1.01x against 4.63x", "down", None,
     "one binary per build, 9 runs; the suite one run each"),
    ("idle-optout, left_out in SmCap, gc/deep-stack -N1", DP + "idle-optout.md, "
     "patch-matrix/README", "-3.4 % [-12.1, +5.5]", "none",
     lambda: matrix_program("patch-matrix/results/layouts-2026-11-26/futex/runs.json.gz",
                            "idle-optout@HEAD -N1", "idle-optout -N1", "gc/deep-stack"), None),
    ("idle-optout, left_out in SmCap, gc/deep-stack -N2", DP + "idle-optout.md, "
     "patch-matrix/README", "-2.3 % [-11.3, +6.7]", "none",
     lambda: matrix_program("patch-matrix/results/layouts-2026-11-26/futex/runs.json.gz",
                            "idle-optout@HEAD -N2", "idle-optout -N2", "gc/deep-stack"), None),
    ("matrix: idle-optout alone, -N4, suite elapsed geomean", "patch-matrix/README",
     "-6.4 % [-7.5, -5.3]", "down", lambda: matrix("alone", "idle-optout", 4), None),
    ("matrix: idle-optout alone, -N2, suite GC time geomean", "patch-matrix/README",
     "-41.1 % [-43.7, -38.1]", "down", lambda: matrix("alone", "idle-optout", 2, "gc"), None),
]


# cpu-quota
def cpu_quota(quota, m):
    path = {"1.00": "cpu-quota/results/20261127-145952-quota-1.00/"
                    "20261127-150058-norm/runs.json.gz",
            "0.50": "cpu-quota/results/20261127-145952-quota-0.50/"
                    "20261127-150311-norm/runs.json.gz"}
    d = load(path[quota])
    ci, n = bench_geomean(d, "baseline -N", "cpu-quota -N", metric(m))
    return ci, bench_design(d, ["baseline -N", "cpu-quota -N"]), n


FIGURES += [
    ("cpu-quota, 1 CPU quota, elapsed geomean", DP + "cpu-quota.md, cpu-quota/README, CHANGES",
     "-7.9 % [-11.4, -4.1]", "down", lambda: cpu_quota("1.00", "elapsed"), None),
    ("cpu-quota, 1 CPU quota, GC time geomean", DP + "cpu-quota.md, cpu-quota/README, CHANGES",
     "-77.7 % [-79.5, -75.6]", "down", lambda: cpu_quota("1.00", "gc"), None),
    ("cpu-quota, 1 CPU quota, max GC pause geomean", DP + "cpu-quota.md, cpu-quota/README, "
     "CHANGES", "-72.5 % [-78.6, -65.9]", "down", lambda: cpu_quota("1.00", "maxpause"), None),
    ("cpu-quota, 0.5 CPU quota, elapsed geomean", DP + "cpu-quota.md, cpu-quota/README, "
     "CHANGES", "-12.7 % [-16.2, -9.1]", "down", lambda: cpu_quota("0.50", "elapsed"), None),
]


def said(ci):
    """What the interval says, whatever the design: "up" or "down" (it excludes 1.0, or the
    change is exact), "none" (it holds 1.0), "no interval"."""
    if ci.exact:
        return "none" if ci.ratio == 1.0 else ("up" if ci.ratio > 1 else "down")
    if ci.lo is None:
        return "no interval"
    if bs.moved(ci.lo, ci.hi):
        return "up" if ci.ratio > 1 else "down"
    return "none"


def rederive():
    rows = []
    for what, where, old, claim, how, published in FIGURES:
        if how is None:
            rows.append((what, where, old, published, "-",
                         "screen: one binary, no interval" if "one binary" in published
                         else "screen: no raw runs kept" if "no raw runs" in published
                         else "screen: no interval"))
            continue
        ci, (k, r), n = how()
        design = f"{k} layouts x {r:g} run{'s' if r != 1 else ''}" + \
            (", paired" if ci.paired else "") + (f", {n} programs" if n > 1 else "")
        x = "x" in old.split()[0]
        new = bs.fmt_ci(ci, (lambda v: f"{v:.3g}x" if v < 100 else f"{v:.0f}x") if x else None)
        got = said(ci)
        now = {"none": "now holds 0", "up": "now moved up", "down": "now moved down",
               "no interval": "no interval"}[got]
        if k < bs.CLAIM_LAYOUTS:
            verdict = f"screen, K = {k}: " + ("agrees" if got == claim else now)
        else:
            verdict = "survived" if got == claim else f"did not survive: {now}"
        rows.append((what, where, old, design, new, verdict))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    rows = rederive()
    if a.markdown:
        print("| figure | quoted in | published | design (from the runs) | re-derived | |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        for r in rows:
            print(f"{r[0]}\n    {r[2]}  ->  {r[4]}   [{r[3]}]  {r[5]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
