;; Derived forms: what the expander makes carries the position of the form it came from.
;; The failing assert's error call is the assert form's (7:5); the do loop is a procedure
;; the expander makes, named "do loop", defined at the do form (5:3); check-all tail-called
;; it, so check-all's frame is gone.
(define (check-all v)
  (do ((i 0 (+ i 1)))
      ((= i 4))
    (assert (number? (vector-ref v i)))))
(define (main)
  (check-all (vector 1 2 (quote x) 4))
  (display "not reached"))
(main)
