;; ray: a small ray tracer (spheres on a big floor sphere, one point light, shadows, Phong
;; highlights, mirror reflections to depth 3) rendering a W x H grey image, blocks of rows in
;; parallel; flonum vectors allocated everywhere. (nofib parallel/ray, ICFP'09 parallel set)
;; quick: 64 48 4
;; norm: 320 240 8
;; slow: 800 600 20

(define argv (map string->number (cdr (command-line))))
(define width (car argv))
(define height (cadr argv))
(define rows-per-task (caddr argv))

(include "../lib/par.scm")                ; join, par-tabulate

;;; 3-vectors of flonums.
(define (v3 x y z) (vector x y z))
(define (vx v) (vector-ref v 0))
(define (vy v) (vector-ref v 1))
(define (vz v) (vector-ref v 2))
(define (v+ a b) (v3 (+ (vx a) (vx b)) (+ (vy a) (vy b)) (+ (vz a) (vz b))))
(define (v- a b) (v3 (- (vx a) (vx b)) (- (vy a) (vy b)) (- (vz a) (vz b))))
(define (v* s a) (v3 (* s (vx a)) (* s (vy a)) (* s (vz a))))
(define (dot a b) (+ (* (vx a) (vx b)) (* (vy a) (vy b)) (* (vz a) (vz b))))
(define (normalize a) (v* (/ 1.0 (sqrt (dot a a))) a))

;;; The scene: spheres (centre radius grey-level reflectivity).
(define-record-type sphere
  (make-sphere centre radius grey reflect)
  sphere?
  (centre sphere-centre) (radius sphere-radius) (grey sphere-grey) (reflect sphere-reflect))

(define scene
  (cons (make-sphere (v3 0.0 -1000.0 10.0) 999.0 0.6 0.2)      ; the floor
        (let loop ((k 0) (acc '()))
          (if (= k 9)
              (reverse acc)
              (let ((col (- (remainder k 3) 1)) (row (quotient k 3)))
                (loop (+ k 1)
                      (cons (make-sphere (v3 (* 2.2 (exact->inexact col))
                                             (+ -0.2 (* 0.35 (exact->inexact row)))
                                             (+ 7.0 (* 2.5 (exact->inexact row))))
                                         (+ 0.6 (* 0.1 (exact->inexact (remainder k 4))))
                                         (+ 0.3 (* 0.07 (exact->inexact k)))
                                         (if (even? k) 0.5 0.1))
                            acc)))))))
(define light (v3 -6.0 9.0 -2.0))
(define eye (v3 0.0 1.0 -1.0))
(define ambient 0.08)
(define max-depth 3)

;; The distance along the ray (origin o, unit direction d) to sphere s, or #f.
(define (hit-distance s o d)
  (let* ((oc (v- o (sphere-centre s)))
         (b (dot oc d))
         (c (- (dot oc oc) (* (sphere-radius s) (sphere-radius s))))
         (disc (- (* b b) c)))
    (if (< disc 0.0)
        #f
        (let* ((sq (sqrt disc)) (t1 (- (- b) sq)))
          (if (> t1 1e-6)
              t1
              (let ((t2 (+ (- b) sq))) (if (> t2 1e-6) t2 #f)))))))

;; The nearest sphere hit and its distance, as a pair, or #f.
(define (nearest o d)
  (let loop ((ss scene) (best #f) (best-t 0.0))
    (if (null? ss)
        (and best (cons best best-t))
        (let ((t (hit-distance (car ss) o d)))
          (if (and t (or (not best) (< t best-t)))
              (loop (cdr ss) (car ss) t)
              (loop (cdr ss) best best-t))))))

(define (shadowed? p to-light dist)
  (let loop ((ss scene))
    (and (pair? ss)
         (let ((t (hit-distance (car ss) p to-light)))
           (or (and t (< t dist)) (loop (cdr ss)))))))

(define (power x k)                       ; x^k for a fixnum k >= 0
  (let loop ((k k) (acc 1.0))
    (if (= k 0) acc (loop (- k 1) (* acc x)))))

;; The brightness seen along a ray.
(define (trace o d depth)
  (let ((h (nearest o d)))
    (if (not h)
        (+ 0.2 (* 0.3 (vy d)))                          ; the sky
        (let* ((s (car h))
               (p (v+ o (v* (cdr h) d)))
               (nrm (normalize (v- p (sphere-centre s))))
               (l (v- light p))
               (ldist (sqrt (dot l l)))
               (ldir (v* (/ 1.0 ldist) l))
               (diffuse (dot nrm ldir))
               (refl (v- d (v* (* 2.0 (dot d nrm)) nrm)))
               (lit (and (> diffuse 0.0) (not (shadowed? p ldir ldist))))
               (local (+ ambient
                         (if lit
                             (+ (* (sphere-grey s) diffuse)
                                (* 0.5 (power (max 0.0 (dot refl ldir)) 16)))
                             0.0))))
          (if (and (< depth max-depth) (> (sphere-reflect s) 0.0))
              (+ (* (- 1.0 (sphere-reflect s)) local)
                 (* (sphere-reflect s) (trace p refl (+ depth 1))))
              local)))))

(define (pixel i j)                       ; 0..255
  (let* ((aspect (/ (exact->inexact width) (exact->inexact height)))
         (px (* aspect (- (/ (* 2.0 (+ (exact->inexact j) 0.5)) (exact->inexact width)) 1.0)))
         (py (- 1.0 (/ (* 2.0 (+ (exact->inexact i) 0.5)) (exact->inexact height))))
         (d (normalize (v3 px (- py 0.15) 1.6)))
         (b (trace eye d 0)))
    (exact (floor (* 255.0 (min 1.0 (max 0.0 b)))))))

(define (render-row i)
  (let ((v (make-vector width 0)))
    (do ((j 0 (+ j 1))) ((= j width) v)
      (vector-set! v j (pixel i j)))))

(define ntasks (quotient (+ height rows-per-task -1) rows-per-task))
(define rows
  (list->vector
   (apply append
          (par-tabulate ntasks
                        (lambda (k)
                          (let loop ((i (min height (* (+ k 1) rows-per-task))) (acc '()))
                            (if (<= i (* k rows-per-task))
                                acc
                                (loop (- i 1) (cons (render-row (- i 1)) acc)))))))))

(define modulus 1000000007)
(define total 0)
(define checksum 0)
(define histogram (make-vector 4 0))
(do ((i 0 (+ i 1))) ((= i height))
  (do ((j 0 (+ j 1))) ((= j width))
    (let ((p (vector-ref (vector-ref rows i) j)))
      (set! total (+ total p))
      (vector-set! histogram (quotient p 64) (+ 1 (vector-ref histogram (quotient p 64))))
      (set! checksum (modulo (+ (* checksum 257) p) modulus)))))

;; Check 1: a sample of pixels (every 7th row, every 3rd pixel in it) recomputed sequentially.
(define sampled 0)
(do ((i 0 (+ i 7))) ((>= i height))
  (do ((j (remainder i 3) (+ j 3))) ((>= j width))
    (let ((got (vector-ref (vector-ref rows i) j)) (expected (pixel i j)))
      (set! sampled (+ sampled 1))
      (if (not (= got expected))
          (error "ray: wrong answer" (list 'pixel i j) got expected)))))

;; Check 2: the totals for the standard sizes, computed independently (the same program run
;; by another Scheme implementation).
(define known
  '(((64 48) 282941 948530609)
    ((320 240) 7079295 406856860)
    ((800 600) 44242651 934185677)))
(define entry (assoc (list width height) known))
(if entry
    (let ((got (list total checksum)) (expected (cdr entry)))
      (if (not (equal? got expected))
          (error "ray: wrong answer" got expected))))

(display "ray ") (display width) (display "x") (display height) (display ", ")
(display ntasks) (display " tasks") (newline)
(display "sum of pixels ") (display total) (display ", checksum ") (display checksum)
(display ", histogram ") (display histogram) (newline)
(display "check: ") (display sampled) (display " pixels recomputed sequentially")
(display (if entry ", totals match the known values" ", no known totals for this size"))
(newline)
