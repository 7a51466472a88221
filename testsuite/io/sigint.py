#!/usr/bin/env python3
"""The main thread blocked in the IO manager, interrupted: sigint.py BUILD MANAGER CASE.

accept: the main thread waits in tcp-accept (its op in the back end's hands: io_uring or
epoll); SIGINT cancels the op and raises the `interrupted` error in it, which guard catches;
the program then closes the listener, checks that no descriptor leaked and that the listener
still works (a second accept, served by a connection from a forked thread), and exits 7.
read: the same with the main thread in read-line on a connected socket whose peer (a
forked thread) stays silent until then.
The script waits for "ready" on the program's stdout before it signals (no timing).
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

build, manager, case = sys.argv[1], sys.argv[2], sys.argv[3]
src = os.path.dirname(os.path.abspath(__file__))
wait = {"accept": "(tcp-accept l)", "read": "(read-line s)"}[case]
prog = """
(include "%s/fdcount.scm")
(define before (fd-count))
(define l (tcp-listen "127.0.0.1" 0))
(define other (fork (lambda () (sleep 1000))))   ; so the wait is no deadlock
(define hold (make-mvar))
(define s #f)
(define peer #f)
(if (eq? (quote %s) (quote read))               ; a connection that stays silent
    (begin (set! peer (fork (lambda () (let ((a (tcp-accept l))) (mvar-take! hold) (close-port a)))))
           (set! s (tcp-connect "127.0.0.1" (tcp-port-number l)))))
(display "ready ") (flush-output-port)
(guard (e ((error-object? e) (display (error-object-message e)) (display " caught")))
  %s)
(if peer (begin (mvar-put! hold #t) (thread-join peer) (close-port s)))
(define c (fork (lambda () (let ((s (tcp-connect "127.0.0.1" (tcp-port-number l))))
                             (write-string "after\\n" s) (close-port s)))))
(define a (tcp-accept l))
(display (list 'then (read-line a)))
(close-port a)
(thread-join c)
(close-port l)
(display (list 'fds-leaked (- (fd-count) before)))
(exit 7)
""" % (src, case, wait)


def default_signals():
    signal.signal(signal.SIGINT, signal.SIG_DFL)


with tempfile.TemporaryDirectory() as tmp:
    out = open(os.path.join(tmp, "out"), "w+b")
    err = open(os.path.join(tmp, "err"), "w+b")
    p = subprocess.Popen([os.path.join(build, "rtslab"), "-e", prog, "+RTS", "-N2",
                          "--io-manager=" + manager, "-RTS"],
                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                         preexec_fn=default_signals)
    while b"ready" not in open(out.name, "rb").read() and p.poll() is None:
        time.sleep(0.01)
    time.sleep(0.1)          # into the wait (if not yet there, the signal is taken on entry)
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = p.wait()
        print("hung after SIGINT")
    print("status", 128 - rc if rc < 0 else rc)
    print("stdout:", open(out.name).read())
    print("stderr:", open(err.name).read())
