;; define-record-type: constructors (all or some fields), predicates, accessors, modifiers.
;; (How a record itself prints differs between implementations, so only fields are printed.)

(define (show label x) (display label) (display ": ") (write x) (newline))

(define-record-type point
  (make-point x y)
  point?
  (x point-x set-point-x!)
  (y point-y set-point-y!))

(define p (make-point 3 4))
(show "accessors" (list (point-x p) (point-y p)))
(show "predicate" (list (point? p) (point? 5) (point? '(3 4)) (point? (vector 3 4))))
(set-point-x! p 10)
(show "modifier" (list (point-x p) (point-y p)))

;; a constructor that takes only some fields, in a different order; a field without a modifier
(define-record-type <node>
  (make-node value)
  node?
  (value node-value)
  (next node-next set-node-next!)
  (count node-count set-node-count!))
(define n1 (make-node 'a))
(define n2 (make-node 'b))
(set-node-next! n1 n2)
(set-node-next! n2 '())
(set-node-count! n1 0)
(define (node-list n) (if (null? n) '() (cons (node-value n) (node-list (node-next n)))))
(show "linked nodes" (node-list n1))
(show "distinct types" (list (node? p) (point? n1) (node? n1)))

(define-record-type pare
  (kons y x)
  pare?
  (x kar set-kar!)
  (y kdr))
(define k (kons 1 2))
(show "constructor argument order" (list (kar k) (kdr k)))

;; records are distinct objects; eq? and equal? on them
(define p2 (make-point 10 4))
(show "eq?" (list (eq? p p) (eq? p p2)))
(show "equal? on the same record" (equal? p p))

;; records in data structures, updated through closures
(define-record-type account
  (make-account owner balance)
  account?
  (owner account-owner)
  (balance account-balance set-account-balance!))
(define accounts (map (lambda (o b) (make-account o b)) '(ann bob cy) '(100 50 75)))
(for-each (lambda (a) (set-account-balance! a (+ (account-balance a) 10))) accounts)
(show "balances" (map (lambda (a) (list (account-owner a) (account-balance a))) accounts))
(show "total" (apply + (map account-balance accounts)))

;; a record holding a record, and a mutable counter field
(define-record-type box2 (make-box2 contents) box2? (contents box2-contents set-box2-contents!))
(define b (make-box2 (make-point 1 2)))
(show "nested" (point-y (box2-contents b)))
(set-box2-contents! b (make-box2 'inner))
(show "replaced" (box2-contents (box2-contents b)))

;; a simple queue implemented with a record
(define-record-type queue (make-queue-record front back) queue?
  (front queue-front set-queue-front!) (back queue-back set-queue-back!))
(define (make-queue) (make-queue-record '() '()))
(define (enqueue! q x) (set-queue-back! q (cons x (queue-back q))))
(define (dequeue! q)
  (when (null? (queue-front q))
    (set-queue-front! q (reverse (queue-back q)))
    (set-queue-back! q '()))
  (let ((x (car (queue-front q))))
    (set-queue-front! q (cdr (queue-front q)))
    x))
(define q (make-queue))
(for-each (lambda (x) (enqueue! q x)) '(1 2 3))
(define first-out (dequeue! q))
(enqueue! q 4)
(let* ((second (dequeue! q)) (third (dequeue! q)) (fourth (dequeue! q)))
  (show "queue" (list first-out second third fourth)))
