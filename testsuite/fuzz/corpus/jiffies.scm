;; current-jiffy, jiffies-per-second, current-second: only their types and relations are
;; printed, since their values change from run to run.

(define j1 (current-jiffy))
(define per-second (jiffies-per-second))
(define s1 (current-second))
(define (spin n) (let loop ((i 0) (acc 0)) (if (= i n) acc (loop (+ i 1) (+ acc i)))))
(spin 100000)
(define j2 (current-jiffy))
(define s2 (current-second))

(display (exact-integer? j1)) (newline)
(display (exact-integer? per-second)) (newline)
(display (positive? per-second)) (newline)
(display (real? s1)) (newline)
(display (>= j2 j1)) (newline)
(display (>= s2 s1)) (newline)
;; seconds since 1970: after 2020-01-01, before 2200
(display (and (> s1 1577836800) (< s1 7258118400))) (newline)
;; elapsed time in seconds computed the usual way is a small non-negative real
(define elapsed (/ (- j2 j1) per-second))
(display (and (real? elapsed) (>= elapsed 0) (< elapsed 60))) (newline)
