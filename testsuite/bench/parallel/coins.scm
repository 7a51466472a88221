;; coins: count the ways to pay an amount with a bag of coins of limited quantities, by the
;; nofib recursion (use one coin of the largest kind, or none of that kind), the first
;; choices split into parallel tasks. (nofib parallel/coins, ICFP'09 parallel set)
;; quick: 320 6
;; norm: 680 10
;; slow: 1000 12

(define argv (map string->number (cdr (command-line))))
(define amount (car argv))
(define split-depth (cadr argv))          ; levels of the recursion turned into tasks

(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "coins: a task failed" (thread-id t)))))

;; Run (f x) for each x of a list, each in a thread started on capability i mod -N (i the
;; position of x); the results in order.
(define (par-map f l)
  (let loop ((l l) (i 0) (ts '()))
    (if (null? l)
        (map join (reverse ts))
        (let ((x (car l)))
          (loop (cdr l) (+ i 1) (cons (fork-on i (lambda () (f x))) ts))))))

;; The coin bag of nofib's coins.hs: (value . quantity), largest first.
(define bag '((250 . 55) (100 . 88) (25 . 88) (10 . 99) (5 . 122) (1 . 177)))

(define (take-one coins)                  ; the bag less one coin of its first kind
  (let ((c (caar coins)) (q (cdar coins)))
    (if (= q 1) (cdr coins) (cons (cons c (- q 1)) (cdr coins)))))

(define (pay amt coins)
  (cond ((= amt 0) 1)
        ((null? coins) 0)
        ((> (caar coins) amt) (pay amt (cdr coins)))
        (else (+ (pay (- amt (caar coins)) (take-one coins))
                 (pay amt (cdr coins))))))

;; The subproblems (amt . coins) at depth d of the same recursion, left to right; their
;; counts add up to (pay amt coins).
(define (split amt coins d)
  (cond ((or (= d 0) (= amt 0) (null? coins)) (list (cons amt coins)))
        ((> (caar coins) amt) (split amt (cdr coins) d))
        (else (append (split (- amt (caar coins)) (take-one coins) (- d 1))
                      (split amt (cdr coins) (- d 1))))))

(define tasks (split amount bag split-depth))
(define counts (par-map (lambda (p) (pay (car p) (cdr p))) tasks))
(define got (fold + 0 counts))

;; Check: dynamic programming over the amounts, one kind of coin at a time:
;; ways'[a] = sum of ways[a - k*c] for k = 0..q.
(define (count-dp amt coins)
  (let loop ((coins coins) (ways (let ((v (make-vector (+ amt 1) 0))) (vector-set! v 0 1) v)))
    (if (null? coins)
        (vector-ref ways amt)
        (let ((c (caar coins)) (q (cdar coins)) (new (make-vector (+ amt 1) 0)))
          (do ((a 0 (+ a 1))) ((> a amt))
            (let sum ((k 0) (acc 0))
              (if (or (> k q) (> (* k c) a))
                  (vector-set! new a acc)
                  (sum (+ k 1) (+ acc (vector-ref ways (- a (* k c))))))))
          (loop (cdr coins) new)))))
(define expected (count-dp amount bag))
(if (not (= got expected))
    (error "coins: wrong answer" got expected))

(display "coins: ") (display got) (display " ways to pay ") (display amount)
(display ", ") (display (length tasks)) (display " tasks") (newline)
(display "check: dynamic programming count agrees") (newline)
