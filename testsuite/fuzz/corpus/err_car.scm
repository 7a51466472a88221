;; A run-time error inside nested procedures: the message names car, and the backtrace
;; names the procedures that were active (first-of, called from main).
(define (first-of x) (+ 1 (car x)))
(define (main)
  (display "before the error")
  (newline)
  (let ((r (first-of 5)))
    (display r)
    (newline)))
(main)
(display "not reached")
(newline)
