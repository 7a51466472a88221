"""The perf diagnoses of the seeds, run on one rtslab program, for the experiments' perf
scripts (experiments/PATCH/perf.py, beside each experiment's run.py).

Seed 000 ("scaling ghc --make") ran `perf record` and found GHC "did mostly sched_yield()";
seed 001 ("OCaml 5 performance part 2") read stop-the-world latency off `perf sched
record` / `perf sched timehist` (a domain late to a GC because it waited for a CPU) and
counted context switches with `perf stat`. Each diagnosis here is one run of the program
under one perf tool, with the runtime's own `-s --machine-readable` taken in the same run, so
that a report can put perf's figures next to the runtime's counters of the same run:

    caps = perfdiag.probe()                        # what perf may do here, and why not
    r = perfdiag.stat(cmd, cwd, stats_file)        # perf stat: software events + syscalls
    r = perfdiag.record(cmd, cwd, stats_file)      # perf record -g: where the samples are
    r = perfdiag.sched(cmd, cwd, stats_file)       # perf sched: per-thread delays

Each returns a dict: "ok" (False when perf may not do it here, with "why"), the figures,
perf's own text ("text", what a user would see), and "stats", the runtime's -s. The
commands are in "perf_command", so a report can show how to get the same view by hand.

- stat: `perf stat -x,` of the software events (testsuite/oscounters.py), and the
  sched_yield, futex and nanosleep system calls (tracepoints syscalls:sys_enter_*), where
  perf may read tracepoints here (root, or kernel.perf_event_paranoid = -1).
- record: `perf record -e cpu-clock -g` (a sample every 1/4000 s of CPU time), then
  `perf report` (the top symbols, by self time) and `perf script`, whose call chains say
  which system call a sample in the kernel was made from: the share of samples in
  sched_yield, futex, nanosleep, other kernel work, and the user functions an experiment
  names (its spin loops, its GC's look-for-work loop). rtslab is built without frame
  pointers, so only the kernel's part of a chain and the leaf user frame are reliable; that
  is all this reads. Without kernel access (paranoid 2), perf samples user mode only, and
  time inside system calls is not sampled at all: the report says so ("kernel": False).
- sched: `perf sched record` (system wide: the other processes that take our CPUs are
  part of the picture) during the run, then `perf sched timehist` for the run's own
  threads (its process id, so other rtslab processes on the machine are left out): for
  each thread the times it was switched in, its run time, its wait time (asleep), its
  scheduling delay (runnable, waiting for a CPU: seed 001's "late to respond"), and the
  largest delay; how often it was switched out while runnable (preempted, state R) rather
  than asleep (S). Needs the sched tracepoints (root, or paranoid -1).

The workload runs through `sh -c 'echo $$ >PIDFILE; exec "$@"'`, so its process id is
known without guessing from names. Runs that fail (exit status, a timeout) raise
PerfDiagError with the command and stderr's tail.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "testsuite"))
import benchlib  # noqa: E402  (testsuite/benchlib.py: -s --machine-readable)
import oscounters  # noqa: E402  (testsuite/oscounters.py: perf stat's output)

PERF = "perf"
# The system calls a spinning, yielding or sleeping runtime makes (glibc's nanosleep is
# clock_nanosleep; pthread condition variables and futex-based waits are futex).
SYSCALLS = ("sched_yield", "futex", "clock_nanosleep", "nanosleep")
SYSCALL_EVENTS = tuple(f"syscalls:sys_enter_{s}" for s in SYSCALLS)
RECORD_FREQ = 4000
TIMEOUT = 600


class PerfDiagError(Exception):
    pass


# --- what perf may do here ---------------------------------------------------------------

def _try(argv, timeout=60):
    """(ok, why): whether ARGV exits 0; why is perf's first line of complaint."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, str(e)
    if r.returncode == 0:
        return True, ""
    lines = [l.strip() for l in r.stderr.splitlines() if l.strip()]
    why = " ".join(lines[:2]) if lines and lines[0].endswith(":") else (
        lines[0] if lines else f"exit status {r.returncode}")
    return False, why


