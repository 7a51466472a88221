;; queens: count the placements of n non-attacking queens on an n x n board by backtracking
;; over lists; every safe placement of the first rows is a parallel task.
;; (nofib parallel/queens, ICFP'09 parallel set)
;; quick: 10 2
;; norm: 12 2
;; slow: 13 2

(define argv (map string->number (cdr (command-line))))
(define n (car argv))
(define prefix (cadr argv))               ; rows placed before the tasks are made

(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "queens: a task failed" (thread-id t)))))

;; Run (f x) for each x of a list, each in a thread started on capability i mod -N (i the
;; position of x); the results in order.
(define (par-map f l)
  (let loop ((l l) (i 0) (ts '()))
    (if (null? l)
        (map join (reverse ts))
        (let ((x (car l)))
          (loop (cdr l) (+ i 1) (cons (fork-on i (lambda () (f x))) ts))))))

;; qs: the columns of the queens placed so far, the latest first.
(define (safe? q qs)
  (let loop ((qs qs) (d 1))
    (or (null? qs)
        (let ((c (car qs)))
          (and (not (= c q))
               (not (= (abs (- c q)) d))
               (loop (cdr qs) (+ d 1)))))))

(define (count-from qs row)               ; solutions extending qs (row queens placed)
  (if (= row n)
      1
      (let loop ((q 0) (acc 0))
        (if (= q n)
            acc
            (loop (+ q 1)
                  (if (safe? q qs) (+ acc (count-from (cons q qs) (+ row 1))) acc))))))

;; All the safe placements of the first k rows, in lexicographic order.
(define (placements k)
  (if (= k 0)
      '(())
      (append-map (lambda (qs)
                    (filter-map (lambda (q) (and (safe? q qs) (cons q qs))) (iota n)))
                  (placements (- k 1)))))

(define starts (placements (min prefix n)))
(define counts (par-map (lambda (qs) (count-from qs (min prefix n))) starts))
(define got (fold + 0 counts))

;; Check 1: the published counts (OEIS A000170).
(define known '#(1 1 0 0 2 10 4 40 92 352 724 2680 14200 73712 365596 2279184 14772512))
(if (< n (vector-length known))
    (let ((expected (vector-ref known n)))
      (if (not (= got expected))
          (error "queens: wrong answer" got expected))))
;; Check 2: mirror symmetry: the solutions with the first queen in column c are as many as
;; those with it in column n-1-c.
(define by-first-column (make-vector n 0))
(for-each (lambda (qs c)
            (let ((first (last qs)))
              (vector-set! by-first-column first (+ c (vector-ref by-first-column first)))))
          starts counts)
(do ((c 0 (+ c 1))) ((= c n))
  (if (not (= (vector-ref by-first-column c) (vector-ref by-first-column (- n 1 c))))
      (error "queens: wrong answer" (list 'column c) by-first-column)))

(display "queens ") (display n) (display ": ") (display got) (display " solutions, ")
(display (length starts)) (display " tasks") (newline)
(display "by first column: ") (display by-first-column) (newline)
(display "check: ")
(display (if (< n (vector-length known)) "the published count, " "no published count, "))
(display "mirror symmetry") (newline)
