;; An output file port dropped without close-port is flushed and closed by its finalizer once
;; a GC finds it unreachable (Note [Ports] in runtime/scheme/port.c), as GHC's handles are:
;; the text is in the file before the program ends, and its descriptor is closed. Before,
;; nothing was flushed until exit, and the descriptor stayed open.
(include "fdcount.scm")
(define path (list-ref (command-line) 1))
(define fds-before (fd-count))
(define (write-and-drop)
  (let ((p (open-output-file path)))
    (write-string "written, never closed\n" p)
    (fd-count)))
(define fds-while-open (write-and-drop))
(gc #t)
(display (list 'open-while-written (- fds-while-open fds-before)))
(newline)
(display (list 'read-back (call-with-input-file path read-line)))
(newline)
(display (list 'fds-leaked (- (fd-count) fds-before)))
(newline)
