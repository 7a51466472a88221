;; A thread on capability 1 builds a young list of 1.5M pairs (36 MB) and keeps it while it
;; spins; main then allocates garbage until a minor GC, led by capability 0: the GC thread
;; of capability 1, not the leader, copies the list and runs out of memory.
(define m (make-mvar))
(fork-on 1 (lambda ()
             (let ((big (let build ((i 0) (l '())) (if (= i 1500000) l (build (+ i 1) (cons i l))))))
               (mvar-put! m 'built)
               (let spin ((k 0)) (if (< k 0) big (spin k))))))
(mvar-take! m)
(display "built") (newline)
(let churn ((i 0) (l '()))
  (churn (+ i 1) (if (= 0 (modulo i 1000)) '() (cons i l))))
