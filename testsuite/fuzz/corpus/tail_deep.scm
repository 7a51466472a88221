;; slow-under-sanity
;; Deep non-tail recursion: a million frames deep (the stack grows up to -K, 512 MiB by
;; default), with and without allocation on the way down and up.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))
(show "count 1000000" (count 1000000))

;; build a list on the way back up (a non-tail map), then walk it
(define (build n) (if (= n 0) '() (cons n (build (- n 1)))))
(define (my-map f lst) (if (null? lst) '() (cons (f (car lst)) (my-map f (cdr lst)))))
(define (sum lst) (if (null? lst) 0 (+ (car lst) (sum (cdr lst)))))
(define big (build 1000000))
(show "length" (length big))
(show "sum of a non-tail map" (sum (my-map (lambda (x) (* 2 x)) big)))

;; deep mutual non-tail recursion
(define (ping n) (if (= n 0) 0 (+ 1 (pong (- n 1)))))
(define (pong n) (if (= n 0) 0 (+ 2 (ping (- n 1)))))
(show "ping/pong 1000000" (ping 1000000))

;; the stack shrinks and grows again
(show "again" (count 1000000))
;; deep recursion through a closure and apply
(define (deep-apply n) (if (= n 0) '() (cons n (apply deep-apply (list (- n 1))))))
(show "deep apply" (length (deep-apply 300000)))
