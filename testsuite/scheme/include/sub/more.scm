;; Included by ../lib.scm, by a name relative to include/ (not to the program's directory).
(define more-loaded 'more)
(define (cube x) (* x (square x)))
