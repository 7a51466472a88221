;; include in a body: the failing form is in the included file, the procedure is defined in
;; this one, so "defined at" names this file.
(define (run)
  (include "include/body_fails.scm")
  (quote unreached))
(run)
