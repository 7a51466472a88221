;; `read` (the datum reader) on a socket goes through the IO manager (Note [Reading a datum
;; from a managed port] in runtime/scheme/port.c). At -N1 a reader thread calls read on a
;; connection whose peer, a thread on the same capability, sends datums cut into pieces with
;; sleeps between them: the reader must wait without holding the capability's OS thread
;; (before, read blocked that OS thread in poll(2), so the writer never ran again: a hang),
;; and every datum must come out whole, whatever the cuts (a symbol cut before its end, a
;; string, a list across pieces, a UTF-8 character cut between its bytes, a comment).
(include "fdcount.scm")
(define before (fd-count))
(define l (tcp-listen "127.0.0.1" 0))
(define c (tcp-connect "127.0.0.1" (tcp-port-number l)))
(define a (tcp-accept l))
(define pieces
  (list "(hello wor" "ld 1" "2 \"a str" "ing\") sym" "bol " "#(1 2 3)" " ; a comment\n"
        (string (integer->char 955)) "-lambda " "(x . y)" "  \n" "42"))
(define ticks 0)                        ; the writer's progress, seen by the main thread
(define writer
  (fork (lambda ()
          (for-each (lambda (s)
                      (sleep 0.02)
                      (write-string s c)
                      (flush-output-port c)
                      (set! ticks (+ ticks 1)))
                    pieces)
          (close-port c))))
(define reader
  (fork (lambda ()
          (let loop ((acc '()))
            (let ((d (read a)))
              (if (eof-object? d) (reverse acc) (loop (cons d acc))))))))
(define got (thread-join reader))
(thread-join writer)
(write got) (newline)
(display (list 'whole (equal? got (list '(hello world 12 "a string") 'symbol '#(1 2 3)
                                         (string->symbol (string (integer->char 955) #\- #\l #\a #\m #\b #\d #\a))
                                         '(x . y) 42))))
(newline)
(close-port a) (close-port l)
(display (list 'fds-leaked (- (fd-count) before)))
(newline)
