;; Reads every datum from standard input with `read` until the end of file, then prints a
;; summary (the input is io_read.stdin).

(define (read-all)
  (let loop ((acc '()))
    (let ((d (read)))
      (if (eof-object? d) (reverse acc) (loop (cons d acc))))))

(define datums (read-all))

(define (count pred lst) (let loop ((l lst) (n 0)) (if (null? l) n (loop (cdr l) (if (pred (car l)) (+ n 1) n)))))
(define (filter pred lst) (cond ((null? lst) '()) ((pred (car lst)) (cons (car lst) (filter pred (cdr lst)))) (else (filter pred (cdr lst)))))
(define (tree-sum x)
  (cond ((number? x) x)
        ((pair? x) (+ (tree-sum (car x)) (tree-sum (cdr x))))
        ((vector? x) (tree-sum (vector->list x)))
        (else 0)))

(display "datums: ") (write (length datums)) (newline)
(display "numbers: ") (write (filter number? datums)) (newline)
(display "symbols: ") (write (filter symbol? datums)) (newline)
(display "strings: ") (write (filter string? datums)) (newline)
(display "chars: ") (write (filter char? datums)) (newline)
(display "booleans: ") (write (filter boolean? datums)) (newline)
(display "lists: ") (write (count pair? datums)) (newline)
(display "vectors: ") (write (count vector? datums)) (newline)
(display "sum of all numbers, nested too: ") (write (tree-sum datums)) (newline)
(display "records:") (newline)
(for-each (lambda (d)
            (when (and (pair? d) (eq? (car d) 'record))
              (display "  ") (display (cadr d)) (display " => ") (write (cddr d)) (newline)))
          datums)
(display "last: ") (write (list-ref datums (- (length datums) 1))) (newline)
