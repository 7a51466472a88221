;; tak 18 12 6 (= 7), repeated 300 times.
(define (tak x y z)
  (if (not (< y x))
      z
      (tak (tak (- x 1) y z)
           (tak (- y 1) z x)
           (tak (- z 1) x y))))

(define (repeat n)
  (let loop ((i 0) (r 0))
    (if (= i n)
        r
        (loop (+ i 1) (tak 18 12 6)))))

(display (repeat 300))
(newline)
