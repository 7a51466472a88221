;; The main thread takes from an MVar that nothing will ever fill: the runtime detects the
;; deadlock and reports it.
(define m (make-mvar))
(display "before take")
(newline)
(display (mvar-take! m))
(newline)
