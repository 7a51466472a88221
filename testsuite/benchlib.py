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
configuration. The first configuration is shown in absolute units, each other one as the %
change of its median against the first's median. After the figure, `±N%` is the spread of
the K runs: half their range (max - min) as a percentage of their median. A difference is
*within noise* when the two configurations' ranges [min, max] overlap; it is marked `~`.
Min, Max and Geometric Mean rows close each table (the geometric mean of the ratios, shown
as a % change; of the absolute values in the first column). Work balance is already a
ratio, so every column of it is absolute.
"""

import math
import os
import re

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
    def __init__(self, key, title, unit, get, fmt, absolute_only=False):
        self.key, self.title, self.unit = key, title, unit
        self.get, self.fmt, self.absolute_only = get, fmt, absolute_only


def _stat(name):
    return lambda s: s.get(name)


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


def _percent(v):
    return f"{v * 100:.1f}%"


# The metrics a report can show (--metrics), in their default order. Times are wall-clock:
# with several capabilities, CPU time sums over OS threads and would hide a speed-up.
METRICS = {m.key: m for m in (
    Metric("elapsed", "Elapsed", "s", _stat("total_wall_seconds"), _seconds),
    Metric("mutator", "Mutator time", "s, wall", _stat("mutator_wall_seconds"), _seconds),
    Metric("gc", "GC time", "s, wall", _stat("GC_wall_seconds"), _seconds),
    Metric("allocs", "Allocations", "bytes", _stat("allocated_bytes"), _bytes),
    Metric("maxpause", "Max GC pause", "ms", _max_pause, _millis),
    Metric("balance", "Parallel GC work balance", "0% serial, 100% perfect",
           _stat("work_balance"), _percent, absolute_only=True),
    Metric("cpu", "CPU time", "s, all threads", _stat("total_cpu_seconds"), _seconds),
    Metric("gcs", "GCs", "count", _stat("num_GCs"), lambda v: f"{v:.0f}"),
    Metric("maxlive", "Max live", "bytes", _stat("max_live_bytes"), _bytes),
    Metric("stw", "Stop-the-world sync, max", "ms", _stat("rtslab_stw_max_seconds"), _millis),
    Metric("rps", "Requests per second (servers, wrk)", "requests/s",
           _stat("load_requests_per_second"), lambda v: f"{v:.0f}"),
    Metric("p50", "Latency, median (servers, wrk)", "ms", _stat("load_latency_p50_seconds"),
           _millis),
    Metric("p99", "Latency, 99th percentile (servers, wrk)", "ms",
           _stat("load_latency_p99_seconds"), _millis),
)}
# Metrics that only some programs have (the servers'): their tables list only those.
SPARSE_METRICS = ("rps", "p50", "p99")
DEFAULT_METRICS = ["elapsed", "mutator", "gc", "allocs", "maxpause", "balance", "rps", "p99"]


# --- the report -----------------------------------------------------------------------------

class Cell:
    """The runs of one program in one configuration, for one metric."""

    def __init__(self, values):
        self.values = sorted(values)
        n = len(self.values)
        self.median = None
        if n:
            mid = n // 2
            self.median = (self.values[mid] if n % 2
                           else (self.values[mid - 1] + self.values[mid]) / 2)

    @property
    def lo(self):
        return self.values[0]

    @property
    def hi(self):
        return self.values[-1]

    def spread(self):
        """Half the range as a fraction of the median; None with fewer than 2 runs."""
        if len(self.values) < 2 or not self.median:
            return None
        return (self.hi - self.lo) / 2 / self.median

    def overlaps(self, other):
        return self.lo <= other.hi and other.lo <= self.hi


def geomean(xs):
    xs = [x for x in xs if x > 0]
    if not xs:
        return None
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def cells(runs, programs, configs, metric):
    """{(program, config): Cell} over the successful runs."""
    out = {}
    for p in programs:
        for c in configs:
            vals = [metric.get(r["stats"]) for r in runs
                    if r["program"] == p and r["config"] == c and r["ok"]]
            vals = [v for v in vals if isinstance(v, float)]
            failed = any(r["program"] == p and r["config"] == c and not r["ok"] for r in runs)
            out[(p, c)] = None if failed else Cell(vals)
    return out


def _spread_text(cell):
    s = cell.spread()
    if s is None:
        return ""
    return f"±{s * 100:.0f}%"


def table(runs, programs, configs, metric):
    """One metric's table as a list of lines."""
    grid = cells(runs, programs, configs, metric)
    base = configs[0]
    rows = []           # [program, [(figure, spread)]]
    ratios = {c: [] for c in configs[1:]}
    firsts = []
    for p in programs:
        row = []
        for c in configs:
            cell = grid[(p, c)]
            if cell is None:
                row.append(("FAIL", ""))
                continue
            if cell.median is None:
                row.append(("-----", ""))
                continue
            b = grid[(p, base)]
            if c == base or metric.absolute_only:
                if c == base and cell.median > 0:
                    firsts.append(cell.median)
                elif c != base and cell.median > 0:
                    ratios[c].append(cell.median)
                row.append((metric.fmt(cell.median), _spread_text(cell)))
                continue
            if b is None or b.median is None or b.median == 0:
                row.append(("=" if cell.median == 0 and b is not None and b.median == 0
                            else "-----", ""))
                continue
            ratio = cell.median / b.median
            if cell.median > 0:
                ratios[c].append(ratio)
            noise = "~" if b.overlaps(cell) and (len(b.values) > 1 or len(cell.values) > 1) else ""
            row.append((f"{(ratio - 1) * 100:+.1f}%{noise}", _spread_text(cell)))
        rows.append((p, row))

    def summary(fn):
        out = []
        for i, c in enumerate(configs):
            vals = firsts if i == 0 else ratios[c]
            v = fn(vals) if vals else None
            if v is None:
                out.append(("-----", ""))
            elif i == 0 or metric.absolute_only:
                out.append((metric.fmt(v), ""))
            else:
                out.append((f"{(v - 1) * 100:+.1f}%", ""))
        return out

    summaries = [("Min", summary(min)), ("Max", summary(max)),
                 ("Geometric Mean", summary(geomean))]

    name_w = max([len(p) for p in programs] + [len("Geometric Mean"), len("Program")])
    col_w = [max(len(c), 16) for c in configs]

    def fmt_cell(fig, spr, w):
        text = f"{fig:>9} {spr:<5}" if spr else f"{fig:>9}"
        return f"{text:<{w}}"

    def line(name, cols):
        return f"{name:>{name_w}}  " + "  ".join(
            fmt_cell(fig, spr, col_w[i]) for i, (fig, spr) in enumerate(cols)).rstrip()

    def header_cell(c, w):
        return f"{c:<{w}}"

    rule = "-" * (name_w + 2 + sum(col_w) + 2 * (len(configs) - 1))
    how = ("absolute in every column" if metric.absolute_only
           else f"{configs[0]} absolute, others % change against it")
    out = [f"{metric.title} ({metric.unit}; median of runs; {how})", rule,
           f"{'Program':>{name_w}}  " + "  ".join(header_cell(c, col_w[i])
                                                   for i, c in enumerate(configs)).rstrip(),
           rule]
    out += [line(p, row) for p, row in rows]
    out.append(rule)
    out += [line(name, cols) for name, cols in summaries]
    out.append("")
    return out


def report(runs, programs, configs, metrics):
    lines = []
    for key in metrics:
        progs = programs
        if key in SPARSE_METRICS:
            has = {r["program"] for r in runs
                   if not r["ok"] or isinstance(METRICS[key].get(r["stats"]), float)}
            progs = [p for p in programs if p in has]
            if not progs:
                continue
        lines += table(runs, progs, configs, METRICS[key])
    lines.append("±N%: half the range of the runs, as % of their median.  ~: within noise "
                 "(the runs' ranges overlap those of the first column).")
    lines.append("-----: no figure (nothing measured, or the first column is 0).  "
                 "=: 0 in both.  FAIL: a run failed.")
    return lines


def patch_names(src):
    """The patch names of configure.ac's RTSLAB_PATCH_TABLE (the one list of the patches)."""
    with open(os.path.join(src, "configure.ac"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"^RTSLAB_PATCH\(\[([a-z0-9-]+)\],\s*\[RTS_PATCH_", text, re.M)
