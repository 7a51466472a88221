;; include: a syntax error in an included file is reported with that file's name, line and
;; column, and nothing runs.
(display "not reached")
(include "include/unterminated.scm")
