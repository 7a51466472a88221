#!/usr/bin/env python3
"""Tests of the benchmark runner (testsuite/bench.py) and its report (testsuite/benchlib.py).

    python3 testsuite/bench/test_runner.py --build BUILDDIR

1. The report's arithmetic on made-up runs: medians, spreads, % changes, the noise mark,
   Min/Max/Geometric Mean rows, failed runs, absolute-only metrics.
2. The runner end to end, with BUILDDIR's rtslab, over a throw-away source tree holding two
   tiny programs, one of which prints a wrong answer in one configuration: the run must be
   reported as failed, the exit status must be 1, and runs.json / runs.csv / table.txt must
   hold every run with its statistics.
3. Servers: wrk's output parsed (a fixture), a row per load path, the rps table listing the
   servers only.
"""

import argparse
import csv
import gzip
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TESTSUITE = os.path.dirname(HERE)
sys.path.insert(0, TESTSUITE)
import benchlib  # noqa: E402
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402


def fake_run(prog, config, wall, alloc, ok=True, balance=0.0, layout=None):
    run = {"program": prog, "config": config, "ok": ok,
           "stats": {"total_wall_seconds": wall, "allocated_bytes": alloc,
                     "work_balance": balance, "GC_wall_seconds": 0.0}}
    if layout is not None:
        run["layout"] = layout
    return run


