"""Statistics of benchmark runs over code layouts, after Kalibera and Jones, "Rigorous
benchmarking in reasonable time" (ISMM 2013); used by the runner (bench.py).

Two levels of random repetition
-------------------------------
Where code and data land is decided by the link (Note [Code layout as a factor] in
tools/layout.py), so each configuration is linked K ways ("layouts", seeds 1..K) and its runs
are spread over them. A sample -- the runs of one program in one configuration -- is
{layout_seed: [value, ...]}. Layouts are the outer level, runs within a layout the inner one.
A sample's mean is the mean of its layout means, each layout weighing the same: the
population we report on is "this configuration, linked any way", not "this binary".

components() estimates the variance at each level (K&J section 3): s_within, the pooled
variance of runs within a layout, and s_between, the variance of the layout means. The
latter also holds the runs' noise, s_within / r, so the layout's own share is
tau^2 = max(0, s_between - s_within / r). The variance of a mean over K layouts of R runs
is then tau^2 / K + s_within / (K R): more runs shrink only the second term. When layouts
dominate, only more layouts help.

Intervals: a hierarchical bootstrap
-----------------------------------
ratio_ci() gives mean(other) / mean(base) with a percentile bootstrap interval. Each
resample redraws, for base and other independently, K layouts with replacement and then,
within each drawn layout, its runs with replacement (K&J's resampling at every level). Runs
alone would be the wrong unit: 40 runs of 8 layouts are 8 draws of the layout, not 40, and
an interval over runs is too narrow by as much as layouts vary. Redrawing runs as well makes
the interval slightly conservative when runs are noisy; with few layouts the outer level is
a little optimistic (a bootstrap of K values undershoots their variance by (K-1)/K).
geomean_ci() does the same for the geometric mean of the programs' ratios; programs are
fixed, not redrawn: the suite is what we report on, not a sample of all programs.

A configuration has *moved* a figure when the interval excludes 1.0 (moved()): at the 95 %
level, a difference that layouts and runs alone would produce 1 time in 20 or less.

clusters() flags runs that disagree with themselves (two or three modes, e.g. a loop that
sits well or badly on a cache line by chance), which no mean summarises.

Planning an experiment
----------------------
plan() takes a short pilot (say 3 layouts x 2 runs per configuration), predicts each mean's
variance for K layouts and R runs by the formula above, the ratio's relative variance by the
delta method (var_b / mean_b^2 + var_o / mean_o^2 is the variance of its log), the log
geomean's as the sum over P programs / P^2, and a half-width z * sqrt(variance). It returns
the cheapest (K, R) reaching a target, with the costlier ones that buy a narrower interval.
Searching the grid applies K&J's rule: repeat at the level whose variance per unit of cost
(a link, or a run) is largest.
"""

import math
import random
import statistics
from dataclasses import dataclass

# clusters(): a gap splits two groups only if it is this many times wider (in log space)
# than either group's own range.
_SEPARATION = 3.0


def sample_of(runs, value):
    """A sample, {layout seed: [value, ...]}, of RUNS (dicts, as the runners keep them): VALUE
    is a key or a function of a run; a run whose value is None is left out, and a run with no
    "layout" (a build linked once, another system's binary) counts as layout 0."""
    get = value if callable(value) else (lambda r: r.get(value))
    out = {}
    for r in runs:
        v = get(r)
        if v is not None:
            out.setdefault(r.get("layout", 0), []).append(v)
    return out


def _groups(sample):
    """The runs of each layout, in seed order; layouts without runs (every run failed) are
    left out."""
    groups = [list(v) for _, v in sorted(sample.items()) if v]
    if not groups:
        raise ValueError("a sample without runs")
    return groups


def _positive(groups):
    """Ratios need every value positive: a resample could draw only zeros."""
    if min(min(g) for g in groups) <= 0:
        raise ValueError("a ratio's interval needs positive values (a run measured 0)")
    return groups


def layout_means(sample):
    """The mean of each layout's runs, in seed order (layouts without runs left out)."""
    return [math.fsum(g) / len(g) for g in _groups(sample)]


def mean(sample):
    """The mean of the layout means: each layout weighs the same, however many runs it has."""
    means = layout_means(sample)
    return math.fsum(means) / len(means)


