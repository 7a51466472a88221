"""Statistics of benchmark runs over code layouts, after Kalibera and Jones, "Rigorous
benchmarking in reasonable time" (ISMM 2013); used by the runners (bench.py,
bench_patches.py, experiments/*/run.py).

Two levels of random repetition
-------------------------------
Where code and data land is decided by the link (Note [Code layout as a factor] in
tools/layout.py), so each configuration is linked K ways ("layouts", one seed each) and its
runs are spread over them. A sample -- the runs of one program in one configuration -- is
{layout_seed: [value, ...]}. Layouts are the outer level, runs within a layout the inner one.
A sample's mean is the mean of its layout means, each layout weighing the same: the
population we report on is "this configuration, linked any way", not "this binary".

components() estimates the variance at each level (K&J section 3): s_within, the pooled
variance of runs within a layout, and s_between, the variance of the layout means. The
latter also holds the runs' noise, s_within / r, so the layout's own share is
tau^2 = max(0, s_between - s_within / r). The variance of a mean over K layouts of R runs
is then tau^2 / K + s_within / (K R): more runs shrink only the second term. When layouts
dominate, only more layouts help.

Intervals: t over the layout means
----------------------------------
ratio_ci() gives mean(other) / mean(base) and its 95 % interval. The layouts are the
independent replicates, so the interval is computed from the layout means alone, as K&J's
formula for a two-level experiment does: the variance of a mean of K layout means is
estimated by s_between / K, which holds both levels (a layout mean carries its runs'
noise), whatever R is; the runs are not replicates of the configuration and add no degrees
of freedom. On the log scale, where a ratio is a difference, the delta method gives each
side's relative variance v = s_between / (K mean^2) (the variance of the log of its mean to
first order), and the interval is

    log(mean_o / mean_b) +- t(0.975, df) sqrt(v_b + v_o),

exponentiated: a ratio's interval, asymmetric around it as % changes are. df:

  * Independent sides (the layouts of the two configurations were drawn apart: bench.py
    links seeds 1..K for its first variant, 1001..1000+K for the second): the sides'
    variances need not be equal (a patch can make a program more sensitive to where its
    code lands), so df is Welch's approximation for a sum of two variance estimates,
    bounded by its exact cases: K_min - 1 when one side's variance dominates, K_b + K_o - 2
    when they are equal. Of its two forms, Welch's 1947 one,
    (v_b + v_o)^2 / (v_b^2 / (K_b + 1) + v_o^2 / (K_o + 1)) - 2, and not the
    Welch-Satterthwaite form with K - 1 in the denominators, which plugs estimated
    variances in where true ones belong and, with the 1-2 df a side that K = 2-3 layouts
    give, comes out too small: a null effect "moved" 2.2 % of the time at K = 2 (_welch_df()).
  * Paired sides (both samples have the same layout seeds: two configurations of one
    variant run the same K binaries, and the experiments' runners, tools/layout.spread,
    link seeds 1..K of every build): the interval is a paired t on the per-seed
    differences d_j = m_o,j / mean_o - m_b,j / mean_b (the per-seed log differences to first
    order), variance var(d) / K, df = K - 1. A shared seed is not an unrelated layout of
    the other binary: tools/layout.py gives both the same object order and the same pads,
    so every object linked before the first one whose size differs sits at the same
    address in both, and the rest are shifted by the same amount under every seed. The
    two sides' layout effects are therefore related, most often alike (identical
    placement), but for a given shift they can be opposed (a loop at offset a of its cache
    line in one binary, a + delta in the other). Treating them as independent would be
    wrong either way, too wide when alike and too narrow when opposed; the seeds are
    independent draws of *pairs*, so the paired t is right whatever the relation. Its
    price, df = K - 1 instead of up to 2K - 2, is why the runners default to K >= 5.

Why not the percentile bootstrap this module used before: its outer level redrew K layout
means with replacement, and with K = 2-3 those resamples cannot show the spread of the
population (at K = 2 and one run the interval is [min_o / max_b, max_o / min_b], which
excludes 1.0 a third of the time when nothing changed). In the calibration's simulated null
comparisons (test_calibration.py) it called a difference "moved" 31-33 % of the time at 2
layouts x 1 run, 19-20 % at 3, 12 % at 5 and 8-10 % at 8 when layouts dominate, against a
nominal 5 %. The t interval holds its 95 % at every K >= 2 when the layout means are
roughly normal: 3.3-6.6 % false "moved" over every design of K = 2, 3, 5, 8 layouts x 1, 3
runs, layout variance dominant or negligible, one side three times as sensitive to
layout, paired designs, and the geometric mean. What no interval over K values can do is
see a layout effect that one layout in ten shows (a hot loop across a cache line): with
few layouts it is missed or over-weighted. So:

  * K = 1 on a side: no interval at all (lo, hi None): runs of one binary say how
    repeatable that binary is, not the configuration. (Another system's binary, which is
    itself what we report on, is the exception: one_binary() makes its runs the replicates.)
  * K < MIN_LAYOUTS (3): the interval is computed, and is valid, but with df = 1-2 it is
    too wide to be worth a claim and too dependent on normality; the runners print such a
    figure as "screen only" and call nothing moved or not moved (verdict()).
  * CLAIM_LAYOUTS (5) is the design the runners default to for a claim.

Zero variance: when every run of both samples gave one value each (a deterministic counter:
allocations, GCs), the ratio is exact and so is the interval (lo = hi = ratio; verdict
"exact"). When a side's layout means agree exactly but its runs do not (a counter that
takes few values), its variance is taken from the runs, s_within / (K R), rather than 0.

Geometric means
---------------
geomean_ci() gives the geometric mean of the programs' ratios, exp(mean_p log r_p), and its
interval by the same rule, with the layout again the replicate. Every program of a suite runs
on the same K binaries of a configuration, so one layout that puts a hot loop badly slows
every program that runs it: the programs' layout effects are correlated, and an interval
that added up P independent programs' variances (with P times the degrees of freedom) would
be too narrow exactly when it matters. Instead, per side and layout seed j, the programs'
relative deviations are averaged, D_j = mean_p m_p,j / mean_p; log of the geometric mean of
the side's means is, to first order, mean_j D_j plus a constant, so its variance is
var(D) / K with K - 1 degrees of freedom, whatever the correlation between programs; then
the sides combine as for one program (Welch's df, or paired differences of D).
With one program it is ratio_ci(). Programs are fixed, not sampled: the suite is what we
report on. Where the programs were not all measured on the same seeds (a program lost a
layout), the programs are taken as independent instead: each program's v summed / P^2, and
Welch's df over all the programs' sides.

A configuration has *moved* a figure when the interval excludes 1.0 (moved()): at the 95 %
level, a difference that layouts and runs alone would produce 1 time in 20 or less.

clusters() flags runs that disagree with themselves (two or three modes, e.g. a loop that
sits well or badly on a cache line by chance), which no mean summarises. It needs
MIN_MODE_RUNS (6) runs: fewer cannot show two groups of at least two runs each with a gap
between them, so a design of fewer runs is too small to see modes (say so).

Planning an experiment
----------------------
plan() takes a short pilot (say 3 layouts x 2 runs per configuration), predicts each mean's
variance for K layouts and R runs by the formula above, the log ratio's as the two sides'
relative variances added, and the log geomean's from the per-layout averages D_j of the
programs (their layout variance, with the correlation between programs in it, over K, and
the programs' run noise over K R P^2), and a half-width t(0.975, df) * sqrt(variance), df
predicted as the interval's (_welch_df()) for K layouts a side. It returns the cheapest (K, R)
reaching a target, with the costlier ones that buy a narrower interval; K starts at
MIN_LAYOUTS. Searching the grid applies K&J's rule: repeat at the level whose variance per
unit of cost (a link, or a run) is largest.
"""

