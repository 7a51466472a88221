;; nfib: the classic doubly-recursive nfib (the result is the number of calls made), so
;; it measures procedure call/return, fixnum arithmetic and stack frames (nofib imaginary/nfib).
;; quick: 29
;; norm: 37
;; slow: 41

(define (nfib n)
  (if (< n 2)
      1
      (+ 1 (nfib (- n 1)) (nfib (- n 2)))))

;; Independent check 1: the same recurrence, iterated bottom-up (a and b are nfib k-1, nfib k).
(define (nfib-iter n)
  (let loop ((k 1) (a 1) (b 1))
    (if (>= k n) b (loop (+ k 1) b (+ 1 a b)))))

;; Independent check 2: the closed form nfib n = 2 fib(n+1) - 1, with fib 0 = 0, fib 1 = 1.
(define (fib n)
  (let loop ((k 0) (a 0) (b 1))
    (if (= k n) a (loop (+ k 1) b (+ a b)))))

(define (check what got expected)
  (unless (= got expected)
    (error "nfib: wrong answer" what got expected)))

(define n (string->number (cadr (command-line))))
(define result (nfib n))
(check "bottom-up recurrence" result (nfib-iter n))
(check "closed form 2 fib(n+1) - 1" result (- (* 2 (fib (+ n 1))) 1))
(display "nfib ") (display n) (display " = ") (display result) (newline)
(display "checked: bottom-up recurrence and 2*fib(n+1)-1") (newline)
