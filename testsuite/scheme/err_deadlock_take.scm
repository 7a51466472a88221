;; A deadlock in mvar-take! inside a procedure: the report names the take's line and column.
;; The take is a tail call of a primitive, which runs on waiter's frame: the frame stays, at
;; the call (Note [Tail calls of primitives] in runtime/scheme/vm.c).
(define m (make-mvar))
(define (waiter)
  (display "waiting")
  (newline)
  (mvar-take! m))
(define (main)
  (let ((v (waiter)))
    (display v)))
(main)
(display "not reached")
