;; minimax: exhaustive minimax over the tic-tac-toe game tree (from the empty board or after
;; X's first move), counting games, wins and nodes; the top two levels of the tree are
;; parallel tasks, repeated reps times. (nofib parallel/minimax, ICFP'09 parallel set)
;; quick: 4 1
;; norm: -1 3
;; slow: -1 20

(define argv (map string->number (cdr (command-line))))
(define opening (car argv))               ; -1: the empty board; 0..8: X's first square
(define reps (cadr argv))
(define split-levels 2)

(define (join t)
  (let ((v (thread-join t)))
    (if v v (error "minimax: a task failed" (thread-id t)))))

;; A board is a vector of 9 cells: 0 empty, 1 X, 2 O. Boards are never changed once made.
(define lines '((0 1 2) (3 4 5) (6 7 8) (0 3 6) (1 4 7) (2 5 8) (0 4 8) (2 4 6)))
(define (winner b)                        ; 1, 2, or 0 for nobody
  (let loop ((ls lines))
    (if (null? ls)
        0
        (let* ((l (car ls)) (p (vector-ref b (car l))))
          (if (and (not (= p 0))
                   (= p (vector-ref b (cadr l)))
                   (= p (vector-ref b (caddr l))))
              p
              (loop (cdr ls)))))))
(define (moves b player)                  ; the boards after each move, in square order
  (let loop ((i 8) (acc '()))
    (if (< i 0)
        acc
        (loop (- i 1)
              (if (= (vector-ref b i) 0)
                  (let ((nb (vector-copy b))) (vector-set! nb i player) (cons nb acc))
                  acc)))))

;; The analysis of a position: (value games x-wins o-wins draws nodes), where value is the
;; minimax value for X (1 win, 0 draw, -1 loss) and the counts are over the whole subtree.
(define (leaf w)
  (case w
    ((1) '(1 1 1 0 0 1))
    ((2) '(-1 1 0 1 0 1))
    (else '(0 1 0 0 1 1))))
(define (combine player results)
  (let loop ((rs results) (best #f) (g 0) (xw 0) (ow 0) (dr 0) (nd 1))
    (if (null? rs)
        (list best g xw ow dr nd)
        (let* ((r (car rs)) (v (car r)))
          (loop (cdr rs)
                (cond ((not best) v) ((= player 1) (max best v)) (else (min best v)))
                (+ g (list-ref r 1)) (+ xw (list-ref r 2)) (+ ow (list-ref r 3))
                (+ dr (list-ref r 4)) (+ nd (list-ref r 5)))))))
(define (other player) (- 3 player))

(define (analyse b player)
  (let ((w (winner b)) (next (moves b player)))
    (if (or (not (= w 0)) (null? next))
        (leaf w)
        (combine player (map (lambda (nb) (analyse nb (other player))) next)))))

;; The same, with the children of the top levels analysed by threads of their own, the k-th
;; child of a node with number path placed on capability (9 path + k) mod -N.
(define (par-analyse b player levels path)
  (let ((w (winner b)) (next (moves b player)))
    (cond ((or (not (= w 0)) (null? next)) (leaf w))
          ((= levels 0) (analyse b player))
          (else
           (let loop ((next next) (k 0) (ts '()))
             (if (pair? next)
                 (let* ((nb (car next))
                        (id (+ (* 9 path) k 1))
                        (t (fork-on id (lambda ()
                                         (par-analyse nb (other player) (- levels 1) id)))))
                   (loop (cdr next) (+ k 1) (cons t ts)))
                 (combine player (map join (reverse ts)))))))))

(define start (make-vector 9 0))
(define to-move 1)
(if (>= opening 0)
    (begin (vector-set! start opening 1) (set! to-move 2)))

;; Check: counted independently (a memoised Python search); the empty-board numbers are the
;; well-known 255168 games (131184 X wins, 77904 O wins, 46080 draws) and 549946 nodes.
(define expected
  (case opening
    ((-1) '(0 255168 131184 77904 46080 549946))
    ((0 2 6 8) '(0 27732 14652 7896 5184 59705))
    ((1 3 5 7) '(0 29592 14232 10176 5184 63905))
    ((4) '(0 25872 15648 5616 4608 55505))
    (else (error "minimax: the opening must be -1 or a square 0..8" opening))))

(define result #f)
(do ((r 0 (+ r 1))) ((= r reps))
  (set! result (par-analyse start to-move split-levels 0))
  (if (not (equal? result expected))
      (error "minimax: wrong answer" result expected)))

(display "minimax: tic-tac-toe ")
(display (if (< opening 0) "from the empty board" "after X opens on square "))
(if (>= opening 0) (display opening))
(display ", repeated ") (display reps) (newline)
(display "value ") (display (car result))
(display (case (car result) ((0) " (draw)") ((1) " (X wins)") (else " (O wins)")))
(display ", games ") (display (list-ref result 1))
(display " (X ") (display (list-ref result 2)) (display ", O ") (display (list-ref result 3))
(display ", drawn ") (display (list-ref result 4)) (display "), nodes ")
(display (list-ref result 5)) (newline)
(display "check: the known counts and game value") (newline)
