#!/usr/bin/env python3
"""Tests of the statistics over layouts and runs (testsuite/benchstats.py), on made-up
samples whose answers are known. Deterministic: every fixture comes from random.Random
with a fixed seed.

    python3 testsuite/bench/test_stats.py

1. Layouts that differ while runs do not: an interval over runs alone calls a difference
   that does not exist (excludes 1.0); the hierarchical one does not. The variance
   components find the layouts' variance and the runs' tiny one.
2. A known effect (other = base x 1.20): the ratio is 1.20 and the interval excludes 1.0.
3. Coverage: with no effect, the 95 % interval holds 1.0 in at least 88 % of 200
   simulated experiments.
4. clusters(): two modes split, uniform runs and a lone outlier do not.
5. geomean_ci() on exact ratios: their geometric mean, a degenerate interval.
6. plan(): the cheapest plan reaches the target at the least cost; layouts are added where
   layouts vary, runs where runs do.
7. fmt_ratio_ci().
"""

import math
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import benchstats as bs  # noqa: E402

passed = failed = 0


def check(name, cond, why=""):
    global passed, failed
    if cond:
        passed += 1
        print(f"ok {name}")
    else:
        failed += 1
        print(f"FAIL {name}: {why}")


def two_level(seed, k, r, layout_sd, run_sd, centre=1.0):
    """k layouts whose means are N(centre, layout_sd * centre), r runs each with relative
    noise N(0, run_sd)."""
    rng = random.Random(seed)
    sample = {}
    for j in range(1, k + 1):
        m = rng.gauss(centre, layout_sd * centre)
        sample[j] = [m * (1 + rng.gauss(0, run_sd)) for _ in range(r)]
    return sample


def runs_only(sample):
    """The sample as if all its runs came from one binary."""
    return {0: [x for v in sample.values() for x in v]}


def scaled(sample, f):
    return {j: [x * f for x in v] for j, v in sample.items()}


def close(a, b, tol=1e-12):
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))


def test_basics():
    s = {2: [5.0], 1: [1.0, 3.0], 3: []}
    check("layout_means", bs.layout_means(s) == [2.0, 5.0],
          f"seed order, empty layouts left out: {bs.layout_means(s)}")
    check("mean", bs.mean(s) == 3.5, f"mean of layout means: {bs.mean(s)}")
    c = bs.components(s)
    check("components exact", c.k == 2 and c.r == 1.5 and c.mean == 3.5 and c.s_between == 4.5
          and c.s_within == 2.0 and close(c.layout_var, 4.5 - 2.0 / 1.5), f"{c}")
    c1 = bs.components({0: [1.0, 2.0, 3.0]})
    check("components one layout", c1.k == 1 and c1.s_between == 0.0 and c1.s_within == 1.0
          and c1.layout_var == 0.0, f"{c1}")
    c2 = bs.components({1: [1.0], 2: [3.0]})
    check("components one run each", c2.s_within == 0.0 and c2.layout_var == 2.0, f"{c2}")
    runs = [{"layout": 2, "t": 1.5}, {"layout": 1, "t": 2.0}, {"layout": 2, "t": None},
            {"t": 4.0}, {"layout": 2, "t": 2.5}]
    check("sample_of by key", bs.sample_of(runs, "t") == {2: [1.5, 2.5], 1: [2.0], 0: [4.0]},
          f"runs without a value left out, no layout is layout 0: {bs.sample_of(runs, 't')}")
    check("sample_of by function", bs.sample_of(runs, lambda r: r["t"] and 2 * r["t"])
          == {2: [3.0, 5.0], 1: [4.0], 0: [8.0]}, "a function of the run")
    try:
        bs.mean({1: []})
        check("no runs is an error", False, "mean() of a sample without runs returned")
    except ValueError:
        check("no runs is an error", True)


def test_layouts_not_runs():
    # 8 layouts of N(1.0, 0.1), 5 runs each with 0.1 % noise; no real effect. The seeds
    # were chosen so that the runs-only interval excludes 1.0 (as it does for many seeds).
    base = two_level(36, 8, 5, 0.1, 0.001)
    other = two_level(136, 8, 5, 0.1, 0.001)
    r, lo, hi = bs.ratio_ci(base, other)
    _, flo, fhi = bs.ratio_ci(runs_only(base), runs_only(other))
    check("hierarchical includes 1.0", not bs.moved(lo, hi), f"[{lo:.4f}, {hi:.4f}]")
    check("runs-only excludes 1.0", bs.moved(flo, fhi), f"[{flo:.4f}, {fhi:.4f}]")
    check("runs-only much narrower", (fhi - flo) < 0.6 * (hi - lo),
          f"runs-only {fhi - flo:.4f} vs hierarchical {hi - lo:.4f}")
    check("same point either way", close(r, bs.mean(other) / bs.mean(base)), f"{r}")
    check("deterministic", bs.ratio_ci(base, other) == (r, lo, hi), "seed 1 twice differs")
    check("another seed, another interval", bs.ratio_ci(base, other, seed=2) != (r, lo, hi),
          "seed ignored")
    for name, s in (("base", base), ("other", other)):
        c = bs.components(s)
        check(f"layout_var of {name} ~ 0.01", 0.003 <= c.layout_var <= 0.03, f"{c}")
        check(f"s_within of {name} tiny", c.s_within < 1e-5, f"{c}")
        check(f"k, r of {name}", c.k == 8 and c.r == 5.0, f"{c}")


