;; Numeric primitives (runtime/scheme/prim_num.c): fixnums and flonums only, so `/` is exact
;; only when the division is, and exact overflow is an error.
;; Checked against guile-3.0 --r7rs (with SRFI 151 names bound to logand etc.); the expected
;; output departs from Guile only where rtslab's number model does (no bignums or rationals,
;; (/ 1.0 0) is +inf.0) and in (< 2 1 'b), where rtslab checks every argument's type.

(import (scheme base) (scheme inexact) (scheme write))

(define (show . xs)
  (for-each (lambda (x) (write x) (display " ")) xs)
  (newline))

;; The thunk's value, or `error` when it raises an error object (the messages of errors
;; raised by primitives are rtslab's own, so they are not compared here).
(define (try thunk)
  (call-with-current-continuation
   (lambda (k)
     (with-exception-handler
      (lambda (e) (k (if (error-object? e) 'error (list 'raised e))))
      thunk))))

(define (vals thunk) (call-with-values thunk list))


(display "arithmetic") (newline)
(show (+) (+ 7) (+ 1 2 3) (+ 1 2.5) (+ 0.5 0.25))
(show (*) (* 7) (* 2 3 4) (* 2 0.5) (* 1.5 1.5))
(show (- 5) (- 10 1 2) (- 2.5) (- 1 0.5) (- 0.0))
(show (/ 6 3) (/ 24 2 3) (/ -6 3) (/ 1 2) (/ 2) (/ 1 4.0) (/ 9 -3))
(show (/ 1.0 0) (/ -1 0.0) (nan? (/ 0.0 0)))
(show (+ 4611686018427387902 1) (- -4611686018427387903 1) (* 2147483648 2147483647))
(show (+ 1 (* 2 3)) (- (* 4 5) (/ 10 2)))

(display "comparison") (newline)
(show (= 1 1) (= 1 2) (= 1 1.0) (= 1 1 1) (= 1 1 2) (= 5))
(show (< 1 2) (< 2 1) (< 1 2 3) (< 1 3 2) (< 1 1) (< 5))
(show (> 3 2 1) (> 3 1 2) (<= 1 1 2) (<= 1 2 1) (>= 2 2 1) (>= 1 2))
(show (< 1 1.5 2) (= +nan.0 +nan.0) (< 1 +nan.0) (> +inf.0 4611686018427387903))
(show (= 9007199254740993 9007199254740992.0) (< 9007199254740992.0 9007199254740993))
(show (< 4611686018427387903 4611686018427387904.0) (> -4611686018427387904 -4611686018427387905.0))