_probed = {}


def probe(perf=PERF):
    """{capability: (ok, why)} for stat (software events), tracepoints (syscall counts),
    record (sampling; "kernel" says whether kernel samples are allowed) and sched."""
    if perf in _probed:
        return _probed[perf]
    caps = {}
    if not shutil.which(perf):
        why = f"{perf} is not installed (Debian: linux-perf)"
        caps = {k: (False, why) for k in ("stat", "tracepoints", "record", "kernel", "sched")}
        _probed[perf] = caps
        return caps
    p = oscounters.probe_perf(perf)
    caps["stat"] = (p.tool == "perf", p.why)
    caps["tracepoints"] = _try([perf, "stat", "-x,", "-e", SYSCALL_EVENTS[0], "-o",
                                os.devnull, "--", "true"])
    with tempfile.TemporaryDirectory(prefix="rtslab-perfdiag-") as tmp:
        data = os.path.join(tmp, "probe.data")
        caps["record"] = _try([perf, "record", "-q", "-e", "cpu-clock", "-o", data, "--",
                               "true"])
        caps["kernel"] = _try([perf, "record", "-q", "-e", "cpu-clock:k", "-o", data, "--",
                               "true"])
        caps["sched"] = _try([perf, "sched", "record", "-o", data, "--", "true"])
    _probed[perf] = caps
    return caps


def describe(caps):
    """One line per capability, for a report's head."""
    names = {"stat": "perf stat (software events)",
             "tracepoints": "perf stat of system calls (tracepoints)",
             "record": "perf record (sampling)", "kernel": "kernel samples in perf record",
             "sched": "perf sched record"}
    return [f"{names[k]}: {'yes' if ok else 'no (' + why + ')'}"
            for k, (ok, why) in caps.items()]


# --- running a program under perf -------------------------------------------------------

