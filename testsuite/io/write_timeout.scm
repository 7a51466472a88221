;; port-write-timeout! (issue 45, item 1; Note [Bounded waits] in runtime/io/iomgr.c): a write
;; to a socket whose peer never reads fails with ETIMEDOUT once it has moved nothing for the
;; timeout, where it waited for ever; a peer that reads gets everything; a file output port
;; (a FIFO nobody reads) the same, and the program's exit, which writes out what ports still
;; buffer, is bounded by it too (before: it waited for ever). Argument: a FIFO's path.
(define fifo (list-ref (command-line) 1))
(define l (tcp-listen "127.0.0.1" 0))
(define (message thunk)
  (guard (e ((error-object? e) (error-object-message e))) (thunk) 'no-error))
(define (errno-of m)                       ; "...: Connection timed out (ETIMEDOUT)" -> ETIMEDOUT
  (let ((i (and (string? m) (string-contains m " (E"))))
    (if i (substring m (+ i 2) (- (string-length m) 1)) m)))
(define chunk (make-bytevector 65536 65))

;; a peer that never reads: the writes fill the buffers, then one times out
(define silent (tcp-connect "127.0.0.1" (tcp-port-number l)))
(define c (tcp-accept l))
(port-write-timeout! c 0.3)
(display (list 'silent-peer
               (errno-of (message (lambda ()
                                      (let loop ()
                                        (write-bytevector chunk c)
                                        (flush-output-port c)
                                        (loop)))))))
(newline)

;; a peer that reads everything, slowly at first: no timeout (each write moves bytes)
(define reader-side (tcp-connect "127.0.0.1" (tcp-port-number l)))
(define d (tcp-accept l))
(port-write-timeout! d 0.3)
(define total (* 64 65536))
(define got
  (fork (lambda ()
          (sleep 0.1)
          (let loop ((n 0))
            (let ((b (read-bytevector 65536 reader-side)))
              (if (eof-object? b) n (loop (+ n (bytevector-length b)))))))))
(display (list 'reading-peer
               (message (lambda ()
                          (do ((i 0 (+ i 1))) ((= i 64)) (write-bytevector chunk d))
                          (close-port d)))
               (= (thread-join got) total)))
(newline)

;; errors of the procedure itself
(display (list 'bad (message (lambda () (port-write-timeout! c 0)))
               (message (lambda () (port-write-timeout! (open-input-string "x") 1)))
               (message (lambda () (port-write-timeout! c #f)))
               (message (lambda () (port-write-timeout! c 0.3)))))
(newline)

;; a FIFO that its one reader never reads, through the IO manager as a file port
(define keep (open-input-file fifo))
(define f (open-output-file fifo))
(port-write-timeout! f 0.3)
(display (list 'fifo (errno-of (message (lambda ()
                                          (let loop ()
                                            (write-bytevector chunk f)
                                            (flush-output-port f)
                                            (loop)))))))
(newline)
;; left buffered at exit (under 64 KiB: not written yet): the exit's flush gives up after the
;; timeout, with the pipe still full
(write-string (make-string 60000 #\z) f)
(display "exiting")
(newline)
