;; An uncaught error in a forked thread is printed and ends that thread only: joining it
;; returns #f and the main thread carries on; the program exits 0.
(define t (fork (lambda () (car '()))))
(define r (thread-join t))
(display "joined: ")
(write r)
(newline)
(display "main continues")
(newline)
