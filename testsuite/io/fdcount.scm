;; Included by the IO tests: the process's open descriptors, counted in /proc/self/fd.
(define (fd-count)
  (let loop ((i 0) (n 0))
    (if (= i 8192)
        n
        (loop (+ i 1)
              (if (file-exists? (string-append "/proc/self/fd/" (number->string i))) (+ n 1) n)))))
