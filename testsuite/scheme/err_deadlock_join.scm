;; A deadlock in thread-join: the main thread joins a thread that waits on an MVar nothing
;; will fill. The report names the join's line and column.
(define (joiner)
  (define t (fork (lambda ()
                    (mvar-take! (make-mvar)))))
  (list (thread-join t)))
(define result (joiner))
(display "not reached")
