;; An uncaught raise of an object that is not an error object: the object is printed.
(display "raising")
(newline)
(raise 'oops)
(display "not reached")
(newline)
