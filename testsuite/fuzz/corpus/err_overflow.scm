;; Fixnum overflow is an error, never a silent wrap-around.
(define (double x) (* x 2))
(display "computing")
(newline)
(display (double 4611686018427387903))
(newline)
