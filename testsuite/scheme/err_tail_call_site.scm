;; A tail call replaces its caller's frame: tail-caller's frame is gone, so the frame below
;; fails is main's, at the call (tail-caller 5) that led there.
(define (fails x)
  (car x))
(define (tail-caller x)
  (fails x))
(define (main)
  (tail-caller 5)
  (display "not reached"))
(main)
(newline)
