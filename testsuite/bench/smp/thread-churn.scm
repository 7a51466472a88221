;; thread-churn: creates and joins very many short-lived threads, in waves; each does a
;; little allocating work, half of them fork and join a child, and pairs hand a value over
;; through an MVar; stresses thread creation, stacks, join and the scheduler (nofib smp style).
;; quick: 40 500
;; norm: 550 1000
;; slow: 4000 1000

;; Wave w forks T threads (T even). Thread j builds a list of n = 8 + (j mod 32) numbers
;; i*(w+1) + j + tag and sums it (work w j tag). An even thread j forks a child for tag 1
;; while it does tag 0 itself, joins the child, and puts its own tag-0 sum into the wave's
;; MVar j/2; its partner j+1 takes that and adds it to its own tag-0 sum. Main joins the
;; wave in order and adds up the results; the total is checked against a closed form.

(define args (map string->number (cdr (command-line))))
(define waves (car args))
(define per-wave (* 2 (quotient (cadr args) 2)))

(define (work w j tag)
  (let ((n (+ 8 (modulo j 32))))
    (let build ((i 0) (l '()))
      (if (< i n)
          (build (+ i 1) (cons (+ (* i (+ w 1)) j tag) l))
          (let sum ((l l) (s 0))
            (if (null? l) s (sum (cdr l) (+ s (car l)))))))))

(define (closed-form w j tag)           ; (w+1) n(n-1)/2 + n (j + tag)
  (let ((n (+ 8 (modulo j 32))))
    (+ (* (+ w 1) (quotient (* n (- n 1)) 2)) (* n (+ j tag)))))

(define (run-wave w)
  (let ((hand (make-vector (quotient per-wave 2) #f)))
    (do ((i 0 (+ i 1))) ((= i (vector-length hand)))
      (vector-set! hand i (make-mvar)))
    (let fork-all ((j 0) (acc '()))
      (if (< j per-wave)
          (let ((box (vector-ref hand (quotient j 2))))
            (fork-all
             (+ j 1)
             (cons (fork (if (even? j)
                             (lambda ()
                               (let* ((child (fork (lambda () (work w j 1))))
                                      (mine (work w j 0)))
                                 (mvar-put! box mine)
                                 (+ mine (thread-join child))))
                             (lambda ()
                               (let ((mine (work w j 0)))
                                 (+ mine (mvar-take! box))))))
                   acc)))
          ;; join in fork order
          (let join-all ((ts (reverse acc)) (s 0) (n 0))
            (if (null? ts)
                (cons s n)
                (let ((r (thread-join (car ts))))
                  (join-all (cdr ts) (+ s r) (+ n 1)))))))))

(define (expected-wave w)
  (let loop ((j 0) (s 0))
    (if (= j per-wave)
        s
        (loop (+ j 1)
              (+ s (if (even? j)
                       (+ (closed-form w j 0) (closed-form w j 1))
                       (+ (closed-form w j 0) (closed-form w (- j 1) 0))))))))

(define-values (total joined expected)
  (let loop ((w 0) (total 0) (joined 0) (expected 0))
    (if (= w waves)
        (values total joined expected)
        (let ((r (run-wave w)))
          (loop (+ w 1) (+ total (car r)) (+ joined (cdr r)) (+ expected (expected-wave w)))))))

(unless (= joined (* waves per-wave))
  (error "thread-churn: wrong answer" joined (* waves per-wave)))
(unless (= total expected)
  (error "thread-churn: wrong answer" total expected))

(display "thread-churn: ") (display waves) (display " waves of ") (display per-wave)
(display " threads (+ ") (display (* waves (quotient per-wave 2))) (display " children), sum ")
(display total) (newline)
(display "checked against the closed form") (newline)
