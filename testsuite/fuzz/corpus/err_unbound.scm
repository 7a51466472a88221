;; A reference to a variable that is never defined: a run-time error naming it.
(define (use-it) (+ 1 undefined-var))
(display "start")
(newline)
(display (use-it))
(newline)
