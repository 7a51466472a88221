;; A dropped, unclosed output port on /dev/full: its finalizer flushes it at the next GC and
;; reports the failed write then (Note [Ports] in runtime/scheme/port.c), before the line this
;; program writes to stderr after the GC; before, the failure showed only at exit, after it.
(define (write-and-drop) (display 1 (open-output-file "/dev/full")))
(write-and-drop)
(gc #t)
(display "after the gc\n" (current-error-port))
