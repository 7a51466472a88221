;; Memory goes back to the OS (Note [Returning megablocks] in runtime/sm/block.h; issue 45,
;; item 8). The resident set is read from /proc/self/statm at the start, while the big data
;; is live, and after it is dropped and two major GCs run.
;;   heap N KEEP: N list elements of 80 bytes each (a pair and a 6-slot vector) are made and
;;     collected while live; then all but KEEP of them are dropped. The resident set then
;;     grows by at most twice the bytes KEEP elements take over the start's (before: it
;;     stayed at the peak, 483 MB after 240 MB was dropped).
;;   stack: a recursion overflows the stack (+RTS -K) and the error is caught; the stack
;;     is cut back, shrunk and its memory returned: the resident set grows by at most 16 MB
;;     (before: by 2.5 x -K, 671 MB at -K200m).
(define (rss-kb)
  (let* ((line (call-with-input-file "/proc/self/statm" read-line))
         (n (string-length line)))
    ;; the second field: resident pages
    (let loop ((i 0) (field 0) (start 0))
      (cond ((or (= i n) (char=? (string-ref line i) #\space))
             (if (= field 1)
                 (* 4 (string->number (substring line start i)))
                 (loop (+ i 1) (+ field 1) (+ i 1))))
            (else (loop (+ i 1) field start))))))
(define args (cdr (command-line)))
(define start (rss-kb))
(define peak 0)
(define kept #f)
(define (build n)
  (let loop ((i 0) (acc '()))
    (if (= i n) acc (loop (+ i 1) (cons (make-vector 6 i) acc)))))
(define (deep n) (+ 1 (deep (+ n 1))))
;; Everything big lives in this procedure's frame, gone when it returns.
(define (phase)
  (cond ((equal? (car args) "heap")
         (let* ((n (string->number (cadr args)))
                (keep (string->number (caddr args)))
                (big (build n)))
           (gc #t)
           (set! peak (rss-kb))
           (set! kept (list-tail big (- n keep)))))
        (else
         (display (guard (e ((error-object? e) (substring (error-object-message e) 0 14)))
                    (deep 0)))
         (newline)
         (set! peak (rss-kb)))))
(phase)
(gc #t)
(gc #t)
(define after (rss-kb))
(define allowed-kb
  (if (equal? (car args) "heap")
      (quotient (* 2 80 (length kept)) 1024)
      16384))
(display (list 'rss-kb 'start start 'peak peak 'after after 'growth (- after start)
               'allowed allowed-kb))
(newline)
(display (list 'peak-above-allowed (> (- peak start) allowed-kb)))
(newline)
(display (list 'rss-growth-within-allowed (<= (- after start) allowed-kb)))
(newline)
