;; +RTS -p's ticks where the time is spent in one long primitive or in GCs (Note [Time
;; profile] in runtime/sched/profile.h; profile_ticks.py). "prim": each call of vector-fill!
;; is one primitive of several ms, many ticks long; "gc": a million pairs kept live while
;; lists are made and dropped, most of the time in major GCs.
(define mode (cadr (command-line)))
(define v (and (equal? mode "prim") (make-vector 4000000 0)))
(define (fill-loop k)
  (if (> k 0) (begin (vector-fill! v k) (fill-loop (- k 1)))))
(define (build n acc) (if (= n 0) acc (build (- n 1) (cons n acc))))
(define (churn k) (if (> k 0) (begin (build 100000 '()) (churn (- k 1)))))
(cond ((equal? mode "prim") (fill-loop 60) (display (vector-ref v 0)))
      (else (let ((live (build 1000000 '())))
              (churn 60)
              (display (length live)))))
(newline)
