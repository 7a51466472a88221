;; tcp-connect tries each of a name's addresses in turn (docs/scheme.md, Sockets). Run by
;; connect_each.py with NAME (argument 1) resolving to ::1 first and 127.0.0.1 second (a hosts
;; file of its own): a server that listens on 127.0.0.1 only is reached through NAME (the
;; connect to ::1 is refused first; before, tcp-connect tried only the first address and
;; raised ECONNREFUSED); one on ::1 only is reached too; with neither listening the error is
;; the refusal, raised once; no descriptor leaks.
(include "fdcount.scm")
(define name (list-ref (command-line) 1))
(define before (fd-count))
(define (via host)                      ; a round trip to a listener on host, through name
  (let* ((l (tcp-listen host 0))
         (server (fork (lambda ()
                         (let* ((a (tcp-accept l)) (line (read-line a)))
                           (write-string (string-append line "!\n") a)
                           (close-port a)))))
         (c (tcp-connect name (tcp-port-number l))))
    (write-string "hello\n" c)
    (flush-output-port c)
    (let ((answer (read-line c)))
      (close-port c)
      (thread-join server)
      (close-port l)
      (list host answer))))
(display (via "127.0.0.1")) (newline)
(display (via "::1")) (newline)
(define free-port                       ; a port nobody listens on, on either address
  (let* ((l (tcp-listen "127.0.0.1" 0)) (n (tcp-port-number l))) (close-port l) n))
(display (guard (e ((error-object? e) (list 'none (error-object-message e))))
  (tcp-connect name free-port)))
(newline)
(display (list 'fds-leaked (- (fd-count) before)))
(newline)
