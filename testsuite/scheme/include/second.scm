;; Included by ../include.scm, after first.scm and empty.scm.
(set! order (cons 'second order))