(display "predicates") (newline)
(show (number? 1) (number? 1.5) (number? 'a) (complex? 1) (real? 1.5) (real? "1"))
(show (rational? 1) (rational? 1.5) (rational? +inf.0) (rational? +nan.0))
(show (integer? 2) (integer? 2.0) (integer? 2.5) (integer? +inf.0) (integer? "2"))
(show (exact? 1) (exact? 1.0) (inexact? 1.0) (inexact? 1))
(show (exact-integer? 5) (exact-integer? 5.0) (exact-integer? 'x))
(show (nan? +nan.0) (nan? 1) (infinite? -inf.0) (infinite? 1.0) (finite? 1.0) (finite? +inf.0) (finite? 3))
(show (zero? 0) (zero? 0.0) (zero? -0.0) (zero? 1) (positive? 1) (positive? -1.5) (positive? 0))
(show (negative? -1) (negative? 0) (negative? -0.5) (positive? +nan.0) (negative? +nan.0))
(show (odd? 3) (odd? -3) (odd? 0) (even? 0) (even? -4) (even? 7) (odd? 3.0) (even? 4.0))

(display "max min abs") (newline)
(show (max 1 2 3) (max 3 2 1) (min 1 2 3) (max 1 2.0) (min 1 2.0) (max -0.5 -1) (max 7))
(show (abs -5) (abs 5) (abs -5.5) (abs 0) (abs -4611686018427387903))

(display "integer division") (newline)
(show (quotient 17 5) (quotient -17 5) (quotient 17 -5) (quotient -17 -5))
(show (remainder 17 5) (remainder -17 5) (remainder 17 -5) (remainder -17 -5))
(show (modulo 17 5) (modulo -17 5) (modulo 17 -5) (modulo -17 -5))
(show (quotient 17.0 5) (remainder 17 5.0) (modulo -17.0 5) (modulo 13.0 4))
(show (vals (lambda () (floor/ 5 2))) (vals (lambda () (floor/ -5 2)))
      (vals (lambda () (floor/ 5 -2))) (vals (lambda () (floor/ -5 -2))))
(show (vals (lambda () (truncate/ 5 2))) (vals (lambda () (truncate/ -5 2)))
      (vals (lambda () (truncate/ 5 -2))) (vals (lambda () (truncate/ -5 -2))))
(show (vals (lambda () (floor/ -5.0 2))) (vals (lambda () (truncate/ 5.0 -2))))
(show (floor-quotient -7 2) (floor-remainder -7 2) (truncate-quotient -7 2) (truncate-remainder -7 2))
(show (gcd) (gcd 32 -36) (gcd 0 5) (gcd 12 18 27) (gcd 7) (gcd -7) (gcd 32.0 -36))
(show (lcm) (lcm 32 -36) (lcm 0 5) (lcm 2 3 4) (lcm -7) (lcm 32.0 -36))

(display "rounding") (newline)
(show (floor -4.3) (ceiling -4.3) (truncate -4.3) (round -4.3))
(show (floor 3.5) (ceiling 3.5) (truncate 3.5) (round 3.5))
(show (round 2.5) (round -2.5) (round 0.5) (round 1.5) (round 7) (floor 7) (ceiling -7) (truncate 0))

(display "transcendental") (newline)
(show (exp 1) (exp 0.0) (log 1.0) (log (exp 2.0)) (log 100 10) (log 8.0 2))
(show (sin 0.0) (cos 0.0) (tan 0.0) (asin 1.0) (acos 1.0) (atan 1.0))
(show (atan 1 1) (atan 1.0 -1.0) (atan -1 0))
(show (sqrt 16) (sqrt 0) (sqrt 1) (sqrt 2) (sqrt 16.0) (sqrt 2.25) (sqrt 4611686014132420609))
(show (vals (lambda () (exact-integer-sqrt 17))) (vals (lambda () (exact-integer-sqrt 16)))
      (vals (lambda () (exact-integer-sqrt 0))) (vals (lambda () (exact-integer-sqrt 4611686018427387903))))
(show (expt 2 10) (expt 2 0) (expt 0 0) (expt 0 5) (expt -3 3) (expt -2 4) (expt 1 1000000000) (expt -1 1000000001))
(show (expt 2.0 3) (expt 2 0.5) (expt 4 0.5) (expt 2.5 2) (expt 2 61) (expt -2 61) (expt -4 31) (expt 0.0 0))
(show (square 5) (square -7) (square 1.5))

(display "exactness") (newline)
(show (exact 2.0) (exact -0.0) (exact 5) (exact 1e15) (inexact->exact 3.0) (exact -4611686018427387904.0))
(show (inexact 1) (inexact 2.5) (exact->inexact 7) (exact->inexact -3))

(display "bitwise") (newline)
(show (bitwise-and 12 10) (bitwise-ior 12 10) (bitwise-xor 12 10) (bitwise-not 0) (bitwise-not 12))
(show (bitwise-and) (bitwise-ior) (bitwise-xor) (bitwise-and -1 255 15) (bitwise-ior 1 2 4) (bitwise-xor 5 3 1))
(show (bitwise-and -8 7) (bitwise-ior -8 7) (bitwise-xor -1 5))
(show (arithmetic-shift 1 10) (arithmetic-shift 1024 -3) (arithmetic-shift -8 -1) (arithmetic-shift -1 -10)
      (arithmetic-shift 5 0) (arithmetic-shift 0 100) (arithmetic-shift 1 61) (arithmetic-shift -1 62)
      (arithmetic-shift 12345 -100) (arithmetic-shift -12345 -100))

(display "errors") (newline)
(show (try (lambda () (+ 4611686018427387903 1))))
(show (try (lambda () (- -4611686018427387904 1))))
(show (try (lambda () (* 4611686018427387903 2))))
(show (try (lambda () (- -4611686018427387904))))
(show (try (lambda () (abs -4611686018427387904))))
(show (try (lambda () (/ 1 0))))
(show (try (lambda () (/ -4611686018427387904 -1))))
(show (try (lambda () (quotient 1 0))) (try (lambda () (modulo 1 0))) (try (lambda () (remainder 1 0.0))))
(show (try (lambda () (quotient -4611686018427387904 -1))))
(show (try (lambda () (floor/ 1 0))))
(show (try (lambda () (expt 2 62))) (try (lambda () (expt -2 62))) (try (lambda () (expt -3 40)))
      (try (lambda () (expt 10 19))))
(show (try (lambda () (expt 0 -1))))
(show (expt 2 -1) (expt 4 -2) (/ 7 2) (/ -1 4) (/ 1 3.0))
(show (try (lambda () (exact 2.5))) (try (lambda () (exact +inf.0))) (try (lambda () (exact 1e19))))
(show (try (lambda () (square 4611686018427387903))))
(show (try (lambda () (arithmetic-shift 1 62))) (try (lambda () (arithmetic-shift 3 61))))
(show (try (lambda () (+ 1 'a))) (try (lambda () (+ 'a))) (try (lambda () (- "x"))))
(show (try (lambda () (< 1 'b))) (try (lambda () (< 2 1 'b))) (try (lambda () (max 1 #f))))
(show (try (lambda () (odd? 1.5))) (try (lambda () (quotient 1.5 1))) (try (lambda () (exact-integer-sqrt -1))))
(show (try (lambda () (bitwise-and 1 1.0))) (try (lambda () (zero? 'z))) (try (lambda () (sqrt 'x))))
(show (= (gcd 4611686018427387904.0 -4611686018427387904) 4611686018427387904.0))
(show (try (lambda () (gcd -4611686018427387904 0))))
(show (try (lambda () (lcm 4611686018427387903 2))))
