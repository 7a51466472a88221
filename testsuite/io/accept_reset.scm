;; tcp-accept of a connection its peer has already reset (issue 45, item 3); accept_reset.py
;; drives it. Prints the listener's port, waits for a line on standard input (the peer has
;; connected and reset by then), accepts, and prints the error that a read of the connection
;; raises, which names the port: "<tcp 127.0.0.1:PORT>", its name made from the address the
;; accept gave. Before, it was made from getpeername's, which fails (ENOTCONN) for a reset
;; connection, leaving the sockaddr uninitialised: "<tcp ?:0>", or garbage.
(define l (tcp-listen "127.0.0.1" 0))
(display (tcp-port-number l))
(newline)
(flush-output-port)
(read-line)
(define c (tcp-accept l))
(define (message thunk)
  (guard (e ((error-object? e) (error-object-message e))) (thunk) #f))
(display
 (or (message (lambda () (if (eof-object? (read-line c)) (error "read-line: eof:" c))))
     "no error"))
(newline)
(display (or (message (lambda () (write-string "x" c) (flush-output-port c))) "no error"))
(newline)
(close-port c)
(close-port l)
