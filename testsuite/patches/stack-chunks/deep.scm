;; Deep non-tail recursion across many stack chunks (Note [Stack chunks]): 1M frames, the
;; right result on the way back up, then a deep map and a deep recursion that allocates a
;; pair per frame and checks each on return (a GC moves nothing it should not).
(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))
(display (list "count" (count 1000000)))
(newline)
(define (build n) (if (= n 0) '() (cons n (build (- n 1)))))
(define (sum l) (if (null? l) 0 (+ (car l) (sum (cdr l)))))
(display (list "sum" (sum (map (lambda (x) (* 2 x)) (build 300000)))))
(newline)
(define (check n)
  (if (= n 0)
      0
      (let* ((p (cons n (make-vector 3 n)))
             (r (check (- n 1))))
        (if (and (= (car p) n) (= (vector-ref (cdr p) 2) n)) (+ r 1) (- r 1000000000)))))
(display (list "checked" (check 200000)))
(newline)