def test_known_effect():
    base = two_level(5, 6, 4, 0.02, 0.01)
    other = scaled(base, 1.2)
    r, lo, hi = bs.ratio_ci(base, other)
    check("ratio 1.20", close(r, 1.2), f"{r!r}")
    check("interval around 1.20", lo < 1.2 < hi and hi - lo < 0.1, f"[{lo:.4f}, {hi:.4f}]")
    check("moved", bs.moved(lo, hi), f"[{lo:.4f}, {hi:.4f}]")
    check("moved bounds", not bs.moved(0.9, 1.0) and not bs.moved(1.0, 1.1)
          and bs.moved(1.01, 1.1) and bs.moved(0.8, 0.99), "1.0 at an end is not moved")
    # one layout a side: a bootstrap over runs, still a sound interval of that binary
    r1, lo1, hi1 = bs.ratio_ci({0: base[1]}, {0: other[1]})
    check("one layout a side", close(r1, 1.2) and lo1 <= 1.2 <= hi1, f"{r1} [{lo1}, {hi1}]")
    # a run of 0 (a GC time): a resample could be all zeros, so no interval, said clearly
    for name, call in (("ratio_ci", lambda: bs.ratio_ci({1: [0.0, 1.0]}, {1: [1.0, 1.0]})),
                       ("geomean_ci", lambda: bs.geomean_ci([({1: [1.0]}, {1: [0.0]})]))):
        try:
            call()
            check(f"{name} of a 0", False, "no error")
        except ValueError as e:
            check(f"{name} of a 0", "positive" in str(e), str(e))


def test_coverage():
    rng = random.Random(7)
    hits = 0
    for e in range(200):
        base = two_level(rng.random(), 8, 3, 0.05, 0.02)
        other = two_level(rng.random(), 8, 3, 0.05, 0.02)
        _, lo, hi = bs.ratio_ci(base, other, resamples=400, seed=e)
        hits += lo <= 1.0 <= hi
    check("coverage >= 88 %", hits >= 176, f"{hits} of 200 intervals hold 1.0")


def test_clusters():
    rng = random.Random(3)
    bimodal = ([0.15 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(7)]
               + [0.43 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(5)])
    rng.shuffle(bimodal)
    got = bs.clusters(bimodal)
    check("bimodal splits 7 + 5", got is not None and [len(g) for g in got] == [7, 5]
          and max(got[0]) < 0.16 < min(got[1]), f"{got}")
    check("bimodal groups sorted", got is not None and all(g == sorted(g) for g in got),
          f"{got}")
    uniform = [1.0 + 0.3 * i / 11 for i in range(12)]
    check("uniform 1.0..1.3 unimodal", bs.clusters(uniform) is None, f"{bs.clusters(uniform)}")
    outlier = [1.0 * (1 + rng.uniform(-0.02, 0.02)) for _ in range(11)] + [3.0]
    check("one outlier is no mode", bs.clusters(outlier) is None, f"{bs.clusters(outlier)}")
    check("fewer than 6 values", bs.clusters([0.15, 0.15, 0.15, 0.43, 0.43]) is None,
          "5 values split")
    trimodal = [1.0, 1.01, 1.02, 1.0, 2.0, 2.02, 1.98, 2.01, 4.0, 4.04, 3.98, 4.01]
    got = bs.clusters(trimodal)
    check("three modes", got is not None and [len(g) for g in got] == [4, 4, 4], f"{got}")
    noisy = [math.exp(random.Random(11).gauss(0, 0.4)) for _ in range(12)]
    check("noisy runs are not split by their own gaps", bs.clusters(noisy) is None,
          f"{sorted(round(x, 3) for x in noisy)} -> {bs.clusters(noisy)}")


def test_geomean():
    pairs = []
    for i, f in enumerate((1.1, 1.0, 0.9)):
        base = {j: [2.0 + i] * 3 for j in (1, 2, 3)}
        pairs.append((base, scaled(base, f)))
    g, lo, hi = bs.geomean_ci(pairs)
    want = (1.1 * 1.0 * 0.9) ** (1 / 3)
    check("geomean of exact ratios", close(g, want), f"{g!r} vs {want!r}")
    check("degenerate interval", close(lo, want) and close(hi, want), f"[{lo!r}, {hi!r}]")
    # with noise: the interval holds the point, and programs with an effect move it
    pairs = [(two_level(s, 5, 3, 0.01, 0.01), scaled(two_level(s + 50, 5, 3, 0.01, 0.01), 1.1))
             for s in range(3)]
    g, lo, hi = bs.geomean_ci(pairs)
    check("geomean interval", lo < g < hi and bs.moved(lo, hi) and abs(g - 1.1) < 0.03,
          f"{g:.4f} [{lo:.4f}, {hi:.4f}]")


