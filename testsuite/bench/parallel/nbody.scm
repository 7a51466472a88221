;; nbody: direct-summation gravitational n-body simulation (O(n^2) forces per step, softened,
;; symplectic Euler), the bodies split into blocks that are parallel tasks every step, with
;; a barrier (join of all tasks) per step; boxed-flonum arithmetic throughout.
;; (nofib parallel/nbody, ICFP'09 parallel set)
;; quick: 150 10 15
;; norm: 500 25 25
;; slow: 800 60 40

(define argv (map string->number (cdr (command-line))))
(define n (car argv))                     ; bodies
(define steps (cadr argv))
(define block (caddr argv))               ; bodies per task

(include "../lib/par.scm")                ; join, par-tabulate

(define dt 0.01)
(define eps2 0.01)                        ; softening

;; Pseudo-random flonums in [-1, 1) from a linear congruential generator.
(define seed 42)
(define (random-unit)
  (set! seed (modulo (+ (* seed 1103515245) 12345) 2147483648))
  (- (/ (exact->inexact seed) 1073741824.0) 1.0))

;; The state: a vector of 6 vectors of n flonums (x y z vx vy vz); masses never change
;; (the total mass is about 1, with G = 1).
;; States are never modified once made: every step makes a new one.
(define mass (make-vector n 0.0))
(define (initial-state)
  (let ((s (list->vector (list-tabulate 6 (lambda (k) (make-vector n 0.0))))))
    (do ((i 0 (+ i 1))) ((= i n))
      (vector-set! mass i (/ (+ 1.0 (* 0.5 (random-unit))) (exact->inexact n)))
      (do ((k 0 (+ k 1))) ((= k 6))
        (vector-set! (vector-ref s k) i (* (if (< k 3) 1.0 0.3) (random-unit)))))
    s))

;; The new position and velocity of bodies lo..hi-1 after one step from state s, as a
;; vector of 6 vectors of hi-lo flonums.
(define (step-block s lo hi)
  (let ((x (vector-ref s 0)) (y (vector-ref s 1)) (z (vector-ref s 2))
        (out (list->vector (list-tabulate 6 (lambda (k) (make-vector (- hi lo) 0.0))))))
    (do ((i lo (+ i 1))) ((= i hi) out)
      (let ((xi (vector-ref x i)) (yi (vector-ref y i)) (zi (vector-ref z i)))
        (let loop ((j 0) (ax 0.0) (ay 0.0) (az 0.0))
          (cond ((= j n)
                 (let ((vx (+ (vector-ref (vector-ref s 3) i) (* dt ax)))
                       (vy (+ (vector-ref (vector-ref s 4) i) (* dt ay)))
                       (vz (+ (vector-ref (vector-ref s 5) i) (* dt az)))
                       (k (- i lo)))
                   (vector-set! (vector-ref out 0) k (+ xi (* dt vx)))
                   (vector-set! (vector-ref out 1) k (+ yi (* dt vy)))
                   (vector-set! (vector-ref out 2) k (+ zi (* dt vz)))
                   (vector-set! (vector-ref out 3) k vx)
                   (vector-set! (vector-ref out 4) k vy)
                   (vector-set! (vector-ref out 5) k vz)))
                ((= j i) (loop (+ j 1) ax ay az))
                (else
                 (let* ((dx (- (vector-ref x j) xi))
                        (dy (- (vector-ref y j) yi))
                        (dz (- (vector-ref z j) zi))
                        (r2 (+ (* dx dx) (* dy dy) (* dz dz) eps2))
                        (s (/ (vector-ref mass j) (* r2 (sqrt r2)))))
                   (loop (+ j 1) (+ ax (* s dx)) (+ ay (* s dy)) (+ az (* s dz)))))))))))

;; Glue the blocks' results into one state.
(define (assemble blocks)
  (let ((s (list->vector (list-tabulate 6 (lambda (k) (make-vector n 0.0))))))
    (let loop ((bs blocks) (lo 0))
      (if (null? bs)
          s
          (let ((b (car bs)))
            (do ((k 0 (+ k 1))) ((= k 6))
              (vector-copy! (vector-ref s k) lo (vector-ref b k)))
            (loop (cdr bs) (+ lo (vector-length (vector-ref b 0)))))))))

(define ntasks (quotient (+ n block -1) block))
(define (par-step s)
  (assemble (par-tabulate ntasks
                          (lambda (t) (step-block s (* t block) (min n (* (+ t 1) block)))))))
(define (seq-step s) (assemble (list (step-block s 0 n))))

(define (momentum s k)                    ; total momentum along axis k (0..2)
  (let ((v (vector-ref s (+ k 3))))
    (let loop ((i 0) (acc 0.0))
      (if (= i n) acc (loop (+ i 1) (+ acc (* (vector-ref mass i) (vector-ref v i))))))))
(define (momentum-scale s)                ; sum of m |v|, over the three axes
  (let loop ((i 0) (acc 0.0))
    (if (= i n)
        acc
        (loop (+ i 1)
              (+ acc (* (vector-ref mass i)
                        (+ (abs (vector-ref (vector-ref s 3) i))
                           (abs (vector-ref (vector-ref s 4) i))
                           (abs (vector-ref (vector-ref s 5) i)))))))))
(define (energy s)                        ; kinetic + (softened) potential
  (let ((x (vector-ref s 0)) (y (vector-ref s 1)) (z (vector-ref s 2)))
    (let loop ((i 0) (acc 0.0))
      (if (= i n)
          acc
          (let ((vx (vector-ref (vector-ref s 3) i)) (vy (vector-ref (vector-ref s 4) i))
                (vz (vector-ref (vector-ref s 5) i)) (mi (vector-ref mass i)))
            (let pot ((j (+ i 1)) (acc (+ acc (* 0.5 mi (+ (* vx vx) (* vy vy) (* vz vz))))))
              (if (= j n)
                  (loop (+ i 1) acc)
                  (let ((dx (- (vector-ref x j) (vector-ref x i)))
                        (dy (- (vector-ref y j) (vector-ref y i)))
                        (dz (- (vector-ref z j) (vector-ref z i))))
                    (pot (+ j 1)
                         (- acc (/ (* mi (vector-ref mass j))
                                   (sqrt (+ (* dx dx) (* dy dy) (* dz dz) eps2)))))))))))))

(define s0 (initial-state))
(define p0 (map (lambda (k) (momentum s0 k)) '(0 1 2)))
(define e0 (energy s0))
(define s1 (par-step s0))
(define before-last #f)
(define final
  (let loop ((s s1) (prev s0) (k 1))
    (if (= k steps)
        (begin (set! before-last prev) s)
        (loop (par-step s) s (+ k 1)))))
(define e1 (energy final))

;; Check 1: the first and the last step recomputed sequentially agree bit for bit.
(if (not (equal? s1 (seq-step s0)))
    (error "nbody: wrong answer" 'first-step))
(if (not (equal? final (seq-step before-last)))
    (error "nbody: wrong answer" 'last-step))
;; Check 2: total momentum is conserved (the pairwise forces cancel), up to rounding.
(define scale (momentum-scale final))
(for-each (lambda (k p)
            (let ((drift (abs (- (momentum final k) p))))
              (if (not (< drift (* 1e-12 scale)))
                  (error "nbody: wrong answer" (list 'momentum-drift k) drift scale))))
          '(0 1 2) p0)
;; Check 3: over this few steps the energy changes by little (a loose bound; the method is
;; not exactly energy-conserving).
(if (not (< (abs (- e1 e0)) (* 0.01 (abs e0))))
    (error "nbody: wrong answer" 'energy e0 e1))

(define (show-fixed x digits)             ; x rounded to this many decimals
  (let* ((scale (expt 10 digits))
         (r (exact (round (* (abs x) (exact->inexact scale)))))
         (frac (number->string (+ scale (remainder r scale)))))
    (string-append (if (< x 0) "-" "") (number->string (quotient r scale)) "."
                   (substring frac 1 (string-length frac)))))
(display "nbody: ") (display n) (display " bodies, ") (display steps) (display " steps, ")
(display ntasks) (display " tasks per step") (newline)
(display "energy ") (display (show-fixed e0 6)) (display " -> ") (display (show-fixed e1 6))
(display ", x of body 0: ") (display (show-fixed (vector-ref (vector-ref final 0) 0) 9))
(newline)
(display "check: first and last steps recomputed sequentially, momentum conserved") (newline)
