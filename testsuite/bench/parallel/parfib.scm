;; parfib: nfib (the number of calls naive doubly-recursive fib makes) with a future for one
;; branch of every call above a threshold; stresses thread creation, join and work spreading.
;; (nofib parallel/parfib, ICFP'09 parallel set)
;; quick: 29 16
;; norm: 37 23
;; slow: 41 26

(define argv (map string->number (cdr (command-line))))
(define n (car argv))
(define threshold (cadr argv))

(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "parfib: a task failed" (thread-id t)))))

(define (nfib n)
  (if (< n 2)
      1
      (+ (nfib (- n 1)) (nfib (- n 2)) 1)))

;; Above the threshold, nfib (n-1) runs in a thread of its own (a future) while this thread
;; computes nfib (n-2); the two are combined after the join, always in the same order.
(define (pfib n)
  (if (<= n threshold)
      (nfib n)
      (let* ((f (fork (lambda () (pfib (- n 1)))))
             (b (pfib (- n 2))))
        (+ (join f) b 1))))

;; The number of threads pfib forks.
(define (tasks n)
  (if (<= n threshold) 0 (+ 1 (tasks (- n 1)) (tasks (- n 2)))))

;; nfib n = 2 fib(n+1) - 1, with fib computed iteratively.
(define (fib k)
  (let loop ((i 0) (a 0) (b 1))
    (if (= i k) a (loop (+ i 1) b (+ a b)))))

(define got (pfib n))
(define expected (- (* 2 (fib (+ n 1))) 1))
(if (not (= got expected))
    (error "parfib: wrong answer" got expected))
(display "nfib ") (display n) (display " = ") (display got) (newline)
(display "threshold ") (display threshold) (display ": ") (display (tasks n))
(display " threads forked") (newline)
(display "check: 2*fib(") (display (+ n 1)) (display ")-1 = ") (display expected)
(display " ok") (newline)
