;; Parallel helpers of the benchmarks in parallel/, which (include "../lib/par.scm").

;; The result of thread t, which must not have died of an error (its result is then #f).
(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "a parallel task failed: thread" (thread-id t)))))

;; Run (f i) for i = 0..count-1, each in a thread started on capability i mod -N; the
;; results in order of i.
(define (par-tabulate count f)
  (let loop ((i 0) (ts '()))
    (if (= i count)
        (map join (reverse ts))
        (loop (+ i 1) (cons (fork-on i (lambda () (f i))) ts)))))
