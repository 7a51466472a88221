#!/usr/bin/env python3
"""Issue 35's goal figure, over the whole suite: `+RTS -l` on every program of the benchmark
suite gives a file that GHC's ghc-events library reads with no error, and whose GC and thread
counts match `-s`.

    python3 experiments/eventlog/ghc_events_sweep.py --build NAME=DIR [--build NAME=DIR]...
                                                     [--size quick] [-N CAPS]
                                                     [--programs REGEX] [--timeout S]
                                                     [--work DIR]

Each program of testsuite/bench/ (benchlib.discover: GROUP/NAME.scm, its SIZE arguments and
its `;; rts:` options) runs once per build, one run at a time, as
`DIR/rtslab NAME.scm ARGS +RTS RTS... -NCAPS -RTS` in the program's directory, through
testsuite/trace/eventlog_ghc_events.py, which adds `+RTS -l<log> -s<stats> -RTS`, reads the
whole log with ReadEventlog.hs (built against ghc-events) and compares its GCs (minor, major)
and threads (created, finished, migrated) with -s, and its events with
testsuite/trace/ghc_eventlog.py (which also checks the log's structure). Nothing of that
check is loosened here. The request server (a `;; load:` line, io/http-server) is started,
loaded and stopped as the test driver's quick run does it: under `testsuite/serverload.py
smoke --routes ...`, so the -l and -s options reach the server's command line.

Prints one line per program and build, `ok` or `FAIL` with why (the checker's FAILED lines
and the reader's error message), and for each build the summary
`N programs, N read with no error, counts match in N`. A program "read with no error" is one
whose log the reader decoded to the end (it exited 0 and printed its counts); "counts match"
is eventlog_ghc_events.py's whole verdict `ok`. The logs and -s files of a failed run are
kept in WORK (default tests/ghc-events-sweep, under the current directory). Exit status 1
when any run failed.
"""

import argparse
import os
import re
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import benchlib  # noqa: E402

CHECKER = os.path.join(ROOT, "testsuite", "trace", "eventlog_ghc_events.py")
SERVERLOAD = os.path.join(ROOT, "testsuite", "serverload.py")
OK_RE = re.compile(r"^ok: ghc-events read .*$", re.MULTILINE)
FAILED_RE = re.compile(r"^FAILED: .*$", re.MULTILINE)
# What the checker prints when the reader ran to the end, or when a count differs after it
# did; "could not read" / "exited with" / "printed" mean the reader never gave its counts.
UNREAD = ("ghc-events could not read", "exited with", "read-eventlog printed",
          "ghc could not build", "timed out")


def parse_build(spec):
    name, sep, d = spec.partition("=")
    if not sep:
        name, d = os.path.basename(os.path.abspath(spec)), spec
    d = os.path.abspath(d)
    if not os.access(os.path.join(d, "rtslab"), os.X_OK):
        raise argparse.ArgumentTypeError(f"{d}/rtslab is not an executable")
    return name, d


def command(build_dir, prog, size, caps):
    """The program's command line, as the test driver makes it (a server under serverload)."""
    cmd = benchlib.command(os.path.join(build_dir, "rtslab"), prog, size, [f"-N{caps}"])
    if prog.routes:
        cmd = [sys.executable, SERVERLOAD, "smoke", "--routes", ",".join(prog.routes),
               "--"] + cmd
    return cmd


def run_one(build_dir, prog, size, caps, work, timeout):
    """(verdict, read, detail): verdict 'ok' or 'FAIL'; read: the reader decoded the log."""
    cmd = [sys.executable, CHECKER, "--out", work] + command(build_dir, prog, size, caps)
    start = time.monotonic()
    p = subprocess.Popen(cmd, cwd=os.path.dirname(prog.path), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        timed_out = True
    secs = time.monotonic() - start
    out = out.decode("utf-8", errors="replace")
    err = err.decode("utf-8", errors="replace")
    ok = OK_RE.search(out)
    if ok and p.returncode == 0 and not timed_out:
        return "ok", True, f"{secs:.1f} s; " + ok.group(0)[len("ok: "):]
    why = [m[len("FAILED: "):] for m in FAILED_RE.findall(out)]
    # read: the checker got past the reader (its FAILED lines are about counts or the
    # log's structure); with no FAILED line at all, nothing says the reader succeeded
    read = bool(why) and not timed_out and not any(u in w for w in why for u in UNREAD)
    if timed_out:
        why.insert(0, f"timed out after {timeout:.0f} s")
    if not why:
        why = [f"the checker exited {p.returncode} with no verdict"]
    # the reader's own message (read-eventlog: FILE: ERROR), and the program's last words
    errs = [line for line in err.splitlines() if line.strip()]
    detail = "; ".join(why)
    if errs:
        detail += " | stderr: " + " | ".join(errs[-6:])
    return "FAIL", read, f"{secs:.1f} s; " + detail


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", action="append", type=parse_build, required=True,
                    metavar="NAME=DIR", help="a build directory holding rtslab (repeatable)")
    ap.add_argument("--src", default=ROOT, help="the source tree whose testsuite/bench is swept")
    ap.add_argument("--size", default="quick", choices=benchlib.SIZES)
    ap.add_argument("-N", dest="caps", type=int, default=2, help="capabilities (default 2)")
    ap.add_argument("--programs", default=None, help="only programs whose GROUP/NAME matches")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per run (300)")
    ap.add_argument("--work", default=os.path.join("tests", "ghc-events-sweep"),
                    help="the reader and the failed runs' files (tests/ghc-events-sweep)")
    args = ap.parse_args()

    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    progs = benchlib.select(benchlib.discover(args.src),
                            [args.programs] if args.programs else [])
    print(f"# {len(progs)} programs of {os.path.join(args.src, 'testsuite', 'bench')}, "
          f"size {args.size}, +RTS -N{args.caps} -RTS, through "
          f"testsuite/trace/eventlog_ghc_events.py; timeout {args.timeout:.0f} s a run")
    for name, d in args.build:
        print(f"# build {name}: {d}")
    sys.stdout.flush()
    tally = {name: [0, 0, 0] for name, _ in args.build}     # programs, read, counts match
    width = max(len(p.id) for p in progs) if progs else 0
    bwidth = max(len(n) for n, _ in args.build)
    for prog in progs:
        for name, d in args.build:
            verdict, read, detail = run_one(d, prog, args.size, args.caps, work, args.timeout)
            t = tally[name]
            t[0] += 1
            t[1] += read
            t[2] += verdict == "ok"
            print(f"{verdict:4} {name:{bwidth}} {prog.id:{width}}  {detail}")
            sys.stdout.flush()
    failed = False
    for name, _ in args.build:
        n, read, match = tally[name]
        failed |= match != n
        print(f"{name}: {n} programs, {read} read with no error, counts match in {match}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
