;; rts: -K1m
;; Promises: delay, force, delay-force, make-promise, promise?. (The 1 MiB stack limit
;; checks that a chain of delay-force runs in constant space.)

(define (show label x) (display label) (display ": ") (write x) (newline))

(define evaluations 0)
(define p (delay (begin (set! evaluations (+ evaluations 1)) (* 6 7))))
(show "promise?" (list (promise? p) (promise? 5) (promise? (lambda () 1))))
(show "not yet forced" evaluations)
(show "force" (force p))
(show "force again" (force p))
(show "evaluated once" evaluations)

;; make-promise: an already-forced promise; of a promise, the promise itself
(define mp (make-promise 'ready))
(show "make-promise" (list (promise? mp) (force mp)))
(show "make-promise of a promise" (eq? (make-promise p) p))

;; a promise that captures variables
(define (make-lazy-adder a b) (delay (+ a b)))
(show "captured" (force (make-lazy-adder 2 3)))

;; a promise whose body forces another promise
(define q (delay (+ 1 (force (delay 10)))))
(show "nested force" (force q))

;; the R7RS reentrancy example: a promise forced from inside its own body
(define count 0)
(define p2
  (delay (begin (set! count (+ count 1))
                (if (> count x)
                    count
                    (force p2)))))
(define x 5)
(show "reentrant force" (force p2))
(set! x 10)
(show "value stays" (force p2))

;; lazy streams with delay-force: a long chain must run in constant space
(define (stream-from n) (cons n (delay (stream-from (+ n 1)))))
(define (stream-head s) (car s))
(define (stream-tail s) (force (cdr s)))
(define (stream-take s k) (if (= k 0) '() (cons (stream-head s) (stream-take (stream-tail s) (- k 1)))))
(show "stream" (stream-take (stream-from 1) 5))
(define (loop-to n) (delay-force (if (= n 0) (delay 'bottom) (loop-to (- n 1)))))
(show "delay-force chain of 100000" (force (loop-to 100000)))
(define (stream-filter pred s)
  (delay-force
   (let ((v (force s)))
     (if (null? v)
         (delay '())
         (if (pred (car v))
             (delay (cons (car v) (stream-filter pred (cdr v))))
             (stream-filter pred (cdr v)))))))
(define (lazy-range a b) (delay (if (>= a b) '() (cons a (lazy-range (+ a 1) b)))))
(define evens-above (stream-filter (lambda (n) (and (even? n) (> n 1990))) (lazy-range 0 2000)))
(show "stream-filter over 2000" (let ((v (force evens-above))) (list (car v) (car (force (cdr v))))))

;; delay evaluates in the environment of the delay expression, when forced
(define counter 0)
(define later (delay counter))
(set! counter 99)
(show "evaluated when forced" (force later))
