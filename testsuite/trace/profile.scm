;; +RTS -p (Note [Time profile] in runtime/sched/profile.h): two loops, heavy-loop doing
;; three times the iterations of light-loop, in turn; with an argument "threads" each runs
;; in a thread of its own (at -N2, on a capability each).
(define (heavy-loop n acc)
  (if (= n 0) acc (heavy-loop (- n 1) (+ acc 1))))
(define (light-loop n acc)
  (if (= n 0) acc (light-loop (- n 1) (+ acc 1))))
(define rounds 8)
(define (run-heavy) (let loop ((k rounds) (s 0)) (if (= k 0) s (loop (- k 1) (+ s (heavy-loop 1500000 0))))))
(define (run-light) (let loop ((k rounds) (s 0)) (if (= k 0) s (loop (- k 1) (+ s (light-loop 500000 0))))))
(define threads? (member "threads" (command-line)))
(if threads?
    (let ((h (fork run-heavy)) (l (fork run-light)))
      (display (list (thread-join h) (thread-join l))))
    (display (list (run-heavy) (run-light))))
(newline)
