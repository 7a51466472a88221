;; An escape after its extent is an error that guard catches (call/cc is escape-only), also
;; when the chunk its marker frame was in has been freed and reused by deeper recursion since.
(define (deep n k) (if (= n 0) (k 'escaped) (+ 1 (deep (- n 1) k))))
(define saved #f)
(define (keep n) (if (= n 0) (call/cc (lambda (k) (set! saved k) 0)) (+ 1 (keep (- n 1)))))
(keep 50000)
(display (list "stale" (guard (e (#t 'outside-extent)) (deep 30000 saved))))
(newline)
