;; Included by ../err_include_backtrace.scm: a procedure whose first call fails.
(define (fails x)
  (car x)
  x)
