"""The benchmark suite's programs, metrics and report, shared by the runner (bench.py) and the
test driver (driver.py).

Programs
--------
A benchmark is testsuite/bench/GROUP/NAME.scm whose first lines are a comment header
(GROUP is not `lib`: testsuite/bench/lib/ holds files that programs include):

    ;; NAME: what it computes and what it stresses
    ;; quick: ARGS        command-line arguments for each size
    ;; norm: ARGS
    ;; slow: ARGS
    ;; rts: OPTS          optional: RTS options it always needs (e.g. -K1g)
    ;; load: PATH...      optional: a server (testsuite/serverload.py); one row per PATH

and beside it NAME.SIZE.stdout, the exact output expected at each size. Each program also
checks its own answer and fails (exit 1) when it is wrong. testsuite/bench/README.md says
more.

A server (a `load:` line, testsuite/bench/io/) is measured under load instead: the runner
starts it, drives each PATH with wrk for the size's duration and connections (LOAD), stops it
with SIGTERM and compares what it printed then with NAME.SIZE.stdout. Each PATH is a program
of its own in the tables, `GROUP/NAME:PATH`; wrk's figures join the run's statistics as the
load_* keys, which the metrics rps, p50 and p99 show.

The report
----------
`report()` prints one table per metric, nofib-analyse style: a row per program, a column per
configuration. A figure is the mean of the layout means of its runs (Cell; each layout weighs
the same: testsuite/benchstats.py, testsuite/bench/README.md "The method"). The first
configuration is shown in absolute units with `±N%`, half its runs' range as a percentage of
its mean; each other one as the % change against the first with its 95 % interval `[lo,hi]`
(benchstats.ratio_ci: t over the layout means), timings and counters alike, and a mark:
none when the interval excludes 0 % (moved), `~` when it holds 0 % (not moved), `?` when the
design cannot say either (fewer than benchstats.MIN_LAYOUTS layouts a side: a screen; one
layout: no interval at all), `exact` when every run of both configurations gave one value
each (a counter without noise). Runs that fall into clusters show `N modes`, listed under
the table; a design of fewer than benchstats.MIN_MODE_RUNS runs per configuration is said to
be too small to see modes. Min, Max and Geometric Mean rows close each table (the geometric
mean of the ratios, with its interval). Work balance is already a ratio, so every column of
it is absolute.
"""

import gzip
import math
import os
import re

import benchstats

SIZES = ("quick", "norm", "slow")
HEADER_KEYS = SIZES + ("rts", "load")
# A server's load at each size: (seconds, connections) of one wrk run per route.
LOAD = {"quick": (1, 16), "norm": (5, 64), "slow": (20, 64)}


class Program:
    def __init__(self, group, name, path):
        self.group = group
        self.name = name
        self.path = path                 # .../testsuite/bench/GROUP/NAME.scm
        self.id = f"{group}/{name}"
        self.description = ""
        self.args = {}                   # size -> [str]
        self.rts = []                    # RTS options it always needs
        self.routes = []                 # a server's load: the paths to drive
        self.route = None                # the path this row drives (one row per route)

    def expected_path(self, size):
        return os.path.join(os.path.dirname(self.path), f"{self.name}.{size}.stdout")


class HeaderError(Exception):
    pass


def parse_program(group, path):
    name = os.path.basename(path)[:-4]
    prog = Program(group, name, path)
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith(";"):
                break
            m = re.match(r";+\s*([A-Za-z0-9_-]+):\s*(.*)$", line.rstrip("\n"))
            if not m:
                continue
            key, value = m.group(1), m.group(2).strip()
            if key in SIZES:
                prog.args[key] = value.split()
            elif key == "rts":
                prog.rts += value.split()
            elif key == "load":
                prog.routes += value.split()
            elif key == name and not prog.description:
                prog.description = value
    missing = [s for s in SIZES if s not in prog.args]
    if missing:
        raise HeaderError(f"{path}: header lacks ';; {missing[0]}: ARGS'")
    bad = [r for r in prog.routes if not r.startswith("/")]
    if bad:
        raise HeaderError(f"{path}: load path '{bad[0]}' does not start with /")
    return prog


