'(1 . 2) '(a b . c) '[x y] #(1 #(2) "s" #\c) #u8(0 1 255) '#u8() '#() '() 'nil #t #f #true #false
`(1 ,(+ 1 1) ,@(list 3 4) #(5 ,6) (nested `(a ,(b ,(+ 1 2)) ,@c)) . ,(list 7))
(quasiquote (unquote x)) (quote (quote x))
