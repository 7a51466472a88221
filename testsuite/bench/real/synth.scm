;; synth: `ghc --make -j` analogue (seed 000, synth.bash): one worker per capability compiles
;; generated modules taken from an MVar queue, every fresh name from ONE MVar unique supply.
;; quick: 9 10 4
;; norm: 32 40 4
;; slow: 200 40 4

;;; Args: MODULES FIELDS PASSES. Module m is synth.bash's
;;;     module Mm where
;;;     data D = D0 | D1 { f1 :: Int } | ... deriving (Read, Show, Eq, Ord)
;;; with FIELDS + m mod 3 fields (three shapes). Compiling it: generate the source text,
;;; tokenise (identifiers interned as symbols, like GHC's FastString table), parse, rename,
;;; derive Eq/Ord/Show/Read-like code as core trees, specialise showsPrec, inline small
;;; bindings (each copy cloned with fresh names), run PASSES simplifier passes (beta, let
;;; inlining, case of known constructor, constant folding) and hash the result. Every fresh
;;; name takes the global supply (an MVar) once: thousands of takes per module, from all
;;; workers at once, like GHC's global unique supply. Each module's final code stays live to
;;; the end (GHC's home package table). Stresses MVar contention and hand-off, allocation of
;;; short-lived trees, a growing live heap, the scheduler.
;;;
;;; Checks: every module compiled once; the supply handed out exactly the uniques the
;;; modules say they took; modules of equal shape give equal canonical hashes (names are
;;; numbered by first appearance, so the hash does not depend on which uniques a module
;;; got); a sample of modules recompiled sequentially with a private supply starting
;;; elsewhere gives the same hashes; and the derived code of the sample is run by an
;;; interpreter on sample values and compared with what derived instances must do.

;;; --------------------------------------------------------------------------------------
;;; Small utilities

;; A hash table keyed by fixnums (the language has no hash tables): buckets of alists.
(define (make-itable size) (make-vector size '()))
(define (itable-index t k)
  (bitwise-and (bitwise-xor k (arithmetic-shift k -7)) (- (vector-length t) 1)))
(define (itable-ref t k default)
  (let ((p (assv k (vector-ref t (itable-index t k)))))
    (if p (cdr p) default)))
(define (itable-set! t k v)
  (let* ((i (itable-index t k))
         (b (vector-ref t i))
         (p (assv k b)))
    (if p (set-cdr! p v) (vector-set! t i (cons (cons k v) b)))))

(define hash-mask #xFFFFFFFFFF)          ; 40 bits: (* h 1000003) stays a fixnum
(define (mix h x) (bitwise-and (+ (* h 1000003) x 12345) hash-mask))
(define (hash-string h s)
  (let ((n (string-length s)))
    (let loop ((i 0) (h (mix h n)))
      (if (= i n) h (loop (+ i 1) (mix h (char->integer (string-ref s i))))))))
(define (hash-symbol h s) (hash-string h (symbol->string s)))

(define (number->symbol prefix k) (string->symbol (string-append prefix (number->string k))))

;;; --------------------------------------------------------------------------------------
;;; Names. A name is an occurrence name (a symbol) and a unique. Wired-in names (True,
;;; False, LT, EQ, GT) have fixed negative uniques; all others come from the supply.

(define-record-type name (make-name occ uniq) name? (occ name-occ) (uniq name-uniq))

(define n-true (make-name 'True -1))
(define n-false (make-name 'False -2))
(define n-lt (make-name 'LT -3))
(define n-eq (make-name 'EQ -4))
(define n-gt (make-name 'GT -5))

;; A name supply for one module's compilation: (fresh occ) makes a new name. `next-unique`
;; is a thunk returning a new unique; (fresh #f) is how many this module took.
(define (make-namer next-unique)
  (let ((taken 0))
    (lambda (occ)
      (if (not occ)
          taken
          (begin (set! taken (+ taken 1))
                 (make-name occ (next-unique)))))))

;;; --------------------------------------------------------------------------------------
;;; Phase 1: the module's source text, as synth.bash writes it.

(define (module-fields m fields) (+ fields (modulo m 3)))

(define (module-source m nfields)
  (let ((p (open-output-string)))
    (define (out . xs)
      (for-each (lambda (x) (write-string (if (string? x) x (number->string x)) p)) xs))
    (out "module M" m " where\n")
    (out "data D = D0\n")
    (do ((f 1 (+ f 1))) ((> f nfields))
      (out "   | D" f " { f" f " :: Int}\n"))
    (out "    deriving (Read, Show, Eq, Ord)\n")
    (let ((s (get-output-string p)))
      (close-port p)
      s)))

;;; --------------------------------------------------------------------------------------
;;; Phase 2: tokens. (kind . value): (conid . Sym), (varid . sym), (kw . sym), (int . n),
;;; (sym . #\=) for one-character symbols and (sym . dcolon) for `::`.

(define keywords '(module where data deriving))

(define (ident-char? d)
  (or (char-alphabetic? d) (char-numeric? d) (char=? d #\_) (char=? d #\')))

(define (tokenise s)
  (let ((n (string-length s)))
    (let loop ((i 0) (acc '()))
      (if (>= i n)
          (reverse acc)
          (let ((c (string-ref s i)))
            (cond ((char-whitespace? c) (loop (+ i 1) acc))
                  ((or (char-alphabetic? c) (char=? c #\_))
                   (let scan ((j (+ i 1)))
                     (if (and (< j n) (ident-char? (string-ref s j)))
                         (scan (+ j 1))
                         (let* ((sym (string->symbol (substring s i j)))
                                (kind (cond ((memq sym keywords) 'kw)
                                            ((char-upper-case? c) 'conid)
                                            (else 'varid))))
                           (loop j (cons (cons kind sym) acc))))))
                  ((char-numeric? c)
                   (let scan ((j (+ i 1)))
                     (if (and (< j n) (char-numeric? (string-ref s j)))
                         (scan (+ j 1))
                         (loop j (cons (cons 'int (string->number (substring s i j))) acc)))))
                  ((and (char=? c #\:) (< (+ i 1) n) (char=? (string-ref s (+ i 1)) #\:))
                   (loop (+ i 2) (cons (cons 'sym 'dcolon) acc)))
                  ((memv c '(#\= #\| #\{ #\} #\( #\) #\,))
                   (loop (+ i 1) (cons (cons 'sym c) acc)))
                  (else (error "synth: lexical error at" i c))))))))

;;; --------------------------------------------------------------------------------------
;;; Phase 3: parsing. Result:
;;;   (module Mname (data Tname ((Con ((field Type) ...)) ...) (Class ...)))

(define (parse-module toks)
  (define (peek) (if (null? toks) '(eof . eof) (car toks)))
  (define (next!)
    (let ((t (peek)))
      (if (pair? toks) (set! toks (cdr toks)))
      t))
  (define (at? kind val)
    (let ((t (peek))) (and (eq? (car t) kind) (eqv? (cdr t) val))))
  (define (expect! kind val)
    (let ((t (next!)))
      (unless (and (eq? (car t) kind) (eqv? (cdr t) val))
        (error "synth: parse error: expected" val 'got t))))
  (define (expect-kind! kind)
    (let ((t (next!)))
      (unless (eq? (car t) kind) (error "synth: parse error: expected a" kind 'got t))
      (cdr t)))
  (define (field)
    (let ((f (expect-kind! 'varid)))
      (expect! 'sym 'dcolon)
      (list f (expect-kind! 'conid))))
  (define (comma-list item close)
    (let loop ((acc (list (item))))
      (if (at? 'sym #\,)
          (begin (next!) (loop (cons (item) acc)))
          (begin (expect! 'sym close) (reverse acc)))))
  (define (constr)
    (let ((c (expect-kind! 'conid)))
      (if (at? 'sym #\{)
          (begin (next!) (list c (comma-list field #\})))
          (list c '()))))
  (define (constrs)
    (let loop ((acc (list (constr))))
      (if (at? 'sym #\|)
          (begin (next!) (loop (cons (constr) acc)))
          (reverse acc))))
  (define (deriving)
    (if (at? 'kw 'deriving)
        (begin (next!)
               (expect! 'sym #\()
               (comma-list (lambda () (expect-kind! 'conid)) #\)))
        '()))
  (expect! 'kw 'module)
  (let ((mname (expect-kind! 'conid)))
    (expect! 'kw 'where)
    (expect! 'kw 'data)
    (let ((tname (expect-kind! 'conid)))
      (expect! 'sym #\=)
      (let* ((cs (constrs))
             (ds (deriving)))
        (unless (null? toks) (error "synth: parse error: trailing tokens" (peek)))
        (list 'module mname (list 'data tname cs ds))))))

;;; --------------------------------------------------------------------------------------
;;; Phase 4: renaming. Every constructor, field and the type get a fresh name.
;;; Result: (tycon-name (con ...) classes) with con = (con-name tag (field-name ...)).

(define (con-name c) (car c))
(define (con-tag c) (cadr c))
(define (con-fields c) (caddr c))

(define (rename-module ast fresh)
  (let* ((data (caddr ast))
         (tname (fresh (cadr data))))
    (let loop ((cs (caddr data)) (tag 0) (seen '()) (acc '()))
      (if (null? cs)
          (list tname (reverse acc) (cadddr data))
          (let ((c (car cs)))
            (when (memq (car c) seen) (error "synth: duplicate constructor" (car c)))
            (for-each (lambda (f)
                        (unless (eq? (cadr f) 'Int) (error "synth: unknown type" (cadr f))))
                      (cadr c))
            (loop (cdr cs) (+ tag 1) (cons (car c) seen)
                  (cons (list (fresh (car c)) tag (map (lambda (f) (fresh (car f))) (cadr c)))
                        acc)))))))

;;; --------------------------------------------------------------------------------------
;;; Core language (lists):
;;;   (v name) (lit n) (str s) (con name (arg ...)) (app f (arg ...)) (lam (name ...) body)
;;;   (let name rhs body) (case scrut ((con-name-or-#f (name ...) rhs) ...)) (prim op (arg ...))
;;; A program is a list of bindings (name . expr), mutually recursive. Binders are unique.

(define (V n) (list 'v n))
(define (Lit k) (list 'lit k))
(define (Str s) (list 'str s))
(define (Con c . args) (list 'con c args))
(define (App f . args) (list 'app f args))
(define (Lam ps body) (list 'lam ps body))
(define (Let x rhs body) (list 'let x rhs body))
(define (Case scrut alts) (list 'case scrut alts))
(define (Prim op . args) (list 'prim op args))
(define (If c t e) (Case c (list (list n-true '() t) (list n-false '() e))))

(define (lets vars args body)
  (if (null? vars) body (Let (car vars) (car args) (lets (cdr vars) (cdr args) body))))

;;; --------------------------------------------------------------------------------------
;;; Phase 5: deriving. Makes con2tag, ==, compare, showParen, showsInt, showsPrec, show,
;;; fromName (a Read-like constructor lookup) and the field selectors.

(define (derive-module renamed fresh)
  (let* ((cons* (cadr renamed))
         (classes (caddr renamed))
         (b-con2tag (fresh '$con2tag_D))
         (b-eq (fresh '$fEqD_==))
         (b-cmp (fresh '$fOrdD_compare))
         (b-showparen (fresh 'showParen))
         (b-showsint (fresh 'showsInt))
         (b-showsprec (fresh '$fShowD_showsPrec))
         (b-show (fresh '$fShowD_show))
         (b-fromname (fresh '$fReadD_fromName)))
    (define (vars-for c prefix) (map (lambda (f) (fresh prefix)) (con-fields c)))
    (define (and-chain es)
      (cond ((null? es) (Con n-true))
            ((null? (cdr es)) (car es))
            (else (If (car es) (and-chain (cdr es)) (Con n-false)))))
    (define (lex-chain es)
      (cond ((null? es) (Con n-eq))
            ((null? (cdr es)) (car es))
            (else (Case (car es)
                        (list (list n-lt '() (Con n-lt))
                              (list n-eq '() (lex-chain (cdr es)))
                              (list n-gt '() (Con n-gt)))))))
    (define con2tag
      (let ((a (fresh 'a)))
        (Lam (list a)
             (Case (V a) (map (lambda (c) (list (con-name c) (vars-for c '_) (Lit (con-tag c))))
                              cons*)))))
    (define eq
      (let ((a (fresh 'a)) (b (fresh 'b)))
        (Lam (list a b)
             (Case (V a)
                   (map (lambda (c)
                          (let ((xs (vars-for c 'x)) (ys (vars-for c 'y)))
                            (list (con-name c) xs
                                  (Case (V b)
                                        (list (list (con-name c) ys
                                                    (and-chain (map (lambda (x y) (Prim 'int-eq (V x) (V y)))
                                                                    xs ys)))
                                              (list #f '() (Con n-false)))))))
                        cons*)))))
    (define cmp
      (let ((a (fresh 'a)) (b (fresh 'b)))
        (Lam (list a b)
             (Case (V a)
                   (map (lambda (c)
                          (let ((xs (vars-for c 'x)) (ys (vars-for c 'y)))
                            (list (con-name c) xs
                                  (Case (V b)
                                        (list (list (con-name c) ys
                                                    (lex-chain (map (lambda (x y) (Prim 'int-cmp (V x) (V y)))
                                                                    xs ys)))
                                              (list #f '()
                                                    (Prim 'int-cmp (App (V b-con2tag) (V a))
                                                          (App (V b-con2tag) (V b)))))))))
                        cons*)))))
    (define showparen
      (let ((b (fresh 'b)) (p (fresh 'p)) (s (fresh 's)))
        (Lam (list b p s)
             (If (V b)
                 (Prim 'append (Str "(") (App (V p) (Prim 'append (Str ")") (V s))))
                 (App (V p) (V s))))))
    (define showsint
      (let ((d (fresh 'd)) (n (fresh 'n)) (s (fresh 's)) (s2 (fresh 's)))
        (Lam (list d n s)
             (If (Prim 'int-lt (V n) (Lit 0))
                 (App (V b-showparen) (Prim 'int-gt (V d) (Lit 6))
                      (Lam (list s2) (Prim 'append (Prim 'show-int (V n)) (V s2)))
                      (V s))
                 (Prim 'append (Prim 'show-int (V n)) (V s))))))
    (define showsprec
      (let ((d (fresh 'd)) (v (fresh 'v)) (s (fresh 's)))
        (define (fields-shows c xs s2)
          (let loop ((fs (con-fields c)) (xs xs) (first #t))
            (if (null? fs)
                (Prim 'append (Str "}") (V s2))
                (Prim 'append
                      (Str (string-append (if first
                                              (string-append (symbol->string (name-occ (con-name c))) " {")
                                              ", ")
                                          (symbol->string (name-occ (car fs))) " = "))
                      (App (V b-showsint) (Lit 0) (V (car xs)) (loop (cdr fs) (cdr xs) #f))))))
        (Lam (list d v s)
             (Case (V v)
                   (map (lambda (c)
                          (let ((xs (vars-for c 'x)))
                            (list (con-name c) xs
                                  (if (null? xs)
                                      (Prim 'append (Str (symbol->string (name-occ (con-name c)))) (V s))
                                      (let ((s2 (fresh 's)))
                                        (App (V b-showparen) (Prim 'int-ge (V d) (Lit 11))
                                             (Lam (list s2) (fields-shows c xs s2))
                                             (V s)))))))
                        cons*)))))
    (define show
      (let ((v (fresh 'v)))
        (Lam (list v) (App (V b-showsprec) (Lit 0) (V v) (Str "")))))
    (define fromname
      (let ((str (fresh 'str)) (n (fresh 'n)))
        (Lam (list str n)
             (let loop ((cs cons*))
               (if (null? cs)
                   (Prim 'error (Str "Prelude.read: no parse"))
                   (let ((c (car cs)))
                     (If (Prim 'str-eq (V str) (Str (symbol->string (name-occ (con-name c)))))
                         (apply Con (con-name c) (map (lambda (f) (V n)) (con-fields c)))
                         (loop (cdr cs)))))))))
    (define selectors
      (append-map
       (lambda (c)
         (let loop ((fs (con-fields c)) (k 0) (acc '()))
           (if (null? fs)
               (reverse acc)
               (let ((r (fresh 'r)) (xs (vars-for c 'x)))
                 (loop (cdr fs) (+ k 1)
                       (cons (cons (car fs)
                                   (Lam (list r)
                                        (Case (V r)
                                              (list (list (con-name c) xs (V (list-ref xs k)))
                                                    (list #f '() (Prim 'error (Str "No match in record selector")))))))
                             acc))))))
       cons*))
    (for-each (lambda (cls) (unless (memq cls '(Read Show Eq Ord)) (error "synth: cannot derive" cls)))
              classes)
    (append (list (cons b-con2tag con2tag))
            (if (memq 'Eq classes) (list (cons b-eq eq)) '())
            (if (memq 'Ord classes) (list (cons b-cmp cmp)) '())
            (if (memq 'Show classes)
                (list (cons b-showparen showparen) (cons b-showsint showsint)
                      (cons b-showsprec showsprec) (cons b-show show))
                '())
            (if (memq 'Read classes) (list (cons b-fromname fromname)) '())
            selectors)))

;;; --------------------------------------------------------------------------------------
;;; Cloning (every binder gets a fresh name) and tree size.

(define (clone e fresh)
  (let ((ren (make-itable 64)))
    (define (bind! n)
      (let ((n2 (fresh (name-occ n))))
        (itable-set! ren (name-uniq n) n2)
        n2))
    (define (ref n) (itable-ref ren (name-uniq n) n))
    (let walk ((e e))
      (case (car e)
        ((v) (V (ref (cadr e))))
        ((lit str) e)
        ((con) (list 'con (cadr e) (map walk (caddr e))))
        ((app) (list 'app (walk (cadr e)) (map walk (caddr e))))
        ((lam) (let ((ps (map bind! (cadr e)))) (Lam ps (walk (caddr e)))))
        ((let) (let* ((rhs (walk (caddr e))) (x (bind! (cadr e)))) (Let x rhs (walk (cadddr e)))))
        ((case) (Case (walk (cadr e))
                      (map (lambda (alt)
                             (let ((xs (map bind! (cadr alt))))
                               (list (car alt) xs (walk (caddr alt)))))
                           (caddr e))))
        ((prim) (list 'prim (cadr e) (map walk (caddr e))))
        (else (error "synth: clone: bad node" e))))))

(define (size e)
  (case (car e)
    ((v lit str) 1)
    ((con prim) (fold (lambda (a n) (+ n (size a))) 1 (caddr e)))
    ((app) (fold (lambda (a n) (+ n (size a))) (+ 1 (size (cadr e))) (caddr e)))
    ((lam) (+ 1 (size (caddr e))))
    ((let) (+ 1 (size (caddr e)) (size (cadddr e))))
    ((case) (fold (lambda (alt n) (+ n (size (caddr alt)))) (+ 1 (size (cadr e))) (caddr e)))
    (else (error "synth: size: bad node" e))))

(define (program-size binds) (fold (lambda (b n) (+ n (size (cdr b)))) 0 binds))

;;; --------------------------------------------------------------------------------------
;;; Phase 6: specialisation. showsPrec at precedence 0 and 11 get specialised copies
;;; (clones of its body applied to the literal), and show calls the one for 0.

(define (find-binding binds occ)
  (let ((b (find (lambda (b) (eq? (name-occ (car b)) occ)) binds)))
    (unless b (error "synth: no binding" occ))
    b))

(define (specialise binds fresh)
  (let* ((sp (find-binding binds '$fShowD_showsPrec))
         (sp0 (fresh '$sshowsPrec0))
         (sp11 (fresh '$sshowsPrec11)))
    (define (spec prec)
      (let ((v (fresh 'v)) (s (fresh 's)))
        (Lam (list v s) (App (clone (cdr sp) fresh) (Lit prec) (V v) (V s)))))
    (let ((binds (map (lambda (b)
                        (if (eq? (name-occ (car b)) '$fShowD_show)
                            (let ((v (fresh 'v)))
                              (cons (car b) (Lam (list v) (App (V sp0) (V v) (Str "")))))
                            b))
                      binds)))
      (append binds (list (cons sp0 (spec 0)) (cons sp11 (spec 11)))))))

;;; --------------------------------------------------------------------------------------
;;; Phase 7: inlining of small non-recursive bindings at their call sites (each copy cloned).

(define inline-threshold 40)
(define inline-pragmas '($con2tag_D))     ; {-# INLINE #-}

(define (mentions? e u)
  (case (car e)
    ((v) (= (name-uniq (cadr e)) u))
    ((lit str) #f)
    ((con prim) (any (lambda (a) (mentions? a u)) (caddr e)))
    ((app) (or (mentions? (cadr e) u) (any (lambda (a) (mentions? a u)) (caddr e))))
    ((lam) (mentions? (caddr e) u))
    ((let) (or (mentions? (caddr e) u) (mentions? (cadddr e) u)))
    ((case) (or (mentions? (cadr e) u) (any (lambda (alt) (mentions? (caddr alt) u)) (caddr e))))
    (else #f)))

(define (inline-small binds fresh)
  (let ((small (make-itable 64)))
    (define (walk e)
      (case (car e)
        ((v lit str) e)
        ((con prim) (list (car e) (cadr e) (map walk (caddr e))))
        ((app)
         (let ((f (cadr e)) (args (map walk (caddr e))))
           (let ((rhs (and (eq? (car f) 'v) (itable-ref small (name-uniq (cadr f)) #f))))
             ;; the inlined body itself may call other small bindings: walk the clone
             (if rhs
                 (list 'app (walk (clone rhs fresh)) args)
                 (list 'app (walk f) args)))))
        ((lam) (Lam (cadr e) (walk (caddr e))))
        ((let) (Let (cadr e) (walk (caddr e)) (walk (cadddr e))))
        ((case) (Case (walk (cadr e))
                      (map (lambda (alt) (list (car alt) (cadr alt) (walk (caddr alt)))) (caddr e))))
        (else (error "synth: inline: bad node" e))))
    (for-each (lambda (b)
                (when (and (eq? (cadr b) 'lam)
                           (or (<= (size (cdr b)) inline-threshold)
                               (memq (name-occ (car b)) inline-pragmas))
                           (not (mentions? (cdr b) (name-uniq (car b)))))
                  (itable-set! small (name-uniq (car b)) (cdr b))))
              binds)
    (map (lambda (b) (cons (car b) (walk (cdr b)))) binds)))

;;; --------------------------------------------------------------------------------------
;;; Phase 8: the simplifier. One pass: occurrence analysis, then beta reduction (to lets),
;;; let inlining (dead, atomic or used once), case of known constructor, case of a variable
;;; already scrutinised in an enclosing alternative, and constant folding.

(define (occurrences binds)
  (let ((occ (make-itable 1024)))
    (define (walk e)
      (case (car e)
        ((v) (let ((u (name-uniq (cadr e))))
               (itable-set! occ u (+ 1 (itable-ref occ u 0)))))
        ((lit str) #t)
        ((con prim) (for-each walk (caddr e)))
        ((app) (walk (cadr e)) (for-each walk (caddr e)))
        ((lam) (walk (caddr e)))
        ((let) (walk (caddr e)) (walk (cadddr e)))
        ((case) (walk (cadr e)) (for-each (lambda (alt) (walk (caddr alt))) (caddr e)))))
    (for-each (lambda (b) (walk (cdr b))) binds)
    occ))

(define (atomic? e)
  (case (car e)
    ((v lit str) #t)
    ((con) (null? (caddr e)))
    (else #f)))

(define (bool-con b) (Con (if b n-true n-false)))

(define (fold-prim op args)
  (define (lits?) (every (lambda (a) (eq? (car a) 'lit)) args))
  (define (strs?) (every (lambda (a) (eq? (car a) 'str)) args))
  (define (arg k) (cadr (list-ref args k)))
  (case op
    ((int-eq) (and (lits?) (bool-con (= (arg 0) (arg 1)))))
    ((int-lt) (and (lits?) (bool-con (< (arg 0) (arg 1)))))
    ((int-gt) (and (lits?) (bool-con (> (arg 0) (arg 1)))))
    ((int-ge) (and (lits?) (bool-con (>= (arg 0) (arg 1)))))
    ((int-cmp) (and (lits?) (Con (cond ((< (arg 0) (arg 1)) n-lt) ((= (arg 0) (arg 1)) n-eq) (else n-gt)))))
    ((show-int) (and (lits?) (Str (number->string (arg 0)))))
    ((str-eq) (and (strs?) (bool-con (string=? (arg 0) (arg 1)))))
    ((append) (cond ((strs?) (Str (string-append (arg 0) (arg 1))))
                    ((and (eq? (car (car args)) 'str) (string=? (arg 0) "")) (cadr args))
                    ((and (eq? (car (cadr args)) 'str) (string=? (arg 1) "")) (car args))
                    ;; (append "a" (append "b" x)) => (append "ab" x)
                    ((and (eq? (car (car args)) 'str) (eq? (car (cadr args)) 'prim)
                          (eq? (cadr (cadr args)) 'append) (eq? (car (car (caddr (cadr args)))) 'str))
                     (Prim 'append (Str (string-append (arg 0) (cadr (car (caddr (cadr args))))))
                           (cadr (caddr (cadr args)))))
                    (else #f)))
    (else #f)))

(define (simplify-pass binds)
  (let ((occ (occurrences binds))
        (subst (make-itable 256))
        (known (make-itable 64)))         ; variable -> (con-name . arg-vars) in this alt
    (define (count n) (itable-ref occ (name-uniq n) 0))
    (define (pick-alt k alts)
      (or (find (lambda (alt) (and (car alt) (= (name-uniq (car alt)) (name-uniq k)))) alts)
          (find (lambda (alt) (not (car alt))) alts)
          (error "synth: no alternative for" (name-occ k))))
    (define (known-case k args alts)
      ;; the scrutinee is k applied to args (expressions): bind the alternative's variables
      (let ((alt (pick-alt k alts)))
        (if (car alt)
            (lets (cadr alt) args (simp (caddr alt)))
            (simp (caddr alt)))))
    (define (simp e)
      (case (car e)
        ((v) (let ((r (itable-ref subst (name-uniq (cadr e)) #f))) (or r e)))
        ((lit str) e)
        ((con) (list 'con (cadr e) (map simp (caddr e))))
        ((prim) (let ((args (map simp (caddr e))))
                  (or (fold-prim (cadr e) args) (list 'prim (cadr e) args))))
        ((app) (let ((f (simp (cadr e))) (args (map simp (caddr e))))
                 (if (and (eq? (car f) 'lam) (= (length (cadr f)) (length args)))
                     (lets (cadr f) args (caddr f))
                     (list 'app f args))))
        ((lam) (Lam (cadr e) (simp (caddr e))))
        ((let) (let ((x (cadr e)) (rhs (simp (caddr e))))
                 (let ((c (count x)))
                   (cond ((= c 0) (simp (cadddr e)))
                         ((or (= c 1) (atomic? rhs))
                          (itable-set! subst (name-uniq x) rhs)
                          (simp (cadddr e)))
                         (else (Let x rhs (simp (cadddr e))))))))
        ((case)
         (let ((scrut (simp (cadr e))) (alts (caddr e)))
           (cond ((eq? (car scrut) 'con) (known-case (cadr scrut) (caddr scrut) alts))
                 ((and (eq? (car scrut) 'v) (itable-ref known (name-uniq (cadr scrut)) #f))
                  => (lambda (k) (known-case (car k) (map V (cdr k)) alts)))
                 ((eq? (car scrut) 'v)
                  (let ((u (name-uniq (cadr scrut))))
                    (Case scrut
                          (map (lambda (alt)
                                 (if (car alt)
                                     (begin
                                       (itable-set! known u (cons (car alt) (cadr alt)))
                                       (let ((rhs (simp (caddr alt))))
                                         (itable-set! known u #f)
                                         (list (car alt) (cadr alt) rhs)))
                                     (list #f '() (simp (caddr alt)))))
                               alts))))
                 (else (Case scrut (map (lambda (alt) (list (car alt) (cadr alt) (simp (caddr alt))))
                                        alts))))))
        (else (error "synth: simplify: bad node" e))))
    (map (lambda (b) (cons (car b) (simp (cdr b)))) binds)))

;;; --------------------------------------------------------------------------------------
;;; Phase 9: the canonical hash: names with fresh uniques are numbered in order of first
;;; appearance, so the hash does not depend on which uniques the supply handed out.

(define (canonical-hash binds)
  (let ((canon (make-itable 1024)) (next 0))
    (define (hname h n)
      (let ((u (name-uniq n)))
        (if (< u 0)
            (hash-symbol (mix h 1) (name-occ n))
            (let ((k (itable-ref canon u #f)))
              (if k
                  (mix (mix h 2) k)
                  (begin (itable-set! canon u next)
                         (set! next (+ next 1))
                         (hash-symbol (mix (mix h 3) (- next 1)) (name-occ n))))))))
    (define (hlist h es) (fold (lambda (e h) (walk h e)) (mix h (length es)) es))
    (define (walk h e)
      (case (car e)
        ((v) (hname (mix h 10) (cadr e)))
        ((lit) (mix (mix h 11) (+ (cadr e) 1000000)))
        ((str) (hash-string (mix h 12) (cadr e)))
        ((con) (hlist (hname (mix h 13) (cadr e)) (caddr e)))
        ((app) (hlist (walk (mix h 14) (cadr e)) (caddr e)))
        ((lam) (walk (fold (lambda (p h) (hname h p)) (mix h 15) (cadr e)) (caddr e)))
        ((let) (walk (walk (hname (mix h 16) (cadr e)) (caddr e)) (cadddr e)))
        ((case) (fold (lambda (alt h)
                        (walk (fold (lambda (x h) (hname h x))
                                    (if (car alt) (hname (mix h 18) (car alt)) (mix h 19))
                                    (cadr alt))
                              (caddr alt)))
                      (walk (mix h 17) (cadr e)) (caddr e)))
        ((prim) (hlist (hash-symbol (mix h 20) (cadr e)) (caddr e)))
        (else (error "synth: hash: bad node" e))))
    (fold (lambda (b h) (walk (hname h (car b)) (cdr b))) 7 binds)))

;;; --------------------------------------------------------------------------------------
;;; Compiling one module: returns (hash uniques-taken size interface).

(define (compile-module m fields passes next-unique)
  (let* ((fresh (make-namer next-unique))
         (src (module-source m (module-fields m fields)))
         (ast (parse-module (tokenise src)))
         (renamed (rename-module ast fresh))
         (core (derive-module renamed fresh))
         (core (specialise core fresh))
         (core (inline-small core fresh))
         (core (let loop ((k 0) (core core))
                 (if (= k passes) core (loop (+ k 1) (simplify-pass core))))))
    (list (canonical-hash core) (fresh #f) (program-size core) core)))

(define (result-hash r) (car r))
(define (result-uniques r) (cadr r))
(define (result-size r) (caddr r))
(define (result-iface r) (cadddr r))

;;; --------------------------------------------------------------------------------------
;;; The parallel build: one worker per capability, a work queue and a unique supply in MVars.

(define (parallel-build modules fields passes)
  (let ((queue (make-mvar (iota modules 1)))
        (supply (make-mvar 1)))
    (define (next-unique)
      (let ((u (mvar-take! supply)))
        (mvar-put! supply (+ u 1))
        u))
    (define (worker)
      (let loop ((done '()))
        (let ((q (mvar-take! queue)))
          (if (null? q)
              (begin (mvar-put! queue q) done)
              (begin (mvar-put! queue (cdr q))
                     (let ((m (car q)))
                       (loop (cons (cons m (compile-module m fields passes next-unique)) done))))))))
    (let ((workers (map (lambda (c) (fork-on c worker)) (iota (num-capabilities))))
          (results (make-vector (+ modules 1) #f)))
      (for-each (lambda (w)
                  (let ((done (thread-join w)))
                    (unless (list? done) (error "synth: a worker failed"))
                    (for-each (lambda (r) (vector-set! results (car r) (cdr r))) done)))
                workers)
      (values results (- (mvar-take! supply) 1)))))

;;; --------------------------------------------------------------------------------------
;;; Checking: an interpreter for the core language runs the derived code of a module on
;;; sample values and compares with what the Haskell Report says derived instances do.

(define (evaluate-program binds)
  (let ((globals (make-itable 256)))
    (define (lookup n env)
      (let ((p (assv (name-uniq n) env)))
        (if p
            (cdr p)
            (or (itable-ref globals (name-uniq n) #f)
                (error "synth: eval: unbound" (name-occ n))))))
    (define (bind ps vs env)
      (cond ((and (null? ps) (null? vs)) env)
            ((or (null? ps) (null? vs)) (error "synth: eval: arity mismatch"))
            (else (bind (cdr ps) (cdr vs) (cons (cons (name-uniq (car ps)) (car vs)) env)))))
    (define (ev e env)
      (case (car e)
        ((v) (lookup (cadr e) env))
        ((lit str) (cadr e))
        ((con) (cons (name-occ (cadr e)) (map (lambda (a) (ev a env)) (caddr e))))
        ((app) (let ((f (ev (cadr e) env)))
                 (unless (procedure? f) (error "synth: eval: not a function"))
                 (f (map (lambda (a) (ev a env)) (caddr e)))))
        ((lam) (let ((ps (cadr e)) (body (caddr e)))
                 (lambda (args) (ev body (bind ps args env)))))
        ((let) (ev (cadddr e) (bind (list (cadr e)) (list (ev (caddr e) env)) env)))
        ((case) (let* ((v (ev (cadr e) env))
                       (alt (or (find (lambda (alt) (and (car alt) (eq? (name-occ (car alt)) (car v))))
                                      (caddr e))
                                (find (lambda (alt) (not (car alt))) (caddr e))
                                (error "synth: eval: no alternative" (car v)))))
                  (ev (caddr alt) (if (car alt) (bind (cadr alt) (cdr v) env) env))))
        ((prim) (let ((args (map (lambda (a) (ev a env)) (caddr e))))
                  (case (cadr e)
                    ((int-eq) (list (if (= (car args) (cadr args)) 'True 'False)))
                    ((int-lt) (list (if (< (car args) (cadr args)) 'True 'False)))
                    ((int-gt) (list (if (> (car args) (cadr args)) 'True 'False)))
                    ((int-ge) (list (if (>= (car args) (cadr args)) 'True 'False)))
                    ((int-cmp) (list (cond ((< (car args) (cadr args)) 'LT)
                                           ((= (car args) (cadr args)) 'EQ)
                                           (else 'GT))))
                    ((str-eq) (list (if (string=? (car args) (cadr args)) 'True 'False)))
                    ((show-int) (number->string (car args)))
                    ((append) (string-append (car args) (cadr args)))
                    ((error) (error "synth: eval: Haskell error" (car args)))
                    (else (error "synth: eval: bad primitive" (cadr e))))))
        (else (error "synth: eval: bad node" e))))
    (for-each (lambda (b) (itable-set! globals (name-uniq (car b)) (ev (cdr b) '()))) binds)
    (lambda (occ . args)
      ((itable-ref globals (name-uniq (car (find-binding binds occ))) #f) args))))

;; Checks module m's compiled code; returns the number of cases checked.
(define (check-semantics m fields binds)
  (let* ((nf (module-fields m fields))
         (call (evaluate-program binds))
         (ncases 0))
    (define (con-sym i) (number->symbol "D" i))
    (define (value i k) (if (= i 0) (list 'D0) (list (con-sym i) k)))
    (define (field-of i) (- (modulo (* i 37) 11) 5))
    (define (expect got want what)
      (set! ncases (+ ncases 1))
      (unless (equal? got want)
        (error "synth: wrong answer" m what got want)))
    (define (shown i k)
      (if (= i 0) "D0"
          (string-append "D" (number->string i) " {f" (number->string i) " = " (number->string k) "}")))
    (define (tag-cmp i j) (cond ((< i j) 'LT) ((= i j) 'EQ) (else 'GT)))
    (do ((i 0 (+ i 1))) ((> i nf))
      (let* ((k (field-of i)) (v (value i k)) (w (value i (+ k 1)))
             (j (modulo (+ (* i 7) 3) (+ nf 1))) (u (value j (field-of j))))
        (expect (call '$fShowD_show v) (shown i k) 'show)
        (expect (call '$sshowsPrec11 v "!")
                (string-append (if (= i 0) "D0" (string-append "(" (shown i k) ")")) "!") 'showsPrec11)
        (expect (call '$fShowD_showsPrec 11 v "") (call '$sshowsPrec11 v "") 'showsPrec-spec)
        (expect (call '$fEqD_== v v) '(True) 'eq-self)
        (expect (call '$fEqD_== v w) (if (= i 0) '(True) '(False)) 'eq-field)
        (expect (call '$fEqD_== v u) (if (equal? v u) '(True) '(False)) 'eq-other)
        (expect (call '$fOrdD_compare v w) (if (= i 0) '(EQ) '(LT)) 'compare-field)
        (expect (call '$fOrdD_compare w v) (if (= i 0) '(EQ) '(GT)) 'compare-field2)
        (expect (call '$fOrdD_compare v u)
                (list (if (= i j) (tag-cmp (field-of i) (field-of j)) (tag-cmp i j))) 'compare-other)
        (expect (call '$fReadD_fromName (symbol->string (car v)) k)
                (if (= i 0) v (list (car v) k)) 'fromName)
        (when (> i 0)
          (expect (call (number->symbol "f" i) v) k 'selector))))
    ncases))

;;; --------------------------------------------------------------------------------------
;;; Main

(define (main args)
  (let ((modules (string->number (car args)))
        (fields (string->number (cadr args)))
        (passes (string->number (caddr args))))
    (let-values (((results total-uniques) (parallel-build modules fields passes)))
      ;; every module compiled exactly once, and the supply handed out each unique once
      (do ((m 1 (+ m 1))) ((> m modules))
        (unless (vector-ref results m) (error "synth: wrong answer: module not compiled" m)))
      (let ((taken (let loop ((m 1) (s 0))
                     (if (> m modules) s (loop (+ m 1) (+ s (result-uniques (vector-ref results m))))))))
        (unless (= taken total-uniques)
          (error "synth: wrong answer: supply out of balance" taken total-uniques)))
      ;; modules of equal shape (m mod 3) must give equal canonical hashes
      (let ((shape-hash (make-vector 3 #f)) (shape-uniques (make-vector 3 #f)))
        (do ((m 1 (+ m 1))) ((> m modules))
          (let ((r (vector-ref results m)) (s (modulo m 3)))
            (if (vector-ref shape-hash s)
                (unless (and (= (result-hash r) (vector-ref shape-hash s))
                             (= (result-uniques r) (vector-ref shape-uniques s)))
                  (error "synth: wrong answer: shapes differ" m (result-hash r) (vector-ref shape-hash s)))
                (begin (vector-set! shape-hash s (result-hash r))
                       (vector-set! shape-uniques s (result-uniques r))))))
        ;; a sample of modules recompiled sequentially with a private supply starting
        ;; elsewhere; their interfaces (kept from the parallel build) hashed again; the
        ;; compiled code run on sample values
        (let* ((sample (delete-duplicates
                        (filter (lambda (m) (<= 1 m modules))
                                (list 1 2 3 modules))))
               (cases 0))
          (for-each
           (lambda (m)
             (let* ((counter (+ 1000000000 (* m 7919)))
                    (seq (compile-module m fields passes
                                         (lambda () (set! counter (+ counter 1)) counter)))
                    (par (vector-ref results m)))
               (unless (= (result-hash seq) (result-hash par))
                 (error "synth: wrong answer" m (result-hash par) (result-hash seq)))
               (unless (= (result-uniques seq) (result-uniques par))
                 (error "synth: wrong answer: uniques" m (result-uniques par) (result-uniques seq)))
               (unless (= (canonical-hash (result-iface par)) (result-hash par))
                 (error "synth: wrong answer: interface changed" m))
               (set! cases (+ cases (check-semantics m fields (result-iface seq))))))
           sample)
          (let ((build-hash (let loop ((m 1) (h 0))
                              (if (> m modules) h
                                  (loop (+ m 1) (mix (mix h m) (result-hash (vector-ref results m)))))))
                (total-size (let loop ((m 1) (s 0))
                              (if (> m modules) s
                                  (loop (+ m 1) (+ s (result-size (vector-ref results m))))))))
            (display "synth: ") (display modules) (display " modules, ")
            (display fields) (display "+ fields, ") (display passes) (display " simplifier passes")
            (newline)
            (display "uniques taken: ") (display total-uniques)
            (display ", core size: ") (display total-size) (newline)
            (display "shape hashes: ")
            (display (vector->list shape-hash)) (newline)
            (display "build hash: ") (display build-hash) (newline)
            (display "checked: supply balanced, equal shapes agree, ")
            (display (length sample)) (display " modules recompiled sequentially, ")
            (display cases) (display " evaluations of derived code") (newline)))))))

(main (cdr (command-line)))
