;; The program ends while threads it forked are still closing their sockets: the exit's
;; flush of every port (sch_flush_all) and the main thread's clearing of its own record
;; (sched_main_thread) run beside those threads. Both once read what the closing threads
;; wrote without ordering (a ThreadSanitizer report at exit in about half the runs of this
;; program under -N2..-N4 with small nurseries, where ports die young and are finalized at
;; almost every minor GC). Clients make N connections, each a request and an answer, and
;; the acceptor forks a thread per connection that answers and closes; the main thread
;; waits for the clients and the acceptor, not for the connection threads, and exits.
;; Usage: exit_closing.scm N
(define n (string->number (list-ref (command-line) 1)))
(define l (tcp-listen "127.0.0.1" 0))
(define pn (tcp-port-number l))
(define clients 4)
(define per-client (quotient n clients))
(define (acceptor)
  (let loop ((i 0))
    (when (< i (* clients per-client))
      (let ((c (tcp-accept l)))
        (fork (lambda ()
                (guard (e (#t #f))
                  (read-line c)
                  (write-string "ok\n" c)
                  (flush-output-port c))
                (guard (e (#t #f)) (close-port c)))))
      (loop (+ i 1)))))
(define (client k)
  (let loop ((i 0) (good 0))
    (if (= i per-client)
        good
        (let ((c (tcp-connect "127.0.0.1" pn)))
          (write-string "hi\n" c)
          (flush-output-port c)
          (let ((a (read-line c)))
            (make-vector 100 i)                 ; something for the nursery
            (close-port c)
            (loop (+ i 1) (if (equal? a "ok") (+ good 1) good)))))))
(define a (fork acceptor))
(define answered
  (apply + (map thread-join (map (lambda (k) (fork (lambda () (client k)))) (iota clients)))))
(thread-join a)
(display (list 'answered answered 'of (* clients per-client)))
(newline)
