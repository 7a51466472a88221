;; Exceptions: with-exception-handler, raise, raise-continuable, guard (with =>), error
;; objects, and errors raised by primitives caught by guard. (The messages of the
;; primitives' errors are implementation-specific, so only the fact that they were caught
;; is printed.)

(define (show label x) (display label) (display ": ") (write x) (newline))

;; guard with raise of any object
(show "guard symbol" (guard (e ((symbol? e) (list 'caught e))) (raise 'boom)))
(show "guard number" (guard (e ((string? e) 'string) ((number? e) (* e 2))) (raise 21)))
(show "guard list" (guard (e ((pair? e) (car e))) (raise (list 'payload 1 2))))
(show "guard else" (guard (e (#f 'never) (else (list 'else e))) (raise 'x)))
(show "guard =>" (guard (e ((assq 'code e) => cdr) (else 'no-code)) (raise '((code . 404) (msg . "nf")))))
(show "guard => miss" (guard (e ((assq 'code e) => cdr) (else 'no-code)) (raise '((msg . "nf")))))
(show "guard no raise" (guard (e (#t 'caught)) (+ 1 2)))
(show "guard body sequence" (guard (e (#t 'caught)) 'first 'second))
;; an unmatched guard re-raises to the enclosing one
(show "re-raise" (guard (outer (#t (list 'outer outer)))
                   (guard (inner ((number? inner) 'inner-number))
                     (raise 'not-a-number))))
;; raise from deep inside procedures
(define (check-positive n) (if (< n 0) (raise (list 'negative n)) n))
(define (sum-checked lst) (if (null? lst) 0 (+ (check-positive (car lst)) (sum-checked (cdr lst)))))
(show "deep raise" (guard (e ((pair? e) e)) (sum-checked '(1 2 -3 4))))
(show "no raise" (guard (e ((pair? e) e)) (sum-checked '(1 2 3 4))))

;; error and error objects
(define (try thunk)
  (guard (e ((error-object? e)
             (list 'error (error-object-message e) (error-object-irritants e)))
            (else (list 'other e)))
    (thunk)))
(show "error" (try (lambda () (error "something failed" 1 "two" 'three))))
(show "error no irritants" (try (lambda () (error "plain message"))))
(show "raise non-error" (try (lambda () (raise 'sym))))
(show "error-object? on other values" (list (error-object? 'sym) (error-object? "str") (error-object? 42)))
(show "error object is a value" (guard (e (#t (error-object? e))) (error "x")))
(show "error-object-message type" (guard (e (#t (string? (error-object-message e)))) (error "msg" 1)))

;; with-exception-handler and raise-continuable: the handler's value returns to the raise point
(show "raise-continuable" (with-exception-handler
                            (lambda (c) (* c 10))
                            (lambda () (+ 1 (raise-continuable 4)))))
(show "raise-continuable twice" (with-exception-handler
                                  (lambda (c) (if (eq? c 'a) 1 2))
                                  (lambda () (list (raise-continuable 'a) (raise-continuable 'b)))))
;; with-exception-handler with raise: the handler escapes through an escape continuation
(show "handler escapes" (call/cc
                         (lambda (k)
                           (with-exception-handler
                            (lambda (e) (k (list 'handled e)))
                            (lambda () (raise 'oops) 'not-reached)))))
;; the handler runs in the dynamic context of raise, minus the current handler:
;; a raise inside the handler goes to the outer handler
(show "nested handlers" (call/cc
                         (lambda (k)
                           (with-exception-handler
                            (lambda (e) (k (list 'outer-got e)))
                            (lambda ()
                              (with-exception-handler
                               (lambda (e) (raise (list 'wrapped e)))
                               (lambda () (raise 'inner))))))))

;; errors raised by primitives are caught by guard
(define (caught? thunk) (guard (e (#t 'caught)) (thunk) 'not-caught))
(show "car of a number" (caught? (lambda () (car 1))))
(show "cdr of empty list" (caught? (lambda () (cdr '()))))
(show "vector-ref out of range" (caught? (lambda () (vector-ref (vector 1 2 3) 10))))
(show "string-ref out of range" (caught? (lambda () (string-ref "abc" 3))))
(show "adding a symbol" (caught? (lambda () (+ 1 'a))))
(show "calling a non-procedure" (caught? (lambda () (5 1))))
(define (one-arg x) x)
(show "wrong number of arguments" (caught? (lambda () (one-arg 1 2))))
(show "division by zero" (caught? (lambda () (quotient 1 0))))
(show "undefined variable" (caught? (lambda () undefined-variable-here)))
(show "fixnum overflow" (caught? (lambda () (* 4611686018427387903 2))))
(show "primitive errors are error objects or not, but caught" (guard (e (#t #t)) (car '())))

;; errors inside a loop: the loop continues after each one
(define (safe-div a b) (guard (e (#t 'div-error)) (if (= b 0) (error "division by zero" a) (quotient a b))))
(show "loop with errors" (map safe-div '(10 20 30 40) '(2 0 5 0)))
;; guard in a loop many times: the handler stack does not grow
(define (guard-loop n acc)
  (if (= n 0) acc (guard-loop (- n 1) (+ acc (guard (e (#t 1)) (raise 'x))))))
(show "10000 guards" (guard-loop 10000 0))
