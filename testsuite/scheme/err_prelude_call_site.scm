;; An error inside a prelude procedure (map applying car to 2): the system frames above the
;; program's are left out, so the top line is the program's call of map.
(define (firsts l)
  (let ((r (map car l)))
    r))
(define (main)
  (display (firsts (list (list 1) 2)))
  (newline))
(main)
