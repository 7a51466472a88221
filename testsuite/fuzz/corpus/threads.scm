;; Lightweight threads and MVars: fork, thread-join, yield, MVars as channels and locks,
;; num-capabilities, current-capability, sleep. Only results that do not depend on the
;; number of capabilities or on scheduling are printed (sums, sorted lists, booleans).

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (insert x sorted)
  (cond ((null? sorted) (list x))
        ((<= x (car sorted)) (cons x sorted))
        (else (cons (car sorted) (insert x (cdr sorted))))))
(define (sort-numbers lst) (let loop ((l lst) (acc '())) (if (null? l) acc (loop (cdr l) (insert (car l) acc)))))
(define (range a b) (if (>= a b) '() (cons a (range (+ a 1) b))))

;; fork and thread-join: the join returns the thunk's value
(define (sum-range a b) (let loop ((i a) (s 0)) (if (>= i b) s (loop (+ i 1) (+ s i)))))
(define t1 (fork (lambda () (sum-range 0 50000))))
(define t2 (fork (lambda () (sum-range 50000 100000))))
(show "join values" (list (thread-join t1) (thread-join t2)))
(show "joined sum" (+ (thread-join t1) (thread-join t2)))
(show "join any value" (thread-join (fork (lambda () (list 'a "b" #\c)))))

;; several workers, each with its own slice; a thread that yields while it works
(define workers
  (map (lambda (k) (fork (lambda () (let loop ((i 0) (s 0))
                                      (if (= i 1000)
                                          s
                                          (begin (when (= 0 (modulo i 100)) (yield))
                                                 (loop (+ i 1) (+ s (* k i)))))))))
       (range 1 9)))
(show "workers" (map thread-join workers))

;; an MVar as a channel: one producer, one consumer, messages in FIFO order
(define channel (make-mvar))
(define producer
  (fork (lambda ()
          (for-each (lambda (i) (mvar-put! channel i)) (range 1 101))
          (mvar-put! channel 'done)
          'producer-finished)))
(define consumer
  (fork (lambda ()
          (let loop ((received '()))
            (let ((m (mvar-take! channel)))
              (if (eq? m 'done)
                  (reverse received)
                  (loop (cons m received))))))))
(define received (thread-join consumer))
(show "channel in order" (equal? received (range 1 101)))
(show "channel sum" (apply + received))
(show "producer" (thread-join producer))

;; several producers, one consumer in main: the multiset of messages is what was sent
(define inbox (make-mvar))
(define producers
  (map (lambda (p) (fork (lambda () (for-each (lambda (i) (mvar-put! inbox (+ (* p 100) i))) (range 0 5)))))
       (range 1 5)))
(define gathered (let loop ((n 0) (acc '())) (if (= n 20) acc (loop (+ n 1) (cons (mvar-take! inbox) acc)))))
(for-each thread-join producers)
(show "gathered, sorted" (sort-numbers gathered))

;; an MVar as a lock around a shared counter
(define lock (make-mvar))
(mvar-put! lock 'token)
(define counter 0)
(define incrementers
  (map (lambda (k)
         (fork (lambda ()
                 (do ((i 0 (+ i 1))) ((= i 100))
                   (let ((tok (mvar-take! lock)))
                     (set! counter (+ counter 1))
                     (when (= 0 (modulo i 10)) (yield))
                     (mvar-put! lock tok))))))
       (range 0 10)))
(for-each thread-join incrementers)
(show "counter under lock" counter)

;; mvar-read leaves the value in place
(define cell (make-mvar))
(mvar-put! cell 42)
(define readers (map (lambda (i) (fork (lambda () (+ i (mvar-read cell))))) (range 0 5)))
(show "readers" (map thread-join readers))
(show "still full" (mvar-take! cell))

;; ping-pong between two threads through two MVars: a deterministic exchange
(define ping (make-mvar))
(define pong (make-mvar))
(define ponger (fork (lambda ()
                       (let loop ((n 0))
                         (let ((v (mvar-take! ping)))
                           (if (< v 0)
                               n
                               (begin (mvar-put! pong (* v 2)) (loop (+ n 1)))))))))
(define replies (let loop ((i 1) (acc '()))
                  (if (> i 10)
                      (begin (mvar-put! ping -1) (reverse acc))
                      (begin (mvar-put! ping i) (loop (+ i 1) (cons (mvar-take! pong) acc))))))
(show "ping-pong replies" replies)
(show "ping-pong count" (thread-join ponger))

;; threads that fork threads
(define (tree-sum depth)
  (if (= depth 0)
      1
      (let ((left (fork (lambda () (tree-sum (- depth 1)))))
            (right (fork (lambda () (tree-sum (- depth 1))))))
        (+ (thread-join left) (thread-join right)))))
(show "fork tree" (tree-sum 6))

;; sleep, then join; a join of a finished thread returns its value again
(define sleeper (fork (lambda () (sleep 0.01) 'woke)))
(show "sleeper" (thread-join sleeper))
(show "join twice" (thread-join sleeper))

;; capabilities
(show "num-capabilities positive" (let ((n (num-capabilities))) (and (exact-integer? n) (>= n 1))))
(show "current-capability in range" (let ((c (current-capability)))
                                      (and (exact-integer? c) (<= 0 c) (< c (num-capabilities)))))
(show "in a thread too" (thread-join (fork (lambda ()
                                             (let ((c (current-capability)))
                                               (and (exact-integer? c) (< c (num-capabilities))))))))
