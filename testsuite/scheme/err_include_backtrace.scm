;; include: a backtrace names the included file where its procedures were defined.
(include "include/fails.scm")
(define (main) (fails 1) (display "not reached"))
(main)
