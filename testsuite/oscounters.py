"""The operating system's counters of one run, beside the runtime's own (`-s`): task clock,
context switches (voluntary and involuntary), CPU migrations, page faults, and instructions
and cycles where the machine exposes hardware counters. They do not move with code layout,
so a report that puts them next to time shows the mechanism behind a difference.

    p = oscounters.probe_perf()             # once: a Probe (tool, events, why)
    cmd, read = oscounters.wrap(p, cmd)     # run cmd; then read(rusage_delta) -> {key: value}
    oscounters.probe()                      # the tool alone: "perf" or "rusage"

With `perf stat` (Debian's linux-perf; it must be allowed to count a child here:
kernel.perf_event_paranoid <= 2 lets a user count its own processes' software events),
the run's command is wrapped in `perf stat -x, -o FILE -e EVENTS`; its overhead for software
events is a few counter reads at start and exit. EVENTS are the software events, and
instructions and cycles only where `perf stat -e instructions` counts them here (a virtual
machine often has no hardware counters: perf then says `<not supported>`). Without perf, or
where perf may not count, the counters come from the child's rusage (getrusage(RUSAGE_CHILDREN)
deltas, which the runners take anyway): user + system CPU as the task clock, context
switches and page faults; migrations, instructions and cycles are then missing, never
guessed. Every value is a float; the keys are os_* (OS_KEYS), and os_counters_source says
which tool gave them. A run whose perf output holds no counter (perf failed in that run)
falls back to its rusage, and says so in os_counters_source.

`perf stat -x,` output (perf's "CSV" mode, perf-stat(1)): one line per event, the fields
value, unit, event, then the time the event ran, the % of that time it was counted, and an
optional derived metric with its unit. `#` lines are comments (`-o FILE` starts with
"# started on ..."). The value is `<not supported>` or `<not counted>` where the event could
not be counted. Events of a process counted without kernel access carry a modifier
(`instructions:u`); task-clock's unit is msec. With -I (intervals) every line starts with
the interval's time stamp, which parse_events() also reads.
"""
import os
import re
import shutil
import subprocess
import tempfile

SOFTWARE_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults")
HARDWARE_EVENTS = ("instructions", "cycles")
PERF_EVENTS = SOFTWARE_EVENTS + HARDWARE_EVENTS
OS_KEYS = ("os_task_clock_seconds", "os_context_switches", "os_voluntary_context_switches",
           "os_involuntary_context_switches", "os_cpu_migrations", "os_page_faults",
           "os_instructions", "os_cycles")
_PERF_KEY = {"task-clock": "os_task_clock_seconds", "context-switches": "os_context_switches",
             "cpu-migrations": "os_cpu_migrations", "page-faults": "os_page_faults",
             "instructions": "os_instructions", "cycles": "os_cycles",
             # perf's aliases of the same software events
             "cs": "os_context_switches", "migrations": "os_cpu_migrations",
             "faults": "os_page_faults", "cpu-clock": None}

# perf's event modifiers (perf-list(1)): user, kernel, hypervisor, guest, host, precise...
_MODIFIER = re.compile(r"[ukhHGIpPSDW]+")

_probed = {}


class Probe:
    """What perf may count here. tool: "perf" or "rusage"; events: the events wrap() asks
    perf for; hardware: whether instructions and cycles are among them; why: a sentence
    saying why perf is not used (tool "rusage") or why there are no hardware counters."""

    def __init__(self, tool, events=(), hardware=False, why=""):
        self.tool, self.events, self.hardware, self.why = tool, tuple(events), hardware, why

    def describe(self):
        if self.tool != "perf":
            return f"getrusage ({self.why})" if self.why else "getrusage"
        hw = ("with instructions and cycles" if self.hardware
              else f"software events only ({self.why})" if self.why else "software events only")
        return f"perf stat, {hw}"


def _perf_stat(perf, events, timeout=30):
    """(exit status, {event: value or None}, stderr) of `perf stat -x, -e EVENTS -- true`;
    status None when perf could not be started."""
    with tempfile.NamedTemporaryFile(prefix="rtslab-perf-", delete=False) as tf:
        path = tf.name
    try:
        r = subprocess.run([perf, "stat", "-x,", "-e", ",".join(events), "-o", path, "--",
                            "true"], capture_output=True, timeout=timeout)
        with open(path, encoding="utf-8", errors="replace") as f:
            counted = {e["event"]: e["value"] for e in parse_events(f.read())}
        return r.returncode, counted, r.stderr.decode("utf-8", errors="replace")
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, {}, str(e)
    finally:
        if os.path.exists(path):
            os.unlink(path)


