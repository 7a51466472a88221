;; Lock torture for the spin-yield patch: THREADS threads, one per capability, each adds 1 to
;; one shared counter held in an MVar ROUNDS times (take, then put back one more), so every
;; step takes the MVar's header lock, and with more capabilities than cores a capability
;; often waits for a holder that the kernel has descheduled. Prints the final count, which
;; must be THREADS x ROUNDS: no increment lost or doubled, however the waits went.
;; usage: rtslab mvar_torture.scm THREADS ROUNDS +RTS -N<caps> -RTS

(define args (map string->number (cdr (command-line))))
(define n-threads (car args))
(define rounds (cadr args))

(define counter (make-mvar 0))

(define (worker)
  (let loop ((i 0))
    (when (< i rounds)
      (let ((v (mvar-take! counter)))
        (mvar-put! counter (+ v 1)))
      (loop (+ i 1))))
  rounds)

(define threads
  (let loop ((i 0) (acc '()))
    (if (= i n-threads)
        acc
        (loop (+ i 1) (cons (fork-on i worker) acc)))))

(define done (apply + (map thread-join threads)))
(display (mvar-take! counter))
(display " ")
(display done)
(newline)
