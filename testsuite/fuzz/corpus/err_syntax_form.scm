;; A malformed special form: a compile-time syntax error with its position.
(if)
(display "not reached")
(newline)
