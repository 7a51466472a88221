;; Wake-ups that reach a capability as it goes to sleep in its IO back end (Note [Wake-ups
;; before the wait] in runtime/io/iomgr.c). Capability 0 always has an op in flight (a
;; thread blocked in tcp-accept), so when idle it sleeps in the back end's wait. The main
;; thread (capability 0; it is never moved) and a thread on capability 1 hand a token back
;; and forth ROUNDS times (argument 1) through MVars, so capability 0 is woken from
;; capability 1 every round. Run with RTSLAB_TEST_IO_WAIT_DELAY, which makes every wait begin
;; late: each wake-up then reaches the eventfd first, and a wake-up lost there leaves
;; capability 0 asleep for good (the test times out). The output says where each thread ran,
;; so the test also fails if they did not run where the race needs them.
(define rounds (string->number (cadr (command-line))))
(define l (tcp-listen "127.0.0.1" 0))
(define acceptor (fork-on 0 (lambda ()
                              (guard (e (#t #t)) (tcp-accept l))
                              (current-capability))))
(define ping (make-mvar))
(define pong (make-mvar))
(define b (fork-on 1 (lambda ()
                       (let loop ((i 0) (sum 0) (on-1 0))
                         (if (= i rounds)
                             (list sum on-1)
                             (let ((v (mvar-take! ping)))
                               (mvar-put! pong v)
                               (loop (+ i 1) (+ sum v)
                                     (if (= (current-capability) 1) (+ on-1 1) on-1))))))))
(define main-on-0
  (let loop ((i 0) (on-0 0))
    (if (= i rounds)
        on-0
        (begin (mvar-put! ping i)
               (mvar-take! pong)
               (loop (+ i 1) (if (= (current-capability) 0) (+ on-0 1) on-0))))))
(define got (thread-join b))
(close-port l)
(display (list 'rounds rounds
               'sum-ok (= (car got) (quotient (* rounds (- rounds 1)) 2))
               'main-on-0 (= main-on-0 rounds) 'partner-on-1 (= (cadr got) rounds)
               'acceptor-on (thread-join acceptor)))
(newline)
