;; Strings and characters.

(define (show label x) (display label) (display ": ") (write x) (newline))

;; construction and access
(show "string?" (list (string? "a") (string? #\a) (string? 'a)))
(show "make-string" (list (make-string 3 #\z) (string-length (make-string 5)) (make-string 0 #\a)))
(show "string" (list (string) (string #\a #\b #\c)))
(show "string-length" (list (string-length "") (string-length "hello") (string-length "a\nb")))
(show "string-ref" (list (string-ref "hello" 0) (string-ref "hello" 4)))
(show "substring" (list (substring "hello world" 6 11) (substring "abc" 0 0) (substring "abc" 1 3)))
(show "string-append" (list (string-append) (string-append "a") (string-append "foo" "" "bar" "baz")))
(show "string-copy" (list (string-copy "abc") (string-copy "abcdef" 2) (string-copy "abcdef" 1 4)))
(show "string->list" (list (string->list "abc") (string->list "") (string->list "abcdef" 3)
                           (string->list "abcdef" 1 3)))
(show "list->string" (list (list->string '(#\x #\y)) (list->string '())))

;; mutation: strings made by make-string and string-copy are mutable
(define s (make-string 3 #\-))
(string-set! s 1 #\+)
(show "string-set!" s)
(define t (string-copy "hello"))
(string-set! t 0 #\j)
(show "string-set! on a copy" t)
(define u (string-copy "abcdef"))
(string-fill! u #\*)
(show "string-fill!" u)
(define v (string-copy "0123456789"))
(string-copy! v 2 "abc")
(show "string-copy!" v)
(string-copy! v 0 "WXYZ" 1 3)
(show "string-copy! with a range" v)
(define w (string-copy "abcde"))
(string-copy! w 1 w 0 3)
(show "string-copy! overlapping" w)

;; comparisons
(show "string=?" (list (string=? "abc" "abc") (string=? "abc" "abd") (string=? "a" "a" "a")
                       (string=? "" "")))
(show "string<? etc" (list (string<? "abc" "abd") (string<? "ab" "abc") (string<? "b" "a")
                           (string>? "b" "a") (string<=? "a" "a") (string>=? "a" "b")
                           (string<? "a" "b" "c") (string<? "a" "c" "b")))
(show "string-ci" (list (string-ci=? "HeLLo" "hello") (string-ci<? "apple" "BANANA")))
(show "case conversion" (list (string-upcase "Hello, World") (string-downcase "MiXeD 123")))
(show "equal? on strings" (list (equal? "abc" (string #\a #\b #\c)) (equal? "abc" "ABC")))

;; string-map, string-for-each
(show "string-map" (string-map char-upcase "abc"))
(define chars '())
(string-for-each (lambda (c) (set! chars (cons (char->integer c) chars))) "AB")
(show "string-for-each" chars)

;; symbols and numbers to and from strings
(show "symbol<->string" (list (symbol->string 'foo) (string->symbol "bar") (eq? (string->symbol "foo") 'foo)))
(show "number<->string" (list (number->string 42) (string->number "-17") (string->number "nope")))

;; write escapes, display does not
(define special "say \"quoted\" back\\slash\nnewline")
(write special) (newline)
(display special) (newline)
(show "string-length of escapes" (string-length "\t\"\\\n"))

;; characters
(show "char?" (list (char? #\a) (char? "a") (char? 97)))
(show "char literals" (list #\a #\Z #\0 #\space #\newline #\tab #\( #\x41))
(display (list #\a #\space #\b)) (newline)
(show "char->integer" (list (char->integer #\A) (char->integer #\space) (char->integer #\newline)
                            (char->integer #\x3bb)))
(show "integer->char" (list (integer->char 97) (integer->char 48)))
(show "char comparisons" (list (char=? #\a #\a) (char<? #\a #\b) (char<? #\a #\b #\c) (char>? #\a #\b)
                               (char<=? #\a #\a #\b) (char>=? #\b #\a) (char-ci=? #\a #\A)))
(show "char classes" (list (char-alphabetic? #\a) (char-alphabetic? #\1) (char-numeric? #\7)
                           (char-numeric? #\x) (char-whitespace? #\space) (char-whitespace? #\newline)
                           (char-whitespace? #\a) (char-upper-case? #\A) (char-upper-case? #\a)
                           (char-lower-case? #\a)))
(show "char case" (list (char-upcase #\a) (char-downcase #\A) (char-upcase #\1)))
(show "digit-value" (list (digit-value #\7) (digit-value #\a)))

;; non-ASCII text: strings hold code points, output is UTF-8
(define greek "λx.αβ")
(show "unicode length" (string-length greek))
(show "unicode ref" (char->integer (string-ref greek 0)))
(display greek) (newline)
(show "unicode string-append" (string-append "é" "ü"))
(show "unicode substring" (substring greek 3 5))

;; a small string algorithm: reverse the words of a sentence
(define (split-words str)
  (let loop ((chars (string->list str)) (word '()) (words '()))
    (cond ((null? chars)
           (reverse (if (null? word) words (cons (list->string (reverse word)) words))))
          ((char=? (car chars) #\space)
           (loop (cdr chars) '() (if (null? word) words (cons (list->string (reverse word)) words))))
          (else (loop (cdr chars) (cons (car chars) word) words)))))
(define (join words sep)
  (if (null? words) ""
      (let loop ((rest (cdr words)) (acc (car words)))
        (if (null? rest) acc (loop (cdr rest) (string-append acc sep (car rest)))))))
(show "words" (split-words "  the quick  brown fox "))
(show "reversed words" (join (reverse (split-words "the quick brown fox")) " "))
