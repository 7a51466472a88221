#!/usr/bin/env python3
"""Tests of the statistics over layouts and runs (testsuite/benchstats.py), on made-up
samples whose answers are known. Deterministic: every fixture comes from random.Random
with a fixed seed.

    python3 testsuite/bench/test_stats.py

1. Layouts that differ while runs do not: an interval with the runs as replicates calls a
   difference that does not exist (excludes 1.0); the one over layouts does not; one
   layout a side has no interval. The variance components find the layouts' variance and
   the runs' tiny one.
2. Student's t against published quantiles; Welch's df at its bounds; the interval against
   its formula written out again (statistics.variance, the t, Welch's 1947 df).
3. Paired designs (both sides on the same seeds): the paired t (df K - 1) against its
   formula; alike layout effects cancel, opposed ones widen it; the same numbers on seeds
   of their own are independent.
4. Designs: K = 2 is a screen, K = 1 has no interval, a counter without noise is exact;
   design() and one_binary().
5. A known effect (other = base x 1.20): the ratio is 1.20 and the interval excludes 1.0.
6. clusters(): two modes split, uniform runs and a lone outlier do not.
7. geomean_ci(): exact ratios give a degenerate interval; programs slow on the same layouts
   are as uncertain as one, programs opposed cancel; programs on other seeds.
8. plan(): the cheapest plan reaches the target at the least cost (written out again);
   layouts are added where layouts vary, runs where runs do; K >= 3; programs alike on a
   layout do not average out.
9. fmt_ratio_ci(), fmt_ci().
How often the interval holds its 95 % is test_calibration.py's.
"""

import math
import os
import random
import statistics
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
    # were chosen so that an interval over runs taken as replicates excludes 1.0 (as it does
    # for many seeds): 40 runs are 8 draws of the layout, not 40.
    base = two_level(36, 8, 5, 0.1, 0.001)
    other = {j + 1000: v for j, v in two_level(136, 8, 5, 0.1, 0.001).items()}
    ci = bs.ratio_ci(base, other)
    r, lo, hi = ci
    _, flo, fhi = bs.ratio_ci(bs.one_binary(runs_only(base)), bs.one_binary(runs_only(other)))
    check("over layouts includes 1.0", not bs.moved(lo, hi), f"[{lo:.4f}, {hi:.4f}]")
    check("runs as replicates excludes 1.0", bs.moved(flo, fhi), f"[{flo:.4f}, {fhi:.4f}]")
    check("runs as replicates much narrower", (fhi - flo) < 0.6 * (hi - lo),
          f"runs {fhi - flo:.4f} vs layouts {hi - lo:.4f}")
    check("same point either way", close(r, bs.mean(other) / bs.mean(base)), f"{r}")
    check("deterministic", bs.ratio_ci(base, other) == (r, lo, hi), "twice differs")
    check("independent seeds: not paired, 8 layouts", not ci.paired and ci.k == 8, f"{vars(ci)}")
    for name, s in (("base", base), ("other", other)):
        c = bs.components(s)
        check(f"layout_var of {name} ~ 0.01", 0.003 <= c.layout_var <= 0.03, f"{c}")
        check(f"s_within of {name} tiny", c.s_within < 1e-5, f"{c}")
        check(f"k, r of {name}", c.k == 8 and c.r == 5.0, f"{c}")
    # one layout a side: no interval at all, whatever the runs say
    one = bs.ratio_ci(runs_only(base), runs_only(other))
    check("one layout: no interval", one.lo is None and one.hi is None and one.k == 1
          and bs.verdict(one) == "none" and not bs.moved(one.lo, one.hi), f"{one} {vars(one)}")


def t_interval(base, other):
    """The interval ratio_ci must give, written out again (statistics.variance, NormalDist
    nowhere): independent sides, Welch's 1947 df within [K_min - 1, K_b + K_o - 2]."""
    sides = []
    for s in (base, other):
        means = [sum(v) / len(v) for _, v in sorted(s.items())]
        m = sum(means) / len(means)
        sides.append((m, statistics.variance([x / m for x in means]) / len(means), len(means)))
    (mb, vb, kb), (mo, vo, ko) = sides
    df = (vb + vo) ** 2 / (vb ** 2 / (kb + 1) + vo ** 2 / (ko + 1)) - 2
    df = min(max(df, min(kb, ko) - 1), kb + ko - 2)
    half = bs.t_quantile(0.975, df) * math.sqrt(vb + vo)
    return mo / mb, mo / mb * math.exp(-half), mo / mb * math.exp(half), df


