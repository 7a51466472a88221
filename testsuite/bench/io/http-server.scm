;; http-server: an HTTP/1.1 request server (seed 004: a server's requests per second), a
;; thread per connection with keep-alive; the runner loads it with wrk on 127.0.0.1. Routes:
;; GET / a small fixed page; GET /alloc allocation-heavy work per request (a persistent
;; search tree of N keys built and walked: short-lived data, so the GC runs under load);
;; GET /stats the connections open and the requests served. Stresses the IO manager (a
;; thread blocked per idle connection), thread creation and the nursery.
;; quick: 127.0.0.1 0 200
;; norm: 127.0.0.1 0 500
;; slow: 127.0.0.1 0 500
;; load: / /alloc

;; Arguments: HOST PORT N [HEAD-TIMEOUT [MAX-CONNS [WRITE-TIMEOUT]]] (PORT 0: the OS picks one). A connection
;; whose request head (and body) has not all arrived HEAD-TIMEOUT seconds (default 60, nginx's
;; client_header_timeout) after the server began waiting for it, at its start or after its
;; previous answer, is closed without an answer: a client that opens connections and sends
;; nothing, or a byte now and then, cannot hold them for ever. At most MAX-CONNS connections
;; (default 4096, the worker_connections of the runner's nginx anchor) are open at once: past
;; it the server accepts no more until one closes, and new ones wait in the listen backlog,
;; as nginx's do. A connection whose answer has not moved a byte towards its client for
;; WRITE-TIMEOUT seconds (default 60, nginx's send_timeout: a client that sends requests and
;; never reads the answers, once the socket's buffers are full) is closed: without it such a
;; client held its connection, and its slot under MAX-CONNS, for ever (issue 45, item 1).
;; On standard error it prints
;; "http-server: listening on HOST PORT" once it accepts; SIGTERM or SIGINT stops it, and it
;; prints to standard output what it checked (the same at any load, for the runner to
;; compare) and exits 0, having written -s. A malformed request gets 400 (a Content-Length
;; that is not digits alone, or two that differ, among them), a request head
;; over 8 KiB gets 431, a body (Content-Length) over 1 MiB 413, Transfer-Encoding 501, a
;; method other than GET or HEAD 405, any other path 404; after a 4xx/5xx the connection is
;; closed. Every /alloc answer is compared with one computed at start-up by another
;; algorithm; a mismatch is a 500 and makes the final report fail.

(define args (command-line))
(define host (list-ref args 1))
(define port-arg (string->number (list-ref args 2)))
(define work-n (string->number (list-ref args 3)))
(define head-timeout (if (> (length args) 4) (string->number (list-ref args 4)) 60))
(define max-conns (if (> (length args) 5) (string->number (list-ref args 5)) 4096))
(define write-timeout (if (> (length args) 6) (string->number (list-ref args 6)) 60))
(unless (and (real? head-timeout) (> head-timeout 0))
  (error "http-server: HEAD-TIMEOUT must be a positive number of seconds" (list-ref args 4)))
(unless (and (exact-integer? max-conns) (> max-conns 0))
  (error "http-server: MAX-CONNS must be a positive integer" (list-ref args 5)))
(unless (and (real? write-timeout) (> write-timeout 0))
  (error "http-server: WRITE-TIMEOUT must be a positive number of seconds" (list-ref args 6)))

(define max-head 8192)
(define max-body 1048576)

;; --- the work of /alloc -------------------------------------------------------------------

;; N pseudo-random keys (a linear congruential generator, the same keys at every request)
(define (keys n)
  (let loop ((i 0) (x 12345) (acc '()))
    (if (= i n)
        acc
        (let ((x (modulo (+ (* x 1103515245) 12345) 2147483648)))
          (loop (+ i 1) x (cons (quotient x 65536) acc))))))

;; a persistent (path-copying) binary search tree: each insert allocates a new path
(define (tree-insert t k)
  (cond ((null? t) (vector '() k '()))
        ((< k (vector-ref t 1)) (vector (tree-insert (vector-ref t 0) k) (vector-ref t 1) (vector-ref t 2)))
        ((> k (vector-ref t 1)) (vector (vector-ref t 0) (vector-ref t 1) (tree-insert (vector-ref t 2) k)))
        (else t)))

(define (tree->list t acc)
  (if (null? t)
      acc
      (tree->list (vector-ref t 0) (cons (vector-ref t 1) (tree->list (vector-ref t 2) acc)))))

;; the summary of a sorted list of distinct keys: how many, and a position-weighted checksum
(define (summary sorted)
  (let loop ((l sorted) (i 1) (sum 0))
    (if (null? l)
        (list (- i 1) sum)
        (loop (cdr l) (+ i 1) (modulo (+ sum (* i (car l))) 1000000007)))))

(define (alloc-work n)
  (summary (tree->list (fold-left tree-insert '() (keys n)) '())))

;; the independent answer: the prelude's sort and delete-duplicates, once
(define expected-work (summary (delete-duplicates (sort (keys work-n) <))))

;; --- responses ------------------------------------------------------------------------------

(define crlf "\r\n")

(define (response status reason type body close?)
  (let ((b (string->utf8 body)))
    (bytevector-append
     (string->utf8
      (string-append "HTTP/1.1 " (number->string status) " " reason crlf
                     "Server: rtslab-http" crlf
                     "Content-Type: " type crlf
                     "Content-Length: " (number->string (bytevector-length b)) crlf
                     (if close? (string-append "Connection: close" crlf) "")
                     crlf))
     b)))

(define index-page
  (string-append "<!DOCTYPE html>\n<html><head><title>rtslab</title></head>\n"
                 "<body><h1>rtslab</h1><p>A request served by a Scheme thread.</p></body></html>\n"))

(define index-ok (response 200 "OK" "text/html" index-page #f))
(define index-ok-close (response 200 "OK" "text/html" index-page #t))

(define (error-response status reason)
  (response status reason "text/plain" (string-append (number->string status) " " reason "\n") #t))

;; head-only: the same headers, no body
(define (head-of bv)
  (let loop ((i 0))
    (if (and (= (bytevector-u8-ref bv i) 13) (= (bytevector-u8-ref bv (+ i 1)) 10)
             (= (bytevector-u8-ref bv (+ i 2)) 13) (= (bytevector-u8-ref bv (+ i 3)) 10))
        (bytevector-copy bv 0 (+ i 4))
        (loop (+ i 1)))))

;; --- counters -------------------------------------------------------------------------------

;; Counters every connection's thread updates: elements of one vector, changed and read with
;; vector-fetch-add! (one atomic step each). They were MVars, which every connection took in
;; turn at its start and end and per request: with thousands of threads runnable each
;; hand-off waited for its taker's turn in the run queue, the threads that had answered
;; queued to count themselves out, and under wrk with 16 connections the server held up to
;; 4,100 open (experiments/request-server, "Memory over many connections").
(define counters (make-vector 3 0))
(define open-conns 0)                     ; accepted and not yet closed
(define served 1)                         ; requests answered
(define bad-work 2)                       ; /alloc answers that differed
(define (bump! k d) (vector-fetch-add! counters k d))
(define (counter k) (vector-fetch-add! counters k 0))

;; --- reading a request head ------------------------------------------------------------------

;; Where the head in bv ends, looking from index from on: (content-end . after), the head's
;; bytes being [0, content-end) and the next request starting at after, or #f. A blank line
;; ends it; a line may end with CRLF or a bare LF (RFC 9112, 2.2: a recipient may take LF
;; alone as a line's end; before, a head ended by LF LF was never answered).
(define (head-end bv from)
  (let ((n (bytevector-length bv)))
    (let loop ((i (max 0 from)))
      (cond ((>= (+ i 1) n) #f)
            ((not (= (bytevector-u8-ref bv i) 10)) (loop (+ i 1)))
            ((= (bytevector-u8-ref bv (+ i 1)) 10) (cons i (+ i 2)))
            ((and (< (+ i 2) n) (= (bytevector-u8-ref bv (+ i 1)) 13)
                  (= (bytevector-u8-ref bv (+ i 2)) 10))
             (cons i (+ i 3)))
            (else (loop (+ i 1)))))))

;; Reads until a whole head has arrived. Returns (head-bytes . rest), 'eof (the peer closed
;; between requests), 'cut (it closed mid-request) or 'too-large.
(define (read-head c buf)
  (let loop ((buf buf) (from 0))
    (let ((end (head-end buf from)))
      (cond ((if end (> (cdr end) max-head) (> (bytevector-length buf) max-head)) 'too-large)
            (end (cons (bytevector-copy buf 0 (car end)) (bytevector-copy buf (cdr end))))
            (else
             (let ((more (read-bytevector 4096 c)))
               (if (eof-object? more)
                   (if (= 0 (bytevector-length buf)) 'eof 'cut)
                   (loop (bytevector-append buf more) (- (bytevector-length buf) 3)))))))))

;; Reads and drops a body of len bytes, of which rest holds the first; returns what follows.
(define (skip-body c rest len)
  (let loop ((rest rest) (len len))
    (cond ((<= len (bytevector-length rest)) (bytevector-copy rest len))
          (else
           (let ((more (read-bytevector (min 65536 (- len (bytevector-length rest))) c)))
             (if (eof-object? more)
                 #f
                 (loop more (- len (bytevector-length rest)))))))))

(define (trim-cr s)
  (let ((n (string-length s)))
    (if (and (> n 0) (char=? (string-ref s (- n 1)) #\return)) (substring s 0 (- n 1)) s)))

(define (trim-spaces s)
  (let loop ((i 0) (j (string-length s)))
    (cond ((and (< i j) (memv (string-ref s i) '(#\space #\tab))) (loop (+ i 1) j))
          ((and (< i j) (memv (string-ref s (- j 1)) '(#\space #\tab))) (loop i (- j 1)))
          (else (substring s i j)))))

(define (visible-ascii? ch) (< 32 (char->integer ch) 127))

;; A header value's characters (RFC 9110, 5.5): tab, space, visible ASCII, and characters
;; beyond ASCII that were valid UTF-8 (malformed bytes decode to U+FFFD); not NUL, not other
;; control characters.
(define (field-char? ch)
  (let ((i (char->integer ch)))
    (or (= i 9) (<= 32 i 126) (and (> i 127) (not (= i #xFFFD))))))

(define (token-char? ch)
  (or (char-alphabetic? ch) (char-numeric? ch) (memv ch (string->list "!#$%&'*+-.^_`|~"))))

;; A parsed head: (method target version headers), headers an alist of lower-cased names;
;; #f when malformed.
(define (parse-head bytes)
  (let* ((text (guard (e (#t #f)) (utf8->string bytes)))
         (lines (and text (map trim-cr (string-split text #\newline))))
         (parts (and lines (string-split (car lines) #\space))))
    (and parts (= (length parts) 3)
         (member (list-ref parts 2) '("HTTP/1.1" "HTTP/1.0"))
         (> (string-length (car parts)) 0)
         (every token-char? (string->list (car parts)))
         (> (string-length (cadr parts)) 0)
         (every visible-ascii? (string->list (cadr parts)))
         (let loop ((ls (cdr lines)) (hs '()))
           (if (null? ls)
               (list (car parts) (cadr parts) (list-ref parts 2) hs)
               (let* ((l (car ls)) (colon (string-contains l ":")))
                 (and colon (> colon 0)
                      (every token-char? (string->list (substring l 0 colon)))
                      (every field-char? (string->list (substring l (+ colon 1) (string-length l))))
                      (loop (cdr ls)
                            (cons (cons (string-downcase (substring l 0 colon))
                                        (trim-spaces (substring l (+ colon 1) (string-length l))))
                                  hs)))))))))

(define (header hs name) (let ((p (assoc name hs))) (and p (cdr p))))

;; The body's length (RFC 9112, 6.3): 0 without Content-Length; #f, a malformed request, unless
;; it is ASCII digits alone (not Scheme number syntax: #x5, +5, 1e3) and every Content-Length
;; header says the same (two that differ are how a request is smuggled past a proxy).
(define (content-length hs)
  (let ((vals (filter-map (lambda (h) (and (string=? (car h) "content-length") (cdr h))) hs)))
    (cond ((null? vals) 0)
          ((not (every (lambda (v) (string=? v (car vals))) vals)) #f)
          ((and (> (string-length (car vals)) 0)
                (every (lambda (ch) (char<=? #\0 ch #\9)) (string->list (car vals))))
           (string->number (car vals)))
          (else #f))))

;; --- a connection --------------------------------------------------------------------------

(define (send c bv)
  (write-bytevector bv c)
  (flush-output-port c))

;; The path of a request target: an absolute-form target (RFC 9112, 3.2.2: "http://host/x",
;; what a client sends to a proxy, which a server must accept) names its path after the
;; authority (before: 404); an origin-form one ("/x") is its path.
(define (target-path target)
  (let ((scheme-end (string-contains target "://")))
    (if (and scheme-end (member (string-downcase (substring target 0 scheme-end)) '("http" "https")))
        (let* ((rest (substring target (+ scheme-end 3) (string-length target)))
               (slash (string-contains rest "/")))
          (if slash (substring rest slash (string-length rest)) "/"))
        target)))

;; The connection options of a request (RFC 9110, 7.6.1): every Connection header's value is
;; a comma-separated list of case-insensitive tokens ("TE, close"), and several Connection
;; headers make one list. Before, the whole value had to be "close", so "TE, close" kept the
;; connection open until the head timeout.
(define (connection-options hs)
  (let loop ((hs hs) (acc '()))
    (cond ((null? hs) acc)
          ((string=? (caar hs) "connection")
           (loop (cdr hs)
                 (append (map (lambda (t) (string-downcase (trim-spaces t)))
                              (string-split (cdar hs) #\,))
                         acc)))
          (else (loop (cdr hs) acc)))))

;; The response to one parsed request, and whether to close after it.
(define (answer method raw-target version hs)
  (let* ((opts (connection-options hs))
         (close? (if (member "close" opts)
                     #t
                     (and (string=? version "HTTP/1.0") (not (member "keep-alive" opts)))))
         (head? (string=? method "HEAD"))
         (target (target-path raw-target)))
    (define (reply bv) (values (if head? (head-of bv) bv) close?))
    (cond ((not (member method '("GET" "HEAD")))
           (values (error-response 405 "Method Not Allowed") #t))
          ((string=? target "/")
           (reply (if close? index-ok-close index-ok)))
          ((string=? target "/alloc")
           (let ((got (alloc-work work-n)))
             (if (equal? got expected-work)
                 (reply (response 200 "OK" "text/plain"
                                  (string-append "keys " (number->string (car got))
                                                 " checksum " (number->string (cadr got)) "\n")
                                  close?))
                 (begin (bump! bad-work 1)
                        (values (error-response 500 "Internal Server Error") #t)))))
          ((string=? target "/stats")
           (reply (response 200 "OK" "text/plain"
                            (string-append "open " (number->string (counter open-conns))
                                           " served " (number->string (counter served)) "\n")
                            close?)))
          (else (values (error-response 404 "Not Found") #t)))))

(define (serve c w)
  (let loop ((buf (bytevector)))
    (await-request! w)
    (let ((r (read-head c buf)))
      (cond ((eq? r 'too-large) (send c (error-response 431 "Request Header Fields Too Large")))
            ((symbol? r) #f)                                 ; the peer went away
            (else
             (let ((req (parse-head (car r))))
               (if (not req)
                   (send c (error-response 400 "Bad Request"))
                   (let* ((hs (list-ref req 3))
                          (len (content-length hs)))
                     (cond ((header hs "transfer-encoding")
                            (send c (error-response 501 "Not Implemented")))
                           ((not len)
                            (send c (error-response 400 "Bad Request")))
                           ((> len max-body)
                            (send c (error-response 413 "Content Too Large")))
                           (else
                            (let ((next (skip-body c (cdr r) len)))
                              (request-arrived! w)
                              (when next
                                (call-with-values
                                    (lambda () (answer (car req) (cadr req) (list-ref req 2) hs))
                                  (lambda (bv close?)
                                    (send c bv)
                                    (bump! served 1)
                                    (unless close? (loop next))))))))))))))))

;; --- the head timeout ------------------------------------------------------------------------

;; Each open connection has an MVar, its watch, holding the pair (deadline . port), the
;; deadline being the time by which the request waited for must have arrived, or #f while
;; none is awaited (the server is answering). Only the connection's own thread changes it;
;; the reaper reads it from its own thread (so an MVar, not a vector slot: that was a data
;; race). The reaper thread looks at every open connection a few times per timeout and
;; closes those past their deadline; a connection's handler, blocked in a read, then reads
;; the end of the stream. The watches are MAX-CONNS MVars made at start, the slots of a table
;; (the admission below keeps no more connections open); a free slot's MVar holds #f. The
;; acceptor alone fills a slot, looking on from the last it filled for a free one, and passes
;; it to the connection's thread, which empties it as the connection closes: what the
;; connection leaves behind is unreachable at once, and no connection waits on another's
;; lock. Earlier versions kept closed connections in the reaper's list until its next look,
;; once a second: with their ports, 12,264 closed ports waited for a major GC after 68k
;; connections in 3 s (Note [Finalizers]); with a new watch MVar each, every connection of
;; the last second outlived many minor GCs and was promoted, filling the old generation with
;; about 100 bytes per connection (issue 33's soak). A free list of slots under one MVar,
;; taken at open and at close, cost a third of the requests per second.
(define slots
  (let ((v (make-vector max-conns #f)))
    (do ((i 0 (+ i 1))) ((= i max-conns) v)
      (vector-set! v i (make-mvar #f)))))
(define next-slot 0)                      ; where the acceptor looks first; only it uses it
(define (watch! c)                        ; the acceptor's: a free slot, filled, for c
  (let look ((i next-slot))
    (let ((w (vector-ref slots i)))
      (if (mvar-read w)
          (look (modulo (+ i 1) max-conns))
          (begin (mvar-take! w)
                 (mvar-put! w (cons #f c))
                 (set! next-slot (modulo (+ i 1) max-conns))
                 w)))))
(define (unwatch! w) (mvar-take! w) (mvar-put! w #f))
(define (set-deadline! w v) (mvar-put! w (cons v (cdr (mvar-take! w)))))
(define (await-request! w) (set-deadline! w (+ (current-second) head-timeout)))
(define (request-arrived! w) (set-deadline! w #f))
(define (reaper)
  (sleep (min 1 (/ head-timeout 4)))
  (let ((now (current-second)))
    (do ((i 0 (+ i 1))) ((= i max-conns))
      (let ((e (mvar-read (vector-ref slots i))))
        (when (and e (car e) (> now (car e)))
          (guard (e (#t #f)) (close-port (cdr e)))))))
  (reaper))
(fork reaper)

(define (connection c w)
  (guard (e (#t #f))                    ; reset, broken pipe, closed by the reaper, a write
    (tcp-nodelay! c #t)                 ; timed out (ETIMEDOUT): gone
    (port-write-timeout! c write-timeout)
    (serve c w))
  (unwatch! w)                          ; the reaper forgets it, and the port
  (guard (e (#t #f)) (close-port c))
  (release!))

;; --- admission -----------------------------------------------------------------------------

;; open-conns counts the connections accepted and not yet closed (the acceptor counts one in
;; as it accepts it, its thread counts it out as it ends). Past max-conns the acceptor waits
;; for slot-freed, which a closing connection that finds the count at or past the bound fills
;; (if it is empty) after counting itself out; a signal left from a close the acceptor did not
;; wait for only makes it look again. A bound is what keeps a server's memory within reach
;; whatever its clients do; nginx's worker_connections is one.
(define slot-freed (make-mvar))
(define (admit!)
  (let wait ()
    (when (>= (counter open-conns) max-conns)
      (mvar-take! slot-freed)
      (wait))))
(define (release!)
  (when (>= (bump! open-conns -1) max-conns)
    (mvar-try-put! slot-freed #t)))

;; --- the listener ------------------------------------------------------------------------------

(define listener (tcp-listen host port-arg 1024))

(define (report)
  (display "http-server: stopped; /alloc answers checked against ")
  (display expected-work)
  (display (if (= 0 (counter bad-work)) ", all equal" ", SOME DIFFERED"))
  (newline))

(let ((why (guard (e ((error-object? e) (error-object-message e)))
             (write-string (string-append "http-server: listening on " host " "
                                          (number->string (tcp-port-number listener)) "\n")
                           (current-error-port))
             (flush-output-port (current-error-port))
             (let accept ()
               (admit!)
               (let ((c (guard (e ((and (error-object? e)
                                        (string-contains (error-object-message e) "EMFILE"))
                                   (sleep 0.01) #f))
                          (tcp-accept listener))))
                 (when c
                   (bump! open-conns 1)
                   (let ((w (watch! c)))
                     (fork (lambda () (connection c w)))))
                 (accept))))))
  (close-port listener)
  (report)
  (if (and (member why '("terminated (SIGTERM)" "interrupted (SIGINT)")) (= 0 (counter bad-work)))
      (exit 0)
      (begin (display why (current-error-port)) (newline (current-error-port)) (exit 1))))