def _first_line(text):
    """perf's message in one line: its first line, with the next when the first is only a
    heading ("Error:")."""
    lines = [l.strip() for l in text.splitlines() if l.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def probe_perf(perf="perf", refresh=False):
    """A Probe of this machine: `perf stat` of `true` with the software events, then with
    instructions. Cached per perf binary (refresh=True asks again)."""
    if perf in _probed and not refresh:
        return _probed[perf]
    if not shutil.which(perf):
        p = Probe("rusage", why=f"{perf} is not installed (Debian: linux-perf)")
    else:
        status, counted, err = _perf_stat(perf, SOFTWARE_EVENTS)
        if status != 0 or counted.get("task-clock") is None:
            why = _first_line(err) or f"exit status {status}"
            p = Probe("rusage", why=f"perf stat may not count here: {why}")
        else:
            status, hw, err = _perf_stat(perf, HARDWARE_EVENTS)
            if status == 0 and all(hw.get(e) is not None for e in HARDWARE_EVENTS):
                p = Probe("perf", PERF_EVENTS, hardware=True)
            else:
                p = Probe("perf", SOFTWARE_EVENTS,
                          why="no hardware counters: perf stat -e instructions says "
                              + ("<not supported>" if "instructions" in hw else
                                 (_first_line(err) or "nothing")))
    _probed[perf] = p
    return p


def probe():
    """'perf' when `perf stat` can count a child's software events here, else 'rusage'."""
    return probe_perf().tool


def parse_events(text):
    """The events of `perf stat -x,` output, in order: [{event, value, unit, modifier,
    interval}], value a float or None where perf could not count the event (`<not
    supported>`, `<not counted>`), event without its modifier (cycles:u -> cycles,
    modifier "u"), interval the time stamp of -I output or None. Lines that are no event
    (comments, blank lines, perf's messages) are left out."""
    out = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = [f.strip() for f in line.split(",")]
        interval = None
        if len(fields) >= 4 and _is_number(fields[0]) and (
                _is_number(fields[1]) or fields[1].startswith("<")) and not _is_number(fields[3]):
            interval, fields = float(fields[0]), fields[1:]       # -I: time stamp first
        if len(fields) < 3 or not fields[2]:
            continue
        value, unit, event = fields[0], fields[1], fields[2]
        name, _, modifier = event.partition(":")
        if modifier and not _MODIFIER.fullmatch(modifier):
            name, modifier = event, ""            # a tracepoint: syscalls:sys_enter_futex
        if value.startswith("<"):
            v = None
        elif _is_number(value):
            v = float(value)
        else:
            continue
        out.append({"event": name, "value": v, "unit": unit, "modifier": modifier,
                    "interval": interval})
    return out


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


def seconds(entry):
    """A time event's value (task-clock, cpu-clock: msec, or ns in some perf versions) in
    seconds."""
    v, unit = entry["value"], entry["unit"]
    if v is None:
        return None
    return v / 1000.0 if unit == "msec" else v / 1e9 if unit in ("nsec", "ns") else v


def parse_perf(text):
    """{os_key: value} from `perf stat -x,` output; events perf could not count are left
    out (`<not supported>`, `<not counted>`). Interval lines are summed over the intervals."""
    out = {}
    for e in parse_events(text):
        key = _PERF_KEY.get(e["event"])
        if not key or e["value"] is None:
            continue
        v = seconds(e) if e["event"] == "task-clock" else e["value"]
        out[key] = out.get(key, 0.0) + v if e["interval"] is not None else v
    return out


def from_rusage(delta):
    """{os_key: value} from a getrusage delta {utime, stime, nvcsw, nivcsw, minflt, majflt}."""
    return {"os_task_clock_seconds": delta["utime"] + delta["stime"],
            "os_voluntary_context_switches": float(delta["nvcsw"]),
            "os_involuntary_context_switches": float(delta["nivcsw"]),
            "os_context_switches": float(delta["nvcsw"] + delta["nivcsw"]),
            "os_page_faults": float(delta["minflt"] + delta["majflt"])}


def rusage_delta(before, after):
    return {"utime": after.ru_utime - before.ru_utime, "stime": after.ru_stime - before.ru_stime,
            "nvcsw": after.ru_nvcsw - before.ru_nvcsw, "nivcsw": after.ru_nivcsw - before.ru_nivcsw,
            "minflt": after.ru_minflt - before.ru_minflt,
            "majflt": after.ru_majflt - before.ru_majflt}


def wrap(tool, cmd, perf="perf"):
    """(the command to run, read) where read(rusage delta) gives the run's counters once it
    has ended: perf's figures where perf counted, rusage's otherwise. TOOL is a Probe, or
    "perf" / "rusage" ("perf": the probed events of PERF). Under perf the child's rusage
    would count perf's own process too, so the voluntary/involuntary split is left to the
    runtime's own figures (`-s`: rtslab_os_*_context_switches, its getrusage)."""
    if isinstance(tool, str):
        tool = probe_perf(perf) if tool == "perf" else Probe("rusage")
    if tool.tool != "perf":
        def read(delta):
            out = from_rusage(delta)
            out["os_counters_source"] = "rusage"
            return out
        return cmd, read
    with tempfile.NamedTemporaryFile(prefix="rtslab-perf-", suffix=".txt", delete=False) as tf:
        path = tf.name

    def read(delta):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                counted = parse_perf(f.read())
        except OSError:
            counted = {}
        finally:
            if os.path.exists(path):
                os.unlink(path)
        if not counted:
            out = from_rusage(delta)
            out["os_counters_source"] = "rusage"          # perf counted nothing in this run
            return out
        counted["os_counters_source"] = "perf"
        return counted
    return [perf, "stat", "-x,", "-e", ",".join(tool.events), "-o", path, "--", *cmd], read
