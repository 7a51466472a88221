;; Numbers: fixnum arithmetic, flonums, exactness, division, conversions and printing.
;; (No bignums or rationals: `/` gives an exact integer when the division is exact, else a
;; flonum.)

(define (show label x) (display label) (display ": ") (write x) (newline))

;; fixnum arithmetic
(show "+ - *" (list (+) (+ 1) (+ 1 2 3) (- 5) (- 10 3 2) (*) (* 2 3 4) (* -4 5)))
(show "quotient/remainder/modulo" (list (quotient 17 5) (remainder 17 5) (modulo 17 5)
                                        (quotient -17 5) (remainder -17 5) (modulo -17 5)
                                        (quotient 17 -5) (remainder 17 -5) (modulo 17 -5)))
(show "floor/ and truncate/" (call-with-values (lambda () (floor/ -7 2))
                                (lambda (q r) (call-with-values (lambda () (truncate/ -7 2))
                                                (lambda (q2 r2) (list q r q2 r2))))))
(show "floor-quotient etc" (list (floor-quotient 7 -2) (floor-remainder 7 -2)
                                 (truncate-quotient 7 -2) (truncate-remainder 7 -2)))
(show "abs/min/max" (list (abs -7) (abs 7) (min 3 1 2) (max 3 1 2)))
(show "gcd/lcm" (list (gcd 12 18) (gcd) (gcd 0 5) (lcm 4 6) (lcm)))
(show "expt" (list (expt 2 10) (expt 3 0) (expt 0 0) (expt -2 3) (expt 10 18)))
(show "square" (list (square 12) (square -3)))
(show "exact-integer-sqrt" (call-with-values (lambda () (exact-integer-sqrt 17)) list))
(show "comparisons" (list (= 1 1 1) (= 1 2) (< 1 2 3) (< 1 3 2) (> 3 2 1) (<= 1 1 2) (>= 2 2 3)))
(show "predicates" (list (zero? 0) (zero? 1) (positive? 5) (positive? -5) (negative? -5)
                         (odd? 7) (odd? -7) (even? 0) (even? -4)))
(show "type predicates" (list (number? 1) (number? 'a) (integer? 5) (integer? 5.0) (integer? 5.5)
                              (real? 1.5) (exact-integer? 5) (exact-integer? 5.0)
                              (exact? 1) (exact? 1.0) (inexact? 1.0)))
(show "large fixnums" (list (* 1000000000 1000000000) (+ 576460752303423487 576460752303423488)
                            (- -576460752303423488 576460752303423488)))
(show "fixnum loop" (let loop ((i 0) (acc 0)) (if (= i 100000) acc (loop (+ i 1) (+ acc (* i i))))))

;; division
(show "exact division" (list (/ 6 3) (/ 100 -4) (/ 0 5) (/ 1) (/ 120 2 3)))
(show "inexact division" (list (/ 7 2) (/ 1 3) (/ -1 4) (/ 5) (/ 6.0 3) (/ 1.0 2)))

;; flonums and mixed arithmetic
(show "flonum arithmetic" (list (+ 0.1 0.2) (* 1.5 2) (- 0.5) (/ 10.0 4) (+ 1 2.0) (* 2 0.5)))
(show "mixed comparisons" (list (= 1 1.0) (< 1 1.5 2) (max 1 2.0) (min 1 2.0) (eqv? 1 1.0)
                                (eqv? 2.5 2.5) (equal? 2 2.0)))
(show "rounding" (list (floor 2.7) (ceiling 2.1) (truncate -2.7) (round 2.5) (round 3.5)
                       (round -2.5) (round 2.6) (floor -2.5) (floor 5) (round 7)))
(show "exactness" (list (exact 2.0) (exact -7.0) (inexact 3) (exact->inexact 7)
                        (inexact->exact 4.0) (exact (floor 2.7))))
(show "sqrt" (list (sqrt 16.0) (sqrt 2) (sqrt 0.25)))
(show "transcendental" (list (exp 0.0) (exp 1.0) (log 1.0) (sin 0.0) (cos 0.0) (atan 1.0 1.0)
                             (expt 2.0 3) (expt 2 0.5)))
(show "nan/infinite/finite" (list (nan? (/ 0.0 0.0)) (infinite? (/ 1.0 0.0)) (finite? 1.5)
                                  (finite? (/ -1.0 0.0)) (nan? 1.0)))

;; printing of flonums: shortest round-trip text, integral values with ".0"
(for-each (lambda (x) (write x) (newline))
          (list 0.1 1.5 -0.0 2.0 100.0 -3.25 0.001 123.456 3.141592653589793
                (/ 1.0 3) (* 4 (atan 1.0)) 1e21 1.5e300 1.2345e-7
                (/ 1.0 0.0) (/ -1.0 0.0) (/ 0.0 0.0) 0.0))
(display 1.5) (newline)
(display -0.0) (newline)

;; number->string and string->number
(show "number->string" (list (number->string 42) (number->string -7) (number->string 3.5)
                             (number->string 1.0) (number->string 0.1)
                             (number->string 255 16) (number->string -255 2) (number->string 8 8)))
(show "string->number" (list (string->number "42") (string->number "-17") (string->number "+5")
                             (string->number "3.25") (string->number "-0.5") (string->number ".5")
                             (string->number "5.") (string->number "1e3") (string->number "2.5e-3")
                             (string->number "ff" 16) (string->number "-101" 2)
                             (string->number "+inf.0") (string->number "-inf.0")))
(show "string->number rejects" (list (string->number "") (string->number "abc") (string->number "1x")
                                     (string->number "-") (string->number ".")))
(show "round trip of 0.1" (= (string->number (number->string 0.1)) 0.1))
(show "round trip of 1/3" (let ((x (/ 1.0 3))) (= (string->number (number->string x)) x)))
(show "exact strtod" (list (string->number "0.1") (string->number "1.7976931348623157e308")
                           (string->number "5e-324")))
