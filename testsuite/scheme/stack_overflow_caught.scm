;; rts: -K256k
;; A stack overflow is an ordinary error object raised in the thread (Note [Stack overflow]
;; in sched/stack.h): guard catches it, again and again, in the main thread and in forked
;; threads; dynamic-wind's after thunks run on the way out; a handler that overflows the
;; stack again while it handles the first is not given more room: that thread dies, alone.
(define (down n) (+ 1 (down (+ n 1))))
(define (catch-overflow thunk)
  (guard (e ((error-object? e) (error-object-message e)))
    (thunk)))
(define (overflow-message? s)
  (and (string? s) (string=? (substring s 0 14) "stack overflow")))

;; the main thread, three times: the headroom is given back after each escape
(display (map (lambda (i) (overflow-message? (catch-overflow (lambda () (down 0)))))
              (list 1 2 3)))
(newline)
;; dynamic-wind: the after thunk runs on the way to the guard
(define unwound #f)
(catch-overflow (lambda () (dynamic-wind (lambda () #f)
                                         (lambda () (down 0))
                                         (lambda () (set! unwound #t)))))
(display (list 'unwound unwound))
(newline)
;; a handler that runs on top of the deep stack (with-exception-handler, then an escape)
(display (call/cc (lambda (k)
                    (with-exception-handler
                     (lambda (e) (k (list 'handled (overflow-message? (error-object-message e)))))
                     (lambda () (down 0))))))
(newline)
;; forked threads, each catching its own
(define ts (map (lambda (i) (fork (lambda () (overflow-message? (catch-overflow (lambda () (down i)))))))
                (list 1 2 3 4)))
(display (map thread-join ts))
(newline)
;; a handler that overflows again: its thread is killed (join gives #f); the others go on
(define bad (fork (lambda ()
                    (with-exception-handler
                     (lambda (e) (down 0))
                     (lambda () (down 0))))))
(display (list 'bad-thread (thread-join bad)))
(newline)
(display (list 'after (overflow-message? (catch-overflow (lambda () (down 0))))))
(newline)
