;; sieve: the concurrent prime sieve (Hoare/McIlroy, as in GHC's nofib smp/sieve and Go's
;; example): a generator thread and one filter thread per prime, chained by one-place MVar
;; channels; stresses MVar hand-off, thread wake-up and many blocked threads.
;; quick: 300
;; norm: 4000
;; slow: 10000

;; Main takes the first number from the current channel: it is prime p; it forks a filter
;; that copies the channel to a new one without the multiples of p, and goes on from the new
;; channel. After K primes main tells the generator to stop (a 'stop MVar the generator
;; polls); the generator sends 'eof down the chain, each filter passes it on and returns how
;; many numbers it passed, and main drains the last channel up to the 'eof. Checked against
;; a sequential sieve of Eratosthenes.

(define k (string->number (cadr (command-line))))

(define stop (make-mvar))

(define (generator out)
  (lambda ()
    (let loop ((i 2))
      (if (mvar-try-take! stop)
          (begin (mvar-put! out 'eof) (- i 1))   ; the last number sent
          (begin (mvar-put! out i) (loop (+ i 1)))))))

(define (filter-thread p in out)
  (lambda ()
    (let loop ((passed 0))
      (let ((x (mvar-take! in)))
        (cond ((eq? x 'eof) (mvar-put! out 'eof) passed)
              ((= 0 (remainder x p)) (loop passed))
              (else (mvar-put! out x) (loop (+ passed 1))))))))

(define first-channel (make-mvar))
(define gen (fork (generator first-channel)))

;; returns (primes-in-order . filter-threads)
(define (collect k)
  (let loop ((i 0) (in first-channel) (primes '()) (filters '()))
    (let ((p (mvar-take! in)))
      (if (= (+ i 1) k)
          (begin
            (mvar-put! stop #t)
            ;; drain: whatever is still in flight, up to the generator's 'eof
            (let drain ((x (mvar-take! in)))
              (unless (eq? x 'eof) (drain (mvar-take! in))))
            (cons (reverse (cons p primes)) (reverse filters)))
          (let* ((out (make-mvar))
                 (t (fork (filter-thread p in out))))
            (loop (+ i 1) out (cons p primes) (cons t filters)))))))

(define result (collect k))
(define primes (car result))
(define generated (thread-join gen))
(define passed (map thread-join (cdr result)))

;; the sequential check: the first k primes by a sieve of Eratosthenes on a bytevector
(define (first-primes k)
  (let grow ((limit 64))
    (let ((composite (make-bytevector (+ limit 1) 0)))
      (let mark ((i 2))
        (when (<= (* i i) limit)
          (when (= 0 (bytevector-u8-ref composite i))
            (do ((j (* i i) (+ j i))) ((> j limit))
              (bytevector-u8-set! composite j 1)))
          (mark (+ i 1))))
      (let scan ((i limit) (acc '()) (n 0))
        (cond ((< i 2)
               (if (>= n k) (list-head acc k) (grow (* limit 2))))
              ((= 0 (bytevector-u8-ref composite i)) (scan (- i 1) (cons i acc) (+ n 1)))
              (else (scan (- i 1) acc n)))))))

(define (list-head l n) (if (= n 0) '() (cons (car l) (list-head (cdr l) (- n 1)))))

(define expected (first-primes k))
(unless (equal? primes expected)
  ;; report the first prime that differs: (index got expected)
  (let first-diff ((got primes) (want expected) (i 0))
    (cond ((or (null? got) (null? want))
           (error "sieve: wrong answer" 'length (length primes) (length expected)))
          ((= (car got) (car want)) (first-diff (cdr got) (cdr want) (+ i 1)))
          (else (error "sieve: wrong answer" 'prime i (car got) (car want))))))
;; filter i passed at least the primes after its own (k - i of them), and the generator
;; sent at least up to the last prime
(unless (= (length passed) (- k 1))
  (error "sieve: wrong answer" (length passed) (- k 1)))
(let check ((ps passed) (i 1))
  (unless (null? ps)
    (when (< (car ps) (- k i))
      (error "sieve: wrong answer" (car ps) (- k i)))
    (check (cdr ps) (+ i 1))))
(unless (>= generated (last primes))
  (error "sieve: wrong answer" generated (last primes)))

(display "sieve: the first ") (display k) (display " primes, the last ") (display (last primes))
(display ", sum ") (display (apply + primes)) (newline)
(display "checked against a sequential sieve of Eratosthenes") (newline)
