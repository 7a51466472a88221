;; An exception raised in a dynamic-wind after thunk while an escape (a guard catching the
;; body's exception, an escape from a handler) runs it: the after thunk runs in the dynamic
;; environment of the dynamic-wind call (R7RS 6.10), so its exception goes to the handlers
;; in force there, the guard's among them, and replaces the body's. (Before: it ran with the
;; handlers of the raise that led there, outside the guard, and was uncaught.)

(define trace '())
(define (note! x) (set! trace (cons x trace)))
(define (show label x)
  (display label) (display ": ") (write x)
  (if (pair? trace) (begin (display " ") (write (reverse trace))))
  (newline)
  (set! trace '()))

;; the issue's program: the after thunk's exception reaches the same guard
(show "raise in after"
      (guard (e (#t (list 'caught e)))
        (dynamic-wind (lambda () #f) (lambda () (raise 'body)) (lambda () (raise 'after)))))

;; error in the after thunk: an error object, caught
(show "error in after"
      (guard (e ((error-object? e) (list 'caught (error-object-message e) (error-object-irritants e))))
        (dynamic-wind (lambda () #f)
                      (lambda () (error "body failed" 1))
                      (lambda () (error "after failed" 2)))))

;; the body returns normally and the after thunk raises
(show "after raises on normal exit"
      (guard (e (#t (list 'caught e)))
        (dynamic-wind (lambda () #f) (lambda () 'value) (lambda () (raise 'after)))))

;; nested guards: the inner one does not take the after thunk's exception, the outer does
(show "nested, outer catches"
      (guard (e (#t (list 'outer e)))
        (guard (e ((eq? e 'body) (list 'inner e)))
          (dynamic-wind (lambda () #f) (lambda () (raise 'body)) (lambda () (raise 'after))))))
;; ... and the inner one does
(show "nested, inner catches"
      (guard (e (#t (list 'outer e)))
        (guard (e ((eq? e 'after) (list 'inner e)))
          (dynamic-wind (lambda () #f) (lambda () (raise 'body)) (lambda () (raise 'after))))))
;; a guard between the wind and the raise does not see the after thunk's exception
(show "guard inside the wind"
      (guard (e (#t (list 'outer e)))
        (dynamic-wind (lambda () #f)
                      (lambda () (guard (e ((string? e) 'inner)) (raise 'body)))
                      (lambda () (raise 'after)))))

;; two winds: the inner after raises, the outer after still runs, the guard takes the
;; inner after's exception
(show "two winds"
      (guard (e (#t (list 'caught e)))
        (dynamic-wind
         (lambda () #f)
         (lambda ()
           (dynamic-wind (lambda () #f)
                         (lambda () (raise 'body))
                         (lambda () (note! 'inner-after) (raise 'inner))))
         (lambda () (note! 'outer-after)))))

;; raise-continuable in an after thunk run by an escape from a handler: the handler of the
;; dynamic-wind call answers it, and the escape goes on
(show "raise-continuable in after"
      (call/cc
       (lambda (k)
         (with-exception-handler
          (lambda (c) (if (eq? c 'in-after) 100 (k (list 'escaped c))))
          (lambda ()
            (dynamic-wind (lambda () #f)
                          (lambda () (raise 'body))
                          (lambda () (note! (list 'after-got (raise-continuable 'in-after))))))))))

;; an escape by a plain continuation: the after thunk's exception goes to the guard around
;; the wind, not past it
(show "escape, after raises"
      (guard (e (#t (list 'caught e)))
        (call/cc
         (lambda (k)
           (dynamic-wind (lambda () #f) (lambda () (k 'escaped)) (lambda () (raise 'after)))))))

;; the handlers in force after the guard are the outer ones again
(show "handlers restored"
      (with-exception-handler
       (lambda (c) 'outer-handler)
       (lambda ()
         (list (guard (e (#t (list 'caught e)))
                 (dynamic-wind (lambda () #f) (lambda () (raise 'body)) (lambda () (raise 'after))))
               (raise-continuable 'again)))))
