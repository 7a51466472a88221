;; Ports: string ports, read-char, peek-char, read-line, read, write-string, write-char, and
;; a file written with call-with-output-file and read back with call-with-input-file.

(define (show label x) (display label) (display ": ") (write x) (newline))

;; reading characters
(define in (open-input-string "ab\ncd"))
(define c1 (peek-char in))
(define c2 (read-char in))
(define c3 (peek-char in))
(define c4 (read-char in))
(show "peek/read-char" (list c1 c2 c3 c4))
(define rest-chars
  (let loop ((acc '()))
    (let ((c (read-char in)))
      (if (eof-object? c) (reverse acc) (loop (cons c acc))))))
(show "remaining chars" rest-chars)
(show "at eof" (list (eof-object? (read-char in)) (eof-object? (peek-char in)) (eof-object? 'x)))
(show "eof-object" (eof-object? (eof-object)))

;; reading lines
(define (read-all-lines port)
  (let loop ((acc '()))
    (let ((line (read-line port)))
      (if (eof-object? line) (reverse acc) (loop (cons line acc))))))
(show "read-line" (read-all-lines (open-input-string "first line\nsecond\n\nlast without newline")))
(show "read-line trailing newline" (read-all-lines (open-input-string "one\ntwo\n")))
(show "read-line empty" (read-all-lines (open-input-string "")))

;; reading datums
(define (read-all port)
  (let loop ((acc '()))
    (let ((d (read port)))
      (if (eof-object? d) (reverse acc) (loop (cons d acc))))))
(define datums (read-all (open-input-string
  "42 -7 3.5 sym \"a string\" #\\x #\\space (1 (2 3) . 4) #(1 #t #f) () ; a comment\n #t #f last")))
(show "read" datums)
(show "read count" (length datums))
(show "read quote" (equal? (read (open-input-string "'q")) (list 'quote 'q)))
(show "read quasiquote" (equal? (read (open-input-string "`(a ,b ,@c)"))
                                (list 'quasiquote (list 'a (list 'unquote 'b) (list 'unquote-splicing 'c)))))
(show "read nested" (equal? (read (open-input-string "(define (f x) (* x x))")) '(define (f x) (* x x))))
(show "read then read-char" (let ((p (open-input-string "(a b) c")))
                              (let* ((d (read p)) (ch (read-char p)) (d2 (read p)))
                                (list d ch d2))))
(show "read empty" (eof-object? (read (open-input-string "   ; only a comment\n"))))

;; string output ports
(define out (open-output-string))
(write 'sym out)
(write-char #\space out)
(write "str" out)
(write-char #\space out)
(display "str" out)
(write-string " and more" out)
(newline out)
(write (list 1 2.5 #\a) out)
(show "output string" (get-output-string out))
(show "get-output-string again" (string-length (get-output-string out)))
(define out2 (open-output-string))
(show "empty output string" (get-output-string out2))
(let loop ((i 0)) (when (< i 5) (write i out2) (loop (+ i 1))))
(show "written in a loop" (get-output-string out2))
(show "port predicates" (list (input-port? in) (output-port? in) (output-port? out) (input-port? out)
                              (port? out) (port? "not a port")))
;; writing to the current output port explicitly
(write-string "to current-output-port" (current-output-port))
(write-char #\! (current-output-port))
(newline (current-output-port))

;; files: a unique name under /tmp
(define (unique-name base)
  (let loop ((i 0))
    (let ((name (string-append base (number->string (current-jiffy)) "-" (number->string i) ".txt")))
      (if (file-exists? name) (loop (+ i 1)) name))))
(define path (unique-name "/tmp/rtslab-ports-test-"))
(show "exists before" (file-exists? path))
(call-with-output-file path
  (lambda (port)
    (write-string "hello file" port)
    (newline port)
    (write '(1 "two" #\3) port)
    (newline port)
    (display 3.25 port)
    (write-char #\newline port)))
(show "exists after" (file-exists? path))
(show "file lines" (call-with-input-file path read-all-lines))
(show "file datums" (call-with-input-file path
                      (lambda (port)
                        (read-line port)
                        (let* ((a (read port)) (b (read port)))
                          (list a b (eof-object? (read port)))))))
(show "file chars" (call-with-input-file path
                     (lambda (port)
                       (let loop ((n 0)) (if (eof-object? (read-char port)) n (loop (+ n 1)))))))
(delete-file path)
(show "exists after delete" (file-exists? path))
