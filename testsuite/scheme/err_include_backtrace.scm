;; include: a backtrace names the positions in the included file, and where its procedures were defined.
(include "include/fails.scm")
(define (main) (fails 1) (display "not reached"))
(main)