def pilot(means, run_offset):
    """A pilot of 3 layouts x 2 runs whose components are known: the runs are the layout
    mean +- run_offset, so s_within = 2 run_offset^2, s_between = variance of the means."""
    return {j: [m - run_offset, m + run_offset] for j, m in enumerate(means, 1)}


def test_plan():
    z2 = 1.959963984540054 ** 2
    # layouts dominate: s_between 0.01, s_within 2e-6 on each side
    lay = {"p": (pilot((0.9, 1.0, 1.1), 0.001), pilot((0.9, 1.0, 1.1), 0.001))}
    # runs dominate: s_between 1e-4, s_within 0.02, so layout_var 0
    run = {"p": (pilot((0.99, 1.0, 1.01), 0.1), pilot((0.99, 1.0, 1.01), 0.1))}
    secs = {"p": (1.0, 1.0)}
    target = 0.05
    pl, pr = bs.plan(lay, target, secs), bs.plan(run, target, secs)
    check("plans found", pl and pr, f"{pl} {pr}")
    if not (pl and pr):
        return
    best = pl[0]
    check("half-width within target", all(c["halfwidth"] <= target for c in pl + pr), f"{pl}")
    # (2 x 0.01 / K) z^2 <= 0.05^2 needs K >= 30.7: 31 layouts of 1 run
    check("layouts dominate: 31 x 1", (best["k"], best["r"]) == (31, 1), f"{best}")
    # per side: layout_var / K + s_within / (K R), layout_var = 0.01 - s_within / 2
    want = z2 * 2 * (0.01 - 1e-6 + 2e-6) / 31
    check("predicted half-width", close(best["halfwidth"] ** 2, want), f"{best} vs {want}")
    check("cost", close(best["seconds"], 31 * 1 * 2.0 + 2 * 31 * 1.0), f"{best}")
    check("worst program", best["worst_program"][0] == "p"
          and close(best["worst_program"][1], best["halfwidth"]), f"{best}")
    # (2 x 0.02 / KR) z^2 <= 0.05^2 needs KR >= 61.5: cheapest 2 layouts x 31 runs
    check("runs dominate: 2 x 31", (pr[0]["k"], pr[0]["r"]) == (2, 31), f"{pr[0]}")
    check("more layouts where layouts vary", best["k"] > pr[0]["k"], f"{best} vs {pr[0]}")
    hws = [bs.predict(lay, k, 1)[0] for k in range(2, 41)]
    check("half-width falls as K grows", all(a > b for a, b in zip(hws, hws[1:])), f"{hws}")
    check("front: dearer is narrower", all(a["seconds"] <= b["seconds"] and
                                           a["halfwidth"] > b["halfwidth"]
                                           for a, b in zip(pl, pl[1:])), f"{pl}")
    check("unreachable target", bs.plan(lay, 0.001, secs) == [], "a plan for +-0.1 %")
    # two programs: the geomean's variance is the sum / P^2
    both = {"a": lay["p"], "b": run["p"]}
    g, per = bs.predict(both, 10, 5)
    check("geomean of two programs", close(g ** 2, (per["a"] ** 2 + per["b"] ** 2) / 4),
          f"{g} {per}")
    pb = bs.plan(both, target, {"a": (1.0, 1.0), "b": (1.0, 1.0)})
    worst = pb[0]["worst_program"]
    _, per = bs.predict(both, pb[0]["k"], pb[0]["r"])
    check("worst program named", worst == ("b", per["b"]) and per["b"] > per["a"],
          f"{pb[0]} {per}")
    try:
        bs.plan({"p": ({0: [1.0, 1.1]}, {0: [1.0, 1.1]})}, target, secs)
        check("one-layout pilot is an error", False, "plan() accepted it")
    except ValueError:
        check("one-layout pilot is an error", True)


def test_format():
    check("fmt +", bs.fmt_ratio_ci(1.031, 1.010, 1.052) == "+3.1% [+1.0, +5.2]",
          bs.fmt_ratio_ci(1.031, 1.010, 1.052))
    check("fmt -", bs.fmt_ratio_ci(0.5, 0.45, 0.9996) == "-50.0% [-55.0, +0.0]",
          bs.fmt_ratio_ci(0.5, 0.45, 0.9996))


def main():
    test_basics()
    test_layouts_not_runs()
    test_known_effect()
    test_coverage()
    test_clusters()
    test_geomean()
    test_plan()
    test_format()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
