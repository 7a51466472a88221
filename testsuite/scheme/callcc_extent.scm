;; Calling a continuation outside its extent (call/cc is escape-only) is an ordinary error:
;; an error object raised where the continuation is called, before anything is unwound, so
;; a guard around the call catches it. (Before: the escape first put back the handlers of
;; the call/cc's time, so the error went past the guard and ended the program.)

(define trace '())
(define (note! x) (set! trace (cons x trace)))
(define (show label x)
  (display label) (display ": ") (write x)
  (if (pair? trace) (begin (display " ") (write (reverse trace))))
  (newline)
  (set! trace '()))
(define (describe e)
  (if (error-object? e)
      (list 'error-object (error-object-message e) (error-object-irritants e))
      (list 'not-an-error-object e)))

;; the issue's program: the call/cc has returned
(define k #f)
(call/cc (lambda (c) (set! k c)))
(show "returned" (guard (e (#t (describe e))) (k 1)))
(show "returned, several values" (guard (e ((error-object? e) 'caught)) (k 1 2 3)))

;; a continuation taken inside a dynamic-wind that has been left: caught, and the wind's
;; after thunk is not run again
(define k2 #f)
(dynamic-wind (lambda () (note! 'before))
              (lambda () (call/cc (lambda (c) (set! k2 c))))
              (lambda () (note! 'after)))
(show "left wind" (guard (e ((error-object? e) 'caught)) (k2 'again)))

;; from deeper: the frames above the guard's are dropped, the program goes on
(define (deep n) (if (= n 0) (k 'from-deep) (+ 1 (deep (- n 1)))))
(show "from depth 1000" (guard (e ((error-object? e) 'caught)) (deep 1000)))

;; with-exception-handler sees it as well, in the dynamic environment of the call
(show "with-exception-handler"
      (call/cc
       (lambda (out)
         (with-exception-handler
          (lambda (e) (out (list 'handled (error-object? e))))
          (lambda () (k 1))))))

;; a continuation that is live on its own thread's stack is outside its extent in another
;; thread: the other thread waits inside its call/cc while this one calls the continuation
(define got (make-mvar))
(define done (make-mvar))
(define t (fork (lambda ()
                  (call/cc (lambda (c) (mvar-put! got c) (mvar-take! done) 'finished)))))
(define other (mvar-take! got))
(show "another thread's" (guard (e ((error-object? e) 'caught)) (other 1)))
(mvar-put! done #t)
(show "that thread" (thread-join t))

;; an after thunk, run by an escape, that calls a continuation taken inside its own wind
;; (still on the stack, but its wind has been left): the error is raised in the after thunk
;; and its guard takes it; the escape then completes
(define inner #f)
(show "wind left during an escape"
      (call/cc
       (lambda (k1)
         (dynamic-wind
          (lambda () #f)
          (lambda () (call/cc (lambda (c) (set! inner c) (k1 'escaped))))
          (lambda () (note! (guard (e ((error-object? e) 'caught-in-after)) (inner 'back))))))))

;; a live continuation still works: an escape from inside a guard body
(show "live" (call/cc (lambda (c) (guard (e (#t 'wrong)) (c 'escaped)))))
;; and a guard around the call of a stale one leaves the outer handlers in place
(show "handlers kept"
      (with-exception-handler
       (lambda (c) 'outer)
       (lambda ()
         (list (guard (e ((error-object? e) 'caught)) (k 1))
               (raise-continuable 'x)))))
