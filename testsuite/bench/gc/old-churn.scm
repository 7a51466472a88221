;; old-churn: old-generation churn with a tunable live size: a table of L entries, each a
;; small structure of lists and vectors, whose entries are replaced at random so that data
;; dies after it has been promoted; stresses major GCs, promotion and the old generation.
;; quick: 10000 40000
;; norm: 200000 500000
;; slow: 600000 4000000

;; ARGS: live entries L, replacements R. Entry k is a list of 6 vectors #(k j (k+j)) for
;; j = 0..5 (6 pairs and 6 vectors, about 330 bytes), so the live data is about 330 L bytes
;; plus the table. A Lehmer generator (x' = 48271 x mod 2^31-1) picks the slot and the new
;; k of each replacement. A running checksum (+ new - old, each by walking the entry) is
;; kept. Checked: it equals the sum over the final table (where every entry must be well
;; formed), which equals the closed form 12k + 15 summed over a replay of the generator on
;; a vector of plain fixnums.

(define args (map string->number (cdr (command-line))))
(define live (car args))
(define replacements (cadr args))

(define (next x) (modulo (* 48271 x) 2147483647))
(define seed 19700101)

(define (make-entry k)
  (let loop ((j 5) (acc '()))
    (if (< j 0) acc (loop (- j 1) (cons (vector k j (+ k j)) acc)))))

;; walks an entry: the sum of the first and third fields; #f if it is malformed
(define (entry-sum e)
  (let loop ((e e) (j 0) (s 0))
    (cond ((null? e) (and (= j 6) s))
          ((and (pair? e) (vector? (car e)) (= (vector-length (car e)) 3)
                (= (vector-ref (car e) 1) j)
                (= (vector-ref (car e) 2) (+ (vector-ref (car e) 0) j)))
           (loop (cdr e) (+ j 1) (+ s (vector-ref (car e) 0) (vector-ref (car e) 2))))
          (else #f))))

;; the same sum without the checks, for the running checksum
(define (quick-sum e)
  (let loop ((e e) (s 0))
    (if (null? e)
        s
        (let ((v (car e)))
          (loop (cdr e) (+ s (vector-ref v 0) (vector-ref v 2)))))))

(define (closed-form k) (+ (* 12 k) 15))         ; sum over j = 0..5 of k + (k + j)

(define (k-of x) (bitwise-and (arithmetic-shift x -8) 65535))

(define table (make-vector live #f))
(do ((i 0 (+ i 1))) ((= i live))
  (vector-set! table i (make-entry i)))

(define (table-sum)
  (let loop ((i 0) (s 0))
    (if (= i live)
        s
        (let ((v (entry-sum (vector-ref table i))))
          (unless v
            (error "old-churn: wrong answer" 'malformed-entry i))
          (loop (+ i 1) (+ s v))))))

(define running
  (let loop ((r 0) (x seed) (total (table-sum)))
    (if (= r replacements)
        total
        (let* ((x (next x))
               (i (modulo x live))
               (old (quick-sum (vector-ref table i)))
               (new (make-entry (k-of x))))
          (vector-set! table i new)
          (loop (+ r 1) x (+ total (- (quick-sum new) old)))))))

(define final (table-sum))

;; the replay: which k ends in each slot
(define model (make-vector live 0))
(do ((i 0 (+ i 1))) ((= i live))
  (vector-set! model i i))
(let loop ((r 0) (x seed))
  (when (< r replacements)
    (let ((x (next x)))
      (vector-set! model (modulo x live) (k-of x))
      (loop (+ r 1) x))))
(define expected
  (let loop ((i 0) (s 0))
    (if (= i live) s (loop (+ i 1) (+ s (closed-form (vector-ref model i)))))))

(unless (= running final)
  (error "old-churn: wrong answer" running final))
(unless (= final expected)
  (error "old-churn: wrong answer" final expected))

(display "old-churn: ") (display replacements) (display " replacements in a table of ")
(display live) (display " entries, checksum ") (display final) (newline)
(display "checked: running checksum = sum over the table = replay in closed form") (newline)
