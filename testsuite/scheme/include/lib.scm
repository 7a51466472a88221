;; Included by ../include.scm: definitions, and an include relative to this file's directory.
(define (square x) (* x x))
(include "sub/more.scm")
(define lib-loaded (list 'lib more-loaded))
