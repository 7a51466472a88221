;; rts: -K1m
;; Unbounded non-tail recursion under a 1 MiB stack limit: a clean stack overflow error.
(define (down n) (+ 1 (down (+ n 1))))
(display (down 0))
(newline)
