;; A ring of 500 slots, each replaced by a fresh 20-element list in turn: every list lives
;; through a few minor GCs (promoted) and then dies in the old generation.
(define slots 500)
(define ring (make-vector slots '()))
(define (fill i n)
  (if (< i n)
      (begin (vector-set! ring (modulo i slots) (iota 20))
             (fill (+ i 1) n))))
(fill 0 100000)
(display (length (vector-ref ring 0)))
(newline)
