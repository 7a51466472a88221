;; sumeuler: the sum of Euler's totient phi(k) for k = 1..n, each phi by counting the k' <= k
;; with gcd 1 over an allocated list; chunks of consecutive k in parallel (allocation-heavy).
;; (nofib parallel/sumeuler, ICFP'09 parallel set)
;; quick: 800 25
;; norm: 3000 50
;; slow: 8000 100

(define argv (map string->number (cdr (command-line))))
(define n (car argv))
(define chunk (cadr argv))

(include "../lib/par.scm")                ; join, par-tabulate

;; As in nofib: euler k = length (filter (relprime k) [1..k]).
(define (hcf x y)
  (if (= y 0) x (hcf y (remainder x y))))
(define (relprime? x y) (= (hcf x y) 1))
(define (euler k)
  (length (filter (lambda (j) (relprime? k j)) (iota k 1))))

(define (sum-euler lo hi)                 ; phi(lo) + ... + phi(hi - 1)
  (let loop ((k lo) (acc 0))
    (if (>= k hi) acc (loop (+ k 1) (+ acc (euler k))))))

(define ntasks (quotient (+ n chunk -1) chunk))
(define partial
  (par-tabulate ntasks
                (lambda (i)
                  (sum-euler (+ 1 (* i chunk)) (+ 1 (min n (* (+ i 1) chunk)))))))
(define got (fold + 0 partial))

;; Independent check: phi by a sieve. phi[m] starts at m; for every prime p (a p whose
;; phi[p] is still p), phi[m] -= phi[m] / p for each multiple m of p.
(define (sieve-sum n)
  (let ((phi (make-vector (+ n 1) 0)))
    (do ((i 0 (+ i 1))) ((> i n)) (vector-set! phi i i))
    (do ((p 2 (+ p 1))) ((> p n))
      (if (= (vector-ref phi p) p)
          (do ((m p (+ m p))) ((> m n))
            (vector-set! phi m (- (vector-ref phi m) (quotient (vector-ref phi m) p))))))
    (let loop ((k 1) (acc 0))
      (if (> k n) acc (loop (+ k 1) (+ acc (vector-ref phi k)))))))

(define expected (sieve-sum n))
(if (not (= got expected))
    (error "sumeuler: wrong answer" got expected))
(display "sum of phi(k), k = 1..") (display n) (display ": ") (display got) (newline)
(display ntasks) (display " chunks of ") (display chunk) (newline)
(display "check: sieve of totients agrees") (newline)
