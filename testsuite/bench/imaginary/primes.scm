;; primes: the n-th prime from nofib's lazy sieve, primes = map head (iterate the_filter
;; [2..]), the_filter (p:xs) = filter (not . divides p) xs, on streams made of delay/force;
;; stresses promises, closures and short-lived allocation (nofib imaginary/primes).
;; quick: 400
;; norm: 2000
;; slow: 5000

;; Streams: a pair of a head and a promise of the tail.
(define (stream-head s) (car s))
(define (stream-tail s) (force (cdr s)))

(define (integers-from n) (cons n (delay (integers-from (+ n 1)))))

(define (stream-filter keep? s)
  (let loop ((s s))
    (if (keep? (stream-head s))
        (cons (stream-head s) (delay (loop (stream-tail s))))
        (loop (stream-tail s)))))

;; the_filter (p:xs) = [x | x <- xs, x `mod` p /= 0]
(define (the-filter s)
  (let ((p (stream-head s)))
    (stream-filter (lambda (x) (not (= 0 (remainder x p)))) (stream-tail s))))

;; primes !! n (0-based, as in the Haskell): head of the n-th iterate of the_filter.
(define (nth-prime n)
  (let loop ((i 0) (s (integers-from 2)))
    (if (= i n) (stream-head s) (loop (+ i 1) (the-filter s)))))

;; Independent check: a sieve of Eratosthenes in a bytevector, growing until it holds
;; n+1 primes.
(define (nth-prime-sieve n)
  (let try ((limit 64))
    (let ((composite (make-bytevector (+ limit 1) 0)))
      (let sieve ((i 2))
        (when (<= (* i i) limit)
          (when (= 0 (bytevector-u8-ref composite i))
            (do ((j (* i i) (+ j i))) ((> j limit))
              (bytevector-u8-set! composite j 1)))
          (sieve (+ i 1))))
      (let scan ((i 2) (seen 0))
        (cond ((> i limit) (try (* 2 limit)))
              ((= 1 (bytevector-u8-ref composite i)) (scan (+ i 1) seen))
              ((= seen n) i)
              (else (scan (+ i 1) (+ seen 1))))))))

;; Published values of primes !! n (the (n+1)-th prime).
(define known '((399 . 2741) (400 . 2749) (999 . 7919) (1499 . 12553) (1999 . 17389)
                (2000 . 17393) (4999 . 48611) (5000 . 48619)))

(define n (string->number (cadr (command-line))))
(define p (nth-prime n))
(let ((q (nth-prime-sieve n)))
  (unless (= p q) (error "primes: wrong answer" p q)))
(let ((k (assv n known)))
  (when (and k (not (= p (cdr k)))) (error "primes: wrong answer" p (cdr k))))
(display "primes !! ") (display n) (display " = ") (display p) (newline)
(display "checked: bytevector sieve of Eratosthenes") (newline)