@dataclass(frozen=True)
class Components:
    """Variance components of one sample (K&J section 3, two-level random effects)."""
    k: int              # layouts with at least one run
    r: float            # runs per layout (the mean count when unbalanced)
    mean: float
    s_between: float    # variance of the layout means (0.0 with one layout: unknown)
    s_within: float     # pooled variance of runs within a layout (0.0 with 1 run each)

    @property
    def layout_var(self):
        """tau^2: the layouts' own variance, once the runs' noise in their means is taken out."""
        return max(0.0, self.s_between - self.s_within / self.r)


def components(sample):
    """The sample's Components: what plan() predicts from, and what says which level varies."""
    groups = _groups(sample)
    means = [math.fsum(g) / len(g) for g in groups]
    k = len(means)
    r = sum(len(g) for g in groups) / k
    squares = math.fsum((x - m) ** 2 for g, m in zip(groups, means) for x in g)
    df = sum(len(g) - 1 for g in groups)
    return Components(k=k, r=r, mean=math.fsum(means) / k,
                      s_between=statistics.variance(means) if k > 1 else 0.0,
                      s_within=squares / df if df else 0.0)


def _redraw(rng, groups):
    """One hierarchical resample's mean: layouts with replacement, then runs within each."""
    total = 0.0
    for g in rng.choices(groups, k=len(groups)):
        total += sum(rng.choices(g, k=len(g))) / len(g)
    return total / len(groups)


def _percentile(xs, q):
    """The q-quantile (0..1) of sorted xs, interpolating between neighbours."""
    pos = q * (len(xs) - 1)
    i = int(pos)
    if i + 1 >= len(xs):
        return xs[-1]
    return xs[i] + (xs[i + 1] - xs[i]) * (pos - i)


def _interval(resampled, level):
    resampled.sort()
    tail = (1.0 - level) / 2
    return _percentile(resampled, tail), _percentile(resampled, 1.0 - tail)


def ratio_ci(base, other, level=0.95, resamples=2000, seed=1):
    """(ratio, lo, hi): mean(other) / mean(base) and its hierarchical bootstrap interval
    (the module's docstring). With one layout on a side its outer level has nothing to
    redraw and the bootstrap is over runs only: such an interval ignores layout variance and
    says how repeatable that binary is, not the configuration. Deterministic for a seed."""
    rng = random.Random(seed)
    gb, go = _positive(_groups(base)), _positive(_groups(other))
    ratios = [_redraw(rng, go) / _redraw(rng, gb) for _ in range(resamples)]
    return (mean(other) / mean(base),) + _interval(ratios, level)


def geomean_ci(pairs, level=0.95, resamples=2000, seed=1):
    """(geomean, lo, hi) of the programs' ratios, pairs being [(base, other)] a program
    each; each resample redraws every program's two samples as ratio_ci does. Programs are
    not redrawn: the suite is the population reported on."""
    if not pairs:
        raise ValueError("geomean_ci of no programs")
    rng = random.Random(seed)
    groups = [(_positive(_groups(b)), _positive(_groups(o))) for b, o in pairs]
    point = math.exp(math.fsum(math.log(mean(o) / mean(b)) for b, o in pairs) / len(pairs))
    gms = [math.exp(math.fsum(math.log(_redraw(rng, go) / _redraw(rng, gb))
                              for gb, go in groups) / len(groups))
           for _ in range(resamples)]
    return (point,) + _interval(gms, level)


def moved(lo, hi):
    """Whether the interval excludes 1.0: the configuration changed the figure."""
    return not lo <= 1.0 <= hi


