"""The operating system's counters of one run, beside the runtime's own (`-s`): task clock,
context switches (voluntary and involuntary), CPU migrations, page faults, and instructions
and cycles where the machine exposes hardware counters. They do not move with code layout,
so a report that puts them next to time shows the mechanism behind a difference.

    tool = oscounters.probe()              # once: "perf" or "rusage"
    cmd, read = oscounters.wrap(tool, cmd)  # run cmd; then read(rusage_delta) -> {key: value}

With `perf stat` (Debian's linux-perf; it must be allowed to count a child here:
kernel.perf_event_paranoid <= 2 lets a user count its own processes' software events),
the run's command is wrapped in `perf stat -x, -o FILE`; its overhead for software events is
a few counter reads at start and exit. Without perf, the counters come from the child's
rusage (getrusage(RUSAGE_CHILDREN) deltas, which the runners take anyway): user + system CPU
as the task clock, context switches and page faults; migrations, instructions and cycles are
then missing, never guessed. Every value is a float; the keys are os_* (OS_KEYS), and
os_counters_source says which tool gave them.
"""
import os
import shutil
import subprocess
import tempfile

PERF_EVENTS = ("task-clock", "context-switches", "cpu-migrations", "page-faults",
               "instructions", "cycles")
OS_KEYS = ("os_task_clock_seconds", "os_context_switches", "os_voluntary_context_switches",
           "os_involuntary_context_switches", "os_cpu_migrations", "os_page_faults",
           "os_instructions", "os_cycles")
_PERF_KEY = {"task-clock": "os_task_clock_seconds", "context-switches": "os_context_switches",
             "cpu-migrations": "os_cpu_migrations", "page-faults": "os_page_faults",
             "instructions": "os_instructions", "cycles": "os_cycles"}

_probed = {}


def probe():
    """'perf' when `perf stat` can count a child's software events here, else 'rusage'."""
    if "tool" in _probed:
        return _probed["tool"]
    tool = "rusage"
    if shutil.which("perf"):
        with tempfile.NamedTemporaryFile(prefix="rtslab-perf-", delete=False) as tf:
            path = tf.name
        try:
            r = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", "-o", path, "--",
                                "true"], capture_output=True, timeout=30)
            if r.returncode == 0 and "task-clock" in open(path, encoding="utf-8").read():
                tool = "perf"
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            os.unlink(path)
    _probed["tool"] = tool
    return tool


def parse_perf(text):
    """{os_key: value} from `perf stat -x,` output; events perf could not count are left
    out (`<not supported>`, `<not counted>`)."""
    out = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        fields = line.split(",")
        if len(fields) < 3:
            continue
        value, unit, event = fields[0], fields[1], fields[2]
        event = event.split(":")[0]           # cycles:u -> cycles
        key = _PERF_KEY.get(event)
        if not key or value.startswith("<"):
            continue
        try:
            v = float(value)
        except ValueError:
            continue
        if event == "task-clock":
            v = v / 1000.0 if unit == "msec" else v / 1e9 if unit == "nsec" else v
        out[key] = v
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


def wrap(tool, cmd):
    """(the command to run, read) where read(rusage delta) gives the run's counters once it
    has ended: perf's figures where perf counted, rusage's otherwise. Under perf the child's
    rusage would count perf's own process too, so the voluntary/involuntary split is left
    to the runtime's own figures (`-s`: rtslab_os_*_context_switches, its getrusage)."""
    if tool != "perf":
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
            out["os_counters_source"] = "rusage"
            return out
        counted["os_counters_source"] = "perf"
        return counted
    return ["perf", "stat", "-x,", "-e", ",".join(PERF_EVENTS), "-o", path, "--", *cmd], read
