;; Included in the body of local-use (../include.scm), where base is its parameter.
(define (helper y) (+ y base))
(define twice (* 2 base))
