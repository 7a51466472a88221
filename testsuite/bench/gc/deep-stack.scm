;; deep-stack: deep non-tail recursion (depth D) that allocates on the way down, churns
;; short-lived data at the bottom and builds its result on the way up, R times; so many
;; minor GCs happen with a very deep, mostly unchanged stack (seed 002).
;; quick: 30000 3 100000
;; norm: 400000 6 600000
;; slow: 1000000 10 1000000
;; rts: -K1g

;; ARGS: depth D, repetitions R, churn C (small lists allocated and dropped at the bottom).
;; Level n keeps a pair (n . n) live in its frame across the recursive call (every 16th
;; level also allocates and drops four short lists) and on return conses 2n onto the
;; result; the bottom returns the churn's sum C(C-1)/2 as the tail. Each repetition's
;; result list is checked: length D + 1, sum D(D+1) + C(C-1)/2.

(define args (map string->number (cdr (command-line))))
(define depth (car args))
(define reps (cadr args))
(define churn-count (caddr args))

;; allocate c short-lived lists of three numbers; their sum of cars
(define (churn c)
  (let loop ((i 0) (s 0))
    (if (= i c)
        s
        (let ((l (list i (+ i 1) (+ i 2))))
          (loop (+ i 1) (+ s (car l)))))))

(define (descend n)
  (if (= n 0)
      (list (churn churn-count))
      (let ((cell (cons n n)))
        (when (= 0 (remainder n 16))
          (churn 4))
        (let ((rest (descend (- n 1))))
          (cons (+ (car cell) (cdr cell)) rest)))))

(define (check-result l)
  (let loop ((l l) (len 0) (sum 0))
    (if (null? l)
        (let ((expected-sum (+ (* depth (+ depth 1)) (quotient (* churn-count (- churn-count 1)) 2))))
          (unless (= len (+ depth 1))
            (error "deep-stack: wrong answer" 'length len (+ depth 1)))
          (unless (= sum expected-sum)
            (error "deep-stack: wrong answer" 'sum sum expected-sum))
          sum)
        (loop (cdr l) (+ len 1) (+ sum (car l))))))

(define sums
  (let loop ((r 0) (acc '()))
    (if (= r reps)
        (reverse acc)
        (loop (+ r 1) (cons (check-result (descend depth)) acc)))))

(display "deep-stack: ") (display reps) (display " descents to depth ") (display depth)
(display " with ") (display churn-count) (display " lists churned at the bottom, sum ")
(display (car sums)) (newline)
(display "checked: length D+1 and sum D(D+1) + C(C-1)/2 each time") (newline)
