;; The symbol table grows (Note [Symbol table] in runtime/scheme/object.c): N symbols
;; interned from strings, well past the 8,192 buckets it starts with, each found again (eq?
;; to the first interning, from a fresh string), all distinct, on every capability at once
;; (-N2: interning races with the table's growth), and a gensym is none of them.
;; Usage: symbols_many.scm N THREADS
(define n (string->number (list-ref (command-line) 1)))
(define threads (string->number (list-ref (command-line) 2)))

(define (name i) (string-append "sym-" (number->string i)))

(define (intern-range from to)          ; a vector of the symbols named from..to-1
  (let ((v (make-vector (- to from))))
    (do ((i from (+ i 1))) ((= i to) v)
      (vector-set! v (- i from) (string->symbol (name i))))))

;; every thread interns the whole range, so they race on the same names
(define results
  (map thread-join
       (map (lambda (t) (fork (lambda () (intern-range 0 n)))) (iota threads))))

(define first (car results))
(define same-across-threads
  (every (lambda (v) (let loop ((i 0)) (or (= i n) (and (eq? (vector-ref v i) (vector-ref first i)) (loop (+ i 1))))))
         results))
(define found-again
  (let loop ((i 0))
    (or (= i n) (and (eq? (string->symbol (name i)) (vector-ref first i))
                     (string=? (symbol->string (vector-ref first i)) (name i))
                     (loop (+ i 1))))))
(define distinct
  (let loop ((i 1))
    (or (= i n) (and (not (eq? (vector-ref first i) (vector-ref first (- i 1)))) (loop (+ i 1))))))
(define g (gensym "sym-"))
(display (list 'symbols n 'threads threads 'same same-across-threads 'found found-again
               'distinct distinct 'gensym-apart (not (eq? g (string->symbol (symbol->string g))))))
(newline)
