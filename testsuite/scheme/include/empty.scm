;; Included by ../include.scm: no forms.
