;; An uncaught (error ...) prints its message followed by its irritants.
(define (check x)
  (if (> x 10)
      (error "something bad:" x)
      x))
(display (check 5))
(newline)
(display (check 42))
(newline)
