#!/usr/bin/env python3
"""Tests of tools/workcounters.py (the work counters of two builds compared) in a build:

    python3 testsuite/bench/test_workcounters.py --build BUILDDIR

- the same build twice (once as its directory, once as its rtslab binary): every counter the
  same, "all identical", exit 0;
- the same build with -A64k on one side: the GC counts differ and are named, old -> new,
  "1 programs differ", exit 1;
- a name that is no build: an error that says so, exit 2;
- its comparison itself (differences()) on made-up counters: a changed value, a key on one
  side only, none.
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
TOOL = os.path.join(SRC, "tools", "workcounters.py")
sys.path.insert(0, HERE)
from tally import check, summary  # noqa: E402
sys.path.insert(0, os.path.join(SRC, "tools"))
import workcounters  # noqa: E402


def run(*args):
    env = {k: v for k, v in os.environ.items() if k != "RTSLAB_RTS"}
    return subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True,
                          timeout=240, env=env)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    binary = os.path.join(build, "rtslab")
    progs = ["-p", "gc/gcbench", "-p", "imaginary/queens"]

    r = run(build, binary, *progs)
    check(r.returncode == 0, f"the same build: exit 0, got {r.returncode}: {r.stdout}{r.stderr}")
    lines = r.stdout.splitlines()
    check(sum(" same" in l for l in lines) == 2 and "all identical" in lines[-1:],
          f"the same build: both programs 'same', then 'all identical': {r.stdout}")
    check(all("num_GCs" in l and "copied_bytes" in l for l in lines
              if l.startswith(("gc/", "imaginary/"))), f"each line shows its counters: {r.stdout}")

    r = run(build, build, "-p", "gc/gcbench", "--new-rts=-A64k")
    check(r.returncode == 1, f"-A64k on one side: exit 1, got {r.returncode}: {r.stdout}{r.stderr}")
    gc_line = [l for l in r.stdout.splitlines() if l.startswith("gc/gcbench")]
    check(len(gc_line) == 1 and "DIFFER" in gc_line[0] and "num_GCs " in gc_line[0].split("DIFFER")[1],
          f"-A64k: gcbench's GC count named among the differences: {r.stdout}")
    check("1 programs differ" in r.stdout, f"-A64k: the summary says one program differs: {r.stdout}")

    r = run(build, os.path.join(build, "no-such-build"), "-p", "gc/gcbench")
    check(r.returncode == 2 and "no-such-build" in r.stderr,
          f"no such build: exit 2 naming it, got {r.returncode}: {r.stderr}")

    d = workcounters.differences
    check(d({"a": "1", "b": "2"}, {"a": "1", "b": "2"}) == [], "equal counters: no difference")
    check(d({"a": "1", "b": "2"}, {"a": "1", "b": "3"}) == ["b"], "a changed value is found")
    check(d({"a": "1"}, {"a": "1", "c": "0"}) == ["c"], "a key on one side only is found")
    check(workcounters.TIMING.search("total_wall_seconds") and
          workcounters.TIMING.search("rtslab_lock_sm_spins") and
          not workcounters.TIMING.search("copied_bytes"),
          "times and spins are left out, bytes copied is not")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
