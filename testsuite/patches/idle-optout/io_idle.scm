;; An idle capability with IO in flight opts out of GCs too (Note [Idle in the ring] in
;; runtime/io/iomgr.h, Note [Idle opt-out] in runtime/sync/stw.h). A thread on capability 1
;; waits in read-line on a socket that stays silent, so capability 1 is idle with a read in
;; its back end; the main thread on capability 0 then allocates through many GCs (at -A64k,
;; some 300) and only then sends the line. Capability 1 sleeps in its back end's wait
;; throughout: it takes part in its first GC, opts out, and is not woken for the others
;; (before, an idle capability with IO in flight slept in a wait of its own that followed
;; every sync: one wake-up a GC). Then the line must reach the reader (the completion wakes
;; the opted-out capability, which rejoins), and nothing leak.
(include "../../io/fdcount.scm")
(define before (fd-count))
(define l (tcp-listen "127.0.0.1" 0))
(define c (tcp-connect "127.0.0.1" (tcp-port-number l)))
(define a (tcp-accept l))
(define reader (fork-on 1 (lambda () (read-line a))))
(sleep 0.2)                              ; the reader is blocked in the back end by now
(define (churn n)                        ; about 40 MB of short-lived lists
  (let loop ((i 0) (acc '()))
    (if (< i n)
        (loop (+ i 1) (if (= 0 (modulo i 1000)) '() (cons i acc)))
        (length acc))))
(define r (churn 2000000))
(write-string "after the GCs\n" c)
(flush-output-port c)
(display (list 'reader-got (thread-join reader)))
(newline)
(close-port a) (close-port c) (close-port l)
(display (list 'fds-leaked (- (fd-count) before)))
(newline)
