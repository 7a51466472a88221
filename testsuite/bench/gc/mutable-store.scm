;; mutable-store: a large long-lived store (a vector of mutable pairs, promoted to the old
;; generation) updated at random with freshly allocated values, by vector-set! and by
;; set-car!/set-cdr! of old pairs; stresses the write barrier and the remembered set.
;; quick: 20000 200000
;; norm: 500000 1600000
;; slow: 2000000 12000000

;; ARGS: store size S, updates U. Slot i holds a pair (a . #(b)); its value is a + b. A
;; Lehmer generator (x' = 48271 x mod 2^31-1, in fixnums) picks each update's slot, kind
;; and new numbers: kind 0 stores a fresh pair in the vector, kind 1 gives the old pair a
;; fresh #(b) (set-cdr!) and a new a (set-car!). A running total (+ new - old) is kept.
;; Checked: the running total equals the sum over the store, and a replay of the generator
;; on two vectors of plain fixnums gives the same value in every slot.

(define args (map string->number (cdr (command-line))))
(define size (car args))
(define updates (cadr args))

(define (next x) (modulo (* 48271 x) 2147483647))
(define seed 20240611)

(define (slot-value p) (+ (car p) (vector-ref (cdr p) 0)))

;; the store, built and then promoted by a major GC
(define store (make-vector size #f))
(do ((i 0 (+ i 1))) ((= i size))
  (vector-set! store i (cons (modulo i 1024) (vector (modulo (* i 7) 1024)))))
(gc)

(define initial-total
  (let loop ((i 0) (s 0))
    (if (= i size) s (loop (+ i 1) (+ s (slot-value (vector-ref store i)))))))

;; one update from generator state x: slot, kind, a, b
(define (slot-of x) (modulo x size))
(define (kind-of x) (bitwise-and (arithmetic-shift x -11) 1))
(define (a-of x) (bitwise-and (arithmetic-shift x -12) 1023))
(define (b-of x) (bitwise-and (arithmetic-shift x -22) 511))

(define running-total
  (let loop ((u 0) (x seed) (total initial-total))
    (if (= u updates)
        total
        (let* ((x (next x))
               (i (slot-of x))
               (old (vector-ref store i))
               (old-value (slot-value old))
               (a (a-of x))
               (b (b-of x)))
          (if (= (kind-of x) 0)
              (vector-set! store i (cons a (vector b)))
              (begin (set-cdr! old (vector b))
                     (set-car! old a)))
          (loop (+ u 1) x (+ total (- (+ a b) old-value)))))))

(define store-total
  (let loop ((i 0) (s 0))
    (if (= i size) s (loop (+ i 1) (+ s (slot-value (vector-ref store i)))))))

;; the replay: the same updates on two vectors of fixnums
(define model-a (make-vector size 0))
(define model-b (make-vector size 0))
(do ((i 0 (+ i 1))) ((= i size))
  (vector-set! model-a i (modulo i 1024))
  (vector-set! model-b i (modulo (* i 7) 1024)))
(let loop ((u 0) (x seed))
  (when (< u updates)
    (let* ((x (next x)) (i (slot-of x)))
      (vector-set! model-a i (a-of x))
      (vector-set! model-b i (b-of x))
      (loop (+ u 1) x))))
(define mismatches
  (let loop ((i 0) (bad 0))
    (if (= i size)
        bad
        (let ((p (vector-ref store i)))
          (loop (+ i 1)
                (if (and (= (car p) (vector-ref model-a i))
                         (= (vector-ref (cdr p) 0) (vector-ref model-b i)))
                    bad
                    (+ bad 1)))))))

(unless (= running-total store-total)
  (error "mutable-store: wrong answer" running-total store-total))
(unless (= mismatches 0)
  (error "mutable-store: wrong answer" 'slots-differing-from-replay mismatches))

(display "mutable-store: ") (display updates) (display " updates of a store of ")
(display size) (display ", total ") (display store-total) (newline)
(display "checked: running total = sum over the store, every slot = the replay") (newline)
