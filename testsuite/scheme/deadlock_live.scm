;; The main thread waits to join a thread on capability 1 that sleeps (sleep 0) and allocates
;; over and over, so that the idle capabilities look for a deadlock after every GC while the
;; thread moves between running, runnable and asleep (Note [Idle capabilities and deadlock]
;; in runtime/sched/schedule.c). No deadlock is there to find. With three counters read one
;; after the other, 200 000 rounds at -N2 -A16k were called deadlocked in 20 of 20 runs.
;; Argument 1: the rounds (default 20 000).
(define n (if (> (length (command-line)) 1) (string->number (list-ref (command-line) 1)) 20000))
(define worker
  (fork-on 1 (lambda ()
               (let loop ((i 0) (live '()))
                 (if (= i n)
                     i
                     (begin (sleep 0)
                            (loop (+ i 1)
                                  (if (> (length live) 50) '() (cons (make-vector 20 i) live)))))))))
(display (list 'joined (thread-join worker)))
(newline)