def clusters(values, min_gap=1.25, min_frac=0.15):
    """None when the runs are unimodal, else their groups (each sorted, fastest first).

    The rule, in log space on the sorted values: every gap between neighbours with
    value[i+1] / value[i] >= min_gap is a candidate cut. A cut stands if the gap is more
    than 3 times the log range (max/min) of each group beside it and each holds at least
    max(2, min_frac * n) values; while one does not, the narrowest such gap is closed
    (its groups merged), and while more than 2 cuts stand, the narrowest one is. So a lone
    outlier is no mode, noisy runs are not split by their own gaps, and there are at most
    3 groups. Fewer than 6 values, or any not positive, give None."""
    n = len(values)
    xs = sorted(values)
    if n < 6 or xs[0] <= 0:
        return None
    logs = [math.log(x) for x in xs]
    least = max(2, math.ceil(min_frac * n))
    # a cut is the index where a group starts
    cuts = [i + 1 for i in range(n - 1) if xs[i + 1] / xs[i] >= min_gap]

    def gap(c):
        return logs[c] - logs[c - 1]

    def stands(j):
        bounds = [0] + cuts + [n]
        left, right = (bounds[j], bounds[j + 1]), (bounds[j + 1], bounds[j + 2])
        for a, b in (left, right):
            if b - a < least or gap(cuts[j]) <= _SEPARATION * (logs[b - 1] - logs[a]):
                return False
        return True

    while cuts:
        weak = [j for j in range(len(cuts)) if not stands(j)]
        if not weak and len(cuts) <= 2:
            break
        del cuts[min(weak or range(len(cuts)), key=lambda j: gap(cuts[j]))]
    if not cuts:
        return None
    bounds = [0] + cuts + [n]
    return [xs[a:b] for a, b in zip(bounds, bounds[1:])]


def _z(level):
    return statistics.NormalDist().inv_cdf((1.0 + level) / 2)


def _rel_var(c, k, r):
    """The predicted variance of a sample's mean for k layouts of r runs, relative to the
    mean squared (so that it adds up on the log scale)."""
    return (c.layout_var / k + c.s_within / (k * r)) / c.mean ** 2


def _predict(comps, k, r, z):
    per = {p: _rel_var(cb, k, r) + _rel_var(co, k, r) for p, (cb, co) in comps.items()}
    total = math.fsum(per.values()) / len(per) ** 2
    return z * math.sqrt(total), {p: z * math.sqrt(v) for p, v in per.items()}


def predict(pilots, k, r, level=0.95):
    """(geomean half-width, {program: half-width}) that plan() predicts for k layouts of r
    runs, pilots as plan()'s."""
    comps = {p: (components(b), components(o)) for p, (b, o) in pilots.items()}
    return _predict(comps, k, r, _z(level))


def plan(pilots, target, run_seconds, link_seconds=1.0, level=0.95, max_k=40, max_r=40):
    """The (k, r) choices that reach a geomean half-width of target (a fraction: 0.02 is
    +-2 %), cheapest first, each narrower than every cheaper one (the Pareto front of cost
    and half-width); [] if none within max_k x max_r. pilots: {program: (base, other)}
    samples of at least 2 layouts each (one layout cannot show layout variance);
    run_seconds: {program: (base seconds, other seconds)} a run. Cost: k r runs of each
    program in each configuration, plus k links of each configuration. k starts at 2: the
    experiment's own interval must be able to see layout variance."""
    comps = {}
    for name, (b, o) in pilots.items():
        comps[name] = (components(b), components(o))
        if min(c.k for c in comps[name]) < 2:
            raise ValueError(f"pilot of {name}: at least 2 layouts per configuration")
    per_run = math.fsum(sum(run_seconds[p]) for p in pilots)
    z = _z(level)
    choices = []
    for k in range(2, max_k + 1):
        for r in range(1, max_r + 1):
            hw, per = _predict(comps, k, r, z)
            if hw <= target:
                worst = max(per.items(), key=lambda kv: kv[1])
                choices.append({"k": k, "r": r, "halfwidth": hw, "worst_program": worst,
                                "seconds": k * r * per_run + 2 * k * link_seconds})
    choices.sort(key=lambda c: (c["seconds"], c["halfwidth"]))
    front = []
    for c in choices:
        if not front or c["halfwidth"] < front[-1]["halfwidth"]:
            front.append(c)
    return front


def fmt_ratio_ci(ratio, lo, hi):
    """A ratio and its interval as % changes, e.g. "+3.1% [+1.0, +5.2]"."""
    def pct(x):
        return f"{round((x - 1.0) * 100, 1) + 0.0:+.1f}"    # + 0.0: no "-0.0"
    return f"{pct(ratio)}% [{pct(lo)}, {pct(hi)}]"
