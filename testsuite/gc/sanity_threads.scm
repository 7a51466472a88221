; N threads (the first argument) block on one MVar and stay live until the main thread has
; put 0..N-1 into it and joined them all: a heap and a number of GCs that both grow with N.
; testsuite/gc/sanity_cost.py runs it under -DS and counts the sanity checker's work.
(define n (string->number (cadr (command-line))))
(define gate (make-mvar))
(define (worker i) (lambda () (+ i (mvar-take! gate))))
(define threads
  (let loop ((i 0) (acc '()))
    (if (= i n) acc (loop (+ i 1) (cons (fork (worker i)) acc)))))
(let loop ((i 0))
  (when (< i n) (mvar-put! gate i) (loop (+ i 1))))
(define total
  (let loop ((ts threads) (s 0))
    (if (null? ts) s (loop (cdr ts) (+ s (thread-join (car ts)))))))
; each thread returns its index plus the value it took: twice the sum of 0..N-1 in all
(display (if (= total (* n (- n 1))) "threads ok" "threads WRONG"))
(newline)
(unless (= total (* n (- n 1))) (exit 1))