import math
import statistics
from dataclasses import dataclass

# clusters(): a gap splits two groups only if it is this many times wider (in log space)
# than either group's own range.
_SEPARATION = 3.0
# Below this many layouts on a side the runners call nothing moved: a screen (verdict()).
MIN_LAYOUTS = 3
# The layouts a claim is made from: the default of make bench-patches and the experiments.
CLAIM_LAYOUTS = 5
# clusters() sees no modes in fewer runs.
MIN_MODE_RUNS = 6


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


def one_binary(sample):
    """SAMPLE, the runs of one fixed binary that is itself what is reported on (another
    system's installed program: Lua, Guile, nginx; not a configuration of ours, whose
    layouts are a factor), with each run made a replicate of its own, so that its side of
    an interval is over its runs. The keys, ("run", i), pair with no layout seed."""
    runs = [x for _, v in sorted(sample.items()) for x in v]
    return {("run", i): [x] for i, x in enumerate(runs)}


def _var(xs):
    """The sample variance of xs (n - 1), two-pass in floats (statistics.variance works in
    fractions: exact, and 20 times slower)."""
    m = math.fsum(xs) / len(xs)
    return math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def _groups(sample):
    """The runs of each layout, in seed order; layouts without runs (every run failed) are
    left out."""
    groups = [list(v) for _, v in sorted(sample.items()) if v]
    if not groups:
        raise ValueError("a sample without runs")
    return groups


