;; nbody: the Benchmarks Game n-body simulation of the Jovian planets (5 bodies, symplectic
;; integrator, dt = 0.01) in boxed flonums held in vectors: flonum arithmetic, allocation
;; and mutation of old objects (write barrier) (Benchmarks Game n-body).
;; quick: 20000
;; norm: 500000
;; slow: 5000000

(define pi 3.141592653589793)
(define solar-mass (* 4.0 pi pi))
(define days-per-year 365.24)

;; A body: #(x y z vx vy vz mass), positions in AU, velocities in AU/day scaled to years.
(define (body x y z vx vy vz mass)
  (vector x y z (* vx days-per-year) (* vy days-per-year) (* vz days-per-year)
          (* mass solar-mass)))

(define (make-system)
  (list
   (body 0.0 0.0 0.0 0.0 0.0 0.0 1.0)                                   ; sun
   (body 4.84143144246472090e+00 -1.16032004402742839e+00 -1.03622044471123109e-01
         1.66007664274403694e-03 7.69901118419740425e-03 -6.90460016972063023e-05
         9.54791938424326609e-04)                                        ; jupiter
   (body 8.34336671824457987e+00 4.12479856412430479e+00 -4.03523417114321381e-01
         -2.76742510726862411e-03 4.99852801234917238e-03 2.30417297573763929e-05
         2.85885980666130812e-04)                                        ; saturn
   (body 1.28943695621391310e+01 -1.51111514016986312e+01 -2.23307578892655734e-01
         2.96460137564761618e-03 2.37847173959480950e-03 -2.96589568540237556e-05
         4.36624404335156298e-05)                                        ; uranus
   (body 1.53796971148509165e+01 -2.59193146099879641e+01 1.79258772950371181e-01
         2.68067772490389322e-03 1.62824170038242295e-03 -9.51592254519715870e-05
         5.15138902046611451e-05)))                                      ; neptune

(define (mass b) (vector-ref b 6))

;; Give the sun the momentum that makes the total zero.
(define (offset-momentum! bodies)
  (let loop ((bs bodies) (px 0.0) (py 0.0) (pz 0.0))
    (if (pair? bs)
        (let ((b (car bs)))
          (loop (cdr bs)
                (+ px (* (vector-ref b 3) (mass b)))
                (+ py (* (vector-ref b 4) (mass b)))
                (+ pz (* (vector-ref b 5) (mass b)))))
        (let ((sun (car bodies)))
          (vector-set! sun 3 (- (/ px solar-mass)))
          (vector-set! sun 4 (- (/ py solar-mass)))
          (vector-set! sun 5 (- (/ pz solar-mass)))))))

(define (energy bodies)
  (let loop ((bs bodies) (e 0.0))
    (if (null? bs)
        e
        (let* ((b (car bs))
               (vx (vector-ref b 3)) (vy (vector-ref b 4)) (vz (vector-ref b 5))
               (e (+ e (* 0.5 (mass b) (+ (* vx vx) (* vy vy) (* vz vz))))))
          (loop (cdr bs)
                (let inner ((cs (cdr bs)) (e e))
                  (if (null? cs)
                      e
                      (let* ((c (car cs))
                             (dx (- (vector-ref b 0) (vector-ref c 0)))
                             (dy (- (vector-ref b 1) (vector-ref c 1)))
                             (dz (- (vector-ref b 2) (vector-ref c 2))))
                        (inner (cdr cs)
                               (- e (/ (* (mass b) (mass c))
                                       (sqrt (+ (* dx dx) (* dy dy) (* dz dz))))))))))))))

(define (advance! bodies dt)
  (let loop ((bs bodies))
    (when (pair? bs)
      (let ((b (car bs)))
        (let inner ((cs (cdr bs)))
          (when (pair? cs)
            (let* ((c (car cs))
                   (dx (- (vector-ref b 0) (vector-ref c 0)))
                   (dy (- (vector-ref b 1) (vector-ref c 1)))
                   (dz (- (vector-ref b 2) (vector-ref c 2)))
                   (d2 (+ (* dx dx) (* dy dy) (* dz dz)))
                   (mag (/ dt (* d2 (sqrt d2))))
                   (mb (* (mass b) mag))
                   (mc (* (mass c) mag)))
              (vector-set! b 3 (- (vector-ref b 3) (* dx mc)))
              (vector-set! b 4 (- (vector-ref b 4) (* dy mc)))
              (vector-set! b 5 (- (vector-ref b 5) (* dz mc)))
              (vector-set! c 3 (+ (vector-ref c 3) (* dx mb)))
              (vector-set! c 4 (+ (vector-ref c 4) (* dy mb)))
              (vector-set! c 5 (+ (vector-ref c 5) (* dz mb)))
              (inner (cdr cs))))))
      (loop (cdr bs))))
  (for-each (lambda (b)
              (vector-set! b 0 (+ (vector-ref b 0) (* dt (vector-ref b 3))))
              (vector-set! b 1 (+ (vector-ref b 1) (* dt (vector-ref b 4))))
              (vector-set! b 2 (+ (vector-ref b 2) (* dt (vector-ref b 5)))))
            bodies))

;; x printed with 9 decimals, as printf("%.9f") does.
(define (fixed9 x)
  (let* ((scaled (exact (round (* (abs x) 1e9))))
         (int (quotient scaled 1000000000))
         (frac (number->string (remainder scaled 1000000000))))
    (string-append (if (and (< x 0) (> scaled 0)) "-" "")
                   (number->string int) "."
                   (make-string (- 9 (string-length frac)) #\0) frac)))

;; Published values (Benchmarks Game n-body output for 1000, 500 000, 5 000 000 and
;; 50 000 000 steps) and, for 20 000 steps, the value computed once by the Benchmarks
;; Game's Python program.
(define initial-energy "-0.169075164")
(define known '((1000 . "-0.169087605") (500000 . "-0.169096567") (5000000 . "-0.169083134")
                (50000000 . "-0.169059907") (20000 . "-0.169089263")))

(define steps (string->number (cadr (command-line))))
(define bodies (make-system))
(offset-momentum! bodies)
(define e0 (energy bodies))
(do ((i 0 (+ i 1))) ((= i steps)) (advance! bodies 0.01))
(define e1 (energy bodies))

(unless (string=? (fixed9 e0) initial-energy)
  (error "nbody: wrong answer" (fixed9 e0) initial-energy))
(let ((k (assv steps known)))
  (when (and k (not (string=? (fixed9 e1) (cdr k))))
    (error "nbody: wrong answer" (fixed9 e1) (cdr k))))
(unless (< (abs (- e1 e0)) 1e-4)               ; the integrator conserves energy
  (error "nbody: wrong answer" "energy not conserved" e0 e1))
(display (fixed9 e0)) (newline)
(display (fixed9 e1)) (newline)
(display "checked: published energies, conservation within 1e-4") (newline)
