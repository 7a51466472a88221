;; Preemption: the main thread polls an MVar, never blocking or yielding, until a forked
;; thread has filled it. At -N1 that needs the timer to preempt the polling thread at a
;; call (a safe point of the VM); at -N4 the forked thread may also run on another
;; capability.
(define m (make-mvar))
(define t (fork (lambda () (mvar-put! m 'filled) 'forked-thread-ran)))
(define (wait n) (or (mvar-try-take! m) (wait (+ n 1))))
(display (wait 0))
(newline)
(display (thread-join t))
(newline)
