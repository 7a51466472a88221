;; Higher-order procedures: apply with several arguments, map, for-each, vector-map,
;; vector-for-each, string-map, string-for-each, assoc and member with a predicate,
;; procedures returning procedures.

(define (show label x) (display label) (display ": ") (write x) (newline))

(show "apply" (list (apply + '()) (apply + '(1 2 3)) (apply + 1 2 '(3 4)) (apply list 'a 'b '(c d))
                    (apply max 3 '(7 2)) (apply cons '(1 2)) (apply (lambda args args) 1 '())))
(show "apply a closure" (apply (lambda (a b . rest) (list a b rest)) 1 '(2 3 4)))
(show "apply with a string procedure" (apply string-append "a" '("b" "c")))
(show "procedure?" (list (procedure? car) (procedure? (lambda () 1)) (procedure? 'car) (procedure? '(lambda () 1))))

(show "map" (map (lambda (x) (* x 10)) '(1 2 3)))
(show "map with a primitive" (map car '((a 1) (b 2))))
(show "map several lists" (map (lambda (a b c) (+ a (* b c))) '(1 2 3) '(4 5 6) '(7 8 9)))
(define seen '())
(for-each (lambda (k v) (set! seen (cons (cons k v) seen))) '(a b c) '(1 2 3))
(show "for-each several lists" (reverse seen))

(show "vector-map" (list (vector-map (lambda (x) (* x x)) #(1 2 3)) (vector-map + #(1 2) #(10 20 30))))
(define vsum 0)
(vector-for-each (lambda (x) (set! vsum (+ vsum x))) #(1 2 3 4))
(show "vector-for-each" vsum)
(define vpairs '())
(vector-for-each (lambda (a b) (set! vpairs (cons (list a b) vpairs))) #(x y) #(1 2 3))
(show "vector-for-each two vectors" (reverse vpairs))
(show "string-map" (list (string-map char-upcase "hello")
                         (string-map (lambda (a b) (if (char<? a b) a b)) "adcz" "bbbb")))
(define codes '())
(string-for-each (lambda (c) (set! codes (cons (char->integer c) codes))) "abc")
(show "string-for-each" (reverse codes))
(define zipped '())
(string-for-each (lambda (a b) (set! zipped (cons (string a b) zipped))) "abc" "xyz")
(show "string-for-each two strings" (reverse zipped))

(show "assoc with a predicate" (assoc 2.0 '((1 . one) (2 . two) (3 . three)) =))
(show "assoc string-ci" (assoc "B" '(("a" . 1) ("b" . 2)) string-ci=?))
(show "member with a predicate" (member "b" '("A" "B" "C") string-ci=?))
(show "member with a lambda" (member 4 '(1 2 3 4 5) (lambda (x y) (= x y))))

;; procedures as values
(define (compose . fs)
  (if (null? fs)
      (lambda (x) x)
      (lambda (x) ((car fs) ((apply compose (cdr fs)) x)))))
(show "compose" ((compose (lambda (x) (* x 2)) (lambda (x) (+ x 1)) abs) -5))
(define (curry f . args) (lambda more (apply f (append args more))))
(show "curry" ((curry + 1 2) 3 4))
(define (fold-left f init lst) (if (null? lst) init (fold-left f (f init (car lst)) (cdr lst))))
(define (fold-right f init lst) (if (null? lst) init (f (car lst) (fold-right f init (cdr lst)))))
(show "folds" (list (fold-left - 0 '(1 2 3)) (fold-right - 0 '(1 2 3)) (fold-right cons '() '(1 2 3))
                    (fold-left (lambda (acc x) (cons x acc)) '() '(1 2 3))))
(define (filter pred lst) (fold-right (lambda (x acc) (if (pred x) (cons x acc) acc)) '() lst))
(show "filter" (filter odd? '(1 2 3 4 5 6 7)))
(define (make-multiplier n) (lambda (x) (* n x)))
(show "list of closures" (map (lambda (f) (f 10)) (map make-multiplier '(1 2 3))))
(show "map over procedures" (map (lambda (f) (f 4 2)) (list + - * quotient expt)))
;; apply of a primitive taking many arguments
(show "apply over a long list" (apply + (let loop ((i 0) (acc '())) (if (= i 1000) acc (loop (+ i 1) (cons i acc))))))
;; a higher-order procedure with a rest argument, applied
(define (count-if pred . lists)
  (let loop ((ls lists) (n 0))
    (if (null? (car ls)) n
        (loop (map cdr ls) (if (apply pred (map car ls)) (+ n 1) n)))))
(show "count-if" (count-if < '(1 5 3 7) '(2 4 4 6)))
