;; slow-under-sanity
;; Allocation-heavy: lists of 100 000 elements built and dropped 50 times, vectors of
;; vectors, strings, and long-lived data that must survive many collections intact.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (iota-list n) (let loop ((i (- n 1)) (acc '())) (if (< i 0) acc (loop (- i 1) (cons i acc)))))
(define (sum lst) (let loop ((l lst) (s 0)) (if (null? l) s (loop (cdr l) (+ s (car l))))))

;; long-lived data built first: it must be unchanged at the end
(define keep (list (iota-list 1000) (make-vector 100 'kept) (string-copy "survivor")))
(define keep-copy (list (iota-list 1000) (make-vector 100 'kept) "survivor"))

;; 50 rounds of a 100 000-element list, mapped and reversed, then dropped
(define (round-trip i)
  (let* ((l (iota-list 100000))
         (m (map (lambda (x) (+ x i)) l))
         (r (reverse m)))
    (+ (sum r) (car r))))
(define totals (let loop ((i 0) (acc '())) (if (= i 50) (reverse acc) (loop (+ i 1) (cons (round-trip i) acc)))))
(show "first totals" (list (car totals) (cadr totals) (list-ref totals 49)))
(show "all totals right" (equal? totals (map (lambda (i) (+ 4999950000 (* 100000 i) 99999 i)) (iota-list 50))))

;; vectors of vectors, rebuilt several times; a few rows kept across rounds
(define kept-rows '())
(define (matrix n round)
  (let ((m (make-vector n)))
    (do ((i 0 (+ i 1))) ((= i n) m)
      (let ((row (make-vector n 0)))
        (do ((j 0 (+ j 1))) ((= j n))
          (vector-set! row j (+ (* i n) j round)))
        (vector-set! m i row)))))
(define (matrix-sum m)
  (let ((total 0))
    (vector-for-each (lambda (row) (vector-for-each (lambda (x) (set! total (+ total x))) row)) m)
    total))
(define matrix-sums
  (let loop ((round 0) (acc '()))
    (if (= round 20)
        (reverse acc)
        (let ((m (matrix 100 round)))
          (set! kept-rows (cons (vector-ref m round) kept-rows))
          (loop (+ round 1) (cons (matrix-sum m) acc))))))
(show "matrix sums" (list (car matrix-sums) (list-ref matrix-sums 19)))
(show "kept rows intact" (let loop ((rows (reverse kept-rows)) (round 0) (ok #t))
                           (if (null? rows)
                               ok
                               (loop (cdr rows) (+ round 1)
                                     (and ok (equal? (car rows) (vector-ref (matrix 100 round) round)))))))

;; strings: many small ones appended into larger ones
(define (number-string n)
  (let loop ((i 0) (acc ""))
    (if (= i n) acc (loop (+ i 1) (string-append acc (number->string (modulo i 10)))))))
(define strings (map (lambda (k) (number-string 500)) (iota-list 50)))
(show "string lengths" (apply + (map string-length strings)))
(show "strings equal" (equal? (car strings) (list-ref strings 49)))
(define joined (apply string-append strings))
(show "joined" (list (string-length joined) (substring joined 0 12) (string-ref joined 24999)))
(define chars (string->list joined))
(show "string->list->string" (equal? (list->string chars) joined))

;; a tree of pairs and vectors built, copied, compared
(define (make-tree depth)
  (if (= depth 0)
      (vector depth (string #\l))
      (cons (make-tree (- depth 1)) (list depth (make-tree (- depth 1))))))
(define (tree-copy t)
  (cond ((pair? t) (cons (tree-copy (car t)) (tree-copy (cdr t))))
        ((vector? t) (vector-map tree-copy t))
        ((string? t) (string-copy t))
        (else t)))
(define (tree-count t)
  (cond ((pair? t) (+ (tree-count (car t)) (tree-count (cdr t))))
        ((vector? t) (+ 1 (tree-count (vector->list t))))
        (else 0)))
(define t1 (make-tree 14))
(define t2 (tree-copy t1))
(show "tree" (list (tree-count t1) (equal? t1 t2) (eq? t1 t2)))

(show "long-lived data intact" (equal? keep keep-copy))