def test_t_interval():
    # Student's t against published quantiles (to the 6 digits tables give)
    for df, q in ((1, 12.706205), (2, 4.302653), (3, 3.182446), (4, 2.776445), (5, 2.570582),
                  (8, 2.306004), (10, 2.228139), (30, 2.042272), (120, 1.979930)):
        got = bs.t_quantile(0.975, df)
        check(f"t(0.975, {df})", abs(got - q) < 5e-6, f"{got!r} vs {q}")
    check("t(0.95, 7)", abs(bs.t_quantile(0.95, 7) - 1.894579) < 5e-6, f"{bs.t_quantile(0.95, 7)}")
    check("t symmetric", bs.t_quantile(0.025, 6.5) == -bs.t_quantile(0.975, 6.5), "")
    check("t(inf) is the normal", abs(bs.t_quantile(0.975, math.inf) - 1.959964) < 5e-6, "")
    for df in (1.0, 1.7, 2.5, 6.3, 41.0):
        q = bs.t_quantile(0.975, df)
        check(f"t_cdf inverts t_quantile at df {df}", abs(bs.t_cdf(q, df) - 0.975) < 1e-10,
              f"{bs.t_cdf(q, df)}")
    check("fractional df between its neighbours",
          bs.t_quantile(0.975, 3) > bs.t_quantile(0.975, 3.5) > bs.t_quantile(0.975, 4), "")
    # Welch's df: equal variances give sum(K - 1); one side's variance alone, its K - 1
    check("df, equal variances", bs._welch_df([(1.0, 5), (1.0, 5)]) == 8.0,
          f"{bs._welch_df([(1.0, 5), (1.0, 5)])}")
    check("df, one side dominates", abs(bs._welch_df([(1.0, 5), (1e-9, 5)]) - 4.0) < 1e-6,
          f"{bs._welch_df([(1.0, 5), (1e-9, 5)])}")
    check("df, no variance", bs._welch_df([(0.0, 3), (0.0, 3)]) is None, "")
    # the interval, against the formula written out again
    base = {1: [1.00, 1.02], 2: [1.10, 1.08], 3: [0.95, 0.97], 4: [1.05, 1.04]}
    other = {1001: [1.20, 1.18], 1002: [1.31, 1.33], 1003: [1.12, 1.15], 1004: [1.40, 1.38]}
    ci = bs.ratio_ci(base, other)
    want = t_interval(base, other)
    check("interval as the formula", all(close(a, b, 1e-9) for a, b in zip(ci, want[:3]))
          and close(ci.df, want[3], 1e-9), f"{tuple(ci)} df {ci.df} vs {want}")
    check("the runs add no df", ci.k == 4 and ci.df <= 6, f"{vars(ci)}")
    check("moved at K = 4", bs.verdict(ci) == "moved", f"{ci}")
    # a ratio's interval is the other way round when the sides are swapped
    inv = bs.ratio_ci(other, base)
    check("swapped sides invert it", close(inv.ratio, 1 / ci.ratio, 1e-12)
          and close(inv.lo, 1 / ci.hi, 1e-12) and close(inv.hi, 1 / ci.lo, 1e-12), f"{inv}")


def test_paired():
    # Two configurations on the same seeds whose layout effects are alike: other = base
    # x 1.03 on every layout, plus a little noise. Paired, the layout effect cancels; the
    # same numbers on seeds of their own are as wide as the layouts vary.
    rng = random.Random(9)
    lay = {j: rng.gauss(1.0, 0.1) for j in range(1, 6)}
    base = {j: [m * (1 + rng.gauss(0, 0.002))] for j, m in lay.items()}
    other = {j: [m * 1.03 * (1 + rng.gauss(0, 0.002))] for j, m in lay.items()}
    p = bs.ratio_ci(base, other)
    moved_apart = {j + 1000: v for j, v in other.items()}
    i = bs.ratio_ci(base, moved_apart)
    check("same seeds: paired, df K - 1", p.paired and p.df == 4 and p.k == 5, f"{vars(p)}")
    check("paired: the +3 % moved, narrow", bs.verdict(p) == "moved" and p.hi - p.lo < 0.02,
          f"{p}")
    check("other seeds: independent, as wide as the layouts",
          not i.paired and bs.verdict(i) == "not moved" and i.hi - i.lo > 0.1, f"{i}")
    check("paired and independent: one point", close(p.ratio, i.ratio), f"{p} {i}")
    # the paired interval written out: t(K - 1) on the per-seed relative differences
    mb = sum(v[0] for v in base.values()) / 5
    mo = sum(v[0] for v in other.values()) / 5
    d = [other[j][0] / mo - base[j][0] / mb for j in sorted(base)]
    half = bs.t_quantile(0.975, 4) * math.sqrt(statistics.variance(d) / 5)
    check("paired as the formula", close(p.lo, mo / mb * math.exp(-half), 1e-9)
          and close(p.hi, mo / mb * math.exp(half), 1e-9), f"{p}")
    # layout effects opposed (a shift that turns good alignment bad): paired is wider
    opp = {j: [(2.0 - m) * 1.03] for j, m in lay.items()}
    o = bs.ratio_ci(base, opp)
    check("opposed layout effects: paired, wide, not moved",
          o.paired and bs.verdict(o) == "not moved" and o.hi - o.lo > i.hi - i.lo, f"{o} {i}")


