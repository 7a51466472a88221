;; matmult: the product of two n x n integer matrices held as lists of rows (nofib style:
;; each entry a dot product of a row of A and a column of B), blocks of rows in parallel.
;; (nofib parallel/matmult, ICFP'09 parallel set)
;; quick: 100 4
;; norm: 270 10
;; slow: 500 20

(define argv (map string->number (cdr (command-line))))
(define n (car argv))
(define rows-per-task (cadr argv))

(include "../lib/par.scm")                ; join, par-tabulate

;; Entries in -50..50 from a linear congruential generator.
(define seed 12345)
(define (next!)
  (set! seed (modulo (+ (* seed 1103515245) 12345) 2147483648))
  (- (modulo (quotient seed 65536) 101) 50))
(define (random-matrix n)
  (list-tabulate n (lambda (i) (list-tabulate n (lambda (j) (next!))))))

(define (transpose m)
  (if (null? (car m))
      '()
      (cons (map car m) (transpose (map cdr m)))))

(define (dot r c)
  (let loop ((r r) (c c) (acc 0))
    (if (null? r) acc (loop (cdr r) (cdr c) (+ acc (* (car r) (car c)))))))

(define a (random-matrix n))
(define b (random-matrix n))
(define bt (transpose b))                 ; read-only, shared by all the tasks

(define (multiply-rows rows)              ; the rows of A*B for these rows of A
  (map (lambda (r) (map (lambda (c) (dot r c)) bt)) rows))

;; Split A into blocks of rows; one task per block.
(define (blocks l k)
  (if (null? l)
      '()
      (let loop ((l l) (i 0) (acc '()))
        (if (or (null? l) (= i k))
            (cons (reverse acc) (blocks l k))
            (loop (cdr l) (+ i 1) (cons (car l) acc))))))
(define a-blocks (list->vector (blocks a rows-per-task)))
(define c (apply append
                 (par-tabulate (vector-length a-blocks)
                               (lambda (i) (multiply-rows (vector-ref a-blocks i))))))

(define (sum l) (fold + 0 l))
(define total (sum (map sum c)))
(define trace
  (let loop ((c c) (i 0) (acc 0))
    (if (null? c) acc (loop (cdr c) (+ i 1) (+ acc (list-ref (car c) i))))))

;; Check 1: sum of all entries of A*B = (column sums of A) . (row sums of B).
(define col-sums-a (fold (lambda (r acc) (map + r acc)) (make-list n 0) a))
(define row-sums-b (map sum b))
(define expected-total (dot col-sums-a row-sums-b))
(if (not (= total expected-total))
    (error "matmult: wrong answer" total expected-total))

;; Check 2: every 16th row (and the last) recomputed the other way round: row i of A*B as
;; the sum over k of a_ik times row k of B.
(define (row-by-combination r)
  (let loop ((r r) (b b) (acc (make-list n 0)))
    (if (null? r)
        acc
        (loop (cdr r) (cdr b) (map (lambda (x y) (+ x (* (car r) y))) acc (car b))))))
(define sampled 0)
(let loop ((i 0) (ar a) (cr c))
  (if (pair? ar)
      (begin
        (if (or (= (remainder i 16) 0) (= i (- n 1)))
            (let ((expected (row-by-combination (car ar))))
              (set! sampled (+ sampled 1))
              (if (not (equal? (car cr) expected))
                  (error "matmult: wrong answer" (list 'row i) (car cr) expected))))
        (loop (+ i 1) (cdr ar) (cdr cr)))))

(display "matmult ") (display n) (display "x") (display n) (display ", ")
(display (vector-length a-blocks)) (display " tasks of ") (display rows-per-task)
(display " rows") (newline)
(display "sum of entries ") (display total) (display ", trace ") (display trace) (newline)
(display "check: sum = colsums(A).rowsums(B); ") (display sampled)
(display " rows recomputed as combinations of rows of B") (newline)
