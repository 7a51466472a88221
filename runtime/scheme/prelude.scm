;;; The prelude: the part of the library written in Scheme. Compiled at start-up, before the
;;; program. Names starting with % are internal: the expander's output calls them, so a
;;; program that redefines `list` or `memv` does not break its own quasiquotes and cases.
;;; The prelude's own references to globals go to private copies (compile.c, Note [System
;;; globals]), so a program that defines its own `reverse` or `fold` does not break `map`
;;; or `reduce`.

;;; --- aliases for the expander ------------------------------------------------------------

(define %cons cons)
(define %list list)
(define %append append)
(define %list->vector list->vector)
(define %memv memv)
(define %apply apply)

;;; --- multiple values ------------------------------------------------------------------------

(define (call-with-values producer consumer)
  (let ((v (producer)))
    (if (%values? v)
        (apply consumer (%values->list v))
        (consumer v))))
(define %call-with-values call-with-values)

;;; --- dynamic-wind and escape-only continuations ---------------------------------------------
;;; The winders list (per thread) holds (handlers . after) pairs, innermost first: the
;;; exception handlers in force at the dynamic-wind call, and its after thunk. An escape
;;; runs the `after` thunks of the entries it leaves, innermost first, each with the winders
;;; already set to what is outside it and with the handlers of its dynamic-wind call (R7RS
;;; 6.10: the after thunk runs in the dynamic environment of that call, so an exception it
;;; raises while a guard unwinds reaches that guard, and replaces the one being handled;
;;; before, it ran with the handlers of the raise that led there, outside the guard). Then
;;; the escape restores the exception handlers in force when the continuation was captured.

(define (dynamic-wind before thunk after)
  (before)
  (let ((w (%winders)))
    (%set-winders! (cons (cons (%handlers) after) w))
    (let ((v (thunk)))
      (%set-winders! w)
      (after)
      v)))

