;; Ping-pong across capabilities: two threads, one on capability 0 and one on capability 1,
;; hand a token back and forth through two MVars ROUNDS times (default 100000). Each hand-over
;; wakes the other capability from its idle wait (the inbox and cap_wake), so the run
;; measures the wake-up path: elapsed time per round trip, and context switches (perf stat).
(define rounds
  (let ((args (command-line)))
    (if (> (length args) 1) (string->number (cadr args)) 100000)))
(define ping (make-mvar))
(define pong (make-mvar))
(define t0 (current-jiffy))
(define other
  (fork-on 1 (lambda ()
               (let loop ((i 0))
                 (if (< i rounds)
                     (begin (mvar-put! pong (mvar-take! ping)) (loop (+ i 1))))))))
(let loop ((i 0))
  (if (< i rounds)
      (begin (mvar-put! ping i) (mvar-take! pong) (loop (+ i 1)))))
(thread-join other)
(define secs (/ (- (current-jiffy) t0) (exact->inexact (jiffies-per-second))))
(display (list 'rounds rounds 'us-per-round-trip (/ (round (* 1e7 (/ secs rounds))) 10.0)))
(newline)
