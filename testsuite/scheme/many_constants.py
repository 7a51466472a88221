#!/usr/bin/env python3
"""Writes a Scheme program with N top-level defines, a vector of N string literals and a
list of N quoted symbols (many_constants in testsuite/scheme/TESTS: the compiler's constant
pool is a hash table, Note in runtime/scheme/compile.c's const_index). It prints
(N sum-of-the-defined-values N last-symbol).

    python3 many_constants.py N > p.scm"""
import sys

n = int(sys.argv[1])
out = [f"(define g{i} {i})" for i in range(n)]
out.append("(define v (vector " + " ".join(f'"s{i}"' for i in range(n)) + "))")
out.append("(define syms (list " + " ".join(f"'sym-{i}" for i in range(n)) + "))")
out.append("(define (sum-globals) (+ " + " ".join(f"g{i}" for i in range(0, n, max(1, n // 100))) + "))")
out.append(f"(display (list (vector-length v) (+ g0 g{n - 1}) (length syms) (list-ref syms {n - 1})"
           f" (string=? (vector-ref v {n - 1}) \"s{n - 1}\") (sum-globals)))")
print("\n".join(out))
