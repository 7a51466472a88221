;; 100 000 threads, each with a small stack (a recursion 8 deep, within its first chunk),
;; all alive at once: each waits on a gate before it returns.
(define gate (make-mvar))
(define (down n) (if (= n 0) (begin (mvar-read gate) 0) (+ 1 (down (- n 1)))))
(define ts (let loop ((i 0) (acc '())) (if (= i 100000) acc (loop (+ i 1) (cons (fork (lambda () (down 8))) acc)))))
(mvar-put! gate 'go)
(display (list "threads" (length ts) (apply + (map thread-join ts))))
(newline)
