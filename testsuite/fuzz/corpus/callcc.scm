;; Escape-only call/cc: early exits from loops and from deep recursion, nested escapes,
;; escapes through higher-order procedures. No continuation is invoked after its
;; call/cc has returned.

(define (show label x) (display label) (display ": ") (write x) (newline))

(show "no escape" (call-with-current-continuation (lambda (k) 42)))
(show "immediate escape" (call/cc (lambda (k) (k 'escaped) 'not-reached)))
(show "escape value in an expression" (+ 1 (call/cc (lambda (k) (* 10 (k 5))))))

;; early exit from a loop
(define (find-first pred lst)
  (call/cc
   (lambda (return)
     (for-each (lambda (x) (when (pred x) (return x))) lst)
     #f)))
(show "find-first" (list (find-first even? '(1 3 6 7 8)) (find-first even? '(1 3 5))))

;; early exit from a deep recursion: product that stops at a zero
(define (product lst)
  (call/cc
   (lambda (k)
     (let loop ((l lst))
       (cond ((null? l) 1)
             ((= (car l) 0) (k 0))
             (else (* (car l) (loop (cdr l)))))))))
(show "product" (list (product '(1 2 3 4 5)) (product '(1 2 0 4 5))))
(define (deep n k) (if (= n 0) (k 'from-the-bottom) (+ 1 (deep (- n 1) k))))
(show "escape from depth 10000" (call/cc (lambda (k) (deep 10000 k))))

;; nested escapes: the inner continuation or the outer one
(show "nested, inner" (call/cc (lambda (outer)
                                 (list 'outer-result
                                       (call/cc (lambda (inner) (inner 'inner-value) 'no))))))
(show "nested, outer from inside inner" (call/cc (lambda (outer)
                                                   (list 'not-built
                                                         (call/cc (lambda (inner) (outer 'jumped-out)))))))
(define (search-matrix m target)
  (call/cc
   (lambda (found)
     (for-each (lambda (row)
                 (call/cc
                  (lambda (next-row)
                    (for-each (lambda (x)
                                (cond ((eqv? x target) (found (list 'found x)))
                                      ((negative? x) (next-row 'skip))))
                              row))))
               m)
     'not-found)))
(show "search" (list (search-matrix '((1 2) (-1 7) (3 7)) 7) (search-matrix '((1 -7 7)) 7)))

;; escape with several values
(show "escape with values" (call-with-values (lambda () (call/cc (lambda (k) (k 1 2 3)))) list))

;; the continuation as a first-class value, used while its extent is live
(define (with-exit proc) (call/cc (lambda (k) (proc (lambda (v) (k v))))))
(show "exit procedure" (with-exit (lambda (exit) (map (lambda (x) (if (> x 2) (exit 'big) x)) '(1 2 3)))))

;; many escapes in a loop: the stack does not grow
(define (escape-loop n acc)
  (if (= n 0) acc (escape-loop (- n 1) (+ acc (call/cc (lambda (k) (k 1)))))))
(show "20000 escapes" (escape-loop 20000 0))
;; call/cc in tail position
(define (tail-cc n) (if (= n 0) 'done (call/cc (lambda (k) (tail-cc (- n 1))))))
(show "tail call/cc" (tail-cc 1000))
