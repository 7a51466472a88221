;; A procedure of two arguments called with three: the error names the procedure.
(define (add-two a b) (+ a b))
(define (caller) (+ 1 (add-two 1 2 3)))
(display (caller))
(newline)