def test_designs():
    base = {1: [1.0, 1.01], 2: [1.1, 1.09]}
    other = {3: [1.3, 1.31], 4: [1.4, 1.38]}
    two = bs.ratio_ci(base, other)
    check("K = 2: an interval, a screen", two.lo is not None and two.k == 2
          and bs.verdict(two) == "screen", f"{two} {vars(two)}")
    check("K = 2 prints as a screen", bs.fmt_ci(two).endswith("screen only (2 layouts)"),
          bs.fmt_ci(two))
    three = bs.ratio_ci({**base, 5: [1.05]}, {**other, 6: [1.35]})
    check("K = 3: moved or not", three.k == 3 and bs.verdict(three) in ("moved", "not moved"),
          f"{three} {vars(three)}")
    # a counter equal in every run: exact, moved when the values differ
    gcs_a, gcs_b = {1: [40.0, 40.0], 2: [40.0]}, {3: [38.0], 4: [38.0, 38.0]}
    ex = bs.ratio_ci(gcs_a, gcs_b)
    check("exact counters", ex.exact and tuple(ex) == (0.95, 0.95, 0.95)
          and bs.verdict(ex) == "exact" and bs.fmt_ci(ex) == "-5.0% exact", f"{ex}")
    same = bs.ratio_ci(gcs_a, {3: [40.0], 4: [40.0]})
    check("exact and equal", same.exact and same.ratio == 1.0, f"{same}")
    check("one run a side is not exact", not bs.ratio_ci({1: [3.0]}, {2: [3.0]}).exact, "")
    # a side whose layout means agree but whose runs do not: its variance from its runs
    flat = bs.ratio_ci({1: [1.0, 1.2], 2: [1.2, 1.0], 3: [1.1, 1.1]},
                       {4: [1.5, 1.7], 5: [1.7, 1.5], 6: [1.6, 1.6]})
    check("flat layout means: not a degenerate interval", flat.hi - flat.lo > 0.05, f"{flat}")
    check("design(): one layout", "no interval" in bs.design(1, 5)
          and "too few to see modes" in bs.design(1, 5), bs.design(1, 5))
    check("design(): 2 layouts a screen", "screen" in bs.design(2, 3)
          and "modes" not in bs.design(2, 3), bs.design(2, 3))
    check("design(): 5 x 1 cannot see modes", bs.design(5, 1).startswith("5 runs per"),
          bs.design(5, 1))
    check("design(): 6 x 1 says nothing", bs.design(6, 1) == "", bs.design(6, 1))
    check("design(): 3 x 2 wants more layouts", "claim wants 5" in bs.design(3, 2),
          bs.design(3, 2))
    ob = bs.one_binary({0: [1.0, 2.0], 1: [3.0]})
    check("one_binary: a replicate per run", sorted(ob.values()) == [[1.0], [2.0], [3.0]]
          and all(k[0] == "run" for k in ob), f"{ob}")


