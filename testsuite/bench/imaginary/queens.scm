;; queens: count the solutions of the N-queens problem the nofib way, generating the list
;; of all safe partial placements row by row (a list of lists); allocation-heavy list code
;; with a large short-lived working set (nofib imaginary/queens).
;; quick: 10
;; norm: 12
;; slow: 13

;; gen n: all safe placements of n queens on the first n rows, each a list of columns
;; (most recent row first), built as in nofib:
;;   gen n = [ q:b | b <- gen (n-1), q <- [1..nq], safe q 1 b ]
(define (queens nq)
  (define (safe? x d b)
    (or (null? b)
        (let ((q (car b)))
          (and (not (= x q))
               (not (= x (+ q d)))
               (not (= x (- q d)))
               (safe? x (+ d 1) (cdr b))))))
  (define (extend b acc)
    (let loop ((q nq) (acc acc))
      (if (= q 0)
          acc
          (loop (- q 1) (if (safe? q 1 b) (cons (cons q b) acc) acc)))))
  (define (gen n)
    (if (= n 0)
        (list '())
        (fold-right extend '() (gen (- n 1)))))
  (gen nq))

;; Independent check: a backtracking counter over bit masks (no lists at all).
(define (queens-bits n)
  (let ((all (- (arithmetic-shift 1 n) 1)))
    (let place ((cols 0) (ld 0) (rd 0))
      (if (= cols all)
          1
          (let loop ((avail (bitwise-and all (bitwise-not (bitwise-ior cols ld rd)))) (count 0))
            (if (= avail 0)
                count
                (let ((bit (bitwise-and avail (- avail))))
                  (loop (- avail bit)
                        (+ count (place (+ cols bit)
                                        (bitwise-and all (arithmetic-shift (+ ld bit) 1))
                                        (arithmetic-shift (+ rd bit) -1)))))))))))

;; Published counts for N = 1..16 (OEIS A000170).
(define known '#(1 0 0 2 10 4 40 92 352 724 2680 14200 73712 365596 2279184 14772512))

(define n (string->number (cadr (command-line))))
(define solutions (queens n))
(define count (length solutions))

(define (valid? b)                      ; every solution really is one
  (and (= (length b) n)
       (let check ((b b))
         (or (null? b)
             (and (<= 1 (car b) n)
                  (let ok ((x (car b)) (d 1) (rest (cdr b)))
                    (or (null? rest)
                        (and (not (= x (car rest)))
                             (not (= (abs (- x (car rest))) d))
                             (ok x (+ d 1) (cdr rest)))))
                  (check (cdr b)))))))

(unless (every valid? solutions) (error "queens: wrong answer" "an invalid placement"))
(let ((b (queens-bits n)))
  (unless (= count b) (error "queens: wrong answer" count b)))
(when (<= 1 n 16)
  (let ((k (vector-ref known (- n 1))))
    (unless (= count k) (error "queens: wrong answer" count k))))
(display "queens ") (display n) (display " = ") (display count) (newline)
(display "first solution: ") (write (if (null? solutions) '() (car solutions))) (newline)
(display "checked: published counts, bit-mask backtracking, every placement valid") (newline)
