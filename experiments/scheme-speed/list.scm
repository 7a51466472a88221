;; List-heavy: build a list of 1 000 000 integers, map (lambda (x) (+ x 1)) over it,
;; reverse it and sum it; twice; print the total. Uses the implementation's own map and
;; reverse.
(define (build n)
  (let loop ((i n) (l '()))
    (if (= i 0)
        l
        (loop (- i 1) (cons i l)))))

(define (sum l)
  (let loop ((l l) (s 0))
    (if (null? l)
        s
        (loop (cdr l) (+ s (car l))))))

(define (run reps)
  (let loop ((i 0) (total 0))
    (if (= i reps)
        total
        (loop (+ i 1)
              (+ total (sum (reverse (map (lambda (x) (+ x 1)) (build 1000000)))))))))

(display (run 2))
(newline)
