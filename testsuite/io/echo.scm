;; Echo round trips between threads of one program: a listener on HOST (argument 1), a
;; server thread per connection, CLIENTS client threads (argument 2) each sending LINES lines
;; (argument 3) and checking every echo. A storm thread allocates all along (with -A4k -DS
;; the GC runs, and checks the heap, while threads are blocked in the IO manager). Checks
;; that no descriptor leaks.
(include "fdcount.scm")
(define args (command-line))
(define host (list-ref args 1))
(define clients (string->number (list-ref args 2)))
(define lines (string->number (list-ref args 3)))
(define fds-before (fd-count))

(define l (tcp-listen host 0))
(define port (tcp-port-number l))

(define (serve c)
  (let loop ((n 0))
    (let ((line (read-line c)))
      (if (eof-object? line)
          (begin (close-port c) n)
          (begin (write-string (string-append "echo " line "\n") c)
                 (flush-output-port c)
                 (loop (+ n 1)))))))

;; the acceptor forks a server per connection, and returns the servers' line counts
(define acceptor
  (fork (lambda ()
          (let loop ((i 0) (servers '()))
            (if (= i clients)
                (map thread-join servers)
                (let ((c (tcp-accept l)))
                  (loop (+ i 1) (cons (fork (lambda () (serve c))) servers))))))))

(define done (make-mvar #f))
(define storm
  (fork (lambda ()
          (let loop ((k 0) (keep '()))
            (if (mvar-read done)
                k
                (begin (sleep 0.0005)       ; a storm, not a flood: -N4 on two cores must keep up
                       (loop (+ k 1) (if (> (length keep) 200) '() (cons (make-vector 20 k) keep)))))))))

(define (client i)
  (let ((c (tcp-connect host port)))
    (tcp-nodelay! c #t)
    (let loop ((j 0) (bad 0))
      (if (= j lines)
          (begin (close-port c) bad)
          (let ((msg (string-append "client " (number->string i) " line " (number->string j))))
            (write-string msg c)
            (newline c)
            (flush-output-port c)
            (let ((back (read-line c)))
              (loop (+ j 1) (if (equal? back (string-append "echo " msg)) bad (+ bad 1)))))))))

(define results (map thread-join (map (lambda (i) (fork (lambda () (client i)))) (iota clients))))
(define served (thread-join acceptor))
(mvar-take! done)
(mvar-put! done #t)
(thread-join storm)
(close-port l)
(define fds-after (fd-count))
(display (list 'clients clients 'bad (apply + results) 'served (apply + served)
               'expected (* clients lines)))
(newline)
(if (and (= 0 (apply + results)) (= (apply + served) (* clients lines)) (= fds-before fds-after))
    (begin (display "echo ") (display host) (display ": ok") (newline))
    (begin (display (list 'fds fds-before fds-after)) (newline) (exit 1)))