(define (%unwind-to target)
  (let loop ()
    (let ((w (%winders)))
      (if (not (eq? w target))
          (if (null? w)
              (raise (%make-error %outside-extent '()))
              (begin (%set-winders! (cdr w))
                     (%set-handlers! (caar w))
                     ((cdar w))
                     (loop)))))))

;;; An escape to a continuation outside its extent (its call/cc has returned, it is another
;;; thread's, or it was taken inside a dynamic-wind that has been left) is an error raised
;;; where the continuation was called, before anything is unwound, so the handlers there
;;; (a guard around the call) see it. (Before: the escape first restored the handlers of the
;;; call/cc, and %throw's error then went past the guard.)
(define %outside-extent "a continuation was invoked outside its extent (call/cc is escape-only)")
(define (%check-extent k winders)
  (if (not (and (%continuation-live? k)
                (let within ((w (%winders)))
                  (or (eq? w winders) (and (pair? w) (within (cdr w)))))))
      (raise (%make-error %outside-extent '()))))

(define (call-with-current-continuation f)
  (let ((winders (%winders))
        (handlers (%handlers)))
    (%call/cc
     (lambda (k)
       (f (lambda vals
            (%check-extent k winders)
            (%unwind-to winders)
            (%set-handlers! handlers)
            (%throw k (if (and (pair? vals) (null? (cdr vals)))
                          (car vals)
                          (apply values vals)))))))))
(define call/cc call-with-current-continuation)

;;; --- exceptions -----------------------------------------------------------------------------
;;; The handlers list (per thread): the innermost first. A handler runs with the outer
;;; handlers installed. An uncaught exception kills the thread with a report.

(define (with-exception-handler handler thunk)
  (let ((hs (%handlers)))
    (%set-handlers! (cons handler hs))
    (let ((v (thunk)))
      (%set-handlers! hs)
      v)))
(define %with-exception-handler with-exception-handler)

(define (raise obj)
  (let ((hs (%handlers)))
    (if (null? hs)
        (%uncaught obj)
        (begin
          (%set-handlers! (cdr hs))
          ((car hs) obj)
          (raise (%make-error "handler returned from a non-continuable raise:" (list obj)))))))

(define (raise-continuable obj)
  (let ((hs (%handlers)))
    (if (null? hs)
        (%uncaught obj)
        (begin
          (%set-handlers! (cdr hs))
          (let ((v ((car hs) obj)))
            (%set-handlers! hs)
            v)))))

(define (error message . irritants)
  (raise (%make-error message irritants)))

;;; --- lists -------------------------------------------------------------------------------------

(define (%cars lists)
  (if (null? lists) '()
      (if (pair? (car lists)) (cons (caar lists) (%cars (cdr lists))) #f)))
(define (%cdrs lists)
  (if (null? lists) '() (cons (cdar lists) (%cdrs (cdr lists)))))
(define (%all-pairs? lists)
  (or (null? lists) (and (pair? (car lists)) (%all-pairs? (cdr lists)))))

; Where map, for-each or fold stop: every list must end in (); one that ends otherwise
; (5, or (1 . 5)) is an error, never the same as the empty list. With several lists, the
; shortest decides, as R7RS says.
(define (%check-list-ends who ends lists)
  (%for-each2 (lambda (end list)
               (if (not (or (null? end) (pair? end)))
                   (error (string-append who ": expected a list, got") list)))
             ends lists))
(define (%for-each2 f a b)
  (if (pair? a) (begin (f (car a) (car b)) (%for-each2 f (cdr a) (cdr b)))))

; The one-list walkers that build or count (map, for-each, filter, filter-map, partition,
; fold, count) first check that the list is not circular, as length, append, memv and assq
; do: a C walk of the spine, cheap beside the calls of f (before: map and filter on a
; circular list allocated until the heap was gone, for-each looped for ever).
(define (map f l . ls)
  (if (null? ls)
      (let loop ((rest (begin (%check-not-circular "map" l) l)) (acc '()))
        (cond ((pair? rest) (loop (cdr rest) (cons (f (car rest)) acc)))
              ((null? rest) (reverse acc))
              (else (%check-list-ends "map" (list rest) (list l)))))
      (let loop ((rests (cons l ls)) (acc '()))
        (if (%all-pairs? rests)
            (loop (%cdrs rests) (cons (apply f (%cars rests)) acc))
            (begin (%check-list-ends "map" rests (cons l ls)) (reverse acc))))))

(define (for-each f l . ls)
  (if (null? ls)
      (let loop ((rest (begin (%check-not-circular "for-each" l) l)))
        (cond ((pair? rest) (f (car rest)) (loop (cdr rest)))
              ((not (null? rest)) (%check-list-ends "for-each" (list rest) (list l)))))
      (let loop ((rests (cons l ls)))
        (if (%all-pairs? rests)
            (begin (apply f (%cars rests)) (loop (%cdrs rests)))
            (%check-list-ends "for-each" rests (cons l ls)))))
  (if #f #f))

(define (filter pred l)
  (%check-not-circular "filter" l)
  (let loop ((l l) (acc '()))
    (cond ((null? l) (reverse acc))
          ((pred (car l)) (loop (cdr l) (cons (car l) acc)))
          (else (loop (cdr l) acc)))))
(define (remove pred l) (filter (lambda (x) (not (pred x))) l))
(define (partition pred l)
  (%check-not-circular "partition" l)
  (let loop ((l l) (in '()) (out '()))
    (cond ((null? l) (values (reverse in) (reverse out)))
          ((pred (car l)) (loop (cdr l) (cons (car l) in) out))
          (else (loop (cdr l) in (cons (car l) out))))))

(define (fold kons knil l . ls)
  (if (null? ls)
      (let loop ((l (begin (%check-not-circular "fold" l) l)) (acc knil))
        (if (pair? l) (loop (cdr l) (kons (car l) acc)) acc))
      (let loop ((ls (cons l ls)) (acc knil))
        (if (%all-pairs? ls)
            (loop (%cdrs ls) (apply kons (append (%cars ls) (list acc))))
            acc))))
(define (fold-left f acc l)
  (if (pair? l) (fold-left f (f acc (car l)) (cdr l)) acc))
(define (fold-right f acc l)
  (let loop ((l (reverse l)) (acc acc))
    (if (pair? l) (loop (cdr l) (f (car l) acc)) acc)))
(define (reduce f ridentity l)
  (if (null? l) ridentity (fold f (car l) (cdr l))))
(define (delete x l . eq)
  (let ((same? (if (pair? eq) (car eq) equal?)))
    (filter (lambda (y) (not (same? x y))) l)))
(define (delete-duplicates l . eq)
  (let ((same? (if (pair? eq) (car eq) equal?)))
    (let loop ((l l) (acc '()))
      (cond ((null? l) (reverse acc))
            ((let mem ((a acc)) (and (pair? a) (or (same? (car a) (car l)) (mem (cdr a)))))
             (loop (cdr l) acc))
            (else (loop (cdr l) (cons (car l) acc)))))))
(define (find pred l)
  (cond ((null? l) #f) ((pred (car l)) (car l)) (else (find pred (cdr l)))))
(define (find-tail pred l)
  (cond ((null? l) #f) ((pred (car l)) l) (else (find-tail pred (cdr l)))))
;; any, every and count take one list or several, as SRFI 1's: with several, pred gets an
;; element of each, and the shortest list decides where they stop. any gives the first true
;; value of pred, every the last (#t when a list is empty), and the last call of pred is a
;; tail call in both.
(define (any pred l . ls)
  (if (null? ls)
      (and (pair? l)
           (let loop ((l l))
             (if (pair? (cdr l))
                 (or (pred (car l)) (loop (cdr l)))
                 (pred (car l)))))
      (let loop ((rests (cons l ls)))
        (and (%all-pairs? rests)
             (let ((next (%cdrs rests)))
               (if (%all-pairs? next)
                   (or (apply pred (%cars rests)) (loop next))
                   (apply pred (%cars rests))))))))
(define (every pred l . ls)
  (if (null? ls)
      (or (null? l)
          (let loop ((l l))
            (if (null? (cdr l))
                (pred (car l))
                (and (pred (car l)) (loop (cdr l))))))
      (let loop ((rests (cons l ls)))
        (or (not (%all-pairs? rests))
            (let ((next (%cdrs rests)))
              (if (%all-pairs? next)
                  (and (apply pred (%cars rests)) (loop next))
                  (apply pred (%cars rests))))))))
(define (count pred l . ls)
  (if (null? ls)
      (begin
        (%check-not-circular "count" l)
        (let loop ((l l) (n 0)) (if (pair? l) (loop (cdr l) (if (pred (car l)) (+ n 1) n)) n)))
      (let loop ((rests (cons l ls)) (n 0))
        (if (%all-pairs? rests)
            (loop (%cdrs rests) (if (apply pred (%cars rests)) (+ n 1) n))
            n))))
(define (filter-map f l)
  (%check-not-circular "filter-map" l)
  (let loop ((l l) (acc '()))
    (if (pair? l)
        (let ((v (f (car l)))) (loop (cdr l) (if v (cons v acc) acc)))
        (reverse acc))))
(define (append-map f l) (apply append (map f l)))
(define (iota n . rest)
  (let ((start (if (pair? rest) (car rest) 0))
        (step (if (and (pair? rest) (pair? (cdr rest))) (cadr rest) 1)))
    (let loop ((i (- n 1)) (acc '()))
      (if (< i 0) acc (loop (- i 1) (cons (+ start (* i step)) acc))))))
(define (list-tabulate n f)
  (let loop ((i (- n 1)) (acc '()))
    (if (< i 0) acc (loop (- i 1) (cons (f i) acc)))))
(define (list-index pred l)
  (let loop ((l l) (i 0))
    (cond ((null? l) #f) ((pred (car l)) i) (else (loop (cdr l) (+ i 1))))))
(define (last l) (car (last-pair l)))

(define member
  (let ((member2 member))
    (lambda (x l . pred)
      (if (null? pred)
          (member2 x l)
          (let ((same? (car pred)))
            (let loop ((l l))
              (cond ((null? l) #f) ((same? x (car l)) l) (else (loop (cdr l))))))))))
(define assoc
  (let ((assoc2 assoc))
    (lambda (x l . pred)
      (if (null? pred)
          (assoc2 x l)
          (let ((same? (car pred)))
            (let loop ((l l))
              (cond ((null? l) #f) ((same? x (caar l)) (car l)) (else (loop (cdr l))))))))))

;;; Stable merge sort; (sort list less?) as in Guile and Chez, plus SRFI 132's list-sort.
(define (sort seq less?)
  (define (merge a b)
    (let loop ((a a) (b b) (acc '()))
      (cond ((null? a) (append (reverse acc) b))
            ((null? b) (append (reverse acc) a))
            ((less? (car b) (car a)) (loop a (cdr b) (cons (car b) acc)))
            (else (loop (cdr a) b (cons (car a) acc))))))
  (define (msort l n)
    (if (<= n 1)
        (if (= n 1) (list (car l)) '())
        (let ((h (quotient n 2)))
          (merge (msort l h) (msort (list-tail l h) (- n h))))))
  (if (vector? seq)
      (list->vector (msort (vector->list seq) (vector-length seq)))
      (msort seq (length seq))))
(define (list-sort less? l) (sort l less?))

;;; --- vectors and strings -----------------------------------------------------------------------

(define (vector-map f v . vs)
  (if (null? vs)
      (let* ((n (vector-length v)) (r (make-vector n)))
        (do ((i 0 (+ i 1))) ((= i n) r)
          (vector-set! r i (f (vector-ref v i)))))
      (list->vector (apply map f (vector->list v) (map vector->list vs)))))
(define (vector-for-each f v . vs)
  (if (null? vs)
      (let ((n (vector-length v)))
        (do ((i 0 (+ i 1))) ((= i n))
          (f (vector-ref v i))))
      (apply for-each f (vector->list v) (map vector->list vs))))
(define (string-map f s . ss)
  (list->string (apply map f (string->list s) (map string->list ss))))
(define (string-for-each f s . ss)
  (apply for-each f (string->list s) (map string->list ss)))
(define (vector-binary-search v x cmp)
  (let loop ((lo 0) (hi (- (vector-length v) 1)))
    (if (> lo hi) #f
        (let* ((mid (quotient (+ lo hi) 2)) (c (cmp (vector-ref v mid) x)))
          (cond ((= c 0) mid) ((< c 0) (loop (+ mid 1) hi)) (else (loop lo (- mid 1))))))))

;;; --- promises ------------------------------------------------------------------------------------
;;; R7RS's reference implementation: a promise holds a box (done? . value-or-thunk) that
;;; delay-force chains share, so forcing a chain runs in constant space.

(define-record-type promise (%promise box) promise? (box %promise-box %set-promise-box!))
(define (%make-lazy-promise thunk) (%promise (cons #f thunk)))
(define (%make-eager-promise v) (%promise (cons #t v)))
(define (make-promise v) (if (promise? v) v (%make-eager-promise v)))
;; The thunk of a lazy promise returns another promise (delay wraps its value in an eager
;; one); forcing adopts the state of that promise and shares its box with it.
(define (force p)
  (if (not (promise? p))
      p
      (let ((box (%promise-box p)))
        (if (car box)
            (cdr box)
            (let ((p2 (make-promise ((cdr box)))))
              (let ((box (%promise-box p)))
                (if (not (car box))
                    (let ((box2 (%promise-box p2)))
                      (set-car! box (car box2))
                      (set-cdr! box (cdr box2))
                      (%set-promise-box! p2 box))))
              (force p))))))

;;; --- parameters ------------------------------------------------------------------------------------

(define (make-parameter value . conv)
  (let* ((convert (if (pair? conv) (car conv) (lambda (x) x)))
         (cell (list (convert value))))
    (lambda args
      (cond ((null? args) (car cell))
            ((eq? (car args) '%param-set!) (set-car! cell (cadr args)))
            ((eq? (car args) '%param-convert) (convert (cadr args)))
            (else (set-car! cell (car args)))))))
(define (%parameterize params values thunk)
  (let* ((new (map (lambda (p v) (p '%param-convert v)) params values))
         (old (map (lambda (p) (p)) params)))
    (dynamic-wind
     (lambda () (for-each (lambda (p v) (p '%param-set! v)) params new))
     thunk
     (lambda () (for-each (lambda (p v) (p '%param-set! v)) params old)))))

;;; --- ports ----------------------------------------------------------------------------------------

;;; --- ports through the IO manager (Note [Ports through the IO manager] in port.c) --------------
;;; The primitives that may wait for the IO manager answer %io-again after blocking (or while
;;; another thread's op is in flight); they are called again until they answer for real.
;;; read-char, peek-char, read-line, read, read-string, flush-output-port, close-port,
;;; close-output-port and tcp-accept are those primitives, which the VM calls again (Note
;;; [IO primitives called again] in vm.c): so, called in tail position, they keep their
;;; caller's frame for a backtrace, as other primitives do. The procedures below do more.

(define (%io-retry prim args)
  (let ((r (apply prim args)))
    (if (eq? r '%io-again)
        (%io-retry prim args)
        r)))
;; read-bytevector (docs/scheme.md): from a file, k bytes or what is left before its end; from
;; a socket or stdin, what has arrived once a byte has. %read-bytevector gives what is
;; buffered (a byte at least, k at most), so a file is read here piece by piece (before: one
;; buffer, 16,384 of 1,000,000 bytes).
(define (read-bytevector k . a)
  (let ((first (%io-retry %read-bytevector (cons k a))))
    (if (or (eof-object? first) (>= (bytevector-length first) k) (not (apply %file-input-port? a)))
        first
        (let loop ((parts (list first)) (got (bytevector-length first)))
          (let ((more (if (< got k) (%io-retry %read-bytevector (cons (- k got) a)) (eof-object))))
            (if (eof-object? more)
                (apply bytevector-append (reverse parts))
                (loop (cons more parts) (+ got (bytevector-length more)))))))))
(define (tcp-connect host port)           ; each of host's addresses in turn, until one answers
  (let next ((i 0))
    (let* ((s (%tcp-socket host port i))
           (r (%io-retry %tcp-connect (list s host port i))))
      (if (eq? r '%tcp-next) (next (+ i 1)) r))))

(define (call-with-port port proc)
  (let ((v (proc port)))
    (close-port port)
    v))
(define (call-with-input-file file proc) (call-with-port (open-input-file file) proc))
(define (call-with-output-file file proc) (call-with-port (open-output-file file) proc))

;;; --- threads ------------------------------------------------------------------------------------------

;;; A future: the value of thunk, computed by a thread of its own.
(define (future thunk) (fork thunk))
(define (touch f) (thread-join f))

;;; --- more aliases for the expander ------------------------------------------------------------

(define %call/cc* call/cc)
(define %raise-continuable raise-continuable)
(define %error error)
(define %length length)

;;; --- the process and the REPL ------------------------------------------------------------------------

(define exit
  (let ((%exit %exit))
    (lambda args
      (%unwind-to '())
      (apply %exit args))))

(define (%repl-run thunk)
  (call/cc
   (lambda (k)
     (with-exception-handler
      (lambda (e) (%report-error e) (k (if #f #f)))
      thunk))))
