;; A string with a NUL character names no file (issue 45, item 4): every procedure that hands a
;; string to a C interface that ends it at a NUL refuses it with an error, where before it
;; acted on the name cut there: (open-output-file "victim\x0;.bak") truncated victim to 0
;; bytes, delete-file deleted it, file-exists? said #t. Argument: a directory to work in.
(define dir (list-ref (command-line) 1))
(define victim (string-append dir "/victim"))
(define evil (string-append victim (string #\x0) ".bak"))
(call-with-output-file victim (lambda (p) (write-string "precious" p)))
(define (outcome thunk)
  (guard (e ((error-object? e) (error-object-message e)))
    (thunk)
    'no-error))
(for-each
 (lambda (name+thunk)
   (display (list (car name+thunk) (outcome (cdr name+thunk))))
   (newline))
 (list (cons 'open-output-file (lambda () (open-output-file evil)))
       (cons 'call-with-output-file (lambda () (call-with-output-file evil (lambda (p) #t))))
       (cons 'open-input-file (lambda () (open-input-file evil)))
       (cons 'call-with-input-file (lambda () (call-with-input-file evil read-line)))
       (cons 'file-exists? (lambda () (file-exists? evil)))
       (cons 'delete-file (lambda () (delete-file evil)))
       (cons 'get-environment-variable (lambda () (get-environment-variable "PATH\x0;X")))
       (cons 'tcp-listen (lambda () (tcp-listen "127.0.0.1\x0;.example" 0)))
       (cons 'tcp-connect (lambda () (tcp-connect "127.0.0.1\x0;.example" 9)))))
(display (list 'victim (file-exists? victim) (call-with-input-file victim read-line)))
(newline)
(delete-file victim)
