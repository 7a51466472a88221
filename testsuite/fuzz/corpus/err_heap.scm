;; rts: -M16m
;; slow-under-sanity
;; A live list that grows without bound under a 16 MiB heap limit: "heap overflow", exit 251.
(define (grow lst n)
  (grow (cons (make-vector 16 n) lst) (+ n 1)))
(display (length (grow '() 0)))
(newline)
