#!/usr/bin/env python3
"""Tests of the OS counters of the benchmark runner (testsuite/oscounters.py) and of
`bench.py --perf`.

    python3 testsuite/bench/test_oscounters.py --build BUILDDIR [--real-perf]

1. Parsing `perf stat -x,` output, on fixtures in perf-fixtures/: one recorded on this
   project's 2-core KVM guest (software events counted, instructions and cycles
   `<not supported>`), and two constructed in perf's format (hardware counters with the
   :u modifier and a multiplexed event; -I interval lines with a tracepoint).
2. The probe and the fallback, with a fake `perf` (a script this test writes) that behaves
   as perf does where it may not count (it exits 255 with the kernel's refusal), where
   the machine has no hardware counters, where it has them, and where a run leaves no
   output: the tool and events chosen, the reason given, and each run's counters from
   perf or from getrusage.
3. bench.py end to end with perf made unavailable (the refusing fake first on PATH), on a
   throw-away source tree holding one tiny program: `--perf` says the counters come from
   getrusage and why, prints the context switch table, and says the CPU migration table has
   no figures because getrusage has no such counter; runs.json says "rusage".
4. With --real-perf (the TESTS line says needs=perf): the same run under the real perf:
   the migration table lists the program, and every run has perf's counters.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TESTSUITE = os.path.dirname(HERE)
FIXTURES = os.path.join(HERE, "perf-fixtures")
sys.path.insert(0, TESTSUITE)
import oscounters  # noqa: E402
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402


def fixture(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as f:
        return f.read()


def close(a, b):
    return a is not None and b is not None and abs(a - b) <= 1e-9 * max(1.0, abs(b))


def test_parse():
    kvm = oscounters.parse_perf(fixture("stat-software-kvm.txt"))
    check(close(kvm.get("os_task_clock_seconds"), 0.09188)
          and kvm.get("os_context_switches") == 182 and kvm.get("os_cpu_migrations") == 2
          and kvm.get("os_page_faults") == 971, f"the recorded software events: {kvm}")
    check("os_instructions" not in kvm and "os_cycles" not in kvm,
          f"<not supported> hardware events are left out, never 0: {kvm}")
    events = oscounters.parse_events(fixture("stat-software-kvm.txt"))
    check([e["event"] for e in events] == list(oscounters.PERF_EVENTS)
          and events[-1]["value"] is None, "every event line is read, in order, with None "
          f"for <not supported>: {events}")

    hw = oscounters.parse_perf(fixture("stat-hardware-constructed.txt"))
    check(hw.get("os_instructions") == 2984413907 and hw.get("os_cycles") == 2162619143
          and close(hw.get("os_task_clock_seconds"), 0.81244)
          and hw.get("os_cpu_migrations") == 41,
          f"hardware counters and :u modifiers (instructions:u -> instructions): {hw}")
    ev = {e["event"]: e for e in oscounters.parse_events(fixture("stat-hardware-constructed.txt"))}
    check(ev["cycles"]["modifier"] == "u" and ev["branches"]["value"] is None,
          "the modifier is kept apart; <not counted> is None")

    iv = oscounters.parse_events(fixture("stat-interval-constructed.txt"))
    check(len(iv) == 10 and iv[0]["interval"] == 1.000409485
          and iv[3]["event"] == "syscalls:sys_enter_sched_yield" and iv[3]["value"] == 1200,
          "-I lines: the time stamp is the interval's, a tracepoint keeps its full name")
    total = oscounters.parse_perf(fixture("stat-interval-constructed.txt"))
    check(close(total.get("os_task_clock_seconds"), 1.50462)
          and total.get("os_context_switches") == 350 and total.get("os_cpu_migrations") == 4,
          f"interval lines are summed over the run: {total}")
    check(oscounters.parse_perf("garbage\n\n,,\nPerformance counter stats\n") == {},
          "lines that are no event are ignored")


FAKE_PERF = r'''#!/bin/sh
# A fake perf for test_oscounters.py: MODE (the environment's FAKE_PERF_MODE) says how it
# behaves. It understands only `perf stat -x, -e EVENTS -o FILE -- CMD...`.
mode=${FAKE_PERF_MODE:-refuse}
if [ "$mode" = refuse ]; then
    echo "Error:" >&2
    echo "Access to performance monitoring and observability operations is limited." >&2
    echo "Consider adjusting /proc/sys/kernel/perf_event_paranoid setting to open" >&2
    exit 255
fi
shift                                     # stat
events= out=
while [ $# -gt 0 ]; do
    case $1 in
        -e) events=$2; shift 2 ;;
        -o) out=$2; shift 2 ;;
        --) shift; break ;;
        *) shift ;;
    esac
done
"$@"
status=$?
[ "$mode" = silent ] && exit $status
echo "# started on today" > "$out"
echo "" >> "$out"
for e in $(echo "$events" | tr ',' ' '); do
    case $e in
        task-clock) echo "12.50,msec,task-clock,12500000,100.00,0.9,CPUs utilized" ;;
        instructions|cycles)
            if [ "$mode" = hardware ]; then echo "1000,,$e:u,12500000,100.00,,"
            else echo "<not supported>,,$e,0,100.00,,"; fi ;;
        *) echo "7,,$e,12500000,100.00,,/sec" ;;
    esac
done >> "$out"
exit $status
'''


def fake_perf(tmp):
    path = os.path.join(tmp, "perf")
    with open(path, "w") as f:
        f.write(FAKE_PERF)
    os.chmod(path, 0o755)
    return path


def with_mode(mode):
    os.environ["FAKE_PERF_MODE"] = mode


def test_probe_and_fallback(tmp):
    perf = fake_perf(tmp)
    missing = oscounters.probe_perf(os.path.join(tmp, "no-such-perf"), refresh=True)
    check(missing.tool == "rusage" and "not installed" in missing.why,
          f"no perf: getrusage, and why ({missing.describe()})")

    with_mode("refuse")
    refused = oscounters.probe_perf(perf, refresh=True)
    check(refused.tool == "rusage" and "Access to performance monitoring" in refused.why,
          f"perf refused: getrusage, with perf's own reason ({refused.describe()})")
    cmd, read = oscounters.wrap(refused, ["true"])
    check(cmd == ["true"], "under getrusage the command runs as it is")
    got = read({"utime": 0.25, "stime": 0.5, "nvcsw": 3, "nivcsw": 4, "minflt": 10,
                "majflt": 1})
    check(got == {"os_task_clock_seconds": 0.75, "os_voluntary_context_switches": 3.0,
                  "os_involuntary_context_switches": 4.0, "os_context_switches": 7.0,
                  "os_page_faults": 11.0, "os_counters_source": "rusage"},
          f"getrusage's counters: user + system as the task clock, no migrations: {got}")

    with_mode("software")
    sw = oscounters.probe_perf(perf, refresh=True)
    check(sw.tool == "perf" and sw.events == oscounters.SOFTWARE_EVENTS and not sw.hardware
          and "<not supported>" in sw.why,
          f"no hardware counters: software events only, and why ({sw.describe()})")
    with_mode("hardware")
    hw = oscounters.probe_perf(perf, refresh=True)
    check(hw.tool == "perf" and hw.events == oscounters.PERF_EVENTS and hw.hardware,
          f"hardware counters: instructions and cycles asked for too ({hw.describe()})")

    # a run under the fake: its figures come from perf's output
    cmd, read = oscounters.wrap(hw, ["sh", "-c", "exit 0"], perf=perf)
    check(cmd[0] == perf and "-e" in cmd and cmd[cmd.index("-e") + 1]
          == ",".join(oscounters.PERF_EVENTS) and cmd[-3:] == ["sh", "-c", "exit 0"],
          f"the run is wrapped in perf stat with the probed events: {cmd}")
    subprocess.run(cmd, check=True)
    got = read({"utime": 9.0, "stime": 0.0, "nvcsw": 0, "nivcsw": 0, "minflt": 0, "majflt": 0})
    check(got.get("os_counters_source") == "perf" and got.get("os_cpu_migrations") == 7
          and got.get("os_instructions") == 1000 and close(got.get("os_task_clock_seconds"),
                                                           0.0125),
          f"perf's figures, not rusage's: {got}")
    # a run that leaves no perf output falls back to its rusage
    with_mode("silent")
    cmd, read = oscounters.wrap(hw, ["true"], perf=perf)
    subprocess.run(cmd, check=True)
    got = read({"utime": 0.5, "stime": 0.0, "nvcsw": 1, "nivcsw": 0, "minflt": 2, "majflt": 0})
    check(got.get("os_counters_source") == "rusage" and got.get("os_context_switches") == 1
          and "os_cpu_migrations" not in got,
          f"no perf output in a run: that run's getrusage: {got}")
    os.environ.pop("FAKE_PERF_MODE", None)


PROG = """;; tiny: a test program of test_oscounters.py
;; quick: 18
;; norm: 18
;; slow: 18
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(display (fib (string->number (cadr (command-line)))))
(newline)
"""


def bench_tree(tmp):
    src = os.path.join(tmp, "src")
    gdir = os.path.join(src, "testsuite", "bench", "t")
    os.makedirs(gdir)
    shutil.copy(os.path.join(TESTSUITE, "..", "configure.ac"), src)
    with open(os.path.join(gdir, "tiny.scm"), "w") as f:
        f.write(PROG)
    with open(os.path.join(gdir, "tiny.quick.stdout"), "w") as f:
        f.write("2584\n")
    return src


def run_bench(build, src, out, env):
    cmd = [sys.executable, os.path.join(TESTSUITE, "bench.py"), "--src", src, "--use-build",
           f"baseline={build}", "-c", "baseline:-N1", "-c", "baseline:-N2", "-k", "2",
           "--out", out, "--perf"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    with open(os.path.join(out, "latest", "runs.json")) as f:
        return r, json.load(f)


def section(text, title):
    """The lines of the table whose title starts with TITLE, up to its closing blank line."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith(title):
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            return "\n".join(lines[i:j])
    return ""