def per_route(prog):
    """A server's rows: a copy of prog per route, id GROUP/NAME:PATH; others as they are."""
    if not prog.routes:
        return [prog]
    rows = []
    for route in prog.routes:
        row = Program(prog.group, prog.name, prog.path)
        row.description, row.args, row.rts = prog.description, prog.args, prog.rts
        row.routes, row.route, row.id = prog.routes, route, f"{prog.id}:{route}"
        rows.append(row)
    return rows


def discover(src):
    """Every benchmark program under SRC/testsuite/bench, sorted by group then name (a
    server once, however many routes it loads: per_route() makes its rows)."""
    root = os.path.join(src, "testsuite", "bench")
    progs = []
    for group in sorted(os.listdir(root)):
        gdir = os.path.join(root, group)
        if group == "lib" or not os.path.isdir(gdir):
            continue
        for fname in sorted(os.listdir(gdir)):
            if fname.endswith(".scm"):
                progs.append(parse_program(group, os.path.join(gdir, fname)))
    return progs


def select(progs, patterns):
    """Programs whose GROUP/NAME matches any of PATTERNS (regular expressions, searched)."""
    if not patterns:
        return progs
    regexes = [re.compile(p) for p in patterns]
    return [p for p in progs if any(r.search(p.id) for r in regexes)]


def command(binary, prog, size, rts_opts, stats_file=None):
    cmd = [binary, os.path.basename(prog.path)] + prog.args[size]
    rts = list(prog.rts) + list(rts_opts)
    if stats_file:
        rts += ["-s" + stats_file, "--machine-readable"]
    if rts:
        cmd += ["+RTS"] + rts + ["-RTS"]
    return cmd


def first_difference(expected, actual):
    """Where actual output first differs from the expected, as a phrase."""
    exp_lines, act_lines = expected.splitlines(), actual.splitlines()
    for i in range(max(len(exp_lines), len(act_lines))):
        e = exp_lines[i] if i < len(exp_lines) else "<end of output>"
        a = act_lines[i] if i < len(act_lines) else "<end of output>"
        if e != a:
            return f"line {i + 1}: expected {e!r}, got {a!r}"
    return "outputs differ in line endings or a final newline"


# --- statistics -----------------------------------------------------------------------------

_PAIR = re.compile(r'\("([^"]*)",\s*"([^"]*)"\)')


def parse_machine_readable(text):
    """The key/value pairs of `-s --machine-readable` output, values as floats where they
    parse."""
    stats = {}
    for key, value in _PAIR.findall(text):
        try:
            stats[key] = float(value)
        except ValueError:
            stats[key] = value
    return stats


class Metric:
    """A table: what it reads from a run's statistics and how it prints. Every % change, of
    a timing or a counter, comes with its interval (counters vary between runs too: context
    switches, spins, even GCs under a parallel scheduler); absolute_only: every column in
    absolute units, no change (work balance); modes: a headline figure whose runs are
    checked for clusters (elapsed time, requests per second)."""

    def __init__(self, key, title, unit, get, fmt, absolute_only=False, modes=False):
        self.key, self.title, self.unit = key, title, unit
        self.get, self.fmt, self.absolute_only = get, fmt, absolute_only
        self.modes = modes


def _stat(name):
    return lambda s: s.get(name)


def _sum_of(pattern):
    """The sum of the statistics whose keys match PATTERN (a regular expression), None when
    the run has none of them (a build without the counters)."""
    rx = re.compile(pattern)

    def get(s):
        vals = [v for k, v in s.items() if rx.fullmatch(k) and isinstance(v, float)]
        return math.fsum(vals) if vals else None
    return get


def _max_pause(s):
    pauses = [s.get(k) for k in ("gen_0_max_pause_seconds", "gen_1_max_pause_seconds")]
    pauses = [p for p in pauses if isinstance(p, float)]
    return max(pauses) if pauses else None


