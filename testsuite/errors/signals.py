#!/usr/bin/env python3
"""Signals sent to rtslab: signals.py BUILD CASE.

Each case starts `rtslab -e PROGRAM` (SIGINT and SIGTERM at their default, whatever this
script inherited), waits until the program has written "ready" to its stdout, so that the
runtime's signal handling is in place (no sleeps, no timing), sends the signal(s), and prints
what came of it: "status N" (128 + the signal when killed by it, as a shell says), the
program's stdout and stderr, and per case what else it checks.
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

build, case = sys.argv[1], sys.argv[2]
src = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp()
READY = '(display "ready ") (flush-output-port) '
READY_AT = "@READY@"


def default_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def start(prog, *rts, stdin=subprocess.DEVNULL, ready_on="out"):
    out = open(os.path.join(tmp, "out"), "w+b")
    err = open(os.path.join(tmp, "err"), "w+b")
    # "ready" goes where the program says (READY_AT), else first: a case that needs a handler
    # in place writes it inside that handler's guard, so the signal cannot come before it. A
    # program that writes its own "ready" to stderr (ready_on="err") is waited for there.
    if ready_on == "out":
        prog = prog.replace(READY_AT, READY) if READY_AT in prog else READY + prog
    p = subprocess.Popen([os.path.join(build, "rtslab"), "-e", prog, *rts],
                         stdin=stdin, stdout=out, stderr=err, preexec_fn=default_signals)
    watched = out.name if ready_on == "out" else err.name
    while b"ready" not in open(watched, "rb").read() and p.poll() is None:
        time.sleep(0.01)
    return p


def finish(p):
    rc = p.wait()
    print("status", 128 - rc if rc < 0 else rc)
    print("stdout:", open(os.path.join(tmp, "out")).read())
    err = open(os.path.join(tmp, "err")).read()
    print("stderr:", err)
    return err


def pending(pid, sig):
    """Whether signal sig, sent to the process, is not yet taken (by its sigwait)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("ShdPnd:"):
                return (int(line.split()[1], 16) >> (sig - 1)) & 1 == 1
    return False


s_file, e_file = os.path.join(tmp, "s.txt"), os.path.join(tmp, "e.json")
if case in ("int_uncaught", "term_uncaught"):
    # stdout flushed, -s and the eventlog written, exit 130 / 143
    # "buffered" is written before "ready" (to stderr, flushed), so the signal cannot come
    # before it, and stays in stdout's buffer: only the exit's flush can write it. ("ready"
    # on stdout first let the signal come between it and "buffered" in CI's ASan run.)
    p = start('(display "buffered") (display "ready " (current-error-port)) '
              '(flush-output-port (current-error-port)) (let loop () (loop))',
              "+RTS", "-s" + s_file, "-l" + e_file, "-N2", "-RTS", ready_on="err")
    p.send_signal(signal.SIGINT if case == "int_uncaught" else signal.SIGTERM)
    finish(p)
    if "bytes allocated" in open(s_file).read():
        print("-s written")
    subprocess.call([sys.executable, os.path.join(src, "..", "trace", "trace_summary.py"), "--check", e_file])
elif case == "int_caught":
    # an exception like any other: guard catches it and the program goes on
    p = start('(guard (e ((error-object? e) (display (error-object-message e)))) @READY@ (let loop () (loop))) (display " and on")')
    p.send_signal(signal.SIGINT)
    finish(p)
elif case in ("int_mvar", "int_sleep", "int_join"):
    # the main thread waits: on an MVar (a sleeper keeps it from a deadlock), asleep, in a join
    wait = {"int_mvar": "(mvar-take! m)", "int_sleep": "(sleep 1000)",
            "int_join": "(thread-join (fork (lambda () (sleep 1000))))"}[case]
    p = start('(define m (make-mvar)) (fork (lambda () (sleep +inf.0))) (guard (e (#t (display "caught"))) @READY@ %s) (exit 7)' % wait,
              "+RTS", "-N2", "-RTS")
    p.send_signal(signal.SIGINT)
    finish(p)
elif case == "int_twice":
    # the main thread is in read(2) from a pipe that stays open, so the first SIGINT stays
    # pending; the second kills at once
    r, w = os.pipe()
    p = start("(read-line)", stdin=r)
    p.send_signal(signal.SIGINT)
    while p.poll() is None and pending(p.pid, signal.SIGINT):
        time.sleep(0.01)
    if p.poll() is None:
        print("alive after the first")
    p.send_signal(signal.SIGINT)
    if not finish(p):
        print("killed, with no message")
    os.close(w)

shutil.rmtree(tmp, ignore_errors=True)
