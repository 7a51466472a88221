;; solver: package dependency solver service (seed 001, 0install solver in OCaml 5 domains):
;; one worker per capability answers queries from an MVar queue against a shared repository.
;; quick: 200 150 1
;; norm: 1000 1200 1
;; slow: 1000 8000 1

;;; Args: PACKAGES QUERIES SEED. A repository of PACKAGES packages, 2-7 versions each
;;; ("1.10.2", compared component-wise), each version depending on up to 4 later packages
;;; with ranges (">= 1.2.0 < 2.0", "< 0.4.1", "= 1.0.3", any), is generated as text from the
;;; seed (own PRNG) and parsed; then QUERIES queries (a root package and a range) are solved
;;; by a pool of workers pulling from an MVar queue. A solve picks one version per package so
;;; every dependency is satisfied, preferring newest: backtracking search (fewest candidates
;;; first, forward checking, conflict-directed backjumping, learnt nogoods) over private
;;; mutable state, allocating agendas, candidate lists and conflict sets, with the
;;; repository shared read-only by all workers. Stresses allocation and minor GCs in
;;; parallel, a shared old generation, the scheduler, MVars.
;;;
;;; Checks: every solution passes an independent verifier (it re-reads versions and
;;; dependency texts with its own parser and integer comparison: root in range, one version
;;; per package, every dependency selected and in range). Every 8th query is also solved by
;;; a search preferring the oldest versions (another search tree; solvability must agree,
;;; its solutions verified too) and by plain chronological backtracking without backjumping
;;; or learning (small budget; when it finishes it must find the very same answer). Prints
;;; the counts of solvable/unsolvable queries and a checksum of the chosen versions in
;;; query order.

;;; --------------------------------------------------------------------------------------
;;; Utilities

;; Park-Miller "minimal standard" generator: products stay below 2^47.
(define (make-rng seed)
  (let ((x (+ 1 (modulo seed 2147483646))))
    (lambda (n)
      (set! x (modulo (* x 48271) 2147483647))
      (modulo x n))))

