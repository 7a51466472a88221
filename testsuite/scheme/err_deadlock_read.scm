;; A deadlock in mvar-read inside a derived form (when): the read keeps its own position,
;; the when form is the program's text too.
(define (reader m)
  (when (mvar? m)
    (display (mvar-read m)))
  (quote done))
(define (main)
  (reader (make-mvar))
  (display "not reached"))
(main)
