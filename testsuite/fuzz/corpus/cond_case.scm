;; cond (with =>), case (with lists of data and else =>), and, or, when, unless.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define (classify n)
  (cond ((< n 0) 'negative)
        ((= n 0) 'zero)
        ((< n 10) 'small)
        (else 'large)))
(show "cond" (map classify '(-5 0 3 100)))

;; => passes the test's value to the receiver
(show "cond =>" (cond ((assv 'b '((a 1) (b 2))) => cadr) (else 'none)))
(show "cond => miss" (cond ((assv 'z '((a 1) (b 2))) => cadr) (else 'none)))
(show "cond => lambda" (cond ((memv 3 '(1 2 3 4)) => (lambda (tail) (length tail))) (else 0)))
;; a clause with only a test yields the test's value
(show "cond test only" (cond ((memq 'c '(a b c d))) (else 'no)))
(show "cond several body forms" (cond (#f 1) (#t (display "") 2 3)))

(define (kind x)
  (case x
    ((1 2 3) 'low)
    ((4 5 6) 'mid)
    ((a e i o u) 'vowel)
    ((#\x #\y) 'char)
    (else 'other)))
(show "case" (map kind (list 1 5 'e 'z #\y 99)))
(show "case else =>" (case 10 ((1 2) 'few) (else => (lambda (v) (* v 2)))))
(show "case clause =>" (case 2 ((1 2) => (lambda (v) (list v 'matched))) (else 'no)))
(show "case () datum list" (case 'q (() 'never) ((q) 'q-clause) (else 'other)))
(show "case on a computed number" (case (* 2 3) ((2 3 5 7) 'prime) ((1 4 6 8 9) 'composite)))

(show "and" (list (and) (and 1 2 3) (and 1 #f 3) (and #f (car '()))))
(show "or" (list (or) (or #f 2) (or #f #f) (or 1 (car '()))))
(show "and/or values" (list (and 'a 'b) (or (memq 'x '(a x c)) 'none)))

(define events '())
(define (note! x) (set! events (cons x events)))
(when (> 3 2) (note! 'when-true) (note! 'when-second))
(when (< 3 2) (note! 'when-false))
(unless (< 3 2) (note! 'unless-true))
(unless (> 3 2) (note! 'unless-false))
(show "when/unless" (reverse events))
(show "when value" (when #t 1 2 'last))
(show "unless value" (unless #f 'u))

;; nested conditionals in a loop
(define (fizzbuzz n)
  (let loop ((i 1) (acc '()))
    (if (> i n)
        (reverse acc)
        (loop (+ i 1)
              (cons (cond ((= 0 (modulo i 15)) 'fizzbuzz)
                          ((= 0 (modulo i 5)) 'buzz)
                          ((= 0 (modulo i 3)) 'fizz)
                          (else i))
                    acc)))))
(show "fizzbuzz" (fizzbuzz 15))