def _run(argv, cwd, env, timeout, tmp):
    """Run ARGV's workload (the part after `--`) through the pid-writing shell; returns
    (its stdout, its process id)."""
    pidfile = os.path.join(tmp, "pid")
    i = argv.index("--")
    wrapped = argv[:i + 1] + ["sh", "-c", 'echo $$ > "$0"; exec "$@"', pidfile] + argv[i + 1:]
    env = dict(os.environ if env is None else env)
    env.pop("RTSLAB_RTS", None)
    # A session of its own, so that a timeout kills the program under perf too.
    p = subprocess.Popen(wrapped, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise PerfDiagError(f"timed out after {timeout} s: {' '.join(argv)}")
    if p.returncode != 0:
        raise PerfDiagError(f"exit status {p.returncode}: {' '.join(argv)}\n"
                            + "\n".join(err.splitlines()[-15:]))
    try:
        with open(pidfile, encoding="utf-8") as f:
            pid = int(f.read().strip())
    except (OSError, ValueError):
        pid = None
    return out, pid


def _stats(stats_file):
    try:
        with open(stats_file, encoding="utf-8", errors="replace") as f:
            return benchlib.parse_machine_readable(f.read())
    except OSError:
        return {}
    finally:
        if os.path.exists(stats_file):
            os.unlink(stats_file)


def _unavailable(caps, key, tool):
    ok, why = caps[key]
    return None if ok else {"ok": False, "why": f"{tool}: {why}", "stats": {}}


def stat(cmd, cwd, stats_file, env=None, perf=PERF, timeout=TIMEOUT):
    """perf stat of CMD (which writes -s to STATS_FILE): {"events": {event: value}, "text",
    "stats", "stdout", "perf_command"}; the system calls only where tracepoints may be
    read."""
    caps = probe(perf)
    off = _unavailable(caps, "stat", "perf stat")
    if off:
        return off
    events = list(oscounters.probe_perf(perf).events)
    if caps["tracepoints"][0]:
        events += SYSCALL_EVENTS
    with tempfile.TemporaryDirectory(prefix="rtslab-perfdiag-") as tmp:
        out = os.path.join(tmp, "stat.txt")
        argv = [perf, "stat", "-x,", "-e", ",".join(events), "-o", out, "--", *cmd]
        stdout, _ = _run(argv, cwd, env, timeout, tmp)
        with open(out, encoding="utf-8", errors="replace") as f:
            text = f.read()
    counted = {e["event"]: (oscounters.seconds(e) if e["event"] == "task-clock" else e["value"])
               for e in oscounters.parse_events(text)}
    return {"ok": True, "events": counted, "text": text, "stats": _stats(stats_file),
            "stdout": stdout, "syscalls_counted": caps["tracepoints"][0],
            "why_no_syscalls": caps["tracepoints"][1],
            "perf_command": f"perf stat -e {','.join(events)} -- {' '.join(cmd)}"}


# perf script's call chains: a header line (comm, tid, ...), then one frame a line,
# "ADDR SYMBOL (DSO)", leaf first; a blank line ends the sample.
_FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
_SYSCALL = re.compile(r"^(?:__x64_sys_|__ia32_sys_|__se_sys_|__do_sys_|__arm64_sys_)(\w+)$")


def parse_script(text, pid_tids=None):
    """The samples of `perf script -F comm,pid,tid,ip,sym,dso` (with -g) as [(tid, frames)],
    frames [(symbol, dso)] leaf first; only threads of PID_TIDS (a set of tids) if given."""
    samples, cur = [], None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            if cur:
                samples.append(cur)
            cur = None
            continue
        m = _FRAME.match(line)
        if m and cur is not None:
            cur[2].append((m.group(2), m.group(3)))
            continue
        if not line[:1].isspace():
            if cur:
                samples.append(cur)
            fields = line.split()
            ids = [f for f in fields if re.fullmatch(r"\d+(/\d+)?", f)]
            pid = tid = None
            if ids:
                a, _, b = ids[0].partition("/")
                pid, tid = (int(a), int(b)) if b else (None, int(a))
            cur = (pid, tid, [])
    if cur:
        samples.append(cur)
    return [(tid, frames) for pid, tid, frames in samples
            if pid_tids is None or pid in pid_tids or tid in pid_tids]


def classify(frames, user_groups):
    """A sample's place: "syscall:NAME" when its kernel frames are a system call's, "kernel:
    page faults" or "kernel: other" for other kernel work, else the group of USER_GROUPS
    ({group: regex over the leaf symbol}) its leaf user frame matches, else "user: other"."""
    kernel = [s for s, d in frames if d.startswith("[kernel")]
    if kernel:
        for s in kernel:
            m = _SYSCALL.match(s)
            if m:
                return f"syscall:{m.group(1)}"
        if any("page_fault" in s for s in kernel):
            return "kernel: page faults"
        return "kernel: other"
    leaf = frames[0][0] if frames else "[unknown]"
    for group, rx in user_groups.items():
        if re.search(rx, leaf):
            return group
    return "user: other"


def shares(samples, user_groups):
    """{place: fraction of the samples} (classify), and the count."""
    counts = {}
    for _, frames in samples:
        place = classify(frames, user_groups)
        counts[place] = counts.get(place, 0) + 1
    n = sum(counts.values())
    return {k: v / n for k, v in sorted(counts.items(), key=lambda kv: -kv[1])} if n else {}, n


def record(cmd, cwd, stats_file, user_groups=None, env=None, perf=PERF, timeout=TIMEOUT,
           top=15, keep=None):
    """perf record -g of CMD: {"shares": {place: fraction}, "samples", "kernel" (kernel
    samples allowed), "top" (perf report's first TOP lines by self time, this process only),
    "stats", "perf_command"}. KEEP: a path to keep perf.data at."""
    caps = probe(perf)
    off = _unavailable(caps, "record", "perf record")
    if off:
        return off
    user_groups = user_groups or {}
    with tempfile.TemporaryDirectory(prefix="rtslab-perfdiag-") as tmp:
        data = os.path.join(tmp, "perf.data")
        argv = [perf, "record", "-q", "-F", str(RECORD_FREQ), "-e", "cpu-clock", "-g", "-o",
                data, "--", *cmd]
        stdout, pid = _run(argv, cwd, env, timeout, tmp)
        pids = ["--pid", str(pid)] if pid else []
        rep = subprocess.run([perf, "report", "-i", data, "--stdio", "--no-children", "-g",
                              "none", "--sort", "dso,sym", "--percent-limit", "0.5", *pids],
                             capture_output=True, text=True, timeout=timeout)
        lines = [l.rstrip() for l in rep.stdout.splitlines()
                 if l.strip() and not l.startswith("#")]
        scr = subprocess.run([perf, "script", "-i", data, "-F", "comm,pid,tid,ip,sym,dso"],
                             capture_output=True, text=True, timeout=timeout)
        samples = parse_script(scr.stdout, {pid} if pid else None)
        if keep:
            shutil.copy(data, keep)
    frac, n = shares(samples, user_groups)
    return {"ok": True, "shares": frac, "samples": n, "kernel": caps["kernel"][0],
            "top": lines[:top], "stats": _stats(stats_file), "stdout": stdout,
            "perf_command": f"perf record -F {RECORD_FREQ} -e cpu-clock -g -- "
                            f"{' '.join(cmd)}; perf report --no-children --sort dso,sym"}


# perf sched timehist: "TIME [CPU] COMM[TID/PID] or COMM[PID]  WAIT  DELAY  RUN  [STATE]"
_TIMEHIST = re.compile(r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.*?)\[(-?\d+)(?:/(\d+))?\]\s+"
                       r"([\d.]+)\s+([\d.]+)\s+([\d.]+)(?:\s+(\w))?\s*$")