def _seeded(sample):
    """{seed: [runs]} of the layouts that have runs."""
    return {s: list(v) for s, v in sample.items() if v}


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
                      s_between=_var(means) if k > 1 else 0.0,
                      s_within=squares / df if df else 0.0)


# --- Student's t, written out (Python's standard library has only the normal) --------------

def _betacf(a, b, x):
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with df > 0 degrees of freedom (df may be fractional)."""
    if math.isinf(df):
        return statistics.NormalDist().cdf(t)
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def _t_pdf(t, df):
    return math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)
                    - 0.5 * math.log(df * math.pi) - (df + 1) / 2 * math.log1p(t * t / df))


_T_CACHE = {}


def t_quantile(p, df):
    """The p-quantile of Student's t with df >= 1 degrees of freedom (fractional df, as
    Welch's, allowed; inf: the normal). Exact for df 1 and 2; otherwise
    Newton's method on t_cdf from the Cornish-Fisher expansion (Abramowitz and Stegun
    26.7.5), kept inside [0, the df = 1 quantile], to 1e-12."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"t_quantile: p = {p} is not in (0, 1)")
    if df < 1.0:
        raise ValueError(f"t_quantile: df = {df} < 1")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    if p == 0.5:
        return 0.0
    key = (p, df)
    hit = _T_CACHE.get(key)
    if hit is not None:
        return hit
    z = statistics.NormalDist().inv_cdf(p)
    if math.isinf(df):
        q = z
    elif df == 1.0:
        q = math.tan(math.pi * (p - 0.5))
    elif df == 2.0:
        q = (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    else:
        z2 = z * z
        g1 = (z2 + 1) * z / 4
        g2 = ((5 * z2 + 16) * z2 + 3) * z / 96
        g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384
        g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160
        lo, hi = 0.0, math.tan(math.pi * (p - 0.5))     # quantiles fall as df grows
        q = z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4
        if not lo < q < hi:
            q = (lo + hi) / 2
        for _ in range(100):
            f = t_cdf(q, df) - p
            if f > 0:
                hi = q
            else:
                lo = q
            step = f / _t_pdf(q, df)
            if abs(step) <= 1e-12 * q:
                q -= step
                break
            q -= step
            if not lo < q < hi:
                q = (lo + hi) / 2
    if len(_T_CACHE) > 4096:
        _T_CACHE.clear()
    _T_CACHE[key] = q
    return q


def _welch_df(parts):
    """The degrees of freedom of a sum of independent variance estimates, PARTS
    [(variance, layouts)]: Welch's (1947) df = (sum v)^2 / sum(v^2 / (K + 1)) - 2, kept
    between the two cases that are exact, min(K) - 1 (one part's variance dominates) and
    sum(K - 1) (the parts' variances are equal). Satterthwaite's (and Welch's 1938) form,
    sum(v^2 / (K - 1)) below, puts estimated variances where true ones belong, and with the
    1-2 df a side of K = 2-3 layouts it comes out too small: its interval called a null
    effect "moved" 2.2 % of the time at K = 2 and 3.4 % at K = 3 instead of 5 %; Welch's
    1947 form corrects that bias (E s^4 = sigma^4 (K + 1) / (K - 1) for a variance on K - 1
    df): 3.4 % and 4.1 %, and no more than 6.4 % with one side 10 times the other's
    variance at K >= 3 (testsuite/bench/README.md, "The method"). Parts with no variance
    count for nothing; None if none has any."""
    live = [(v, k) for v, k in parts if v > 0]
    if not live:
        return None
    den = math.fsum(v * v / (k + 1) for v, k in live)
    df = math.fsum(v for v, _ in live) ** 2 / den - 2
    return min(max(df, min(k for _, k in live) - 1.0), float(sum(k - 1 for _, k in live)))


# --- intervals -------------------------------------------------------------------------------

class CI(tuple):
    """An interval: unpacks as (ratio, lo, hi); lo and hi are None when there is none (a side
    of one layout). Also: k, the fewest layouts on a side (or the pairs); df, the t's degrees
    of freedom (None without an interval, inf when exact); paired; exact, every run of each
    side the same value."""

    def __new__(cls, ratio, lo, hi, k, df=None, paired=False, exact=False):
        self = tuple.__new__(cls, (ratio, lo, hi))
        self.k, self.df, self.paired, self.exact = k, df, paired, exact
        return self

    @property
    def ratio(self):
        return self[0]

    @property
    def lo(self):
        return self[1]

    @property
    def hi(self):
        return self[2]


class _Side:
    """One sample, ready for the intervals: its layout means by seed and their mean."""
    __slots__ = ("sample", "means", "mean", "constant")

    def __init__(self, sample):
        means, lo, hi, n = {}, math.inf, -math.inf, 0
        for s, v in sample.items():
            if v:
                lo, hi, n = min(lo, min(v)), max(hi, max(v)), n + len(v)
                means[s] = math.fsum(v) / len(v)
        if not means:
            raise ValueError("a sample without runs")
        if lo <= 0:
            raise ValueError("a ratio's interval needs positive values (a run measured 0)")
        self.sample, self.means = sample, means
        self.mean = math.fsum(means.values()) / len(means)
        self.constant = n > 1 and lo == hi          # at least two runs, all of one value

    def devs(self, seeds):
        """Each seed's layout mean relative to the sample's mean."""
        return [self.means[s] / self.mean for s in seeds]


def _side_var(sides):
    """(variance of the log of the side's geometric mean of means, its df, K) for the
    programs' SIDES (_Side) of one configuration measured on the same seeds: var(D) / K
    with K - 1 df, D_j the programs' mean relative deviation at seed j. A side whose layout
    means agree exactly takes its variance from its runs instead (module docstring)."""
    seeds = sorted(sides[0].means)
    k, p = len(seeds), len(sides)
    if k < 2:
        return 0.0, 0, k
    if p == 1:
        d = sides[0].devs(seeds)
    else:
        d = [math.fsum(col) / p for col in zip(*(s.devs(seeds) for s in sides))]
    var = _var(d) / k
    if var == 0.0:
        var = math.fsum(_runs_var(s.sample) for s in sides) / p ** 2
    return var, k - 1, k


def _runs_var(sample):
    """The relative variance of a sample's mean from its runs alone: s_within / (K R mean^2)."""
    c = components(sample)
    return c.s_within / (c.k * c.r * c.mean ** 2) if c.mean else 0.0


def _paired_var(pairs, seeds):
    """(variance, df) of the paired differences of the programs' mean relative deviations,
    PAIRS [(_Side, _Side)] on the same SEEDS."""
    k, p = len(seeds), len(pairs)
    diffs = [0.0] * k
    for b, o in pairs:
        for j, (x, y) in enumerate(zip(b.devs(seeds), o.devs(seeds))):
            diffs[j] += (y - x) / p
    return _var(diffs) / k, k - 1


def _interval(pairs, level):
    """The CI of exp(mean_p log(mean(o_p) / mean(b_p))) over PAIRS [(base, other)]."""
    pairs = [(_Side(b), _Side(o)) for b, o in pairs]
    point = math.exp(math.fsum(math.log(o.mean / b.mean) for b, o in pairs) / len(pairs))
    kmin = min(min(len(b.means), len(o.means)) for b, o in pairs)
    if all(b.constant and o.constant for b, o in pairs):
        return CI(point, point, point, kmin, math.inf, exact=True)
    if kmin < 2:
        return CI(point, None, None, kmin)
    bseeds = {frozenset(b.means) for b, _ in pairs}
    oseeds = {frozenset(o.means) for _, o in pairs}
    same = len(bseeds) == 1 and len(oseeds) == 1
    paired = same and bseeds == oseeds
    if paired:                                  # the same seeds both sides: paired t
        var, df = _paired_var(pairs, sorted(next(iter(bseeds))))
    elif same:                                  # independent sides: Welch's df
        vb, _, kb = _side_var([b for b, _ in pairs])
        vo, _, ko = _side_var([o for _, o in pairs])
        var, df = vb + vo, _welch_df([(vb, kb), (vo, ko)])
    else:                                       # programs on different seeds: independent
        parts = []
        for b, o in pairs:
            for s in (b, o):
                v, _, k = _side_var([s])
                parts.append((v / len(pairs) ** 2, k))
        var, df = math.fsum(v for v, _ in parts), _welch_df(parts)
    if var <= 0.0 or df is None:
        return CI(point, point, point, kmin, math.inf, paired)
    half = t_quantile((1.0 + level) / 2, max(1.0, df)) * math.sqrt(var)
    return CI(point, point * math.exp(-half), point * math.exp(half), kmin, df, paired)


def ratio_ci(base, other, level=0.95):
    """CI (ratio, lo, hi): mean(other) / mean(base) and its interval over layouts and runs
    (the module's docstring: t on the layout means, Welch's df for independent
    sides, a paired t when both have the same seeds). lo, hi are None when a side has one
    layout: runs of one binary say nothing of the configuration. Raises ValueError on a
    value <= 0 or an empty sample."""
    return _interval([(base, other)], level)


def geomean_ci(pairs, level=0.95):
    """CI (geomean, lo, hi) of the programs' ratios, pairs being [(base, other)] a program
    each; the layout is the replicate across programs (module docstring). Programs are not
    redrawn: the suite is the population reported on."""
    if not pairs:
        raise ValueError("geomean_ci of no programs")
    return _interval(list(pairs), level)


def moved(lo, hi):
    """Whether the interval excludes 1.0: the configuration changed the figure. No interval
    (lo None) has moved nothing."""
    if lo is None or hi is None:
        return False
    return not lo <= 1.0 <= hi


def verdict(ci):
    """What a runner may say of CI: "exact" (no noise: every run of each side equal),
    "none" (a side of one layout: no interval), "screen" (fewer than MIN_LAYOUTS layouts:
    neither moved nor not), else "moved" or "not moved"."""
    if ci.exact:
        return "exact"
    if ci.lo is None:
        return "none"
    if ci.k < MIN_LAYOUTS:
        return "screen"
    return "moved" if moved(ci.lo, ci.hi) else "not moved"


def design(k, r):
    """How far a design of K layouts x R runs per configuration can be read, in words."""
    notes = []
    if k < 2:
        notes.append("one layout: no interval, a screen")
    elif k < MIN_LAYOUTS:
        notes.append(f"{k} layouts: a screen, nothing called moved")
    elif k < CLAIM_LAYOUTS:
        notes.append(f"{k} layouts: intervals hold, but a claim wants {CLAIM_LAYOUTS} or more")
    n = round(max(k, 1) * r)
    if n < MIN_MODE_RUNS:
        notes.append(f"{n} runs per configuration: too few to see modes "
                     f"(clusters() needs {MIN_MODE_RUNS})")
    return "; ".join(notes)


def clusters(values, min_gap=1.25, min_frac=0.15):
    """None when the runs are unimodal, else their groups (each sorted, fastest first).

    The rule, in log space on the sorted values: every gap between neighbours with
    value[i+1] / value[i] >= min_gap is a candidate cut. A cut stands if the gap is more
    than 3 times the log range (max/min) of each group beside it and each holds at least
    max(2, min_frac * n) values; while one does not, the narrowest such gap is closed
    (its groups merged), and while more than 2 cuts stand, the narrowest one is. So a lone
    outlier is no mode, noisy runs are not split by their own gaps, and there are at most
    3 groups. Fewer than MIN_MODE_RUNS (6) values, or any not positive, give None: say
    that such a design is too small to see modes (design())."""
    n = len(values)
    xs = sorted(values)
    if n < MIN_MODE_RUNS or xs[0] <= 0:
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


# --- planning --------------------------------------------------------------------------------

@dataclass(frozen=True)
class _SidePlan:
    """What plan() needs of one side of a comparison, on the log scale: the layouts' own
    variance of the programs' mean relative deviation (tau^2 of D, the correlation between
    programs in it) and the runs' relative variance summed over programs / P^2."""
    layout: float
    runs: float


def _side_plan(samples):
    comps = [components(s) for s in samples]
    p = len(samples)
    runs = math.fsum(c.s_within / c.mean ** 2 for c in comps) / p ** 2
    seeds = [frozenset(_seeded(s)) for s in samples]
    if len(set(seeds)) == 1 and len(seeds[0]) > 1:
        order = sorted(seeds[0])
        devs = [_Side(s).devs(order) for s in samples]
        d = [math.fsum(col) / p for col in zip(*devs)]
        # the runs' noise in D's layout means, taken out as components() does
        noise = math.fsum(c.s_within / (c.r * c.mean ** 2) for c in comps) / p ** 2
        layout = max(0.0, _var(d) - noise)
    else:
        layout = math.fsum(c.layout_var / c.mean ** 2 for c in comps) / p ** 2
    return _SidePlan(layout, runs)


def _predict_var(side, k, r):
    return side.layout / k + side.runs / (k * r)


def _halfwidth(sides, k, r, level):
    """t(df) * sqrt(variance) for k layouts of r runs a side; df by _welch_df()."""
    vs = [_predict_var(s, k, r) for s in sides]
    df = _welch_df([(v, k) for v in vs]) or math.inf
    return t_quantile((1.0 + level) / 2, max(1.0, df)) * math.sqrt(math.fsum(vs))


def _prepare(pilots):
    whole = (_side_plan([b for b, _ in pilots.values()]),
             _side_plan([o for _, o in pilots.values()]))
    per = {p: (_side_plan([b]), _side_plan([o])) for p, (b, o) in pilots.items()}
    return whole, per


def _predict(prepared, k, r, level):
    whole, per = prepared
    return (_halfwidth(whole, k, r, level),
            {p: _halfwidth(sides, k, r, level) for p, sides in per.items()})


def predict(pilots, k, r, level=0.95):
    """(geomean half-width, {program: half-width}) that plan() predicts for k layouts of r
    runs a side, pilots as plan()'s; k >= 2."""
    if k < 2:
        raise ValueError("predict: one layout has no interval")
    return _predict(_prepare(pilots), k, r, level)


def plan(pilots, target, run_seconds, link_seconds=1.0, level=0.95, max_k=40, max_r=40):
    """The (k, r) choices that reach a geomean half-width of target (a fraction: 0.02 is
    +-2 %, on the log scale), cheapest first, each narrower than every cheaper one (the
    Pareto front of cost and half-width); [] if none within max_k x max_r. pilots:
    {program: (base, other)} samples of at least 2 layouts each (one layout cannot show
    layout variance); run_seconds: {program: (base seconds, other seconds)} a run. Cost:
    k r runs of each program in each configuration, plus k links of each configuration.
    k starts at MIN_LAYOUTS: below it the runners call nothing moved. The prediction is
    for independent sides; a paired comparison (the same binaries) can only be narrower."""
    for name, (b, o) in pilots.items():
        if min(components(b).k, components(o).k) < 2:
            raise ValueError(f"pilot of {name}: at least 2 layouts per configuration")
    prepared = _prepare(pilots)
    per_run = math.fsum(sum(run_seconds[p]) for p in pilots)
    choices = []
    for k in range(MIN_LAYOUTS, max_k + 1):
        for r in range(1, max_r + 1):
            hw, per = _predict(prepared, k, r, level)
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


# --- text ------------------------------------------------------------------------------------

def _pct(x):
    return f"{round((x - 1.0) * 100, 1) + 0.0:+.1f}"    # + 0.0: no "-0.0"


def fmt_ratio_ci(ratio, lo, hi):
    """A ratio and its interval as % changes, e.g. "+3.1% [+1.0, +5.2]"; without an
    interval (lo None), "+3.1% (no interval)"."""
    if lo is None or hi is None:
        return f"{_pct(ratio)}% (no interval)"
    return f"{_pct(ratio)}% [{_pct(lo)}, {_pct(hi)}]"


def fmt_ci(ci, number=None):
    """A CI as a runner prints it: "+3.1% [+1.0, +5.2]" when the design can say moved or
    not (K >= MIN_LAYOUTS), with " screen only (K layouts)" below that, "+3.1% (1 layout:
    no interval, screen only)" without an interval, "+3.1% exact" without noise. NUMBER, a
    function of a ratio, prints ratios its way instead of as % changes, e.g. lambda v:
    f"{v:.2f}x" gives "1.19x [1.18x, 1.21x]"."""
    if number is None:
        point, lo, hi = (f"{_pct(x)}%" if x is not None else None for x in ci)
        if lo is not None:
            lo, hi = lo[:-1], hi[:-1]
    else:
        point, lo, hi = (number(x) if x is not None else None for x in ci)
    v = verdict(ci)
    if v == "exact":
        return f"{point} exact"
    if v == "none":
        return f"{point} (1 layout: no interval, screen only)"
    text = f"{point} [{lo}, {hi}]"
    if v == "screen":
        text += f" screen only ({ci.k} layouts)"
    return text