def _seconds(v):
    if v >= 100:
        return f"{v:.1f}"
    if v >= 10:
        return f"{v:.2f}"
    return f"{v:.3f}"


def _millis(v):
    return _seconds(v * 1000.0)


def _bytes(v):
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= scale:
            return f"{v / scale:.1f}{unit}"
    return f"{v:.0f}"


_count = _bytes            # counts print as bytes do: 1.5k, 2.3M


def _percent(v):
    return f"{v * 100:.1f}%"


# The metrics a report can show (--metrics), in their default order. Times are wall-clock:
# with several capabilities, CPU time sums over OS threads and would hide a speed-up.
METRICS = {m.key: m for m in (
    Metric("elapsed", "Elapsed", "s", _stat("total_wall_seconds"), _seconds, modes=True),
    Metric("mutator", "Mutator time", "s, wall", _stat("mutator_wall_seconds"), _seconds),
    Metric("gc", "GC time", "s, wall", _stat("GC_wall_seconds"), _seconds),
    Metric("allocs", "Allocations", "bytes", _stat("allocated_bytes"), _bytes),
    Metric("maxpause", "Max GC pause", "ms", _max_pause, _millis),
    Metric("balance", "Parallel GC work balance", "0% serial, 100% perfect",
           _stat("work_balance"), _percent, absolute_only=True),
    Metric("cpu", "CPU time", "s, all threads", _stat("total_cpu_seconds"), _seconds),
    Metric("pareff", "Parallel efficiency: CPU time against the variant's own -N1",
           "s, all threads; +0% when every capability's CPU does the work of -N1, +100% "
           "when it does half as much", _stat("total_cpu_seconds"), _seconds, modes=True),
    Metric("gcs", "GCs", "count", _stat("num_GCs"), _count),
    Metric("copied", "Bytes copied by the GC", "bytes", _stat("copied_bytes"), _bytes),
    Metric("syncs", "Stop-the-world syncs", "count", _stat("rtslab_stw_syncs"), _count),
    Metric("spins", "Spins (every lock and stop-the-world barrier wait)", "count",
           _sum_of(r"rtslab_(lock|barrier)_\w+_spins"), _count),
    # {{patch:spin-yield
    Metric("yields", "Yields of spin-waits (sched_yield)", "count",
           _sum_of(r"rtslab_lock_\w+_yields"), _count),
    # }}patch:spin-yield
    Metric("sleeps", "Sleeps of barrier waits", "count",
           _sum_of(r"rtslab_barrier_\w+_sleeps"), _count),
    # {{patch:gen0-steal
    Metric("steals", "GC work steals (minor and major; where a build counts them)", "count",
           _sum_of(r"rtslab_(minor|major)_steals"), _count),
    # }}patch:gen0-steal
    Metric("maxlive", "Max live", "bytes", _stat("max_live_bytes"), _bytes),
    Metric("stw", "Stop-the-world sync, max", "ms", _stat("rtslab_stw_max_seconds"), _millis),
    Metric("stwmean", "Stop-the-world sync, mean", "ms", _stat("rtslab_stw_mean_seconds"),
           _millis),
    Metric("taskclock", "Task clock (OS)", "s, all threads", _stat("os_task_clock_seconds"),
           _seconds),
    Metric("ctxsw", "Context switches (OS)", "count", _stat("os_context_switches"), _count),
    Metric("invcsw", "Involuntary context switches (the runtime's getrusage)", "count",
           _stat("rtslab_os_involuntary_context_switches"), _count),
    Metric("migrations", "CPU migrations (OS)", "count", _stat("os_cpu_migrations"), _count),
    Metric("faults", "Page faults (OS)", "count", _stat("os_page_faults"), _count),
    Metric("instructions", "Instructions (hardware)", "count", _stat("os_instructions"),
           _count),
    Metric("cycles", "Cycles (hardware)", "count", _stat("os_cycles"), _count),
    Metric("rps", "Requests per second (servers, wrk)", "requests/s",
           _stat("load_requests_per_second"), lambda v: f"{v:.0f}", modes=True),
    Metric("p50", "Latency, median (servers, wrk)", "ms", _stat("load_latency_p50_seconds"),
           _millis),
    Metric("p99", "Latency, 99th percentile (servers, wrk)", "ms",
           _stat("load_latency_p99_seconds"), _millis),
)}
# Metrics that only some programs have (the servers'): their tables list only those.
SPARSE_METRICS = ("rps", "p50", "p99", "instructions", "cycles", "migrations", "steals")
# The OS's counters (testsuite/oscounters.py): `bench.py --perf` prints these tables, and a
# report says why one of them is missing (getrusage, or no hardware counters, counts none).
OS_METRICS = ["taskclock", "ctxsw", "migrations", "faults", "instructions", "cycles"]
PERF_METRICS = ["elapsed"] + OS_METRICS
DEFAULT_METRICS = ["elapsed", "pareff", "mutator", "gc", "allocs", "copied", "syncs", "taskclock",
                   "ctxsw", "maxpause", "balance", "rps", "p99"]
