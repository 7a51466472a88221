;; A loop that calls and returns across a chunk boundary: at each of 600 depths `loop'
;; calls f, which calls g, 1667 times (1M calls in all). At the depths where a chunk
;; boundary falls between f's and g's frames, every call of g overflows: with -kb the loop's
;; and f's frames move into the new chunk with it, and no later call crosses the boundary;
;; with -kb0 only f's frame moves, so each return of f underflows and the next call links a
;; chunk again (check_chunks.py compares the counts in -s).
(define (g x) (+ x 1))
(define (f x) (+ 1 (g x)))
(define (loop i acc) (if (= i 0) acc (loop (- i 1) (+ acc (f i)))))
(define (walk d) (if (= d 0) 0 (+ (loop 1667 0) (walk (- d 1)))))
(display (list "pingpong" (walk 600)))
(newline)