def test_report():
    runs = []
    # Three layouts a configuration, drawn apart (A on seeds 1-3, B on 1001-1003), as
    # bench.py --layouts 3 links them.
    # p1: base 1.0 (0.9..1.1), other 0.5 (0.49..0.51): -50%, clearly moved
    for j, w in enumerate((0.9, 1.0, 1.1), 1):
        runs.append(fake_run("g/p1", "A", w, 1000.0, layout=j))
    for j, w in enumerate((0.49, 0.5, 0.51), 1001):
        runs.append(fake_run("g/p1", "B", w, 2000.0, balance=0.5, layout=j))
    # p2: base 2.0 (1.8..2.2), other 2.1 (2.0..2.3): +5%, within what layouts do -> not moved
    for j, w in enumerate((1.8, 2.0, 2.2), 1):
        runs.append(fake_run("g/p2", "A", w, 1000.0, layout=j))
    for j, w in enumerate((2.0, 2.1, 2.3), 1001):
        runs.append(fake_run("g/p2", "B", w, 1000.0, balance=0.7, layout=j))
    # p3: B failed once
    runs.append(fake_run("g/p3", "A", 1.0, 10.0, layout=1))
    runs.append(fake_run("g/p3", "B", 1.0, 10.0, ok=False, layout=1001))

    el = benchlib.METRICS["elapsed"]
    grid = benchlib.cells(runs, ["g/p1", "g/p2", "g/p3"], ["A", "B"], el)
    check(abs(grid[("g/p1", "A")].center - 1.0) < 1e-12, "mean of 0.9, 1.0, 1.1")
    check(abs(grid[("g/p1", "A")].spread() - 0.1) < 1e-12, "spread: half range / mean")
    check(not grid[("g/p1", "A")].overlaps(grid[("g/p1", "B")]), "disjoint ranges")
    check(grid[("g/p2", "A")].overlaps(grid[("g/p2", "B")]), "overlapping ranges")
    check(grid[("g/p3", "B")] is None, "a failed run makes the cell a failure")

    lines = benchlib.table(runs, ["g/p1", "g/p2", "g/p3"], ["A", "B"], el)
    text = "\n".join(lines)
    row = {l.split()[0]: l for l in lines if l.strip().startswith("g/")}
    check("-50.0% [" in row["g/p1"] and "~" not in row["g/p1"] and "?" not in row["g/p1"],
          "p1: -50.0% with its interval, moved:\n" + text)
    r2 = (2.0 + 2.1 + 2.3) / 3 / 2.0
    check(f"{(r2 - 1) * 100:+.1f}%~ [" in row["g/p2"],
          "p2: +6.7% (the mean of 2.0, 2.1, 2.3 over that of 1.8, 2.0, 2.2), its interval "
          "holds 0:\n" + text)
    check("FAIL" in row["g/p3"], "p3: FAIL shown:\n" + text)
    summary = {l.strip().split("  ")[0]: l for l in lines
               if l.strip().startswith(("Min", "Max", "Geometric"))}
    check("-50.0%" in summary["Min"] and f"{(r2 - 1) * 100:+.1f}%" in summary["Max"],
          "Min/Max rows:\n" + text)
    gm = (0.5 * r2) ** 0.5 - 1
    check(f"{gm * 100:+.1f}%" in summary["Geometric Mean"] and "[" in summary["Geometric Mean"],
          "geometric mean of ratios, with its interval:\n" + text)
    check(f"{(1.0 * 2.0 * 1.0) ** (1 / 3):.3f}" in summary["Geometric Mean"],
          "geometric mean of the first column:\n" + text)

    # Counters: allocations equal in every run are exact; one that varies gets an interval
    # and a mark as time does.
    al = benchlib.table(runs, ["g/p1", "g/p2"], ["A", "B"], benchlib.METRICS["allocs"])
    row = {l.split()[0]: l for l in al if l.strip().startswith("g/")}
    check("+100.0% exact" in row["g/p1"] and "+0.0% exact" in row["g/p2"],
          "allocations equal in every run: exact:\n" + "\n".join(al))
    noisy = [dict(r, stats=dict(r["stats"], os_context_switches=float(100 + 7 * i)))
             for i, r in enumerate(runs) if r["program"] == "g/p2"]
    cs = benchlib.table(noisy, ["g/p2"], ["A", "B"], benchlib.METRICS["ctxsw"])
    row = {l.split()[0]: l for l in cs if l.strip().startswith("g/")}
    check("%~ [" in row["g/p2"] or ("% [" in row["g/p2"] and "exact" not in row["g/p2"]),
          "context switches that vary: an interval and a mark:\n" + "\n".join(cs))
    gms = [l for l in cs if l.strip().startswith("Geometric")]
    check(gms and "[" in gms[0], "a counter's geometric mean has its interval:\n" + "\n".join(cs))

    # Designs too small to say moved: one layout has no interval (?), two are a screen (?)
    for k in (1, 2):
        small = [fake_run("g/s", c, w * (1.5 if c == "B" else 1.0), 1.0,
                          layout=j + (1000 if c == "B" else 0))
                 for j in range(1, k + 1) for c in ("A", "B") for w in (1.0, 1.02)]
        text = "\n".join(benchlib.report(small, ["g/s"], ["A", "B"], ["elapsed"]))
        row = [l for l in text.splitlines() if l.strip().startswith("g/s")][0]
        check("+50.0%?" in row and ("(1 layout)" in row if k == 1 else "[+" in row),
              f"{k} layout(s): the change marked ?, a screen:\n" + text)
        check("too\nsmall" not in text and "too small to see modes" in text,
              f"{2 * k} runs a configuration: too small a design to see modes:\n" + text)

    wb = benchlib.table(runs, ["g/p1", "g/p2"], ["A", "B"], benchlib.METRICS["balance"])
    row = {l.split()[0]: l for l in wb if l.strip().startswith("g/")}
    check("50.0%" in row["g/p1"] and "70.0%" in row["g/p2"], "work balance absolute:\n"
          + "\n".join(wb))

    # Runs that disagree with themselves: 12 runs of one layout at 0.15 s or 0.43 s show as
    # two modes with their clusters, not as a mean; layouts that differ (each steady) are
    # the layout effect: a figure with an interval, and a layout spread.
    bi = []
    for i, w in enumerate([0.15, 0.151, 0.149, 0.43, 0.152, 0.431, 0.148, 0.429, 0.15, 0.432,
                           0.151, 0.43]):
        bi.append(dict(fake_run("g/bi", "A", 0.2, 1.0), layout=1))
        bi.append(dict(fake_run("g/bi", "B", w, 1.0), layout=1))
    for layout, w in ((1, 1.0), (2, 1.3), (3, 1.0), (4, 1.3)):
        for k in range(3):
            bi.append(dict(fake_run("g/lay", "A", 1.0 + k * 0.001, 1.0), layout=layout))
            bi.append(dict(fake_run("g/lay", "B", w + k * 0.001, 1.0), layout=layout))
    text = "\n".join(benchlib.report(bi, ["g/bi", "g/lay"], ["A", "B"], ["elapsed"]))
    row = {}
    for l in text.splitlines():                    # the first table's rows
        if l.strip().startswith("g/"):
            row.setdefault(l.split()[0], l)
    check("2 modes" in row["g/bi"], "a bimodal configuration shows its modes:\n" + text)
    check("g/bi [B]: 0.150 (7 runs; layouts 1) | 0.430 (5 runs; layouts 1)" in text,
          "the clusters are listed with their runs and layouts:\n" + text)
    check("modes" not in row["g/lay"] and "+15.0%" in row["g/lay"],
          "layouts that differ are not modes: g/lay is +15% with an interval:\n" + text)
    check("spread between layouts" in text and "30.0%" in text,
          "the layout spread table shows g/lay's 30% between layouts:\n" + text)

    # A run that measured 0 (a GC time of a program that hardly collects): the ratio of the
    # means stands, without an interval (a resample of zeros has no ratio), and the table is
    # made (a norm-size matrix once lost its report to a log of 0 here).
    zero = []
    for layout, (a, b) in enumerate(((0.0, 0.01), (0.02, 0.0), (0.01, 0.02)), 1):
        zero.append(dict(fake_run("g/z", "A", 1.0, 1.0), layout=layout))
        zero[-1]["stats"]["GC_wall_seconds"] = a
        zero.append(dict(fake_run("g/z", "B", 1.0, 1.0), layout=layout))
        zero[-1]["stats"]["GC_wall_seconds"] = b
    text = "\n".join(benchlib.table(zero, ["g/z"], ["A", "B"], benchlib.METRICS["gc"]))
    check("(a run 0)" in text and "+0.0%" in text,
          "runs of 0: the ratio without an interval:\n" + text)

    check(abs(benchlib.geomean([2.0, 8.0]) - 4.0) < 1e-12, "geomean(2, 8) = 4")
    check(benchlib.geomean([0.0]) is None, "geomean skips zeros")

    stats = benchlib.parse_machine_readable(
        ' [("bytes allocated", "134016")\n ,("GC_wall_seconds", "0.25")\n'
        ' ,("gen_0_max_pause_seconds", "0.001")\n ,("gen_1_max_pause_seconds", "0.004")\n]')
    check(stats["bytes allocated"] == 134016.0 and stats["GC_wall_seconds"] == 0.25,
          "machine-readable statistics parse")
    check(benchlib.METRICS["maxpause"].get(stats) == 0.004, "max pause is the max over gens")


