;; binary-trees: the Benchmarks Game program: a stretch tree, a long-lived tree, and many
;; short-lived complete binary trees of increasing depth, one thread per depth; stresses
;; allocation, minor GC and promotion, and parallel allocation (Benchmarks Game binary-trees).
;; quick: 13
;; norm: 17
;; slow: 20

;; A tree is a pair (left . right); a leaf has empty children.
(define (make-tree depth)
  (if (= depth 0)
      (cons '() '())
      (let ((d (- depth 1)))
        (cons (make-tree d) (make-tree d)))))

;; item check: the number of nodes
(define (check tree)
  (if (null? (car tree))
      1
      (+ 1 (check (car tree)) (check (cdr tree)))))

(define (nodes depth) (- (arithmetic-shift 1 (+ depth 1)) 1))   ; closed form 2^(d+1)-1

(define (expect what got expected)
  (unless (= got expected) (error "binary-trees: wrong answer" what got expected)))

(define (line . items) (for-each display items) (newline))

(define n (string->number (cadr (command-line))))
(define min-depth 4)
(define max-depth (max (+ min-depth 2) n))

(let* ((stretch (+ max-depth 1))
       (c (check (make-tree stretch))))
  (expect "stretch tree" c (nodes stretch))
  (line "stretch tree of depth " stretch "\t check: " c))

(define long-lived (make-tree max-depth))

;; One worker per depth: iterations = 2^(max-depth - depth + min-depth) trees of that depth.
(define (work depth)
  (let ((iterations (arithmetic-shift 1 (+ (- max-depth depth) min-depth))))
    (let loop ((i 0) (sum 0))
      (if (= i iterations)
          (list iterations depth sum)
          (loop (+ i 1) (+ sum (check (make-tree depth))))))))

(define workers
  (let loop ((d min-depth) (acc '()))
    (if (> d max-depth)
        (reverse acc)
        (loop (+ d 2) (cons (let ((d d)) (fork (lambda () (work d)))) acc)))))

;; The schedule is checked apart from the workers: depths min-depth, min-depth+2, ... up to
;; max-depth, in order, each with 2^(max-depth + min-depth - depth) trees (by doubling).
(define (pow2 k) (if (= k 0) 1 (* 2 (pow2 (- k 1)))))
(let loop ((ts workers) (want-depth min-depth))
  (cond ((null? ts)
         (expect "last depth" (- want-depth 2) (if (odd? (- max-depth min-depth))
                                                   (- max-depth 1)
                                                   max-depth)))
        (else
         (let* ((r (thread-join (car ts)))
                (iterations (car r)) (depth (cadr r)) (sum (caddr r)))
           (expect "depth" depth want-depth)
           (expect "iterations" iterations (pow2 (- (+ max-depth min-depth) depth)))
           (expect "trees of depth" sum (* iterations (nodes depth)))
           (line iterations "\t trees of depth " depth "\t check: " sum)
           (loop (cdr ts) (+ want-depth 2))))))

(let ((c (check long-lived)))
  (expect "long lived tree" c (nodes max-depth))
  (line "long lived tree of depth " max-depth "\t check: " c))
