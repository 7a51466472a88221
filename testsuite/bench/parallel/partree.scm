;; partree: build a balanced binary tree, map an allocation-heavy function over it with the
;; subtrees above a depth as parallel tasks (the new tree is built across capabilities), then
;; fold it. (nofib parallel/partree, ICFP'09 parallel set)
;; quick: 12 4 100
;; norm: 16 6 200
;; slow: 18 7 400

(define argv (map string->number (cdr (command-line))))
(define depth (car argv))                 ; the tree has 2^depth - 1 nodes
(define task-depth (cadr argv))           ; subtrees at this depth are tasks: 2^task-depth
(define base (caddr argv))                ; the work per node grows with this

(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "partree: a task failed" (thread-id t)))))

;; A tree is '() or a node.
(define-record-type node
  (make-node left value right)
  node?
  (left node-left) (value node-value) (right node-right))

;; The balanced tree of the given depth whose in-order values are x(i) for i = lo, lo+1, ...
(define (node-value-at i) (modulo (* i 7919) 10007))
(define (build d lo)                      ; values x(lo) .. x(lo + 2^d - 2)
  (if (= d 0)
      '()
      (let ((half (- (expt 2 (- d 1)) 1)))
        (make-node (build (- d 1) lo)
                   (node-value-at (+ lo half))
                   (build (- d 1) (+ lo half 1))))))

;; The function mapped over the tree: sum of i^2 for i below k, over an allocated list.
(define (work-size x) (+ base (modulo x 64)))
(define (f x)
  (+ x (fold + 0 (map (lambda (i) (* i i)) (iota (work-size x))))))
;; The same in closed form, for the check.
(define (f-closed x)
  (let ((k (work-size x)))
    (+ x (quotient (* (- k 1) k (- (* 2 k) 1)) 6))))

(define (tree-map g t)
  (if (null? t)
      '()
      (let* ((l (tree-map g (node-left t)))
             (v (g (node-value t)))
             (r (tree-map g (node-right t))))
        (make-node l v r))))

;; Above task-depth both subtrees are mapped by new threads and this one waits for them;
;; the subtrees of a level are numbered by path, and the thread for subtree path is placed on
;; capability (path mod -N). That makes 2^task-depth tasks that do the mapping.
(define (par-tree-map g t d path)
  (cond ((null? t) '())
        ((= d task-depth) (tree-map g t))
        (else
         (let* ((lp (* 2 path))
                (rp (+ lp 1))
                (lt (fork-on lp (lambda () (par-tree-map g (node-left t) (+ d 1) lp))))
                (rt (fork-on rp (lambda () (par-tree-map g (node-right t) (+ d 1) rp))))
                (v (g (node-value t))))
           (make-node (join lt) v (join rt))))))   ; an empty subtree, '(), is not #f

;; In-order fold: the sum of the values and a hash that depends on their order.
(define modulus 1000000007)
(define (tree-fold t acc)                 ; acc = (sum . hash)
  (if (null? t)
      acc
      (let* ((acc (tree-fold (node-left t) acc))
             (v (node-value t))
             (acc (cons (+ (car acc) v) (modulo (+ (* (cdr acc) 31) v) modulus))))
        (tree-fold (node-right t) acc))))

(define tree (build depth 0))
(define mapped (par-tree-map f tree 0 0))
(define got (tree-fold mapped (cons 0 0)))

;; Check: the same fold over the original tree with f in closed form, sequentially.
(define expected (tree-fold (tree-map f-closed tree) (cons 0 0)))
(if (not (equal? got expected))
    (error "partree: wrong answer" got expected))
(display "partree: ") (display (- (expt 2 depth) 1)) (display " nodes, ")
(display (- (expt 2 (+ (min depth task-depth) 1)) 2)) (display " threads forked") (newline)
(display "sum ") (display (car got)) (display ", in-order hash ") (display (cdr got)) (newline)
(display "check: sequential fold with f in closed form agrees") (newline)