def test_known_effect():
    base = two_level(5, 6, 4, 0.02, 0.01)
    other = {j + 1000: v for j, v in scaled(base, 1.2).items()}
    r, lo, hi = bs.ratio_ci(base, other)
    check("ratio 1.20", close(r, 1.2), f"{r!r}")
    check("interval around 1.20", lo < 1.2 < hi and hi - lo < 0.1, f"[{lo:.4f}, {hi:.4f}]")
    check("moved", bs.moved(lo, hi), f"[{lo:.4f}, {hi:.4f}]")
    check("moved bounds", not bs.moved(0.9, 1.0) and not bs.moved(1.0, 1.1)
          and bs.moved(1.01, 1.1) and bs.moved(0.8, 0.99) and not bs.moved(None, None),
          "1.0 at an end is not moved; no interval moves nothing")
    # the same samples on the same seeds: paired, and exactly 1.2 on every layout
    pr = bs.ratio_ci(base, scaled(base, 1.2))
    check("paired, every layout x 1.2", pr.paired and close(pr.lo, 1.2) and close(pr.hi, 1.2),
          f"{pr}")
    # a run of 0 (a GC time): the log of a mean of 0 has no interval, said clearly
    for name, call in (("ratio_ci", lambda: bs.ratio_ci({1: [0.0, 1.0]}, {1: [1.0, 1.0]})),
                       ("geomean_ci", lambda: bs.geomean_ci([({1: [1.0]}, {1: [0.0]})]))):
        try:
            call()
            check(f"{name} of a 0", False, "no error")
        except ValueError as e:
            check(f"{name} of a 0", "positive" in str(e), str(e))


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
    pairs = [(two_level(s, 5, 3, 0.01, 0.01),
              {j + 1000: v for j, v in scaled(two_level(s + 50, 5, 3, 0.01, 0.01), 1.1).items()})
             for s in range(3)]
    g, lo, hi = bs.geomean_ci(pairs)
    check("geomean interval", lo < g < hi and bs.moved(lo, hi) and abs(g - 1.1) < 0.03,
          f"{g:.4f} [{lo:.4f}, {hi:.4f}]")
    # The layout is the replicate across programs: 4 programs that all run slow on the same
    # layouts (one binary per layout slows all of them) give a geometric mean as uncertain as
    # one program, not half as; programs whose layout effects cancel give a narrow one.
    rng = random.Random(4)
    lay = [rng.gauss(0, 0.08) for _ in range(5)]
    olay = [rng.gauss(0, 0.08) for _ in range(5)]

    def prog(effects, sign, first):
        return {j + first: [math.exp(sign * e) * (1 + rng.gauss(0, 0.001))]
                for j, e in enumerate(effects)}
    alike = [(prog(lay, 1, 1), prog(olay, 1, 1001)) for _ in range(4)]
    one = bs.ratio_ci(*alike[0])
    g4 = bs.geomean_ci(alike)
    w1, w4 = math.log(one.hi / one.lo), math.log(g4.hi / g4.lo)
    check("programs alike on a layout: as wide as one", abs(w4 / w1 - 1) < 0.05,
          f"one {one} ({w1:.4f}), four {g4} ({w4:.4f})")
    check("alike: df from the layouts, not the programs", g4.df <= 8, f"{vars(g4)}")
    opposed = [(prog(lay, sgn, 1), prog(olay, sgn, 1001)) for sgn in (1, -1, 1, -1)]
    go = bs.geomean_ci(opposed)
    check("programs opposed on a layout: the layout effect cancels",
          math.log(go.hi / go.lo) < 0.2 * w1, f"{go} vs one program's {one}")
    # programs that lost different layouts: taken as independent, Welch's df over them all
    mixed = [({1: [1.0], 2: [1.1], 3: [0.9]}, {1001: [1.2], 1002: [1.3], 1003: [1.1]}),
             ({1: [2.0], 3: [2.2]}, {1001: [2.5], 1002: [2.4], 1003: [2.6]})]
    gm = bs.geomean_ci(mixed)
    check("programs on other seeds: independent", gm.lo is not None and not gm.paired
          and gm.k == 2, f"{gm} {vars(gm)}")


def pilot(means, run_offset):
    """A pilot of 3 layouts x 2 runs whose components are known: the runs are the layout
    mean +- run_offset, so s_within = 2 run_offset^2, s_between = variance of the means."""
    return {j: [m - run_offset, m + run_offset] for j, m in enumerate(means, 1)}


def cheapest(layout, runs, target, per_run=2.0, link=1.0):
    """plan()'s answer written out for one program whose two sides each have relative
    variances LAYOUT (of its layouts) and RUNS (of its runs): equal sides, so df 2K - 2."""
    best = None
    for k in range(3, 41):
        for r in range(1, 41):
            hw = bs.t_quantile(0.975, 2 * k - 2) * math.sqrt(2 * (layout / k + runs / (k * r)))
            cost = k * r * per_run + 2 * k * link
            if hw <= target and (best is None or (cost, hw) < (best[2], best[3])):
                best = (k, r, cost, hw)
    return best


