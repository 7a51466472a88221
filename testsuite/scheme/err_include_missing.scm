;; include: a file that cannot be opened is a syntax error at its name.
(display "not reached")
(include "include/no-such-file.scm")
