(list #\a #\A #\space #\newline #\tab #\nul #\null #\x41 #\x3bb #\λ #\( #\) #\; #\" #\\ #\alarm #\delete #\escape)
(display "a\tb\nc\\d\"e\x41;\x3bb; line \
   continued")
(quote |a b|) '|sym\x41;\|bar| 'λ '... '+ '- '-> '<=?