# What wrk 4.1 prints with --latency (a real run's text, its figures changed).
WRK_TEXT = """Running 2s test @ http://127.0.0.1:40001/alloc
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency    19.94ms    4.14ms 393.76ms   93.45%
    Req/Sec     1.28k   513.49     1.89k    77.50%
  Latency Distribution
     50%   19.76ms
     75%  750.00us
     90%    1.20s
     99%  393.76ms
  5098 requests in 2.01s, 567.55KB read
  Socket errors: connect 0, read 3, write 0, timeout 2
  Non-2xx or 3xx responses: 7
Requests/sec:   2541.07
Transfer/sec:    282.61KB
"""


def test_efficiency():
    """The parallel efficiency table: CPU time against the variant's own -N1, one table per
    variant that has one, with the slow mode of issue 43 (CPU doubled in some runs) flagged
    as two modes, and a line when no variant has a -N1 configuration."""
    def run(prog, config, cpu, layout):
        return {"program": prog, "config": config, "ok": True, "layout": layout,
                "stats": {"total_wall_seconds": cpu, "total_cpu_seconds": cpu}}
    runs = []
    for j in range(1, 7):
        for v, off in (("a", 0), ("b", 2000)):
            runs.append(run("g/fast", f"{v} -N1", 1.0 + 0.01 * j, off + j))
            runs.append(run("g/fast", f"{v} -N2 -A4m", (1.0 if v == "a" else 1.5) + 0.01 * j,
                            off + 1000 + j))
            runs.append(run("g/slow", f"{v} -N1", 1.0 + 0.01 * j, off + j))
            runs.append(run("g/slow", f"{v} -N2 -A4m", (1.0 if j % 2 else 2.0) + 0.01 * j,
                            off + 1000 + j))
    configs = ["a -N1", "a -N2 -A4m", "b -N1", "b -N2 -A4m"]
    text = "\n".join(benchlib.report(runs, ["g/fast", "g/slow"], configs, ["pareff"]))
    tables = [l for l in text.splitlines() if l.startswith("Parallel efficiency")]
    check(len(tables) == 2, "one efficiency table per variant:\n" + text)
    fast = [l for l in text.splitlines() if l.strip().startswith("g/fast")]
    check(len(fast) == 2 and "+0.0%~ [" in fast[0] and "+48." in fast[1] and "~" not in fast[1],
          "a: -N2 used the CPU of -N1; b: +48 %, moved:\n" + text)
    slow = [l for l in text.splitlines() if l.strip().startswith("g/slow ") and "]:" not in l]
    check(len(slow) == 2 and all("2 modes" in l for l in slow)
          and "own -N1): clusters" in text and "g/slow [b -N2 -A4m]: 1.030 (3 runs" in text,
          "CPU doubled in half the runs: two modes, listed:\n" + text)
    none = "\n".join(benchlib.report(runs, ["g/fast"], ["a -N2 -A4m", "b -N2 -A4m"], ["pareff"]))
    check("no figures; no variant has a configuration at -N1" in none,
          "without -N1 there is nothing to compare:\n" + none)


