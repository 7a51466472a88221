;; vector-fetch-add!: threads on every capability add to one element and to one element each;
;; the totals must be exact (a lost update would show), every call's old value must be one no
;; other call returned (each add is one atomic step), and the errors are catchable.
;; usage: fetch_add.scm THREADS ADDS
(define args (command-line))
(define n-threads (string->number (list-ref args 1)))
(define n-adds (string->number (list-ref args 2)))
(define shared (make-vector 1 0))
(define own (make-vector n-threads 0))
(define seen (make-vector (* n-threads n-adds) #f))   ; each old value of `shared`, once
(define dup (make-vector 1 0))

(define (worker i)
  (lambda ()
    (let loop ((k 0))
      (when (< k n-adds)
        (let ((old (vector-fetch-add! shared 0 1)))
          ;; a slot of its own per old value: no two threads write one unless an add was lost
          (if (vector-ref seen old) (vector-fetch-add! dup 0 1) (vector-set! seen old #t)))
        (vector-fetch-add! own i 2)
        (loop (+ k 1))))))

(for-each thread-join (map (lambda (i) (fork (worker i))) (iota n-threads)))
(display (list 'total (vector-fetch-add! shared 0 0) 'expected (* n-threads n-adds)
               'duplicates (vector-fetch-add! dup 0 0)
               'own-ok (let loop ((i 0))
                         (or (= i n-threads)
                             (and (= (vector-ref own i) (* 2 n-adds)) (loop (+ i 1)))))))
(newline)
(define (message thunk) (guard (e ((error-object? e) (error-object-message e))) (thunk)))
(display (list (vector-fetch-add! (vector 5) 0 -7)
               (message (lambda () (vector-fetch-add! (vector 'x) 0 1)))
               (message (lambda () (vector-fetch-add! (vector 0) 1 1)))
               (message (lambda () (vector-fetch-add! (vector 0) 0 1.5)))
               (message (lambda () (vector-fetch-add! (vector 4611686018427387903) 0 1)))))
(newline)
