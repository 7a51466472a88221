;; A run-time error three calls deep: the backtrace gives each frame's call site -- the
;; failing (vector-ref v i) in inner, the (inner v 5) call in middle, the (middle ...) call in
;; outer, the (outer) call at the top level -- and where each procedure was defined.
(define (inner v i)
  (+ 1 (vector-ref v i)))
(define (middle v)
  (let ((x (inner v 5)))
    (* x 2)))
(define (outer)
  (display (middle (vector 1 2 3)))
  (newline))
(outer)
(display "not reached")
(newline)