# --- the report -----------------------------------------------------------------------------

class Cell:
    """The runs of one program in one configuration, for one metric: a sample {layout seed:
    [values]} (benchstats; a run without a layout counts as layout 0). Its figure, center, is
    the mean of the layout means (each layout weighs the same, Kalibera and Jones)."""

    def __init__(self, sample):
        self.sample = {k: v for k, v in sample.items() if v}
        self.values = sorted(v for vs in self.sample.values() for v in vs)
        self.center = benchstats.mean(self.sample) if self.values else None

    @property
    def lo(self):
        return self.values[0]

    @property
    def hi(self):
        return self.values[-1]

    def spread(self):
        """Half the range of the runs as a fraction of the center; None with fewer than 2."""
        if len(self.values) < 2 or not self.center:
            return None
        return (self.hi - self.lo) / 2 / self.center

    def layout_spread(self):
        """max/min of the layout means (1.0: they agree); None with fewer than 2 layouts."""
        means = benchstats.layout_means(self.sample)
        if len(means) < 2 or min(means) <= 0:
            return None
        return max(means) / min(means)

    def clusters(self):
        """The runs' clusters (benchstats.clusters), or None. With several runs of a layout,
        each run is taken relative to its layout's mean: layouts that differ are the layout
        effect, which the interval carries; runs of one layout that split are modes. With
        one run per layout the runs are taken as they are (the clusters' layouts tell)."""
        runs = {k: v for k, v in self.sample.items() if len(v) > 1}
        if not runs:
            return benchstats.clusters(self.values)
        rel = [v / (sum(vs) / len(vs)) * self.center for vs in runs.values() for v in vs]
        return benchstats.clusters(rel) and benchstats.clusters(self.values)

    def overlaps(self, other):
        return self.lo <= other.hi and other.lo <= self.hi


