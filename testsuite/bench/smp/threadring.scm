;; threadring: the Benchmarks Game thread-ring: 503 threads in a ring, each linked to the
;; next by an MVar, pass a token N times; stresses MVar hand-off and thread switching.
;; quick: 30000
;; norm: 15000000
;; slow: 100000000

;; Thread i (1..503) takes the token from its MVar; a token t > 0 goes on to the next
;; thread as t-1, and the thread that receives 0 is the answer. Then a 'stop message goes
;; once round the ring so that every thread returns (how many tokens it handled), and main
;; joins them all.
;;
;; The ring is laid out over the capabilities in contiguous blocks (fork-on), so at -Nn
;; exactly n of the 503 hand-offs of each round cross to another capability, whatever the
;; timing: one token and no parallelism, as in the Benchmarks Game. Placed by `fork`, which
;; capabilities got which threads depended on which were idle while the ring was made, and
;; a run at -N2 took 1.7 s or 25-51 s (2,000,000 hand-offs; testsuite/bench/README.md).

(define ring-size 503)

(define n (string->number (cadr (command-line))))

(define mvars (let ((v (make-vector ring-size #f)))
                (do ((i 0 (+ i 1))) ((= i ring-size) v)
                  (vector-set! v i (make-mvar)))))

(define done (make-mvar))

(define (ring-thread i)                 ; i is 0-based; its id is i+1
  (let ((in (vector-ref mvars i))
        (out (vector-ref mvars (if (= (+ i 1) ring-size) 0 (+ i 1)))))
    (lambda ()
      (let loop ((handled 0))
        (let ((t (mvar-take! in)))
          (cond ((eq? t 'stop)
                 (mvar-put! out 'stop)
                 handled)
                ((= t 0)
                 (mvar-put! done (+ i 1))
                 (mvar-put! out 'stop)
                 (+ handled 1))
                (else
                 (mvar-put! out (- t 1))
                 (loop (+ handled 1)))))))))

(define caps (num-capabilities))
(define threads
  (let loop ((i (- ring-size 1)) (acc '()))
    (if (< i 0)
        acc
        (loop (- i 1)
              (cons (fork-on (quotient (* i caps) ring-size) (ring-thread i)) acc)))))

(mvar-put! (vector-ref mvars 0) n)
(define winner (mvar-take! done))
(define handled (map thread-join threads))
(define total-handled (apply + handled))

;; the stop message ends at the winner's empty MVar: take it back
(define stop-back (mvar-take! (vector-ref mvars (- winner 1))))

(define expected (+ (modulo n ring-size) 1))
(unless (= winner expected)
  (error "threadring: wrong answer" winner expected))
(unless (= total-handled (+ n 1))
  (error "threadring: wrong answer" total-handled (+ n 1)))
(unless (eq? stop-back 'stop)
  (error "threadring: wrong answer" stop-back 'stop))

(display "threadring ") (display n) (display ": thread ") (display winner)
(display " holds the token") (newline)
(display "checked: id = (N mod 503) + 1, tokens handled = N + 1") (newline)
