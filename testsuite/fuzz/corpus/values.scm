;; Multiple values: values, call-with-values, let-values, let*-values.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (div-mod a b) (values (quotient a b) (remainder a b)))
(show "call-with-values" (call-with-values (lambda () (div-mod 17 5)) list))
(show "call-with-values +" (call-with-values (lambda () (values 1 2 3)) +))
(show "single value" (call-with-values (lambda () (values 42)) (lambda (x) (* x 2))))
(show "zero values" (call-with-values (lambda () (values)) (lambda () 'none)))
(show "values as a procedure" (call-with-values (lambda () (apply values '(a b c))) list))
(show "producer is any thunk" (call-with-values (lambda () 7) (lambda (x) (+ x 1))))
(show "rest consumer" (call-with-values (lambda () (values 1 2 3 4)) (lambda (a . rest) (list a rest))))
;; a single value is just that value
(show "(values x) in an expression" (+ 1 (values 2)))

(show "let-values" (let-values (((q r) (div-mod 23 7)) ((x) (values 'single))) (list q r x)))
(show "let-values rest" (let-values (((a . rest) (values 1 2 3)) (all (values 4 5))) (list a rest all)))
(show "let-values scope" (let ((a 'outer)) (let-values (((a) (values 'inner)) ((b) (values a))) (list a b))))
(show "let*-values" (let*-values (((a b) (values 1 2)) ((c) (values (+ a b)))) (list a b c)))

;; values passed through procedures in tail position
(define (pass-through) (div-mod 9 4))
(show "through a tail call" (call-with-values pass-through list))
(define (min-max lst)
  (let loop ((l (cdr lst)) (lo (car lst)) (hi (car lst)))
    (if (null? l)
        (values lo hi)
        (loop (cdr l) (min lo (car l)) (max hi (car l))))))
(show "min-max" (call-with-values (lambda () (min-max '(3 9 -2 7 5))) list))
;; values stored as first-class results of a loop
(define (split lst)
  (if (null? lst)
      (values '() '())
      (let-values (((evens odds) (split (cdr lst))))
        (if (even? (car lst))
            (values (cons (car lst) evens) odds)
            (values evens (cons (car lst) odds))))))
(show "split" (call-with-values (lambda () (split '(1 2 3 4 5 6 7))) list))
;; the receiver of call-with-values is called in tail position
(define (count-down n) (if (= n 0) 'done (call-with-values (lambda () (values (- n 1))) count-down)))
(show "call-with-values loop" (count-down 100000))