def parse_timehist(text, pid=None):
    """{tid: {"switches", "run_ms", "wait_ms", "delay_ms", "max_delay_ms", "preempted",
    "slept", "comm"}} from `perf sched timehist --state` lines; only the threads of process
    PID if given (a thread is COMM[TID/PID], a process's main thread COMM[PID]; perf shows a
    thread that has exited by the time it reads the record as `:-1[-1/PID]`, counted here as
    one thread, tid -1). State R: switched out while runnable (preempted); S or D: asleep."""
    threads = {}
    for line in text.splitlines():
        m = _TIMEHIST.match(line)
        if not m:
            continue
        tid = int(m.group(4))
        tpid = int(m.group(5)) if m.group(5) else tid
        if pid is not None and tpid != pid:
            continue
        wait, delay, run = float(m.group(6)), float(m.group(7)), float(m.group(8))
        t = threads.setdefault(tid, {"switches": 0, "run_ms": 0.0, "wait_ms": 0.0,
                                     "delay_ms": 0.0, "max_delay_ms": 0.0, "preempted": 0,
                                     "slept": 0, "comm": m.group(3)})
        t["switches"] += 1
        t["run_ms"] += run
        t["wait_ms"] += wait
        t["delay_ms"] += delay
        t["max_delay_ms"] = max(t["max_delay_ms"], delay)
        state = m.group(9)
        if state == "R":
            t["preempted"] += 1
        elif state in ("S", "D"):
            t["slept"] += 1
    return threads


def sched_totals(threads):
    """The process's totals over its threads (parse_timehist)."""
    tot = {"threads": len(threads), "switches": 0, "run_ms": 0.0, "wait_ms": 0.0,
           "delay_ms": 0.0, "max_delay_ms": 0.0, "preempted": 0, "slept": 0}
    for t in threads.values():
        for k in ("switches", "run_ms", "wait_ms", "delay_ms", "preempted", "slept"):
            tot[k] += t[k]
        tot["max_delay_ms"] = max(tot["max_delay_ms"], t["max_delay_ms"])
    tot["mean_delay_ms"] = tot["delay_ms"] / tot["switches"] if tot["switches"] else 0.0
    return tot


