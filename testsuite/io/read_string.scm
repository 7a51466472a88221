;; read-string waits for k characters to arrive (issue 45, item 9): what it has decoded is
;; kept, so each wait looks only at the bytes that came since. Writes a file of N characters
;; (a 2-byte one every 7th, so that characters straddle the reads' 16 KiB pieces), reads it back
;; with one read-string of a huge k and one of exactly N-1 characters, and prints what came
;; back and how many bytes the waits looked at (%port-scanned), as a multiple of the file's
;; size: a few at most when linear; before, the whole buffer was decoded again after each
;; 16 KiB read (about 120 times the size for 4 MB).
;; Arguments: FILE N
(define file (list-ref (command-line) 1))
(define n (string->number (list-ref (command-line) 2)))
(define (char-at i) (if (= 0 (modulo i 7)) #\xe9 (integer->char (+ 97 (modulo i 26)))))
(define text (let ((s (make-string n))) (do ((i 0 (+ i 1))) ((= i n) s) (string-set! s i (char-at i)))))
(call-with-output-file file (lambda (p) (write-string text p)))
(define size (bytevector-length (string->utf8 text)))
(define (scanned-ratio p) (exact->inexact (/ (%port-scanned p) size)))
(let* ((p (open-input-file file))
       (s (read-string 100000000000 p)))
  (display (list 'huge-k 'equal (string=? s text) 'then (eof-object? (read-string 10 p))
                 'linear (<= (scanned-ratio p) 2)))
  (newline)
  (close-port p))
(let* ((p (open-input-file file))
       (s (read-string (- n 1) p))
       (last (read-string 5 p)))
  (display (list 'exact-k 'equal (string=? s (substring text 0 (- n 1)))
                 'rest (string=? last (substring text (- n 1) n))
                 'linear (<= (scanned-ratio p) 2)))
  (newline)
  (close-port p))
(display (list 'scanned (scanned-ratio (let ((p (open-input-file file))) (read-string n p) p))))
(newline)
(delete-file file)
