;; deriv: symbolic differentiation of Gabriel's polynomial and of larger generated
;; sum/product/quotient expressions, repeated R times; list allocation, map and symbol
;; dispatch, with short-lived results (Gabriel's Lisp benchmarks, "deriv").
;; quick: 300
;; norm: 12000
;; slow: 80000

;; Gabriel's deriv: the product rule as (* a (+ da1/a1 da2/a2 ...)); the quotient rule here
;; is the correct d(u/v) = du/v - u dv/(v v) (Gabriel's original has u/(v v dv)).
(define (deriv a)
  (cond ((not (pair? a)) (if (eq? a 'x) 1 0))
        ((eq? (car a) '+) (cons '+ (map deriv (cdr a))))
        ((eq? (car a) '-) (cons '- (map deriv (cdr a))))
        ((eq? (car a) '*) (list '* a (cons '+ (map deriv-aux (cdr a)))))
        ((eq? (car a) '/)
         (let ((u (cadr a)) (v (caddr a)))
           (list '- (list '/ (deriv u) v)
                 (list '/ (list '* u (deriv v)) (list '* v v)))))
        (else (error "deriv: no derivative of" a))))
(define (deriv-aux a) (list '/ (deriv a) a))

;; The test expressions: Gabriel's, two with subtraction and quotients, and generated ones
;; (a fixed pseudo-random sequence) built from + * / over x, a, b and small integers, so
;; that they stay positive for positive x, a and b.
(define gabriel '(+ (* 3 x x) (* a x x) (* b x) 5))
(define gabriel-expected
  '(+ (* (* 3 x x) (+ (/ 0 3) (/ 1 x) (/ 1 x)))
      (* (* a x x) (+ (/ 0 a) (/ 1 x) (/ 1 x)))
      (* (* b x) (+ (/ 0 b) (/ 1 x)))
      0))

(define seed 12345)
(define (random-below n)                ; a linear congruential generator
  (set! seed (modulo (+ (* seed 1103515245) 12345) 2147483648))
  (modulo (quotient seed 65536) n))
(define (random-expr depth)
  (if (or (= depth 0) (= (random-below 5) 0))
      (case (random-below 5)
        ((0 1) 'x) ((2) 'a) ((3) 'b) (else (+ 1 (random-below 9))))
      (case (random-below 3)
        ((0) (cons '+ (random-args depth)))
        ((1) (cons '* (random-args depth)))
        (else (list '/ (random-expr (- depth 1)) (random-expr (- depth 1)))))))
(define (random-args depth)
  (let loop ((k (+ 2 (random-below 3))) (acc '()))
    (if (= k 0) acc (loop (- k 1) (cons (random-expr (- depth 1)) acc)))))

(define expressions
  (append (list gabriel
                '(- (* x x x) (* 2 a x) (/ x (+ 1 (* x x))))
                '(/ (- (* a x x) b) (+ (* x x) 1)))
          (map (lambda (i) (random-expr 5)) (iota 8))))

;; The benchmark: differentiate every expression, R times. Every 64th round is compared
;; with the first round's results (it must be the same, whatever the GC did meanwhile).
(define rounds (string->number (cadr (command-line))))
(define first-results (map deriv expressions))
(let loop ((r 1))
  (when (< r rounds)
    (let ((results (map deriv expressions)))
      (when (and (= 0 (modulo r 64)) (not (equal? results first-results)))
        (error "deriv: wrong answer" "round" r "differs from round 0")))
    (loop (+ r 1))))

;; Check 1: Gabriel's expression gives Gabriel's published answer.
(unless (equal? (car first-results) gabriel-expected)
  (error "deriv: wrong answer" (car first-results) gabriel-expected))

;; Check 2: every derivative agrees numerically with a central finite difference of its
;; expression, at several points.
(define (evaluate e x a b)
  (cond ((number? e) (inexact e))
        ((eq? e 'x) x) ((eq? e 'a) a) ((eq? e 'b) b)
        (else
         (let ((args (map (lambda (s) (evaluate s x a b)) (cdr e))))
           (case (car e)
             ((+) (apply + args)) ((-) (apply - args))
             ((*) (apply * args)) ((/) (apply / args)))))))
(define (size e) (if (pair? e) (fold (lambda (s n) (+ n (size s))) 1 (cdr e)) 1))

(for-each
 (lambda (e d)
   (for-each
    (lambda (x)
      (let* ((a 1.7) (b 0.6) (h (* 1e-6 x))
             (numeric (/ (- (evaluate e (+ x h) a b) (evaluate e (- x h) a b)) (* 2 h)))
             (symbolic (evaluate d x a b)))
        (unless (< (abs (- numeric symbolic)) (* 1e-5 (+ 1 (abs symbolic))))
          (error "deriv: wrong answer" e x symbolic numeric))))
    '(0.5 1.3 2.7)))
 expressions first-results)

(display "deriv: ") (display (length expressions)) (display " expressions, ")
(display rounds) (display " rounds") (newline)
(display "sizes of expressions: ") (write (map size expressions)) (newline)
(display "sizes of derivatives: ") (write (map size first-results)) (newline)
(display "d/dx ") (write gabriel) (display " =") (newline)
(write (car first-results)) (newline)
(display "checked: Gabriel's result, finite differences at 3 points, rounds agree") (newline)
