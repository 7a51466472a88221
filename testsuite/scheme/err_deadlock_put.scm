;; A deadlock in mvar-put! on a full MVar, nested in an expression of a procedure.
(define m (make-mvar 1))
(define (refill x)
  (let ((r (mvar-put! m x)))
    (list r)))
(refill 2)
(display "not reached")
