;; 2 000 threads with chained stacks (a recursion 200 deep: many 1k chunks each), all alive
;; at once (each reports at its deepest, then waits on a gate) while GCs run; every third
;; thread dies of an error at its deepest instead (its chunks are freed). The sum proves every frame came
;; back intact; killed threads join as #f.
(define gate (make-mvar))
(define arrived (make-mvar))
(define (down n die?)
  (if (= n 0)
      (begin (mvar-put! arrived #t) (mvar-read gate) (if die? (car 'deep) 0))
      (let ((p (cons n n)))
        (let ((r (down (- n 1) die?)))
          (+ r (if (= (car p) (cdr p) n) 1 -1000000))))))
(define ts
  (let loop ((i 0) (acc '()))
    (if (= i 2000)
        acc
        (loop (+ i 1) (cons (fork (lambda () (down 200 (= 0 (remainder i 3))))) acc)))))
(define garbage (let loop ((i 0) (l '())) (if (= i 200000) (length l) (loop (+ i 1) (cons i l)))))
(let wait ((k 0)) (if (< k 2000) (begin (mvar-take! arrived) (wait (+ k 1)))))
(mvar-put! gate 'go)
(define rs (map thread-join ts))
(display (list "threads" (length rs)
               (apply + (map (lambda (r) (if (number? r) r 0)) rs))
               (length (filter not rs))))
(newline)
