;; slow-under-sanity
;; A thousand threads, each computing something of its own, joined, results summed; then a
;; thousand threads that all block on one MVar and are released one by one.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (range a b) (let loop ((i (- b 1)) (acc '())) (if (< i a) acc (loop (- i 1) (cons i acc)))))

;; each thread sums the squares below its index and builds a small list
(define (work k)
  (let loop ((i 0) (s 0) (l '()))
    (if (= i k)
        (+ s (length l))
        (loop (+ i 1) (+ s (* i i)) (cons i l)))))
(define threads (map (lambda (k) (fork (lambda () (work k)))) (range 0 1000)))
(define results (map thread-join threads))
(show "threads joined" (length results))
(show "sum of results" (apply + results))
(show "results in order" (equal? results (map work (range 0 1000))))

;; a thousand threads blocked on one MVar, released by main one at a time
(define gate (make-mvar))
(define done (make-mvar))
(define waiters
  (map (lambda (i) (fork (lambda () (let ((v (mvar-take! gate))) (mvar-put! done (+ v i)) v))))
       (range 0 1000)))
(define total
  (let loop ((n 0) (acc 0))
    (if (= n 1000)
        acc
        (begin (mvar-put! gate n)
               (loop (+ n 1) (+ acc (mvar-take! done)))))))
(show "gate total" total)
(show "each waiter got one value" (apply + (map thread-join waiters)))

;; threads that yield while they count, summed
(define yielders
  (map (lambda (k) (fork (lambda () (let loop ((i 0)) (if (= i 20) (* k i) (begin (yield) (loop (+ i 1))))))))
       (range 0 1000)))
(show "yielders" (apply + (map thread-join yielders)))
