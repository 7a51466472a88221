;; Included into a procedure's body by ../err_include_body.scm: its expression fails.
(vector-ref (vector) 0)
