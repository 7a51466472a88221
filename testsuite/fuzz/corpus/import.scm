(import (scheme base) (scheme write))
;; An R7RS program that starts with an import declaration: accepted and ignored.
(import (scheme char) (scheme cxr))

(define (greet name) (string-append "hello, " name))
(display (greet "world"))
(newline)
(write (map char-upcase (string->list "abc")))
(newline)
(write (caddr '(1 2 3)))
(newline)
