;; command-line: a list of strings whose first element is the program's path.

(define args (command-line))
(define (ends-with? s suffix)
  (let ((n (string-length s)) (k (string-length suffix)))
    (and (>= n k) (string=? (substring s (- n k) n) suffix))))
(display (list? args)) (newline)
(display (>= (length args) 1)) (newline)
(display (string? (car args))) (newline)
(display (ends-with? (car args) ".scm")) (newline)
(display (ends-with? (car args) "command_line.scm")) (newline)
(display (let loop ((l args)) (or (null? l) (and (string? (car l)) (loop (cdr l)))))) (newline)