def sched(cmd, cwd, stats_file, env=None, perf=PERF, timeout=TIMEOUT, keep=None):
    """perf sched record during CMD, then timehist of its threads: {"threads" (per tid),
    "totals", "latency" (perf sched latency's lines for this process), "stats",
    "perf_command"}. KEEP: a path to keep perf.data at."""
    caps = probe(perf)
    off = _unavailable(caps, "sched", "perf sched")
    if off:
        return off
    with tempfile.TemporaryDirectory(prefix="rtslab-perfdiag-") as tmp:
        data = os.path.join(tmp, "sched.data")
        argv = [perf, "sched", "record", "-k", "CLOCK_MONOTONIC", "-o", data, "--", *cmd]
        stdout, pid = _run(argv, cwd, env, timeout, tmp)
        th = subprocess.run([perf, "sched", "timehist", "-i", data, "--state"],
                            capture_output=True, text=True, timeout=timeout)
        lat = subprocess.run([perf, "sched", "latency", "-i", data, "--pids"],
                             capture_output=True, text=True, timeout=timeout)
        if keep:
            shutil.copy(data, keep)
    threads = parse_timehist(th.stdout, pid)
    latency = [l.rstrip() for l in lat.stdout.splitlines()
               if (m := re.search(r":(\d+)\s*\|", l)) and int(m.group(1)) in threads]
    if not latency:
        why = [l.strip() for l in lat.stderr.splitlines() if l.strip()]
        latency = [f"(perf sched latency listed none of this process's threads; exit status "
                   f"{lat.returncode}{': ' + why[0] if why else ''})"]
    return {"ok": True, "pid": pid, "threads": threads, "totals": sched_totals(threads),
            "latency": latency, "stats": _stats(stats_file), "stdout": stdout,
            "perf_command": f"perf sched record -k CLOCK_MONOTONIC -- {' '.join(cmd)}; "
                            "perf sched timehist --state; perf sched latency --pids"}


# --- the report's pieces ----------------------------------------------------------------

