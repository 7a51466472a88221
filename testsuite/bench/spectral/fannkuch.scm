;; fannkuch: fannkuch-redux, the maximum number of pancake flips over all permutations of
;; 1..n and the alternating checksum; vector mutation in tight loops, split into a fixed
;; number of index ranges run by worker threads (Benchmarks Game fannkuch-redux).
;; quick: 8
;; norm: 10
;; slow: 11

(define n (string->number (cadr (command-line))))
(define workers 8)                      ; fixed, whatever the number of capabilities

(define (factorial k) (if (<= k 1) 1 (* k (factorial (- k 1)))))
(define fact (list->vector (map factorial (iota (+ n 1)))))

;; Reverse q[i..j] in place.
(define (reverse-range! q i j)
  (when (< i j)
    (let ((t (vector-ref q i)))
      (vector-set! q i (vector-ref q j))
      (vector-set! q j t)
      (reverse-range! q (+ i 1) (- j 1)))))

;; Flips for the permutation p: reverse the first p[0]+1 elements until p[0] = 0. As in
;; the C program, the element at the front is kept in `first` rather than stored, so each
;; flip reverses q[1..first-1] and drops `first` into place.
(define (count-flips p q)
  (let ((first (vector-ref p 0)))
    (cond ((= first 0) 0)
          ((= (vector-ref p first) 0) 1)
          (else
           (vector-copy! q 0 p)
           (let loop ((first first) (flips 1))
             (reverse-range! q 1 (- first 1))
             (let ((next (vector-ref q first)))
               (vector-set! q first first)
               (if (= (vector-ref q next) 0)
                   (+ flips 1)
                   (loop next (+ flips 1)))))))))

;; The simple version, for the independent check.
(define (count-flips-simple p q)
  (vector-copy! q 0 p)
  (let loop ((flips 0))
    (let ((k (vector-ref q 0)))
      (if (= k 0)
          flips
          (begin
            (let rev ((i 0) (j k))
              (when (< i j)
                (let ((t (vector-ref q i)))
                  (vector-set! q i (vector-ref q j))
                  (vector-set! q j t)
                  (rev (+ i 1) (- j 1)))))
            (loop (+ flips 1)))))))

;; The permutations in the order of the Benchmarks Game programs: index idx has digits
;; count[i] in the factorial number system; p is made by rotating prefixes.
(define (first-permutation! idx p count)
  (do ((i 0 (+ i 1))) ((= i n)) (vector-set! p i i))
  (let loop ((i (- n 1)) (idx idx))
    (when (> i 0)
      (let ((d (quotient idx (vector-ref fact i)))
            (pp (vector-copy p)))
        (vector-set! count i d)
        (do ((j 0 (+ j 1))) ((> j i))
          (vector-set! p j (if (<= (+ j d) i)
                               (vector-ref pp (+ j d))
                               (vector-ref pp (- (+ j d) i 1)))))
        (loop (- i 1) (remainder idx (vector-ref fact i)))))))

(define (next-permutation! p count)
  (let ((first (vector-ref p 1)))
    (vector-set! p 1 (vector-ref p 0))
    (vector-set! p 0 first)
    (let loop ((i 1) (first first))
      (let ((c (+ (vector-ref count i) 1)))
        (vector-set! count i c)
        (when (> c i)
          (vector-set! count i 0)
          (let ((next (vector-ref p 1)))
            (vector-set! p 0 next)
            (do ((j 1 (+ j 1))) ((>= j (+ i 1)))
              (vector-set! p j (vector-ref p (+ j 1))))
            (vector-set! p (+ i 1) first)
            (loop (+ i 1) next)))))))

;; Permutations lo .. hi-1: (checksum . max flips)
(define (run-range lo hi)
  (let ((p (make-vector n 0)) (q (make-vector n 0)) (count (make-vector n 0)))
    (first-permutation! lo p count)
    (let loop ((idx lo) (checksum 0) (max-flips 0))
      (let* ((flips (count-flips p q))
             (checksum (if (even? idx) (+ checksum flips) (- checksum flips)))
             (max-flips (max max-flips flips)))
        (if (= (+ idx 1) hi)
            (cons checksum max-flips)
            (begin (next-permutation! p count)
                   (loop (+ idx 1) checksum max-flips)))))))

;; Worker w takes chunks w, w + workers, ...; the chunks are (n-1)!/4 or fewer permutations.
(define total (vector-ref fact n))
(define chunk (max 1 (quotient (vector-ref fact (- n 1)) 4)))
(define (worker w)
  (let loop ((lo (* w chunk)) (checksum 0) (max-flips 0))
    (if (>= lo total)
        (cons checksum max-flips)
        (let ((r (run-range lo (min total (+ lo chunk)))))
          (loop (+ lo (* workers chunk))
                (+ checksum (car r))
                (max max-flips (cdr r)))))))
(define results
  (map touch (map (lambda (w) (future (lambda () (worker w)))) (iota workers))))
(define checksum (fold (lambda (r s) (+ s (car r))) 0 results))
(define max-flips (fold (lambda (r m) (max m (cdr r))) 0 results))

;; Independent check 1: published results for n = 7..12 (n: checksum max-flips); n = 3..6
;; computed once by a separate Python program.
(define known '((3 2 2) (4 4 4) (5 11 7) (6 49 10) (7 228 16) (8 1616 22) (9 8629 30)
                (10 73196 38) (11 556355 51) (12 3968050 65)))
;; Independent check 2 (small n only): the sequential algorithm of the Benchmarks Game's
;; C program, which generates the permutations differently (rotations driven by count).
(define (sequential)
  (let ((perm1 (list->vector (iota n))) (perm (make-vector n 0)) (count (make-vector n 0)))
    (let loop ((r n) (perm-count 0) (checksum 0) (max-flips 0))
      (let fill ((r r))
        (if (> r 1) (begin (vector-set! count (- r 1) r) (fill (- r 1)))
            (let ((flips (count-flips-simple perm1 perm)))
              (let ((checksum (if (even? perm-count) (+ checksum flips) (- checksum flips)))
                    (max-flips (max max-flips flips)))
                (let next ((r 1))
                  (if (= r n)
                      (cons checksum max-flips)
                      (let ((perm0 (vector-ref perm1 0)))
                        (do ((i 0 (+ i 1))) ((= i r)) (vector-set! perm1 i (vector-ref perm1 (+ i 1))))
                        (vector-set! perm1 r perm0)
                        (vector-set! count r (- (vector-ref count r) 1))
                        (if (> (vector-ref count r) 0)
                            (loop r (+ perm-count 1) checksum max-flips)
                            (next (+ r 1)))))))))))))

(let ((k (assv n known)))
  (when (and k (not (equal? (list checksum max-flips) (cdr k))))
    (error "fannkuch: wrong answer" (list checksum max-flips) (cdr k)))
  (when (or (not k) (<= n 8))
    (let ((s (sequential)))
      (unless (equal? (cons checksum max-flips) s)
        (error "fannkuch: wrong answer" (cons checksum max-flips) s)))))

(display checksum) (newline)
(display "Pfannkuchen(") (display n) (display ") = ") (display max-flips) (newline)