(define hash-mask #xFFFFFFFFFF)
(define (mix h x) (bitwise-and (+ (* h 1000003) x 977) hash-mask))
(define (hash-string h s)
  (let ((n (string-length s)))
    (let loop ((i 0) (h (mix h n)))
      (if (= i n) h (loop (+ i 1) (mix h (char->integer (string-ref s i))))))))

;; A string-keyed hash table: buckets of alists.
(define (make-stable n) (make-vector n '()))
(define (stable-bucket t k) (modulo (hash-string 0 k) (vector-length t)))
(define (stable-ref t k)
  (let ((p (assoc k (vector-ref t (stable-bucket t k))))) (and p (cdr p))))
(define (stable-set! t k v)
  (let ((i (stable-bucket t k)))
    (vector-set! t i (cons (cons k v) (vector-ref t i)))))

(define (vector-index-of v x)
  (let loop ((i 0)) (cond ((= i (vector-length v)) #f) ((equal? (vector-ref v i) x) i) (else (loop (+ i 1))))))

;;; --------------------------------------------------------------------------------------
;;; Versions: "1.10.2" -> (1 10 2), compared component-wise, missing components are 0.

(define (parse-version s)
  (let ((n (string-length s)))
    (let loop ((i 0) (k 0) (digits 0) (acc '()))
      (cond ((= i n)
             (if (= digits 0) (error "solver: bad version" s))
             (reverse (cons k acc)))
            ((char=? (string-ref s i) #\.)
             (if (= digits 0) (error "solver: bad version" s))
             (loop (+ i 1) 0 0 (cons k acc)))
            ((char-numeric? (string-ref s i))
             (loop (+ i 1) (+ (* k 10) (digit-value (string-ref s i))) (+ digits 1) acc))
            (else (error "solver: bad version" s))))))

(define (version-compare a b)
  (cond ((and (null? a) (null? b)) 0)
        ((null? a) (version-compare '(0) b))
        ((null? b) (version-compare a '(0)))
        ((< (car a) (car b)) -1)
        ((> (car a) (car b)) 1)
        (else (version-compare (cdr a) (cdr b)))))

(define (version->string v)
  (string-join (map number->string v) "."))

;;; A range: (lo . hi), lo inclusive and hi exclusive, either #f for unbounded.
(define (in-range? v range)
  (and (or (not (car range)) (>= (version-compare v (car range)) 0))
       (or (not (cdr range)) (< (version-compare v (cdr range)) 0))))

;; "p17 >= 1.2.0 < 2.0" -> (package-name . range); also "p17", "p17 < 0.4", "p17 = 1.0.3"
(define (parse-dependency text)
  (let* ((words (filter (lambda (w) (not (string=? w ""))) (string-split text #\space)))
         (name (car words)))
    (let loop ((ws (cdr words)) (lo #f) (hi #f))
      (cond ((null? ws) (cons name (cons lo hi)))
            ((null? (cdr ws)) (error "solver: bad dependency" text))
            ((string=? (car ws) ">=") (loop (cddr ws) (parse-version (cadr ws)) hi))
            ((string=? (car ws) "<") (loop (cddr ws) lo (parse-version (cadr ws))))
            ((string=? (car ws) "=")
             (let ((v (parse-version (cadr ws))))
               (loop (cddr ws) v (append v '(0 0 0 1)))))
            (else (error "solver: bad dependency" text))))))

;;; --------------------------------------------------------------------------------------
;;; The repository as text, generated from a seed. Package i depends on packages a little
;;; further down the list; newer versions tend to want newer versions of their dependencies.

(define (generate-repository npackages seed)
  (let ((rand (make-rng seed))
        (out (open-output-string)))
    (define (emit . xs) (for-each (lambda (x) (write-string x out)) xs) (newline out))
    ;; the versions of every package first, newest first, so dependencies can name them
    (define versions
      (let ((vs (make-vector npackages)))
        (do ((i 0 (+ i 1))) ((= i npackages) vs)
          (let loop ((k (+ 2 (rand 6))) (acc '()))
            (if (= k 0)
                (vector-set! vs i (list->vector
                                   (sort acc (lambda (a b) (> (version-compare a b) 0)))))
                (let ((v (list (rand 4) (rand 14) (rand 10))))
                  (if (member v acc) (loop k acc) (loop (- k 1) (cons v acc)))))))))
    (define (pkg-name i) (string-append "p" (number->string i)))
    (define (dependency q pos nversions)
      ;; a range over q's versions, roughly at the relative position pos of the depender
      (let* ((qv (vector-ref versions q))
             (nq (vector-length qv))
             (j (max 0 (min (- nq 1) (+ (quotient (* pos nq) nversions) (- (rand 3) 1)))))
             (u (vector-ref qv j))
             (r (rand 20)))
        (string-append
         (pkg-name q)
         (cond ((< r 8) (string-append " >= " (version->string u)))
               ((< r 13) (string-append " >= " (version->string u)
                                        " < " (number->string (+ (car u) 1)) ".0"))
               ((< r 16) (string-append " < " (version->string u)))
               ((< r 17) (string-append " = " (version->string u)))
               (else "")))))
    (do ((i 0 (+ i 1))) ((= i npackages))
      (emit "package " (pkg-name i))
      (let* ((vs (vector-ref versions i)) (nv (vector-length vs)))
        (do ((k 0 (+ k 1))) ((= k nv))
          (emit "version " (version->string (vector-ref vs k)))
          (let ((ndeps (rand 5)))
            (let loop ((d 0) (used '()))
              (when (< d ndeps)
                (let ((q (+ i 1 (rand 12))))
                  (if (or (>= q npackages) (memv q used))
                      (loop (+ d 1) used)
                      (begin (emit "depends " (dependency q k nv))
                             (loop (+ d 1) (cons q used)))))))))))
    (let ((text (get-output-string out)))
      (close-port out)
      text)))

;;; --------------------------------------------------------------------------------------
;;; Loading: the text into vectors. A package: (name . #(version ...)) newest first; a
;;; version: #(string parsed (dep ...)); a dep: #(package-index range text).

(define (version-string v) (vector-ref v 0))
(define (version-parsed v) (vector-ref v 1))
(define (version-deps v) (vector-ref v 2))
(define (dep-package d) (vector-ref d 0))
(define (dep-range d) (vector-ref d 1))
(define (dep-text d) (vector-ref d 2))

(define (load-repository text)
  (let ((port (open-input-string text))
        (names (make-stable 1024)))
    ;; first pass: lines grouped by package
    (define lines
      (let loop ((acc '()))
        (let ((l (read-line port)))
          (if (eof-object? l) (reverse acc) (loop (cons l acc))))))
    (define (word-after prefix l)
      (and (>= (string-length l) (string-length prefix))
           (string=? (substring l 0 (string-length prefix)) prefix)
           (substring l (string-length prefix) (string-length l))))
    (close-port port)
    (let ((packages                       ; list of (name (version-string dep-text ...) ...)
           (let loop ((ls lines) (acc '()))
             (cond ((null? ls) (reverse acc))
                   ((word-after "package " (car ls))
                    => (lambda (name) (loop (cdr ls) (cons (list name) acc))))
                   ((word-after "version " (car ls))
                    => (lambda (v) (set-cdr! (car acc) (cons (list v) (cdar acc))) (loop (cdr ls) acc)))
                   ((word-after "depends " (car ls))
                    => (lambda (d) (set-cdr! (cadar acc) (cons d (cdadar acc))) (loop (cdr ls) acc)))
                   (else (error "solver: bad repository line" (car ls)))))))
      (let loop ((ps packages) (i 0))
        (when (pair? ps)
          (stable-set! names (caar ps) i)
          (loop (cdr ps) (+ i 1))))
      (list->vector
       (map (lambda (p)
              (cons (car p)
                    (list->vector
                     (sort (map (lambda (v)
                                  (vector (car v) (parse-version (car v))
                                          (map (lambda (text)
                                                 (let* ((d (parse-dependency text))
                                                        (q (stable-ref names (car d))))
                                                   (unless q (error "solver: unknown package" (car d)))
                                                   (vector q (cdr d) text)))
                                               (reverse (cdr v)))))
                                (cdr p))
                           (lambda (a b) (> (version-compare (version-parsed a) (version-parsed b)) 0))))))
            packages)))))

(define (package-name repo p) (car (vector-ref repo p)))
(define (package-versions repo p) (cdr (vector-ref repo p)))

;;; --------------------------------------------------------------------------------------
;;; The solver. State private to one solve: the selected version of each package (or #f)
;;; and the requirements on each package not yet selected, each a range and the package
;;; whose selected version made it (-1 for the query). Search: take the package on the
;;; agenda with the fewest candidates (versions within all its ranges); try them in
;;; preference order (newest or oldest first); selecting one checks its dependencies
;;; against the selection and requires that every unselected dependency still has a
;;; candidate (forward checking). With backjump? a failure returns its conflict set (the
;;; selections it depends on) and the search jumps back over selections not in it
;;; (conflict-directed backjumping); without, it backtracks chronologically. After
;;; budget steps it gives up. Returns a list of (package . version) sorted by package,
;;; 'unsolvable or 'gave-up.

(define (solve repo root root-range newest-first? backjump? budget)
  (let* ((n (vector-length repo))
         (sel (make-vector n #f))
         (req (make-vector n '()))
         (steps 0))
    (define (candidates p)
      (let ((reqs (vector-ref req p))
            (vs (package-versions repo p)))
        (let loop ((i (if newest-first? (- (vector-length vs) 1) 0)) (acc '()))
          (if (if newest-first? (< i 0) (>= i (vector-length vs)))
              acc
              (let ((v (vector-ref vs i)))
                (loop (if newest-first? (- i 1) (+ i 1))
                      (if (every (lambda (r) (in-range? (version-parsed v) (car r))) reqs)
                          (cons v acc)
                          acc)))))))
    ;; why q has no candidates but those its ranges allow: for each excluded version the
    ;; selection whose range excludes it (the earliest one), and the earliest selection
    ;; that requires q at all
    (define (reasons q)
      (if backjump?
          (let* ((reqs (reverse (vector-ref req q)))
                 (vs (package-versions repo q))
                 (required-by (cdar reqs)))
            (let loop ((i 0) (acc (if (< required-by 0) '() (list required-by))))
              (if (= i (vector-length vs))
                  acc
                  (let ((r (find (lambda (r) (not (in-range? (version-parsed (vector-ref vs i)) (car r))))
                                 reqs)))
                    (loop (+ i 1)
                          (if (and r (>= (cdr r) 0) (not (memv (cdr r) acc))) (cons (cdr r) acc) acc))))))
          '()))
    (define (union a b)
      (fold (lambda (x acc) (if (memv x acc) acc (cons x acc))) b a))
    ;; requires the dependencies of version v of p: (ok . packages-to-unrequire), or
    ;; (conflict . conflict-set) after undoing its own requirements
    (define (require-deps! p v)
      (let loop ((ds (version-deps v)) (done '()))
        (if (null? ds)
            (cons 'ok done)
            (let* ((d (car ds)) (q (dep-package d)) (s (vector-ref sel q)))
              (cond (s (if (in-range? (version-parsed s) (dep-range d))
                           (loop (cdr ds) done)
                           (begin (unrequire! done) (cons 'conflict (list q)))))
                    (else
                     (vector-set! req q (cons (cons (dep-range d) p) (vector-ref req q)))
                     (if (pair? (candidates q))
                         (loop (cdr ds) (cons q done))
                         (let ((cs (reasons q)))
                           (unrequire! (cons q done))
                           (cons 'conflict cs)))))))))
    (define (unrequire! qs)
      (for-each (lambda (q) (vector-set! req q (cdr (vector-ref req q)))) qs))
    ;; the agenda without selected packages and duplicates, the package with the fewest
    ;; candidates first (the earliest among equals)
    (define (fewest-first agenda)
      (let loop ((as agenda) (best #f) (bestn 0) (rest '()))
        (cond ((null? as) (if best (cons best (reverse rest)) '()))
              ((or (vector-ref sel (car as)) (eqv? (car as) best) (memv (car as) rest))
               (loop (cdr as) best bestn rest))
              (else
               (let ((c (length (candidates (car as)))))
                 (if (or (not best) (< c bestn))
                     (loop (cdr as) (car as) c (if best (cons best rest) rest))
                     (loop (cdr as) best bestn (cons (car as) rest))))))))
    ;; learnt nogoods: sets of selections that cannot all be in a solution (a conflict
    ;; set and the versions selected when it was found), kept with each package in them
    (define nogoods (make-vector n '()))
    (define (learn! cs)
      (when (pair? cs)
        (let ((ng (map (lambda (q) (cons q (vector-ref sel q))) cs)))
          (for-each (lambda (q) (vector-set! nogoods q (cons ng (vector-ref nogoods q)))) cs))))
    (define (violated-nogood p)
      (find (lambda (ng) (every (lambda (qv) (eq? (vector-ref sel (car qv)) (cdr qv))) ng))
            (vector-ref nogoods p)))
    (define (search pending k)
      (let ((agenda (fewest-first pending)))
        (if (null? agenda)
            #t
            (let ((p (car agenda)))
              (let try ((cands (candidates p)) (cs (reasons p)))
                (if (null? cands)
                    (begin (when backjump? (learn! cs)) cs)
                    (let ((v (car cands)))
                      (set! steps (+ steps 1))
                      (when (> steps budget) (k 'gave-up))
                      (vector-set! sel p v)
                      (let ((ng (and backjump? (violated-nogood p))))
                        (if ng
                            (begin (vector-set! sel p #f)
                                   (try (cdr cands) (union (delete p (map car ng) eqv?) cs)))
                            (let ((r (require-deps! p v)))
                              (if (eq? (car r) 'conflict)
                                  (begin (vector-set! sel p #f)
                                         (try (cdr cands) (union (delete p (cdr r) eqv?) cs)))
                                  (let ((res (search (append (cdr agenda) (map dep-package (version-deps v)))
                                                     k)))
                                    (if (eq? res #t)
                                        #t
                                        (begin
                                          (unrequire! (cdr r))
                                          (vector-set! sel p #f)
                                          (if (or (not backjump?) (memv p res))
                                              (try (cdr cands) (union (delete p res eqv?) cs))
                                              res)))))))))))))))
    (call/cc
     (lambda (k)
       (vector-set! req root (list (cons root-range -1)))
       (if (eq? (search (list root) k) #t)
           (let loop ((p (- n 1)) (acc '()))
             (if (< p 0) acc
                 (loop (- p 1) (let ((v (vector-ref sel p))) (if v (cons (cons p v) acc) acc)))))
           'unsolvable)))))

;;; --------------------------------------------------------------------------------------
;;; The verifier: independent of the solver's parsing and comparison. It reads versions
;;; and dependency texts again with string-split, compares versions as integers
;;; (components are below 1000), and checks: the root is selected and in its range, one
;;; version per package, every version's dependencies selected and in range.

(define (verify-version-key s)
  (let ((parts (map string->number (string-split s #\.))))
    (let loop ((ps parts) (k 0) (i 0))
      (cond ((= i 4) (if (null? ps) k (error "solver: version too long" s)))
            ((null? ps) (loop ps (* k 1000) (+ i 1)))
            (else (loop (cdr ps) (+ (* k 1000) (car ps)) (+ i 1)))))))

(define (verify-satisfies? vstring constraint-words)
  (let ((key (verify-version-key vstring)))
    (let loop ((ws constraint-words))
      (cond ((null? ws) #t)
            ((string=? (car ws) ">=") (and (>= key (verify-version-key (cadr ws))) (loop (cddr ws))))
            ((string=? (car ws) "<") (and (< key (verify-version-key (cadr ws))) (loop (cddr ws))))
            ((string=? (car ws) "=") (and (= key (verify-version-key (cadr ws))) (loop (cddr ws))))
            (else #f)))))

(define (verify repo root root-text solution)
  (let ((chosen (make-stable 512)))   ; package name -> version string
    (define (words s) (filter (lambda (w) (not (string=? w ""))) (string-split s #\space)))
    (and (every (lambda (pv)
                  (let ((name (package-name repo (car pv))))
                    (and (not (stable-ref chosen name))          ; one version per package
                         (vector-index-of (package-versions repo (car pv)) (cdr pv))
                         (begin (stable-set! chosen name (version-string (cdr pv))) #t))))
                solution)
         (let ((rv (stable-ref chosen (package-name repo root))))
           (and rv (verify-satisfies? rv (cdr (words root-text)))))
         (every (lambda (pv)
                  (every (lambda (d)
                           (let* ((ws (words (dep-text d)))
                                  (v (stable-ref chosen (car ws))))
                             (and v (verify-satisfies? v (cdr ws)))))
                         (version-deps (cdr pv))))
                solution))))

;;; --------------------------------------------------------------------------------------
;;; Queries: a root package and a range for it, as text like a dependency ("p12 >= 1.3.0").

(define (generate-queries repo nqueries seed)
  (let ((rand (make-rng (+ seed 7777)))
        (n (vector-length repo)))
    (list-tabulate
     nqueries
     (lambda (i)
       (let* ((p (rand (max 1 (quotient (* n 3) 4))))
              (vs (package-versions repo p))
              (v (version-string (vector-ref vs (rand (vector-length vs)))))
              (r (rand 4)))
         (string-append (package-name repo p)
                        (cond ((= r 0) (string-append " >= " v))
                              ((= r 1) (string-append " < " v))
                              (else ""))))))))

;;; --------------------------------------------------------------------------------------
;;; The service: one worker per capability; queries come from an MVar holding the list of
;;; those not yet taken; each worker returns its (index . answer) pairs.

(define (solve-query repo names text newest-first? backjump? budget)
  (let* ((d (parse-dependency text))
         (root (stable-ref names (car d))))
    (solve repo root (cdr d) newest-first? backjump? budget)))

;; The answer to query i: #(answer other plain). Every 8th query is also solved by a
;; second search preferring the OLDEST versions (another search tree; both searches are
;; complete, so they must agree on solvability) and by plain chronological backtracking
;; (no backjumping, no learning) with a small budget: when that one finishes it must find
;; the very same solution as the service, whose pruning only skips failing subtrees.
(define (answer-query repo names i text)
  (vector (solve-query repo names text #t #t 1000000)
          (and (= 0 (modulo i 8)) (solve-query repo names text #f #t 1000000))
          (and (= 0 (modulo i 8)) (solve-query repo names text #t #f 2000))))

(define (serve repo names queries)
  (let ((queue (make-mvar (let loop ((qs queries) (i 0))
                            (if (null? qs) '() (cons (cons i (car qs)) (loop (cdr qs) (+ i 1)))))))
        (answers (make-vector (length queries) #f)))
    (define (worker)
      (let loop ((done '()))
        (let ((q (mvar-take! queue)))
          (if (null? q)
              (begin (mvar-put! queue q) done)
              (begin (mvar-put! queue (cdr q))
                     (let ((i (caar q)) (text (cdar q)))
                       (loop (cons (cons i (answer-query repo names i text)) done))))))))
    (for-each (lambda (w)
                (let ((done (thread-join w)))
                  (unless (list? done) (error "solver: a worker failed"))
                  (for-each (lambda (a) (vector-set! answers (car a) (cdr a))) done)))
              (map (lambda (c) (fork-on c worker)) (iota (num-capabilities))))
    answers))

(define (main args)
  (let* ((npackages (string->number (car args)))
         (nqueries (string->number (cadr args)))
         (seed (string->number (caddr args)))
         (repo (load-repository (generate-repository npackages seed)))
         (names (let ((t (make-stable 1024)))
                  (do ((i 0 (+ i 1))) ((= i (vector-length repo)) t)
                    (stable-set! t (package-name repo i) i))))
         (queries (generate-queries repo nqueries seed))
         (answers (serve repo names queries)))
    (define rechecked 0)
    (define replain 0)
    (define (check-solution! i text what solution)
      (unless (verify repo (stable-ref names (car (parse-dependency text))) text solution)
        (error "solver: wrong answer: a solution fails verification" what i text
               (map (lambda (pv) (cons (package-name repo (car pv)) (version-string (cdr pv)))) solution))))
    (let loop ((i 0) (qs queries) (solvable 0) (unsolvable 0) (gave-up 0) (selected 0) (h 0))
      (if (pair? qs)
          (let ((text (car qs)) (answer (vector-ref answers i)))
            (unless answer (error "solver: wrong answer: query not answered" i))
            (let ((a (vector-ref answer 0)) (other (vector-ref answer 1)) (plain (vector-ref answer 2)))
              (when (and other (not (eq? other 'gave-up)))
                (unless (eq? (pair? a) (pair? other))
                  (error "solver: wrong answer" i text (pair? a) (pair? other)))
                (when (pair? other) (check-solution! i text 'oldest-first other))
                (set! rechecked (+ rechecked 1)))
              (when (and plain (not (eq? plain 'gave-up)))
                (unless (equal? plain a)
                  (error "solver: wrong answer: backtracking found another answer" i text))
                (set! replain (+ replain 1)))
              (cond ((pair? a)
                     (check-solution! i text 'service a)
                     (loop (+ i 1) (cdr qs) (+ solvable 1) unsolvable gave-up (+ selected (length a))
                           (fold (lambda (pv h) (hash-string (mix h (car pv)) (version-string (cdr pv))))
                                 (mix h i) a)))
                    ((eq? a 'unsolvable)
                     (loop (+ i 1) (cdr qs) solvable (+ unsolvable 1) gave-up selected (mix h i)))
                    (else
                     (loop (+ i 1) (cdr qs) solvable unsolvable (+ gave-up 1) selected h)))))
          (let ((nversions (let l ((p 0) (s 0))
                             (if (= p npackages) s (l (+ p 1) (+ s (vector-length (package-versions repo p))))))))
            (display "solver: ") (display npackages) (display " packages, ") (display nversions)
            (display " versions; ") (display nqueries) (display " queries") (newline)
            (display "solvable: ") (display solvable) (display ", unsolvable: ") (display unsolvable)
            (when (> gave-up 0) (display ", search budget exhausted: ") (display gave-up))
            (newline)
            (display "selected: ") (display selected) (display " package versions, checksum ")
            (display h) (newline)
            (display "checked: ") (display solvable) (display " solutions verified, ")
            (display rechecked) (display " queries re-solved oldest-first, ")
            (display replain) (display " by plain backtracking, same outcome")
            (newline))))))

(main (cdr (command-line)))