def fmt(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    if abs(v) >= 1e6:
        return f"{v:,.0f}"
    if v == int(v):
        return f"{int(v):,}"
    return f"{v:.3f}" if abs(v) < 100 else f"{v:,.1f}"


def table(rows, columns):
    """A markdown table: ROWS [(label, [value per column])], COLUMNS the headings."""
    out = ["| | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
    for label, values in rows:
        out.append(f"| {label} | " + " | ".join(fmt(v) for v in values) + " |")
    return out


def stat_sum(stats, pattern):
    """The sum of the -s keys matching PATTERN (a regex), or None when none is there."""
    vals = [v for k, v in stats.items() if re.fullmatch(pattern, k) and isinstance(v, float)]
    return sum(vals) if vals else None


# --- an experiment's perf script -----------------------------------------------------------
#
# experiments/PATCH/perf.py names its builds, programs, settings, the tools it runs and the
# runtime counters it shows, and calls main(); main() runs every (setting, program, build)
# once per tool and repetition, interleaved (rep 1 of everything, then rep 2), and writes
# OUT/perf.md (a table per setting and program: the builds side by side, perf's figures
# next to the runtime's -s of the same runs, then perf's own text) and OUT/perf.json.

ROOT = os.path.dirname(HERE)


class Workload:
    """A program to run: a suite program (GROUP/NAME, at a size, its output checked) or a
    microbenchmark of the build (micro/NAME:ARG:ARG..., testsuite/bench/micro/NAME.c; its
    exit status checked)."""

    def __init__(self, spec, size):
        self.spec, self.size = spec, size
        if spec.startswith("micro/"):
            name, *args = spec.split(":")
            self.kind, self.name, self.args = "micro", name, args
            self.id = f"{name} {' '.join(self.args)}".strip()
            self.target = "bench/" + name
        else:
            progs = [p for p in benchlib.discover(ROOT) if p.id == spec]
            if not progs:
                raise PerfDiagError(f"no suite program {spec} (testsuite/bench/GROUP/NAME)")
            self.kind, self.prog, self.id, self.target = "suite", progs[0], spec, None

    def command(self, bdir, rts, stats_file):
        """(argv, cwd) of a run in the build BDIR with RTS options RTS, -s to STATS_FILE."""
        if self.kind == "micro":
            return ([os.path.join(bdir, self.target), *self.args, "+RTS", *rts,
                     "-s" + stats_file, "--machine-readable", "-RTS"], None)
        return (benchlib.command(os.path.join(bdir, "rtslab"), self.prog, self.size, rts,
                                 stats_file), os.path.dirname(self.prog.path))

    def check(self, stdout):
        """None when the output is right, else why not (a suite program's expected output)."""
        if self.kind == "micro":
            return None
        with open(self.prog.expected_path(self.size), encoding="utf-8") as f:
            expected = f.read()
        return None if stdout == expected else "stdout " + benchlib.first_difference(
            expected, stdout)


def _median(xs):
    xs = sorted(x for x in xs if x is not None)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def _busy():
    """A CPU-bound process beside the run (seed 001's machine shared with other work)."""
    return subprocess.Popen(["sh", "-c", "while :; do :; done"])


def run_tool(tool, w, bdir, rts, busy, user_groups, tmp):
    stats_file = os.path.join(tmp, "stats")
    argv, cwd = w.command(bdir, rts, stats_file)
    hog = _busy() if busy else None
    try:
        if tool == "stat":
            r = stat(argv, cwd, stats_file)
        elif tool == "record":
            r = record(argv, cwd, stats_file, user_groups)
        else:
            r = sched(argv, cwd, stats_file)
    finally:
        if hog:
            hog.kill()
            hog.wait()
    if r["ok"]:
        why = w.check(r.pop("stdout", ""))
        if why:
            raise PerfDiagError(f"{' '.join(argv)}: {why}")
    return r


def _rows_stat(runs, labels, with_hw):
    ev = lambda k: [_median(r["events"].get(k) for r in runs[l]) for l in labels]
    rows = [("task clock (s)", ev("task-clock")), ("context switches", ev("context-switches")),
            ("CPU migrations", ev("cpu-migrations")), ("page faults", ev("page-faults"))]
    if with_hw:
        rows += [("instructions", ev("instructions")), ("cycles", ev("cycles"))]
    if any(r.get("syscalls_counted") for l in labels for r in runs[l]):
        rows += [(f"{s} system calls", ev(f"syscalls:sys_enter_{s}")) for s in SYSCALLS]
    return rows


def _rows_runtime(runs, labels, runtime_rows):
    out = []
    for label, pattern, *scale in runtime_rows:
        f = scale[0] if scale else 1.0
        vals = [_median(stat_sum(r["stats"], pattern) for r in runs[l]) for l in labels]
        out.append((f"-s: {label}", [None if v is None else v * f for v in vals]))
    return out


def _rows_record(runs, labels, user_groups):
    places = list(user_groups)
    for l in labels:
        for r in runs[l]:
            for k, v in r["shares"].items():
                if v >= 0.01 and k not in places:
                    places.append(k)
    rows = [("samples", [_median(r["samples"] for r in runs[l]) for l in labels])]
    pct = lambda v: None if v is None else f"{v:.1f}%"
    rows += [(f"samples in {p}", [pct(_median(100.0 * r["shares"].get(p, 0.0) for r in runs[l]))
                                  for l in labels]) for p in places]
    return rows


def _rows_sched(runs, labels):
    t = lambda k: [_median(r["totals"][k] for r in runs[l]) for l in labels]
    return [("threads", t("threads")), ("switched in", t("switches")),
            ("switched out runnable (preempted, R)", t("preempted")),
            ("switched out asleep (S)", t("slept")), ("run time (ms)", t("run_ms")),
            ("wait time, asleep (ms)", t("wait_ms")),
            ("scheduling delay, total (ms)", t("delay_ms")),
            ("scheduling delay, mean (ms)", t("mean_delay_ms")),
            ("scheduling delay, max (ms)", t("max_delay_ms"))]


TOOL_TITLES = {"stat": "perf stat", "record": "perf record (where the CPU time goes)",
               "sched": "perf sched (what the threads waited for)"}


def report(results, labels, tools, user_groups, runtime_rows, with_hw):
    """The markdown of every (setting, program): per tool, perf's rows and the runtime's of
    the same runs, the builds side by side; then perf's own text of the first repetition."""
    out = []
    for key, per_tool in results.items():
        out += [f"### {key}", ""]
        text = []
        for tool in tools:
            runs = per_tool.get(tool)
            if not runs:
                continue
            off = [r for l in labels for r in runs[l] if not r["ok"]]
            out.append(f"**{TOOL_TITLES[tool]}**" + (f": not run here, {off[0]['why']}"
                                                     if off else ""))
            out.append("")
            if off:
                continue
            rows = (_rows_stat(runs, labels, with_hw) if tool == "stat" else
                    _rows_record(runs, labels, user_groups) if tool == "record" else
                    _rows_sched(runs, labels))
            rows += _rows_runtime(runs, labels, runtime_rows.get(tool, []))
            out += table(rows, labels) + [""]
            if runs[labels[0]][0].get("perf_command"):
                text += [f"by hand ({labels[0]}): {runs[labels[0]][0]['perf_command']}", ""]
            if tool == "record":
                if not runs[labels[0]][0]["kernel"]:
                    out += ["(perf may not sample the kernel here: time inside system calls "
                            "is missing from the samples)", ""]
                for l in labels:
                    text += [f"{l}: perf report --no-children --sort dso,sym (self time, "
                             "this process):", *runs[l][0]["top"], ""]
            if tool == "sched":
                for l in labels:
                    text += [f"{l}: perf sched latency --pids (this process's threads):",
                             *runs[l][0]["latency"], ""]
        if text:
            out += ["```", *text, "```", ""]
    return out


def main(argv=None, *, who, here, default_builds, programs, settings, tools, user_groups=None,
         runtime_rows=None, size="quick", about="", patch=None):
    """An experiment's perf script (see the section's comment). DEFAULT_BUILDS: [(label,
    build spec)], the first the baseline; PROGRAMS: workload specs; SETTINGS: {name: (RTS
    options, busy)}; TOOLS: of "stat", "record", "sched"; USER_GROUPS: {group: regex over a
    sample's leaf symbol}; RUNTIME_ROWS: {tool: [(label, regex over -s keys, summed[, scale])]};
    PATCH: the patch the first build must lack and the others have (their --info)."""
    import argparse
    import datetime
    import json
    import platform
    sys.path.insert(0, HERE)
    import variant  # noqa: E402  (tools/variant.py)
    ap = argparse.ArgumentParser(prog=f"experiments/{who}/perf.py", description=about,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for label, spec in default_builds:
        ap.add_argument(f"--{label}", default=spec, metavar="BUILD",
                        help=variant.SPEC_HELP + f" (default: {spec})")
    ap.add_argument("--size", default=size, choices=benchlib.SIZES,
                    help=f"the suite programs' size (default {size})")
    ap.add_argument("--settings", default=",".join(settings),
                    help=f"of {', '.join(settings)} (default: all)")
    ap.add_argument("-p", "--programs", default=",".join(programs),
                    help="workloads: GROUP/NAME (a suite program) or micro/NAME[:ARG...] (a "
                         f"microbenchmark of the build, its arguments after colons); default {','.join(programs)}")
    ap.add_argument("--tools", default=",".join(tools), help=f"of {', '.join(tools)}")
    ap.add_argument("--reps", type=int, default=1,
                    help="runs of each (setting, program, build, tool); figures are medians")
    ap.add_argument("--out", default=os.path.join(here, "results", "perf"))
    a = ap.parse_args(argv)
    chosen = [s for s in a.settings.split(",") if s]
    for s in chosen:
        if s not in settings:
            ap.error(f"unknown setting '{s}' (known: {', '.join(settings)})")
    use_tools = [t for t in a.tools.split(",") if t]
    for t in use_tools:
        if t not in ("stat", "record", "sched"):
            ap.error(f"unknown tool '{t}' (stat, record, sched)")
    if a.reps < 1:
        ap.error("--reps must be at least 1")
    try:
        works = [Workload(s, a.size) for s in a.programs.split(",") if s]
    except PerfDiagError as e:
        ap.error(str(e))
    targets = ("rtslab", *sorted({w.target for w in works if w.target}))
    labels = [label for label, _ in default_builds]
    builds = {l: variant.resolve_or_exit(getattr(a, l.replace("-", "_")), ROOT, f"{who}/perf.py",
                                         targets=targets)[1] for l in labels}
    if patch:
        has = {l: patch in (builds[l]["patches"] or "").split() for l in labels}
        if has[labels[0]] or not all(has[l] for l in labels[1:]):
            sys.exit(f"{who}/perf.py: --{labels[0]} must be built without {patch} and "
                     f"{', '.join('--' + l for l in labels[1:])} with it (their patches: "
                     + "; ".join(f"{l}: {builds[l]['patches']}" for l in labels) + ")")
    caps = probe()
    hw = oscounters.probe_perf().hardware
    print("\n".join(describe(caps)), flush=True)
    results = {}
    with tempfile.TemporaryDirectory(prefix="rtslab-perfdiag-") as tmp:
        for rep in range(a.reps):
            for s in chosen:
                rts, busy = settings[s]
                for w in works:
                    key = f"{w.id}, `+RTS {' '.join(rts)}`" + (" beside a busy loop" if busy else "")
                    per_tool = results.setdefault(key, {})
                    for tool in use_tools:
                        order = labels if rep % 2 == 0 else labels[::-1]
                        for l in order:
                            try:
                                r = run_tool(tool, w, builds[l]["dir"], rts, busy, user_groups
                                             or {}, tmp)
                            except PerfDiagError as e:
                                sys.exit(f"{who}/perf.py: {e}")
                            per_tool.setdefault(tool, {}).setdefault(l, []).append(r)
                            print(f"[rep {rep + 1}/{a.reps}] {s:8} {w.id:28} {tool:6} {l}"
                                  + ("" if r["ok"] else f": not run ({r['why']})"), flush=True)
    body = report(results, labels, use_tools, user_groups or {}, runtime_rows or {}, hw)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    load = os.getloadavg()
    head = [f"# {who}: perf beside the runtime's counters", "",
            f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC on {platform.node()} "
            f"({os.cpu_count()} CPUs), commit {commit}, size {a.size}, {a.reps} rep(s) "
            f"(figures: medians), load average at the end {load[0]:.1f} {load[1]:.1f} "
            f"{load[2]:.1f}.", "",
            "Command: `python3 experiments/" + who + "/perf.py " + " ".join(
                (argv if argv is not None else sys.argv[1:])) + "`", ""]
    head += [f"- {variant.describe(l, builds[l])}" for l in labels] + [""]
    head += [f"- {line}" for line in describe(caps)] + [""]
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "perf.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(head + body) + "\n")
    with open(os.path.join(a.out, "perf.json"), "w", encoding="utf-8") as f:
        json.dump({"commit": commit, "size": a.size, "reps": a.reps, "builds": builds,
                   "perf": {k: list(v) for k, v in caps.items()}, "results": results}, f,
                  indent=1, default=str)
    print("\n".join(head + body))
    print(f"{who}/perf.py: wrote {a.out}/perf.md and perf.json")
    return 0
