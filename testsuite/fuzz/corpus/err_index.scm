;; vector-ref out of range.
(define v (vector 1 2 3))
(define (get i) (vector-ref v i))
(display (get 2))
(newline)
(display (get 10))
(newline)
