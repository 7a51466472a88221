;; rts: -K1m
;; any, every and count (SRFI 1): one list or several. With several, pred gets an element of
;; each, and the shortest list decides where they stop; any gives pred's first true value,
;; every its last (#t for an empty list), count the number of tuples pred holds for; the
;; last call of pred in any and every is a tail call. (Before: one list only, so
;; `(any < '(3 1) '(2 7))` was an arity error.)

(define (show label x) (display label) (display ": ") (write x) (newline))

;; one list
(show "any" (list (any odd? '(2 4 5 6)) (any odd? '(2 4)) (any odd? '())
                  (any (lambda (x) (and (> x 2) (* x 10))) '(1 3 5))))
(show "every" (list (every odd? '(1 3 5)) (every odd? '(1 2 3)) (every odd? '())
                    (every (lambda (x) (and (odd? x) (* x 10))) '(1 3 5))))
(show "count" (list (count odd? '(1 2 3 5)) (count odd? '())))

;; two and three lists, of different lengths: the shortest decides
(show "any, two lists" (list (any < '(3 1 4) '(2 7 1)) (any < '(3 5) '(2 4 9 9 9))
                             (any (lambda (a b) (and (= a b) (list a b))) '(1 2 3) '(3 2 1))))
(show "any, three lists" (any (lambda (a b c) (and (= (+ a b) c) (list a b c)))
                              '(1 2 3 4) '(1 1 1 1) '(5 3 5)))
(show "every, two lists" (list (every < '(1 2 3) '(2 3 4 0)) (every < '(1 5 3) '(2 3 4))
                               (every + '(1 2) '(10 20 30))))
(show "every, three lists" (every (lambda (a b c) (and (< a b c) c)) '(1 2) '(2 3) '(3 4 0)))
(show "count, two lists" (list (count < '(1 5 2 8) '(2 3 4 5 6)) (count = '(1 2 3) '(1 2))))
(show "count, three lists" (count (lambda (a b c) (= (+ a b) c)) '(1 2 3 4) '(1 1 1) '(2 0 4 5)))

;; an empty list among several: nothing is called
(define calls 0)
(define (counting . args) (set! calls (+ calls 1)) #t)
(show "empty among several" (list (any counting '(1 2) '()) (every counting '() '(1 2))
                                  (count counting '(1 2) '() '(3)) calls))

;; any stops at the first true value and every at the first false one
(set! calls 0)
(show "stops" (list (any (lambda (a b) (set! calls (+ calls 1)) (> a b)) '(1 5 1 1) '(2 2 2 2))
                    (every (lambda (a b) (set! calls (+ calls 1)) (< a b)) '(1 5 1 1) '(2 2 2 2))
                    calls))

;; the last call of pred is a tail call: a loop through any and every runs in constant space
(define (loop-any n) (any (lambda (a b) (if (= a 0) 'done (loop-any (- a 1)))) (list n) (list n)))
(define (loop-every n) (every (lambda (a b) (if (= a 0) 'done (loop-every (- a 1)))) (list n) (list n)))
(show "tail calls" (list (loop-any 100000) (loop-every 100000)))
