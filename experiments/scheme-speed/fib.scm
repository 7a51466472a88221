;; fib 30, naive doubly recursive.
(define (fib n)
  (if (< n 2)
      n
      (+ (fib (- n 1)) (fib (- n 2)))))

(display (fib 30))
(newline)
