;; rts: -K1m
;; (a 1 MiB stack limit: the tail-call loops below must run in constant stack)
;; Core forms: define, lambda, if, the let family, named let, do, begin, set!, internal
;; defines, closures over mutable variables, and proper tail calls.

(define (show label x) (display label) (display ": ") (write x) (newline))

;; define and lambda, rest arguments
(define x 10)
(define (add a b) (+ a b))
(define sq (lambda (n) (* n n)))
(define (rest a . more) (list a more))
(define all (lambda args args))
(show "define" (list x (add 2 3) (sq 7)))
(show "rest" (list (rest 1) (rest 1 2 3) (all) (all 'a 'b)))
(show "lambda immediate" ((lambda (a b) (- a b)) 10 4))

;; if, with and without an alternative
(show "if" (list (if #t 'yes 'no) (if #f 'yes 'no) (if '() 'true 'false) (if 0 'true 'false)))

;; the let family
(show "let" (let ((a 1) (b 2)) (+ a b)))
(show "let scope" (let ((x 1)) (let ((x 2) (y x)) (list x y))))
(show "let*" (let* ((a 1) (b (+ a 1)) (c (* b 10))) (list a b c)))
(show "letrec" (letrec ((ev? (lambda (n) (if (= n 0) #t (od? (- n 1)))))
                        (od? (lambda (n) (if (= n 0) #f (ev? (- n 1))))))
                 (list (ev? 10) (od? 7) (ev? 3))))
(show "letrec*" (letrec* ((a 5) (b (* a 2)) (f (lambda () (+ a b)))) (f)))

;; named let
(show "named let" (let loop ((i 0) (acc '())) (if (= i 5) (reverse acc) (loop (+ i 1) (cons (* i i) acc)))))

;; do
(show "do" (do ((i 0 (+ i 1)) (s 0 (+ s i))) ((= i 10) s)))
(show "do vector" (do ((v (make-vector 5)) (i 0 (+ i 1))) ((= i 5) v) (vector-set! v i (* 2 i))))

;; begin and set!
(define counter 0)
(begin (set! counter (+ counter 1)) (set! counter (* counter 10)))
(show "begin/set!" counter)
(show "begin value" (begin 1 2 3))

;; internal defines, including mutually recursive ones and ones that use earlier ones
(define (internal n)
  (define k 3)
  (define (helper m) (* m k))
  (define (ev? m) (if (= m 0) #t (od? (- m 1))))
  (define (od? m) (if (= m 0) #f (ev? (- m 1))))
  (list (helper n) (ev? n) (od? n)))
(show "internal defines" (internal 4))
(show "internal define in let" (let () (define a 1) (define b (+ a 1)) (list a b)))
(show "internal define in lambda body" ((lambda () (define z 42) z)))

;; closures and mutable captured variables
(define (make-counter)
  (let ((n 0))
    (lambda () (set! n (+ n 1)) n)))
(define c1 (make-counter))
(define c2 (make-counter))
(c1) (c1)
(let* ((a (c1)) (b (c2)) (c (c1)))
  (show "counters" (list a b c)))
(define (make-account balance)
  (define (deposit! amt) (set! balance (+ balance amt)) balance)
  (define (withdraw! amt) (set! balance (- balance amt)) balance)
  (lambda (op amt) (if (eq? op 'deposit) (deposit! amt) (withdraw! amt))))
(define acct (make-account 100))
(acct 'deposit 50)
(show "shared captured variable" (acct 'withdraw 30))
;; each iteration of a do loop gets a fresh binding
(define procs
  (do ((i 0 (+ i 1)) (ps '() (cons (lambda () i) ps))) ((= i 3) (reverse ps))))
(show "fresh bindings per iteration" (map (lambda (p) (p)) procs))
;; a captured parameter assigned after capture
(define (capture-then-set a)
  (let ((get (lambda () a)))
    (set! a (* a 2))
    (get)))
(show "set! after capture" (capture-then-set 21))
;; closures nested three deep
(define (adder a) (lambda (b) (lambda (c) (+ a b c))))
(show "nested closures" (((adder 1) 20) 300))

;; proper tail calls: these must run in constant stack
(define (count-up i n) (if (= i n) i (count-up (+ i 1) n)))
(show "tail loop 10000000" (count-up 0 10000000))
(define (my-even? n) (if (= n 0) #t (my-odd? (- n 1))))
(define (my-odd? n) (if (= n 0) #f (my-even? (- n 1))))
(show "mutual recursion even? 1000000" (my-even? 1000000))
(show "mutual recursion odd? 1000001" (my-odd? 1000001))
;; tail calls through cond, and, or, when, let, begin
(define (tail-forms n)
  (cond ((= n 0) 'done)
        ((odd? n) (let ((m (- n 1))) (begin (tail-forms m))))
        (else (and #t (or #f (when #t (tail-forms (- n 1))))))))
(show "tail in derived forms" (tail-forms 1000000))
;; a tail call through apply
(define (apply-loop n) (if (= n 0) 'applied (apply apply-loop (list (- n 1)))))
(show "tail apply" (apply-loop 100000))
;; a named let loop of 1000000 iterations accumulating a sum
(show "named let sum" (let loop ((i 0) (s 0)) (if (> i 1000000) s (loop (+ i 1) (+ s i)))))
