;; quasiquote: unquote, unquote-splicing, dotted tails, vectors, nesting.

(define (show label x) (display label) (display ": ") (write x) (newline))

(define a 1)
(define b '(2 3))
(define name 'world)

(show "plain" `(x y z))
(show "unquote" `(a ,a b ,b))
(show "splice" `(0 ,@b 4))
(show "splice at start and end" `(,@b middle ,@b))
(show "splice empty" `(x ,@'() y))
(show "splice last gives dotted" `(1 ,@'(2) . ,a))
(show "dotted tail" `(head . ,name))
(show "expressions" `(sum ,(+ 1 2) product ,(* 2 3) list ,(list a a)))
(show "nested lists" `((a ,a) (b ,@b) ((c ,(car b)))))
(show "vector" `#(1 ,a ,@b 4))
(show "vector in list" `(v #(,a x) ,(vector a)))
(show "list in vector" `#((,a) (,@b)))
(show "quote inside" (equal? `(quote ,a) (list 'quote 1)))
(show "quote form inside" (equal? `(x ',a) (list 'x (list 'quote 1))))
(show "long form" (quasiquote (p (unquote a) (unquote-splicing b))))
(show "symbols and strings" `(,name "str" #\c ,(symbol->string name)))
(show "computed splice" `(squares ,@(map (lambda (i) (* i i)) '(1 2 3 4))))
(show "unquote of a quasiquote" `(1 ,`(2 ,a) 3))

;; nested quasiquote: inner unquotes stay until the level matches (compared with equal?,
;; since how write abbreviates (quasiquote x) differs between implementations)
(define nested `(a `(b ,(c ,a))))
(show "nested level 2" (equal? nested (list 'a (list 'quasiquote (list 'b (list 'unquote (list 'c 1)))))))
(show "nested level 2, inner expression" (cadr (cadr (cadr (cadr (cadr nested))))))
(show "nested unquote-splicing"
      (equal? `(1 `(2 ,(3 ,@b))) (list 1 (list 'quasiquote (list 2 (list 'unquote (list 3 2 3)))))))
(show "nested, inner kept" (equal? `(x `(y ,z)) (list 'x (list 'quasiquote (list 'y (list 'unquote 'z))))))
(show "nested head symbol" (car (cadr `(x `(y ,z)))))

;; quasiquote building code-like data
(define (make-adder-expr n) `(lambda (x) (+ x ,n)))
(show "code" (make-adder-expr 5))
(show "equal to a quoted list" (equal? `(1 ,(+ 1 1) ,@(list 3)) '(1 2 3)))
