;; Descriptor numbers reused (Note [Registered once] in runtime/io/iomgr.c): ROUNDS times
;; (argument 1), a connection is made and closed at both ends; the kernel hands the next
;; round's sockets the same numbers. Each round's server waits in read-line before the client
;; writes (so the read blocks in the back end, on a number that an earlier, closed socket was
;; registered under), and the client waits in read-line for the answer. A back end that took
;; the new socket for the closed one still registered would never see its input: the round
;; would hang (the driver's timeout). Also the listener's accept waits each round.
(include "fdcount.scm")
(define rounds (string->number (list-ref (command-line) 1)))
(define before (fd-count))
(define l (tcp-listen "127.0.0.1" 0))
(define (round i)
  (let* ((server (fork (lambda ()
                         (let* ((a (tcp-accept l))
                                (line (read-line a)))
                           (write-string (string-append line "!\n") a)
                           (close-port a)
                           line))))
         (c (begin (sleep 0.001) (tcp-connect "127.0.0.1" (tcp-port-number l)))))
    (sleep 0.001)                         ; the server is blocked in read-line by now
    (write-string (string-append "r" (number->string i) "\n") c)
    (flush-output-port c)
    (let ((answer (read-line c)))
      (close-port c)
      (and (equal? (thread-join server) (string-append "r" (number->string i)))
           (equal? answer (string-append "r" (number->string i) "!"))))))
(define bad
  (let loop ((i 0) (bad 0))
    (if (= i rounds) bad (loop (+ i 1) (if (round i) bad (+ bad 1))))))
(close-port l)
(display (list 'rounds rounds 'bad bad))
(newline)
(display (list 'fds-leaked (- (fd-count) before)))
(newline)
