#!/usr/bin/env rtslab
; line comment
#| block #| nested |# comment |#
(define x #;(ignored datum) 1) #; #;a b
(display x) ; end
