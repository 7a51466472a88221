;; An uncaught error 200 000 frames deep: the backtrace walks every chunk.
(define (deep n) (if (= n 0) (car 'x) (+ 1 (deep (- n 1)))))
(deep 200000)