def test_bench_without_perf(build, tmp):
    src = bench_tree(tmp)
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    fake_perf(bindir)
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               FAKE_PERF_MODE="refuse")
    r, data = run_bench(build, src, os.path.join(tmp, "out-rusage"), env)
    check(r.returncode == 0, f"bench.py --perf runs without perf\n{r.stdout}{r.stderr}")
    check("OS counters from getrusage (perf stat may not count here: Error: Access to "
          "performance monitoring" in r.stdout,
          "the runner says the counters come from getrusage, and perf's reason:\n" + r.stdout)
    check("--perf: perf stat cannot count here" in r.stdout, "--perf says what it falls back to")
    ctx = section(r.stdout, "Context switches (OS)")
    check("t/tiny" in ctx, "the context switch table has the program's row:\n" + r.stdout)
    check("CPU migrations (OS): no figures; the OS counters came from getrusage" in r.stdout,
          "the migration table says why it has no figures:\n" + r.stdout)
    check("Allocations" not in r.stdout, "--perf prints the OS tables, not the default set")
    check(data["os_counters"] == "rusage" and all(
        x["stats"].get("os_counters_source") == "rusage" and "os_cpu_migrations" not in x["stats"]
        and x["stats"].get("os_context_switches", -1) >= 0 for x in data["runs"]),
        "runs.json: every run's counters from getrusage, no migrations")


