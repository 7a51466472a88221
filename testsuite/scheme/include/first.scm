;; Included by ../include.scm, before second.scm.
(set! order (cons 'first order))
