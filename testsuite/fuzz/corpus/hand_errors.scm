(lambda (x x) x) (let ((a 1) (a 2)) a) (letrec ((a 1) (a 2)) a) (if) (lambda) (define) (quote) (set! 1 2)
(let ((x)) x) (let 1 2) (cond (else 1) (2)) (case) (do) (do ((x)) ()) (define-record-type) (guard) (guard (1))
(let-values ((x)) 1) (define-values) (delay) (assert) (parameterize ((p)) 1) (case-lambda (x))
(f . x) (1 . 2) () (lambda (a . 1) a) (define (1) 2) (define ((f . 1) a) 2) `(1 . ,@x) `,@x (quasiquote 1 2)
