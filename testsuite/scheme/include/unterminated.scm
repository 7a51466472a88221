;; Included by ../err_include.scm: a list that is never closed (line 3).
(define (ok) 1)
(define (broken x)
  (+ x 1)
