;; transclos: the transitive closure of a random sparse relation on n nodes, by repeated
;; squaring R := R u R.R of bitset rows until nothing changes, blocks of rows in parallel each
;; round. (nofib parallel/transclos, ICFP'09 parallel set)
;; quick: 300 20
;; norm: 1200 40
;; slow: 2400 80

(define argv (map string->number (cdr (command-line))))
(define n (car argv))
(define rows-per-task (cadr argv))

(include "../lib/par.scm")                ; join, par-tabulate

;;; Bitsets of 0..n-1: vectors of fixnums holding 60 bits each.
(define bits 60)
(define words (quotient (+ n bits -1) bits))
(define (empty-set) (make-vector words 0))
(define (set-member? s i)
  (odd? (arithmetic-shift (vector-ref s (quotient i bits)) (- (remainder i bits)))))
(define (set-add! s i)
  (let ((w (quotient i bits)))
    (vector-set! s w (bitwise-ior (vector-ref s w) (arithmetic-shift 1 (remainder i bits))))))
(define (set-union! dst src)              ; dst := dst u src
  (do ((w 0 (+ w 1))) ((= w words))
    (vector-set! dst w (bitwise-ior (vector-ref dst w) (vector-ref src w)))))
(define (popcount x)
  (let loop ((x x) (c 0))
    (if (= x 0) c (loop (bitwise-and x (- x 1)) (+ c 1)))))
(define (set-size s)
  (let loop ((w 0) (c 0))
    (if (= w words) c (loop (+ w 1) (+ c (popcount (vector-ref s w)))))))
(define (for-each-member f s)
  (do ((w 0 (+ w 1))) ((= w words))
    (let loop ((x (vector-ref s w)) (b (* w bits)))
      (if (not (= x 0))
          (begin
            (if (odd? x) (f b))
            (loop (arithmetic-shift x -1) (+ b 1)))))))

;; The relation: node i has (i mod 4) edges to pseudo-random nodes (1.5 on average), so the
;; closure has a giant strongly connected part and many small pieces.
(define seed 2009)
(define (random-node!)
  (set! seed (modulo (+ (* seed 1103515245) 12345) 2147483648))
  (modulo (quotient seed 65536) n))
(define relation
  (let ((r (make-vector n #f)))
    (do ((i 0 (+ i 1))) ((= i n) r)
      (let ((s (empty-set)))
        (do ((k 0 (+ k 1))) ((= k (remainder i 4)))
          (set-add! s (random-node!)))
        (vector-set! r i s)))))
(define edges
  (let loop ((i 0) (c 0))
    (if (= i n) c (loop (+ i 1) (+ c (set-size (vector-ref relation i)))))))

;; One round: the rows lo..hi-1 of R u R.R, and whether any of them changed. Rows of r are
;; only read; the new rows are new vectors.
(define (square-rows r lo hi)
  (let loop ((i (- hi 1)) (rows '()) (changed #f))
    (if (< i lo)
        (cons changed rows)
        (let* ((old (vector-ref r i)) (new (vector-copy old)))
          (for-each-member (lambda (j) (set-union! new (vector-ref r j))) old)
          (loop (- i 1) (cons new rows) (or changed (not (equal? new old))))))))

(define ntasks (quotient (+ n rows-per-task -1) rows-per-task))
(define (par-round r)                     ; (changed? . new relation)
  (let ((results (par-tabulate ntasks
                               (lambda (t)
                                 (square-rows r (* t rows-per-task)
                                              (min n (* (+ t 1) rows-per-task)))))))
    (cons (any car results) (list->vector (append-map cdr results)))))

(define rounds 0)
(define closure
  (let loop ((r relation))
    (let ((next (par-round r)))
      (set! rounds (+ rounds 1))
      (if (car next) (loop (cdr next)) (cdr next)))))

;; Check: Warshall's algorithm, sequentially, on copies of the relation.
(define warshall
  (let ((r (vector-map vector-copy relation)))
    (do ((k 0 (+ k 1))) ((= k n) r)
      (let ((rk (vector-ref r k))
            (w (quotient k bits))
            (mask (arithmetic-shift 1 (remainder k bits))))
        (do ((i 0 (+ i 1))) ((= i n))
          (if (not (= 0 (bitwise-and (vector-ref (vector-ref r i) w) mask)))
              (set-union! (vector-ref r i) rk)))))))
(if (not (equal? closure warshall))
    (let loop ((i 0))
      (if (equal? (vector-ref closure i) (vector-ref warshall i))
          (loop (+ i 1))
          (error "transclos: wrong answer" (list 'row i)
                 (set-size (vector-ref closure i)) (set-size (vector-ref warshall i))))))

(define pairs 0)
(define on-cycles 0)                      ; nodes that reach themselves
(define checksum 0)
(do ((i 0 (+ i 1))) ((= i n))
  (let ((size (set-size (vector-ref closure i))))
    (set! pairs (+ pairs size))
    (if (set-member? (vector-ref closure i) i) (set! on-cycles (+ on-cycles 1)))
    (set! checksum (modulo (+ (* checksum 31) size) 1000000007))))
(display "transclos: ") (display n) (display " nodes, ") (display edges) (display " edges, ")
(display ntasks) (display " tasks per round") (newline)
(display "closure: ") (display pairs) (display " pairs after ") (display rounds)
(display " rounds, ") (display on-cycles) (display " nodes on cycles, checksum ")
(display checksum) (newline)
(display "check: Warshall's algorithm agrees") (newline)
