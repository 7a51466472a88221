;; Symbols: interning, eq?, conversions, symbol=?, symbols as keys.

(define (show label x) (display label) (display ": ") (write x) (newline))

(show "symbol?" (list (symbol? 'a) (symbol? "a") (symbol? (car '(b))) (symbol? 1) (symbol? '())))
(show "eq? on symbols" (list (eq? 'abc 'abc) (eq? 'abc 'abd) (eq? (string->symbol "abc") 'abc)))
(show "symbol->string" (list (symbol->string 'hello) (symbol->string 'with-dash) (symbol->string '+)))
(show "string->symbol" (list (string->symbol "made") (eq? (string->symbol (string-append "ma" "de")) 'made)))
(show "symbol=?" (list (symbol=? 'a 'a) (symbol=? 'a 'b) (symbol=? 'x 'x 'x)))
(show "peculiar symbols" (list '+ '- '... '->x '<=? 'a.b 'x->y '!$%&*/:<=>?^_~))
(show "case folding is off" (list (eq? 'abc 'ABC) (symbol->string 'MixedCase)))
;; symbols made at run time are interned with those in the program
(define (make-sym prefix n) (string->symbol (string-append prefix (number->string n))))
(show "interned at run time" (list (eq? (make-sym "item" 3) 'item3) (eq? (make-sym "item" 3) (make-sym "item" 3))))
;; many symbols
(define syms (let loop ((i 0) (acc '())) (if (= i 1000) acc (loop (+ i 1) (cons (make-sym "s" i) acc)))))
(show "many symbols" (list (length syms) (car syms) (eq? (car syms) 's999) (length (memq 's500 syms))))
;; symbols as keys in association lists
(define env '((x . 1) (y . 2) (z . 3)))
(show "assq on symbols" (map (lambda (k) (cdr (assq k env))) '(z x y)))
;; a symbol's name string is equal to, not necessarily the same as, another copy
(show "name strings" (equal? (symbol->string 'abc) "abc"))
;; symbols in quoted data and in quasiquote
(show "quoted data" (map symbol? '(a "a" #\a 1 (a) b)))
(define op '+)
(show "symbols build expressions" `(,op 1 2))
;; a tiny evaluator dispatching on symbols
(define (evaluate e)
  (cond ((number? e) e)
        ((symbol? e) (cdr (assq e env)))
        (else (let ((args (map evaluate (cdr e))))
                (case (car e)
                  ((+) (apply + args))
                  ((*) (apply * args))
                  ((-) (apply - args))
                  (else 'unknown-operator))))))
(show "evaluate" (evaluate '(+ x (* y z) (- 10 4))))
