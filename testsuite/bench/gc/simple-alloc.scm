;; simple-alloc: the "simple allocator test" of the OCaml 5 multicore GC post (seed 001): one
;; worker per capability (fork-on), each in a loop allocating a small short-lived list that
;; dies at once; stresses the nursery, minor GC and stop-the-world sync with nothing live.
;; quick: 300000
;; norm: 10000000
;; slow: 70000000

;; ARGS: total iterations, split evenly over the workers (so the output does not depend on
;; -N). Iteration i builds (#(k) #(k k) #(k k k)) with k = i mod 1000 (3 vectors and 3 pairs,
;; as testsuite/bench/micro/simple_alloc.c) and adds up its fields, 6k; each worker returns
;; its running sum and main adds them in worker order. Checked against the closed form.

(define total (string->number (cadr (command-line))))
(define workers (num-capabilities))

(define (work lo hi)
  (let loop ((i lo) (k (modulo lo 1000)) (sum 0))
    (if (= i hi)
        sum
        (let ((l (list (vector k) (vector k k) (vector k k k))))
          (loop (+ i 1)
                (if (= k 999) 0 (+ k 1))
                (+ sum
                   (vector-ref (car l) 0)
                   (let ((v (cadr l))) (+ (vector-ref v 0) (vector-ref v 1)))
                   (let ((v (caddr l))) (+ (vector-ref v 0) (vector-ref v 1) (vector-ref v 2)))))))))

;; worker w gets [start w, start (w+1))
(define (start w) (quotient (* w total) workers))

(define threads
  (let loop ((w (- workers 1)) (acc '()))
    (if (< w 0)
        acc
        (loop (- w 1)
              (cons (let ((lo (start w)) (hi (start (+ w 1))))
                      (fork-on w (lambda () (work lo hi))))
                    acc)))))

(define sum (fold (lambda (t s) (+ s (thread-join t))) 0 threads))

(define expected
  (let ((q (quotient total 1000)) (r (remainder total 1000)))
    (* 6 (+ (* q 499500) (quotient (* r (- r 1)) 2)))))

(unless (= sum expected)
  (error "simple-alloc: wrong answer" sum expected))

(display "simple-alloc: ") (display total) (display " lists of 3 small vectors, sum of fields ")
(display sum) (newline)
(display "checked against the closed form") (newline)
