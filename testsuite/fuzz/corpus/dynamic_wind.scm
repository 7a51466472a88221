;; dynamic-wind: before/after thunks on normal exit, on escape through call/cc, and on
;; raise caught by guard; nesting order.

(define trace '())
(define (note! x) (set! trace (cons x trace)))
(define (show-trace label)
  (display label) (display ": ") (write (reverse trace)) (newline)
  (set! trace '()))

;; normal exit: before, thunk, after; the thunk's value is returned
(define result (dynamic-wind (lambda () (note! 'before)) (lambda () (note! 'during) 'value)
                             (lambda () (note! 'after))))
(note! result)
(show-trace "normal")

;; nested winds unwind innermost first
(dynamic-wind
 (lambda () (note! 'outer-before))
 (lambda ()
   (dynamic-wind (lambda () (note! 'inner-before))
                 (lambda () (note! 'inner-during))
                 (lambda () (note! 'inner-after))))
 (lambda () (note! 'outer-after)))
(show-trace "nested")

;; escape via call/cc: the after thunks run, the rest of the body does not
(note! (call/cc
        (lambda (k)
          (dynamic-wind
           (lambda () (note! 'before))
           (lambda () (note! 'during) (k 'escaped) (note! 'not-reached))
           (lambda () (note! 'after))))))
(show-trace "escape")

;; escape through two levels at once
(note! (call/cc
        (lambda (k)
          (dynamic-wind
           (lambda () (note! 'a-before))
           (lambda ()
             (dynamic-wind
              (lambda () (note! 'b-before))
              (lambda () (k 'out))
              (lambda () (note! 'b-after))))
           (lambda () (note! 'a-after))))))
(show-trace "escape two levels")

;; an escape to a continuation taken inside the outer wind runs only the inner after
(dynamic-wind
 (lambda () (note! 'outer-before))
 (lambda ()
   (note! (call/cc
           (lambda (k)
             (dynamic-wind
              (lambda () (note! 'inner-before))
              (lambda () (k 'inner-escape))
              (lambda () (note! 'inner-after))))))
   (note! 'outer-continues))
 (lambda () (note! 'outer-after)))
(show-trace "escape one of two")

;; raise caught by guard outside the wind
(note! (guard (e (#t (list 'caught e)))
         (dynamic-wind
          (lambda () (note! 'before))
          (lambda () (raise 'problem))
          (lambda () (note! 'after)))))
(show-trace "raise")

;; an error from a primitive inside nested winds, caught outside both
(note! (guard (e (#t 'caught-primitive-error))
         (dynamic-wind
          (lambda () (note! 'before-1))
          (lambda ()
            (dynamic-wind
             (lambda () (note! 'before-2))
             (lambda () (vector-ref (vector) 0))
             (lambda () (note! 'after-2))))
          (lambda () (note! 'after-1)))))
(show-trace "primitive error")

;; a guard inside the wind catches it: no unwinding past the wind
(dynamic-wind
 (lambda () (note! 'before))
 (lambda () (note! (guard (e (#t (list 'inner-guard e))) (raise 'x))) (note! 'body-continues))
 (lambda () (note! 'after)))
(show-trace "guard inside")

;; error with a message, and the after thunk sees the state at exit
(define resource 'closed)
(note! (guard (e ((error-object? e) (error-object-message e)))
         (dynamic-wind
          (lambda () (set! resource 'open) (note! resource))
          (lambda () (error "failed while open"))
          (lambda () (set! resource 'closed) (note! resource)))))
(show-trace "resource")

;; winds in a loop of escapes: each iteration runs before and after once
(define count 0)
(do ((i 0 (+ i 1))) ((= i 1000))
  (call/cc (lambda (k)
             (dynamic-wind (lambda () (set! count (+ count 1)))
                           (lambda () (k i))
                           (lambda () (set! count (+ count 1)))))))
(display "loop count: ") (write count) (newline)