def test_servers():
    sys.path.insert(0, TESTSUITE)
    import serverload
    w = serverload.parse_wrk(WRK_TEXT)
    check(w["requests"] == 5098 and abs(w["seconds"] - 2.01) < 1e-9, f"wrk totals: {w}")
    check(w["requests_per_second"] == 2541.07, "wrk Requests/sec")
    check(abs(w["latency_p50"] - 0.01976) < 1e-9 and abs(w["latency_p75"] - 0.00075) < 1e-9
          and abs(w["latency_p90"] - 1.2) < 1e-9 and abs(w["latency_p99"] - 0.39376) < 1e-9,
          f"wrk percentiles in seconds, whatever the unit: {w}")
    check(abs(w["latency_max"] - 0.39376) < 1e-9, "wrk latency max")
    check(w["errors"] == 12 and w["error_detail"] == {"read": 3, "timeout": 2, "non-2xx": 7},
          f"wrk socket errors and non-2xx answers count as errors: {w['error_detail']}")
    clean = serverload.parse_wrk(WRK_TEXT.replace("  Socket errors: connect 0, read 3, write 0, "
                                                  "timeout 2\n", "")
                                 .replace("  Non-2xx or 3xx responses: 7\n", ""))
    check(clean["errors"] == 0, "no error lines: no errors")
    try:
        serverload.parse_wrk("unable to connect to 127.0.0.1:1 Connection refused\n")
        check(False, "wrk output without totals is an error")
    except ValueError:
        pass
    # a server's rows, and tables that only servers have
    tmp = tempfile.mkdtemp(prefix="rtslab-bench-test-")
    try:
        path = os.path.join(tmp, "srv.scm")
        with open(path, "w") as f:
            f.write(";; srv: a server\n;; quick: 0\n;; norm: 0\n;; slow: 0\n;; load: / /work\n")
        rows = benchlib.per_route(benchlib.parse_program("io", path))
        check([r.id for r in rows] == ["io/srv:/", "io/srv:/work"]
              and [r.route for r in rows] == ["/", "/work"], "a row per load path")
        with open(path, "w") as f:
            f.write(";; srv: a server\n;; quick: 0\n;; norm: 0\n;; slow: 0\n;; load: work\n")
        try:
            benchlib.parse_program("io", path)
            check(False, "a load path without / is a header error")
        except benchlib.HeaderError:
            pass
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    runs = [fake_run("g/p1", "A", 1.0, 10), fake_run("io/srv:/", "A", 5.0, 10)]
    runs[1]["stats"]["load_requests_per_second"] = 1234.0
    text = "\n".join(benchlib.report(runs, ["g/p1", "io/srv:/"], ["A"], ["elapsed", "rps"]))
    rps_part = text.split("Requests per second")[1]
    check("io/srv:/" in rps_part and "g/p1" not in rps_part and "1234" in rps_part,
          "the rps table lists the servers only:\n" + text)
    text = "\n".join(benchlib.report(runs[:1], ["g/p1"], ["A"], ["elapsed", "rps"]))
    check("Requests per second" not in text, "no server, no rps table")