def test_bench_real_perf(build, tmp):
    src = bench_tree(tmp)
    r, data = run_bench(build, src, os.path.join(tmp, "out-perf"), dict(os.environ))
    check(r.returncode == 0, f"bench.py --perf under perf\n{r.stdout}{r.stderr}")
    check("OS counters from perf stat" in r.stdout, "the runner says perf counts:\n" + r.stdout)
    mig = section(r.stdout, "CPU migrations (OS)")
    check("t/tiny" in mig and "baseline -N2" in mig,
          "the migration table has the program's row and both columns:\n" + r.stdout)
    check("t/tiny" in section(r.stdout, "Context switches (OS)"), "the context switch table")
    check(data["os_counters"] == "perf" and all(
        x["stats"].get("os_counters_source") == "perf" and "os_cpu_migrations" in x["stats"]
        and x["stats"].get("os_context_switches", -1) >= 1 for x in data["runs"]),
        "runs.json: every run has perf's counters, migrations among them")
    hw = oscounters.probe_perf().hardware
    check(hw == all("os_instructions" in x["stats"] for x in data["runs"]),
          "instructions are there exactly when the machine has hardware counters")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--real-perf", action="store_true",
                    help="run bench.py --perf under the real perf (needs=perf)")
    args = ap.parse_args()
    build = os.path.abspath(args.build)
    tmp = tempfile.mkdtemp(prefix="rtslab-oscounters-test-")
    try:
        if args.real_perf:
            test_bench_real_perf(build, tmp)
        else:
            test_parse()
            test_probe_and_fallback(tmp)
            test_bench_without_perf(build, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return summary()


if __name__ == "__main__":
    sys.exit(main())
