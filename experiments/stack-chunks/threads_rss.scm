;; N threads alive at once, each D frames deep (each reports at its deepest, then waits on a
;; gate); then all return. ARGS: N D. Prints the sum of the depths.
(define args (map string->number (cdr (command-line))))
(define n (car args))
(define depth (cadr args))
(define gate (make-mvar))
(define arrived (make-mvar))
(define (down k) (if (= k 0) (begin (mvar-put! arrived #t) (mvar-read gate) 0) (+ 1 (down (- k 1)))))
(define ts (let loop ((i 0) (acc '())) (if (= i n) acc (loop (+ i 1) (cons (fork (lambda () (down depth))) acc)))))
(let wait ((k 0)) (if (< k n) (begin (mvar-take! arrived) (wait (+ k 1)))))
(mvar-put! gate 'go)
(display (apply + (map thread-join ts)))
(newline)
