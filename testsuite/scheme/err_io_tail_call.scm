;; A port procedure that waits for the IO manager, called in tail position, runs on its
;; caller's frame as other primitives do, also when the VM calls it again after the wait
;; (Note [IO primitives called again] in runtime/scheme/vm.c): first-line's value comes
;; back after the wait; the error of read-datum's `read` (the file's datum is never
;; closed), which waited first, is reported in read-datum at its (read p), then in main.
;; (Before: read and read-line were prelude procedures that replaced their caller's frame,
;; and the backtrace began at main.)
(define (first-line p)
  (read-line p))
(define (read-datum p)
  (read p))
(define (main)
  (display (first-line (open-input-file "include/unclosed_datum.txt")))
  (newline)
  (read-datum (open-input-file "include/unclosed_datum.txt"))
  (display "not reached"))
(main)