PROG = """;; {name}: a test program for the runner
;; quick: 20
;; norm: 21
;; slow: 22
(define n (string->number (cadr (command-line))))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(define v (let loop ((i 0) (acc '())) (if (= i 20000) (length acc) (loop (+ i 1) (cons i acc)))))
(display (list (fib n) v {extra}))
(newline)
"""


def test_runner(build):
    tmp = tempfile.mkdtemp(prefix="rtslab-bench-test-")
    try:
        shutil.copy(os.path.join(TESTSUITE, "..", "configure.ac"), tmp)
        gdir = os.path.join(tmp, "testsuite", "bench", "t")
        os.makedirs(gdir)
        # good: same output everywhere; bad: prints the capability count, so its -N2 run is
        # wrong against the expected output made at -N1.
        for name, extra in (("good", "'ok"), ("bad", "(num-capabilities)")):
            with open(os.path.join(gdir, name + ".scm"), "w") as f:
                f.write(PROG.format(name=name, extra=extra))
            with open(os.path.join(gdir, name + ".quick.stdout"), "w") as f:
                f.write(f"(6765 20000 {'ok' if name == 'good' else 1})\n")
        out = os.path.join(tmp, "out")
        cmd = [sys.executable, os.path.join(TESTSUITE, "bench.py"), "--src", tmp,
               "--use-build", f"baseline={build}", "-c", "baseline:-N1", "-c", "baseline:-N2",
               "--layouts", "2", "-k", "1", "--out", out]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        check(r.returncode == 1, f"exit status 1 when a run fails (got {r.returncode})\n"
              + r.stdout + r.stderr)
        check("t/bad [baseline -N2] run 1: stdout line 1" in r.stdout,
              "the failed run is reported with its first wrong line:\n" + r.stdout)
        check("Geometric Mean" in r.stdout, "the table is printed")
        latest = os.path.join(out, "latest")
        with open(os.path.join(latest, "runs.json")) as f:
            data = json.load(f)
        runs = data["runs"]
        check(len(runs) == 8, f"2 programs x 2 configs x 2 layouts = 8 runs (got {len(runs)})")
        bad = [x for x in runs if not x["ok"]]
        check(len(bad) == 2 and all(x["program"] == "t/bad" and x["config"] == "baseline -N2"
                                    for x in bad), "exactly t/bad's -N2 runs failed")
        good = [x for x in runs if x["ok"]]
        check(all(x["stats"].get("allocated_bytes", 0) > 20000 * 16 for x in good),
              "every good run has its statistics (allocated_bytes)")
        check(all(x["stats"].get("n_capabilities") == (1 if x["config"].endswith("-N1") else 2)
                  for x in good), "each run ran with its configuration's -N")
        check(data["configs"][1]["rts"] == ["-N2"] and data["size"] == "quick", "metadata")
        check(sorted({x["layout"] for x in runs}) == [1, 2] and data["layouts"] == 2
              and data["runs_per_layout"] == 1,
              "--layouts 2 -k 1: the runs of each configuration on layouts 1 and 2")
        check(all(x["command"][0] == os.path.join(build, "layouts", f"rtslab-{x['layout']}")
                  for x in runs), "each run ran its layout's binary")
        check(all(0 <= x["env_pad"] < 4096 for x in runs)
              and len({x["env_pad"] for x in runs if x["config"].endswith("-N1")}) > 1,
              "each round has its own environment padding")
        check(all(x["stats"].get("os_task_clock_seconds", -1) >= 0
                  and x["stats"].get("os_counters_source") in ("perf", "rusage")
                  and "os_context_switches" in x["stats"] for x in good),
              "every good run has the OS's counters (task clock, context switches)")
        with open(os.path.join(latest, "runs.csv")) as f:
            rows = list(csv.DictReader(f))
        check(len(rows) == 8 and all("total_wall_seconds" in row for row in rows),
              "runs.csv holds every run with the statistics as columns")
        with open(os.path.join(latest, "table.txt")) as f:
            table = f.read()
        check("t/good" in table and "FAIL" in table, "table.txt: t/good's row and t/bad's FAIL")
        # --report reprints the saved table
        r2 = subprocess.run([sys.executable, os.path.join(TESTSUITE, "bench.py"), "--report",
                             os.path.join(latest, "runs.json")], capture_output=True,
                            text=True, timeout=60)
        check(r2.returncode == 0 and "t/good" in r2.stdout, "--report reprints the table")
        # ... from runs.json.gz too, as experiments/*/results/ keeps the raw runs
        gz = os.path.join(tmp, "runs.json.gz")
        with open(os.path.join(latest, "runs.json"), "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        r2gz = subprocess.run([sys.executable, os.path.join(TESTSUITE, "bench.py"), "--report",
                               gz], capture_output=True, text=True, timeout=60)
        check(r2gz.returncode == 0 and r2gz.stdout == r2.stdout,
              f"--report of runs.json.gz prints the same table: {r2gz.stderr[-300:]!r}")
        # a bad configuration is a clear error
        r3 = subprocess.run([sys.executable, os.path.join(TESTSUITE, "bench.py"), "--src", tmp,
                             "-c", "nosuch:-N1"], capture_output=True, text=True, timeout=60)
        check(r3.returncode != 0 and "unknown variant 'nosuch'" in r3.stderr,
              "an unknown variant is an error: " + r3.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def read_until(p, buf, want, deadline):
    """Reads P's stdout into BUF (a bytearray) until WANT(BUF) or the deadline (a bound
    against a hang, not a timing: the check that follows says what was missing)."""
    fd = p.stdout.fileno()
    while not want(buf) and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            buf += chunk
    return want(buf)


def load_json(path):
    """PATH's JSON object, or {} when it is missing or not JSON (the check says so)."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def command_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline") as f:
            return f"{pid}: " + f.read().replace("\0", " ")
    except OSError as e:
        return f"{pid}: {e}"


def processes_in(directory):
    """The processes whose working directory is under DIRECTORY (a run left behind)."""
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
            if cwd == directory or cwd.startswith(directory + "/"):
                found.append(pid)
    return found


def test_interrupt(build):
    """Ctrl-C (SIGINT) in the middle of a run (issue 45 item 19): the runs so far were saved
    as they went and are kept, the run in progress is killed, no temporary file is left, one
    line says so and the exit status is 130; bad arguments are one line and exit status 2."""
    tmp = tempfile.mkdtemp(prefix="rtslab-bench-test-")
    try:
        shutil.copy(os.path.join(TESTSUITE, "..", "configure.ac"), tmp)
        gdir = os.path.join(tmp, "testsuite", "bench", "t")
        os.makedirs(gdir)
        # a: quick (fib 20); b: fib 32, about half a second a run
        for name, n, fib in (("a", 20, 6765), ("b", 32, 2178309)):
            with open(os.path.join(gdir, name + ".scm"), "w") as f:
                f.write(PROG.format(name=name, extra="'ok").replace(";; quick: 20",
                                                                 f";; quick: {n}"))
            with open(os.path.join(gdir, name + ".quick.stdout"), "w") as f:
                f.write(f"({fib} 20000 ok)\n")
        tmpdir = os.path.join(tmp, "tmpdir")      # the runner's temporary files, to count
        os.makedirs(tmpdir)
        out = os.path.join(tmp, "out")
        runs_json = os.path.join(out, "latest", "runs.json")
        p = subprocess.Popen([sys.executable, os.path.join(TESTSUITE, "bench.py"), "--src", tmp,
                              "--use-build", f"baseline={build}", "-c", "baseline:-N1",
                              "-k", "4", "--no-perf", "--out", out],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "TMPDIR": tmpdir})
        buf = bytearray()
        try:
            deadline = time.monotonic() + 120
            # t/a's row is done, and one run of t/b ("." after "[ 2/2] t/b")
            seen = read_until(p, buf, lambda b: re.search(rb"\[ 2/2\] t/b +[.F]", b), deadline)
            check(seen, "the runner got to t/b's first run: " + buf.decode(errors="replace"))
            saved = load_json(runs_json)
            check(saved.get("state") == "running" and len(saved["runs"]) >= 4
                  and [r["program"] for r in saved["runs"][:4]] == ["t/a"] * 4,
                  "runs.json is written as the runs go: t/a's 4 runs before t/b starts: "
                  f"{saved.get('state')} {[r['program'] for r in saved.get('runs', [])]}")
            # SIGINT in the middle of t/b's second run: once its process is there
            while not processes_in(gdir) and p.poll() is None and time.monotonic() < deadline:
                select.select([], [], [], 0.01)
            running = processes_in(gdir)
            check(running and os.listdir(tmpdir),
                  f"a run in progress (its process {running}, its statistics file "
                  f"{os.listdir(tmpdir)}) when the runner is interrupted")
            p.send_signal(signal.SIGINT)
            rest, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        stdout = (bytes(buf) + rest).decode(errors="replace")
        err = err.decode(errors="replace")
        check(p.returncode == 130, f"Ctrl-C: exit status 130, got {p.returncode}\n{stdout}{err}")
        lines = [l for l in err.splitlines() if l.strip()]
        check(len(lines) == 1 and lines[0].startswith("bench: interrupted (SIGINT) after ")
              and "runs.json" in lines[0], f"Ctrl-C: one line on stderr, not {err!r}")
        left = processes_in(gdir)
        check(left == [], f"no run left running: {[command_of(pid) for pid in left]}")
        check(os.listdir(tmpdir) == [], f"no temporary file left: {os.listdir(tmpdir)}")
        data = load_json(runs_json)
        runs = data.get("runs", [])
        progs = [r["program"] for r in runs]
        check(data.get("state") == "interrupted" and data.get("runs_planned") == 8
              and progs[:4] == ["t/a"] * 4 and 1 <= progs.count("t/b") < 4
              and all(r["ok"] for r in runs),
              f"runs.json keeps every finished run, and only those: {data.get('state')} {progs}")
        outdir = os.path.realpath(os.path.join(out, "latest"))
        listed = sorted(os.listdir(outdir)) if os.path.isdir(outdir) else None
        check(listed == ["runs.csv", "runs.json", "table.txt"],
              f"the results and no temporary file: {listed}")
        if listed:
            with open(os.path.join(outdir, "runs.csv")) as f:
                check(len(list(csv.DictReader(f))) == len(runs), "runs.csv holds the same runs")
        r = subprocess.run([sys.executable, os.path.join(TESTSUITE, "bench.py"), "--report",
                            runs_json], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and f"INTERRUPTED: {len(runs)} of 8 runs finished" in r.stdout
              and "t/a" in r.stdout, "--report prints the interrupted runs' table: "
              + r.stdout + r.stderr)

        # Bad arguments: one line on stderr, exit status 2, nothing run.
        with open(os.path.join(tmp, "not.json"), "w") as f:
            f.write("not json\n")
        with open(os.path.join(tmp, "list.json"), "w") as f:
            f.write("[1, 2]\n")
        base = [sys.executable, os.path.join(TESTSUITE, "bench.py"), "--src", tmp,
                "--use-build", f"baseline={build}", "-c", "baseline:-N1", "--out", out]
        for args, want in ((["-p", "["], "-p '[' is not a regular expression"),
                           (["--report", os.path.join(tmp, "missing.json")],
                            "No such file or directory"),
                           (["--report", os.path.join(tmp, "not.json")], "not JSON"),
                           (["--report", os.path.join(tmp, "list.json")], "not a runs.json"),
                           (["--timeout", "-5"], "--timeout wants a positive number"),
                           (["--timeout", "0"], "--timeout wants a positive number"),
                           (["--layouts", "1000"], "--layouts 1000: at most 64. It would link "
                                                   "1000 copies of rtslab")):
            try:        # refused at once, before any build, link or run
                r = subprocess.run(base + args, capture_output=True, text=True, timeout=60,
                                   env={**os.environ, "TMPDIR": tmpdir})
                status, err = r.returncode, r.stderr
            except subprocess.TimeoutExpired:
                status, err = None, "(still running after 60 s)"
            lines = [l for l in err.splitlines() if l.strip()]
            check(status == 2 and len(lines) == 1 and want in lines[0]
                  and lines[0].startswith("bench: "),
                  f"{' '.join(args)}: one line with {want!r} and exit status 2: "
                  f"{status} {err[-600:]!r}")
        check(sorted(os.listdir(out) if os.path.isdir(out) else []) ==
              sorted(["latest", os.path.basename(outdir)])
              and not os.path.exists(os.path.join(build, "layouts", "rtslab-1000")),
              f"a refused command runs and links nothing: {os.listdir(out)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def test_patch_summary():
    """bench_patches' summary: a patch's effect alone and last added, with the geometric
    mean's interval over layouts and the programs whose own interval excludes 0."""
    import bench_patches
    runs = []
    for layout in (1, 2, 3):
        for k, w in enumerate((1.0, 1.01)):
            for prog, slow in (("g/a", 1.0), ("g/b", 1.0), ("g/c", 2.0)):
                base = w * (1.0 + 0.02 * layout)
                for config, f in (("baseline -N2", 1.0), ("p -N2", slow)):
                    runs.append(dict(fake_run(prog, config, base * f, 1.0), layout=layout, run=k))
    labels = {("baseline", None, 2): "baseline -N2", ("alone", "p", 2): "p -N2",
              ("all", None, 2): "p -N2", ("allbut", "p", 2): "baseline -N2"}
    data = {"runs": runs, "layouts": 3, "runs_per_layout": 2, "runs_per_config": 6}
    rows = bench_patches.summarize(data, labels, ["p"], [2])
    el = rows[0]["alone_elapsed"]
    check(abs(el["geomean"] - 2.0 ** (1 / 3)) < 1e-9 and el["lo"] is not None
          and el["lo"] > 1.0 and el["moved"] == 1 and el["programs"] == 3
          and el["worst"][0] == "g/c",
          f"alone: geomean 2^(1/3), its interval above 1, g/c alone moved and worst: {el}")
    text = "\n".join(bench_patches.summary_lines(rows, data))
    check("(1/3 moved)" in text and "3 layouts x 2 run(s)" in text and "[+" in text,
          "the summary shows the interval, the moved count and the layouts:\n" + text)
    one = dict(data, layouts=0, runs_per_config=2)
    check("ONE layout" in "\n".join(bench_patches.summary_lines(rows, one)),
          "a summary of one layout says a difference may be layout")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    args = ap.parse_args()
    test_report()
    test_patch_summary()
    test_efficiency()
    test_servers()
    test_runner(os.path.abspath(args.build))
    test_interrupt(os.path.abspath(args.build))
    return summary()


if __name__ == "__main__":
    sys.exit(main())
