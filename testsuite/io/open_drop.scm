;; Ports dropped unclosed put pressure on the GC (Note [External resources] in
;; runtime/sm/finalize.h; issue 45, item 7): N input ports on /dev/null are opened and dropped
;; (argument 1). LIMIT (argument 2) is the RLIMIT_NOFILE the test set (open_drop.py). After
;; every open the program looks whether descriptor number LIMIT/2, and LIMIT/8, is open: as
;; a new descriptor takes the lowest free number, one of them is open just when that many
;; descriptors are, and the most are open just after an open. Nothing else allocates much,
;; so GCs come from the ports alone. With argument 3 "wait", the program says "ready" and
;; reads a line first (the test lowers its descriptor limit meanwhile). Before the fix, at
;; -A8m, about the 1,014th open failed with "Too many open files" under a limit of 1024.
(define n (string->number (list-ref (command-line) 1)))
(define limit (string->number (list-ref (command-line) 2)))
(define (fd-path k) (string-append "/proc/self/fd/" (number->string k)))
(define half (fd-path (quotient limit 2)))
(define eighth (fd-path (quotient limit 8)))
(when (and (> (length (command-line)) 3) (equal? (list-ref (command-line) 3) "wait"))
  (display "ready") (newline) (flush-output-port)
  (read-line))
(define reached-half #f)
(define reached-eighth #f)
(let loop ((i 0))
  (when (< i n)
    (open-input-file "/dev/null")
    (if (file-exists? eighth) (set! reached-eighth #t))
    (if (file-exists? half) (set! reached-half #t))
    (loop (+ i 1))))
(display (list 'opened n 'limit limit)) (newline)
(display (list 'most-fds-below-half-the-limit (not reached-half))) (newline)
(display (list 'most-fds-below-an-eighth-of-the-limit (not reached-eighth))) (newline)
