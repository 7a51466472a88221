;; par-alloc: two worker threads, each in a loop that allocates a pair and writes its own
;; cell (a pair's car and a 4-slot vector's slot 0) at every iteration; the workers share
;; nothing, so at -N2 each should run at its -N1 speed. Catches cache lines shared between
;; capabilities (issue 43: two threads' cells copied side by side by one GC thread doubled
;; both workers' CPU time in most runs); compare user CPU per iteration at -N1 and -N2.
;; quick: 300000
;; norm: 10000000
;; slow: 40000000

;; ARGS: iterations per worker. Worker w's loop runs i = n..1: it conses (i), stores its car
;; into its cell pair and slot 0 of its cell vector, and adds what it reads back from both
;; to its sum; it returns the sum, which is 2 * n(n+1)/2 = n(n+1) exactly when every write
;; was seen. The two workers are forked from the main thread one after the other, as most
;; programs fork, so their first objects are neighbours in its nursery.

(define n (string->number (cadr (command-line))))

(define (worker)
  (let ((cell (cons 0 '()))
        (vec (make-vector 4 0)))
    (let loop ((i n) (sum 0))
      (if (= i 0)
          sum
          (let ((x (cons i '())))
            (set-car! cell (car x))
            (vector-set! vec 0 (car x))
            (loop (- i 1) (+ sum (car cell) (vector-ref vec 0))))))))

(define t1 (fork worker))
(define t2 (fork worker))
(define s1 (thread-join t1))
(define s2 (thread-join t2))
(define want (* n (+ n 1)))

(display "par-alloc: 2 workers x ") (display n) (display " iterations, sums ")
(display s1) (display " ") (display s2) (newline)
(if (and (= s1 want) (= s2 want))
    (begin (display "checked against n(n+1)") (newline))
    (begin (display "wrong: want ") (display want) (newline) (exit 1)))
