;; gcbench: Hans Boehm's GCBench (as ported to Scheme for Larceny/Gambit): a long-lived
;; binary tree and float array, then many temporary trees of depth 4, 6, ... built top-down
;; (mutating) and bottom-up; stresses allocation, promotion and old-to-young writes.
;; quick: 10 10000
;; norm: 15 250000
;; slow: 17 1000000

;; ARGS: kMaxTreeDepth kArraySize (the original: 16 500000); kStretchTreeDepth
;; is max+2, kLongLivedTreeDepth is max, kMinTreeDepth is 4. Every tree built is counted
;; and checked against 2^(d+1)-1 nodes; at the end the long-lived tree and array must be
;; intact.

(define-record-type node
  (make-node left right i j)
  node?
  (left node-left set-node-left!)
  (right node-right set-node-right!)
  (i node-i)
  (j node-j))

(define (make-empty-node) (make-node #f #f 0 0))

(define args (map string->number (cdr (command-line))))
(define k-max-tree-depth (car args))
(define k-array-size (cadr args))
(define k-stretch-tree-depth (+ k-max-tree-depth 2))
(define k-long-lived-tree-depth k-max-tree-depth)
(define k-min-tree-depth 4)

(define (tree-size i) (- (arithmetic-shift 1 (+ i 1)) 1))
(define (num-iters i) (quotient (* 2 (tree-size k-stretch-tree-depth)) (tree-size i)))

;; build a tree top-down, mutating the nodes
(define (populate depth this-node)
  (when (> depth 0)
    (set-node-left! this-node (make-empty-node))
    (set-node-right! this-node (make-empty-node))
    (populate (- depth 1) (node-left this-node))
    (populate (- depth 1) (node-right this-node))))

;; build a tree bottom-up
(define (make-tree depth)
  (if (<= depth 0)
      (make-empty-node)
      (make-node (make-tree (- depth 1)) (make-tree (- depth 1)) 0 0)))

(define (count-nodes t)
  (if (node? t)
      (+ 1 (count-nodes (node-left t)) (count-nodes (node-right t)))
      0))

(define (check-tree t depth what)
  (let ((n (count-nodes t)))
    (unless (= n (tree-size depth))
      (error "gcbench: wrong answer" what depth n (tree-size depth)))))

(define trees-checked 0)

(define (time-construction depth)
  (let ((iters (num-iters depth)))
    ;; GCBench's rule, checked apart from num-iters: the trees of one depth hold together
    ;; as many nodes as fit in two stretch trees, and one more tree would not fit.
    (let ((budget (* 2 (- (expt 2 (+ k-stretch-tree-depth 1)) 1)))
          (per-tree (- (expt 2 (+ depth 1)) 1)))
      (unless (and (<= (* iters per-tree) budget) (> (* (+ iters 1) per-tree) budget))
        (error "gcbench: wrong answer" 'iterations depth iters)))
    (do ((i 0 (+ i 1))) ((= i iters))
      (let ((temp-tree (make-empty-node)))
        (populate depth temp-tree)
        (check-tree temp-tree depth 'top-down)))
    (do ((i 0 (+ i 1))) ((= i iters))
      (check-tree (make-tree depth) depth 'bottom-up))
    (set! trees-checked (+ trees-checked (* 2 iters)))
    (display "  depth ") (display depth) (display ": ") (display iters)
    (display " trees top-down, ") (display iters) (display " bottom-up") (newline)))

(display "gcbench: stretch depth ") (display k-stretch-tree-depth)
(display ", long-lived depth ") (display k-long-lived-tree-depth)
(display ", array ") (display k-array-size) (newline)

;; stretch the memory space quickly
(check-tree (make-tree k-stretch-tree-depth) k-stretch-tree-depth 'stretch)

;; a long-lived tree and a long-lived array of floats
(define long-lived-tree (make-empty-node))
(populate k-long-lived-tree-depth long-lived-tree)
(define long-lived-array (make-vector k-array-size 0.))
(do ((i 1 (+ i 1))) ((>= i k-array-size))
  (vector-set! long-lived-array i (/ 1. i)))

(do ((d k-min-tree-depth (+ d 2))) ((> d k-max-tree-depth))
  (time-construction d))

(check-tree long-lived-tree k-long-lived-tree-depth 'long-lived)
(let ((probe (min 1000 (- k-array-size 1))))
  (unless (= (vector-ref long-lived-array probe) (/ 1. probe))
    (error "gcbench: wrong answer" 'array probe (vector-ref long-lived-array probe))))
(let loop ((i 1) (bad 0))              ; every element still holds 1/i
  (cond ((< i k-array-size)
         (loop (+ i 1) (if (= (vector-ref long-lived-array i) (/ 1. i)) bad (+ bad 1))))
        ((> bad 0) (error "gcbench: wrong answer" 'array-elements bad))))

(display "checked: ") (display (+ trees-checked 2)) (display " trees of 2^(d+1)-1 nodes")
(display ", the long-lived array") (newline)