def geomean(xs):
    xs = [x for x in xs if x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def sample(runs, program, config, metric):
    """{layout: [values]} of the successful runs, or None when any run failed."""
    mine = [r for r in runs if r["program"] == program and r["config"] == config]
    if not all(r["ok"] for r in mine):
        return None
    floats = lambda r: v if isinstance(v := metric.get(r["stats"]), float) else None
    return dict(sorted(benchstats.sample_of(mine, floats).items()))


def cells(runs, programs, configs, metric):
    """{(program, config): Cell} over the successful runs; None where a run failed."""
    out = {}
    for p in programs:
        for c in configs:
            s = sample(runs, p, c, metric)
            out[(p, c)] = None if s is None else Cell(s)
    return out


def _spread_text(cell):
    s = cell.spread()
    if s is None:
        return ""
    return f"±{s * 100:.0f}%"


def _interval_text(lo, hi):
    return f"[{(lo - 1) * 100:+.1f},{(hi - 1) * 100:+.1f}]"


# The mark after a % change, by benchstats.verdict(): moved has none.
MARKS = {"moved": "", "not moved": "~", "screen": "?", "none": "?", "exact": ""}


def change(ratio, ci):
    """A % change and its annotation, (figure, annotation), from RATIO and its CI
    (benchstats.ratio_ci or geomean_ci; None: a run measured 0, so no interval)."""
    fig = f"{(ratio - 1) * 100:+.1f}%"
    if ci is None:
        return fig, "(a run 0)"
    v = benchstats.verdict(ci)
    if v == "exact":
        return fig, "exact"
    if v == "none":
        return fig + MARKS[v], "(1 layout)"
    return fig + MARKS[v], _interval_text(ci.lo, ci.hi)


def comparable(a, b):
    """Both cells have a positive figure, so b/a is a ratio."""
    return (a is not None and b is not None and a.center is not None and b.center is not None
            and a.center > 0 and b.center > 0)


def positive(a, b):
    """Every run of both cells is positive, so the ratio has an interval."""
    return a.lo > 0 and b.lo > 0


def table(runs, programs, configs, metric, modes=None):
    """One metric's table as a list of lines. Each ratio comes with its 95 % interval
    (benchstats.ratio_ci: t over the layout means) and the mark of benchstats.verdict(): none
    (moved), `~` (not moved), `?` (a screen: too few layouts to say), `exact` (no noise).
    A configuration whose runs fall into clusters shows `N modes` instead of a figure;
    MODES, a list, gets (program, config, clusters) for each."""
    grid = cells(runs, programs, configs, metric)
    base = configs[0]
    rows = []           # [program, [(figure, spread)]]
    ratios = {c: [] for c in configs[1:]}
    pairs = {c: [] for c in configs[1:]}
    firsts = []
    for p in programs:
        row = []
        for c in configs:
            cell = grid[(p, c)]
            if cell is None:
                row.append(("FAIL", ""))
                continue
            if cell.center is None:
                row.append(("-----", ""))
                continue
            if metric.modes:
                groups = cell.clusters()
                if groups:
                    if modes is not None:
                        modes.append((p, c, groups, cell))
                    row.append((f"{len(groups)} modes", ""))
                    continue
            b = grid[(p, base)]
            if c == base or metric.absolute_only:
                if c == base and cell.center > 0:
                    firsts.append(cell.center)
                elif c != base and cell.center > 0:
                    ratios[c].append(cell.center)
                row.append((metric.fmt(cell.center), _spread_text(cell)))
                continue
            if b is None or b.center is None or b.center == 0:
                row.append(("=" if cell.center == 0 and b is not None and b.center == 0
                            else "-----", ""))
                continue
            ratio = cell.center / b.center
            ci = None
            if cell.center > 0:
                ratios[c].append(ratio)
                if positive(b, cell):
                    pairs[c].append((b.sample, cell.sample))
                    ci = benchstats.ratio_ci(b.sample, cell.sample)
            row.append(change(ratio, ci))
        rows.append((p, row))

    def summary(fn, with_ci=False):
        out = []
        for i, c in enumerate(configs):
            vals = firsts if i == 0 else ratios[c]
            v = fn(vals) if vals else None
            if v is None:
                out.append(("-----", ""))
            elif i == 0 or metric.absolute_only:
                out.append((metric.fmt(v), ""))
            elif with_ci:
                ci = (benchstats.geomean_ci(pairs[c]) if len(pairs[c]) == len(ratios[c])
                      else None)
                out.append(change(v, ci))
            else:
                out.append((f"{(v - 1) * 100:+.1f}%", ""))
        return out

    summaries = [("Min", summary(min)), ("Max", summary(max)),
                 ("Geometric Mean", summary(geomean, with_ci=True))]

    name_w = max([len(p) for p in programs] + [len("Geometric Mean"), len("Program")])
    spr_w = max([len(spr) for _, row in rows + summaries for _, spr in row] + [5])
    col_w = [max(len(c), 10 + spr_w) for c in configs]

    def fmt_cell(fig, spr, w):
        text = f"{fig:>9} {spr:<{spr_w}}" if spr else f"{fig:>9}"
        return f"{text:<{w}}"

    def line(name, cols):
        return f"{name:>{name_w}}  " + "  ".join(
            fmt_cell(fig, spr, col_w[i]) for i, (fig, spr) in enumerate(cols)).rstrip()

    rule = "-" * (name_w + 2 + sum(col_w) + 2 * (len(configs) - 1))
    how = ("absolute in every column" if metric.absolute_only
           else f"{configs[0]} absolute, others % change against it [95% interval]")
    out = [f"{metric.title} ({metric.unit}; mean of runs; {how})", rule,
           f"{'Program':>{name_w}}  " + "  ".join(f"{c:<{col_w[i]}}"
                                                   for i, c in enumerate(configs)).rstrip(),
           rule]
    out += [line(p, row) for p, row in rows]
    out.append(rule)
    out += [line(name, cols) for name, cols in summaries]
    out.append("")
    return out


def layout_table(runs, programs, configs, metric):
    """The spread between layouts: per program and configuration, max/min of the layout
    means as a % (0 %: every layout gave the same mean). Lines, or [] with one layout."""
    grid = cells(runs, programs, configs, metric)
    if not any(c is not None and len(c.sample) > 1 for c in grid.values()):
        return []
    name_w = max([len(p) for p in programs] + [len("Program")])
    col_w = [max(len(c), 12) for c in configs]
    rule = "-" * (name_w + 2 + sum(col_w) + 2 * (len(configs) - 1))
    out = [f"{metric.title}: spread between layouts (max/min of the layout means - 1)", rule,
           f"{'Program':>{name_w}}  " + "  ".join(f"{c:<{col_w[i]}}"
                                                   for i, c in enumerate(configs)).rstrip(),
           rule]
    for p in programs:
        cols = []
        for i, c in enumerate(configs):
            cell = grid[(p, c)]
            s = cell.layout_spread() if cell else None
            cols.append(f"{'-----' if s is None else f'{(s - 1) * 100:.1f}%':>9}"
                        .ljust(col_w[i]))
        out.append(f"{p:>{name_w}}  " + "  ".join(cols).rstrip())
    out += [rule, ""]
    return out


def modes_lines(modes, metric):
    """The configurations whose runs fall into clusters: each cluster's mean, its runs and
    the layouts they came from."""
    if not modes:
        return []
    title = metric.title[:1].lower() + metric.title[1:]
    out = [f"Runs that disagree with themselves ({title}): clusters, not a "
           "mean (benchstats.clusters)"]
    for p, c, groups, cell in modes:
        where = {}
        for layout, vs in cell.sample.items():
            for v in vs:
                where.setdefault(v, []).append(layout)
        parts = []
        for g in groups:
            layouts = sorted({l for v in set(g) for l in where.get(v, [])})
            parts.append(f"{metric.fmt(sum(g) / len(g))} ({len(g)} runs; layouts "
                         f"{','.join(str(l) for l in layouts)})")
        out.append(f"  {p} [{c}]: " + " | ".join(parts))
    out.append("")
    return out


def _why_no_os(runs, key):
    """Why no run has the OS counter of metric KEY: where the counters came from."""
    sources = {r["stats"].get("os_counters_source") for r in runs if r["ok"]}
    if sources == {"rusage"}:
        return "the OS counters came from getrusage, which has no such counter (perf stat " \
               "could not count here, or --no-perf)"
    if key in ("instructions", "cycles"):
        return "perf counted no hardware events here (no hardware counters: a virtual " \
               "machine often has none)"
    return "no run has it"


def modes_design(runs, programs, configs):
    """A line saying that the design is too small to see modes, or None: the fewest runs of
    a program in a configuration, when below benchstats.MIN_MODE_RUNS."""
    counts = [sum(1 for r in runs if r["program"] == p and r["config"] == c and r["ok"])
              for p in programs for c in configs]
    counts = [n for n in counts if n]
    if not counts or min(counts) >= benchstats.MIN_MODE_RUNS:
        return None
    return (f"Modes: not looked for where a configuration has {min(counts)} run(s); "
            f"benchstats.clusters needs {benchstats.MIN_MODE_RUNS}, so this design is too "
            "small to see modes.")


def _variant_of(config):
    """The variant of a configuration's label, "VARIANT OPT...": bench.py's."""
    return config.split()[0]


def _is_n1(config):
    return "-N1" in config.split()[1:]


def efficiency(runs, programs, configs, modes):
    """The parallel efficiency tables: per variant with a configuration at -N1, its other
    configurations' CPU time (all threads, the same work) against that one's. Wasted CPU shows
    as a rise: issue 43's -N2 slow mode (two capabilities fighting over cache lines: both
    busy, each at half speed) as +60-100 %, spinning in waits as more. Its runs are checked
    for clusters as elapsed time's are, so a mode that only some runs fall into is flagged.
    Lines; MODES gets (program, config, clusters, cell)."""
    lines = []
    for v in dict.fromkeys(_variant_of(c) for c in configs):
        mine = [c for c in configs if _variant_of(c) == v]
        n1 = [c for c in mine if _is_n1(c)]
        if n1 and len(mine) > 1:
            lines += table(runs, programs, n1[:1] + [c for c in mine if c != n1[0]],
                           METRICS["pareff"], modes)
    if not lines:
        lines = [f"{METRICS['pareff'].title}: no figures; no variant has a configuration at "
                 "-N1 and another to compare with it", ""]
    return lines


def report(runs, programs, configs, metrics):
    lines = []
    multi_layout = len({r.get("layout", 0) for r in runs}) > 1
    for key in metrics:
        progs = programs
        if key in SPARSE_METRICS:
            has = {r["program"] for r in runs
                   if not r["ok"] or isinstance(METRICS[key].get(r["stats"]), float)}
            progs = [p for p in programs if p in has]
            if not progs:
                if key in OS_METRICS:
                    lines += [f"{METRICS[key].title}: no figures; {_why_no_os(runs, key)}", ""]
                continue
        modes = []
        if key == "pareff":
            lines += efficiency(runs, progs, configs, modes)
        else:
            lines += table(runs, progs, configs, METRICS[key], modes)
        lines += modes_lines(modes, METRICS[key])
        if METRICS[key].modes:
            few = modes_design(runs, progs, configs)
            if few:
                lines += [few, ""]
        if key == "elapsed" and multi_layout:
            lines += layout_table(runs, progs, configs, METRICS[key])
    lines.append("Figures: the mean of the layout means.  [lo,hi]: the 95% interval of the % "
                 "change (t over the layout means; testsuite/benchstats.py).")
    lines.append("No mark: moved (the interval excludes 0%).  ~: not moved (it holds 0%).  "
                 f"?: a screen, neither (fewer than {benchstats.MIN_LAYOUTS} layouts a side; "
                 "(1 layout): no interval).")
    lines.append("exact: every run of both configurations gave one value each (no noise).  "
                 "±N%: half the range of the first column's runs, as % of its mean.  "
                 "(a run 0): no interval.")
    lines.append("-----: no figure (nothing measured, or the first column is 0).  "
                 "=: 0 in both.  FAIL: a run failed.  N modes: see the clusters below the table.")
    if not multi_layout:
        lines.append("One layout per configuration: no interval, and a difference between "
                     "builds may be an artefact of code layout (--layouts K, K >= "
                     f"{benchstats.CLAIM_LAYOUTS} for a claim; testsuite/bench/README.md).")
    return lines


def patch_names(src):
    """The patch names of configure.ac's RTSLAB_PATCH_TABLE (the one list of the patches)."""
    with open(os.path.join(src, "configure.ac"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^RTSLAB_PATCH\(\[([a-z0-9-]+)\],\s*\[RTS_PATCH_", text, re.M)


def open_text(path):
    """PATH opened for reading text, gunzipped on the way when its name ends in .gz: the
    experiments keep their raw runs compressed (experiments/*/results/.../runs.json.gz), and
    every reader of a runs.json takes either."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")
