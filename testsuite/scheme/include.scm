;; include (R7RS 4.1.7): the forms of the files in place of the include form, at top level
;; and in a body. A file name is relative to the directory of the file that holds the
;; include form: include/lib.scm includes "sub/more.scm", which is include/sub/more.scm.
(include "include/lib.scm")
(display lib-loaded)
(newline)
(display (list (square 3) (cube 2)))
(newline)

;; In a body, the included definitions are internal ones: local to the procedure.
(define (local-use base)
  (include "include/body.scm")
  (list (helper 1) twice))
(display (local-use 10))
(newline)
(display (guard (e (#t 'not-global)) helper))
(newline)

;; Several files in one form, in order; an empty file adds nothing.
(define order '())
(include "include/first.scm" "include/empty.scm" "include/second.scm")
(display (reverse order))
(newline)