def test_plan():
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
    # t(62) sqrt(2 x 0.010001 / 32) = 0.04998 <= 0.05 < t(60) sqrt(2 x 0.010001 / 31): 32 x 1
    check("layouts dominate: 32 x 1", (best["k"], best["r"]) == (32, 1), f"{best}")
    # per side: layout_var / K + s_within / (K R), layout_var = 0.01 - s_within / 2
    want = cheapest(0.01 - 1e-6, 2e-6, target)
    check("as written out", (best["k"], best["r"]) == want[:2]
          and close(best["halfwidth"], want[3], 1e-9), f"{best} vs {want}")
    check("cost", close(best["seconds"], 32 * 1 * 2.0 + 2 * 32 * 1.0), f"{best}")
    check("worst program", best["worst_program"][0] == "p"
          and close(best["worst_program"][1], best["halfwidth"]), f"{best}")
    want = cheapest(0.0, 0.02, target)
    check("runs dominate: as written out", (pr[0]["k"], pr[0]["r"]) == want[:2]
          and close(pr[0]["halfwidth"], want[3], 1e-9), f"{pr[0]} vs {want}")
    check("runs dominate: more runs than layouts", pr[0]["r"] > 1 and best["r"] == 1, f"{pr[0]}")
    check("no plan below 3 layouts", all(c["k"] >= 3 for c in pl + pr), f"{pl} {pr}")
    hws = [bs.predict(lay, k, 1)[0] for k in range(2, 41)]
    check("half-width falls as K grows", all(a > b for a, b in zip(hws, hws[1:])), f"{hws}")
    check("front: dearer is narrower", all(a["seconds"] <= b["seconds"] and
                                           a["halfwidth"] > b["halfwidth"]
                                           for a, b in zip(pl, pl[1:])), f"{pl}")
    check("unreachable target", bs.plan(lay, 0.001, secs) == [], "a plan for +-0.1 %")
    # two programs slow on the same layouts: the geomean as uncertain as one of them;
    # on opposite layouts: their layout effects cancel, only the runs' noise is left
    alike = {"a": lay["p"], "b": lay["p"]}
    opposite = {"a": lay["p"], "b": (pilot((1.1, 1.0, 0.9), 0.001), pilot((1.1, 1.0, 0.9), 0.001))}
    ga, per = bs.predict(alike, 10, 1)
    check("geomean of programs alike", abs(ga / per["a"] - 1) < 1e-3, f"{ga} {per}")
    go, per = bs.predict(opposite, 10, 1)
    t18 = bs.t_quantile(0.975, 18)
    check("geomean of programs opposed", close(go, t18 * math.sqrt(2 * 1e-6 / 10), 1e-9),
          f"{go} {per}")
    wide = (pilot((0.8, 1.0, 1.2), 0.001), pilot((0.8, 1.0, 1.2), 0.001))
    both = {"a": run["p"], "b": wide}
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
    check("fmt no interval", bs.fmt_ratio_ci(1.2, None, None) == "+20.0% (no interval)", "")
    ci = bs.CI(1.031, 1.010, 1.052, 5, 8.0)
    check("fmt_ci K = 5", bs.fmt_ci(ci) == "+3.1% [+1.0, +5.2]", bs.fmt_ci(ci))
    check("fmt_ci number", bs.fmt_ci(ci, lambda v: f"{v:.2f}x") == "1.03x [1.01x, 1.05x]",
          bs.fmt_ci(ci, lambda v: f"{v:.2f}x"))
    ci2 = bs.CI(1.031, 0.9, 1.2, 2, 1.5)
    check("fmt_ci screen", bs.fmt_ci(ci2) == "+3.1% [-10.0, +20.0] screen only (2 layouts)",
          bs.fmt_ci(ci2))
    ci1 = bs.CI(1.031, None, None, 1)
    check("fmt_ci one layout", bs.fmt_ci(ci1) == "+3.1% (1 layout: no interval, screen only)",
          bs.fmt_ci(ci1))
    check("CI unpacks as 3", tuple(ci) == (1.031, 1.010, 1.052) and len(ci) == 3, f"{ci}")


def main():
    test_basics()
    test_layouts_not_runs()
    test_t_interval()
    test_paired()
    test_designs()
    test_known_effect()
    test_clusters()
    test_geomean()
    test_plan()
    test_format()
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
