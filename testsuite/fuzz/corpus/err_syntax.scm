;; An unterminated list: the reader reports where it starts (line 3, column 1).
(define x 1)
(display (+ 1 2)
