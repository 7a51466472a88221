#!/usr/bin/env python3
"""The sanity checker's work is linear in the program's (Note [Sanity checking cost] in
runtime/sm/sanity.c): counts, not times.

    sanity_cost.py RTSLAB PROGRAM.scm SMALL BIG [RTS options...]

Runs PROGRAM.scm with SMALL and with BIG as its argument under `+RTS -DS -s
--machine-readable`, and reads the words the checker walked (rtslab_sanity_words_walked)
and the bytes allocated. The program (sanity_threads.scm) forks N threads that block on an
MVar and stay live until joined: its heap and its GCs both grow with N, so a checker that
walks the whole heap at every GC walks O(N^2) words (the checker before Note [Sanity
checking cost]: 32 words per word allocated at N = 25 000, 131 at N = 100 000). Checks:

 - growth: words walked per word allocated at BIG is at most GROWTH (1.5) times that at
   SMALL. Quadratic work makes it BIG/SMALL times (4 for 25 000 -> 100 000); linear work
   keeps it about constant (the floor's full walks of a small heap weigh more at SMALL).
 - bound: at BIG it is at most BOUND (8) words walked per word allocated, the sum of what
   the Note allows here: the young generation, walked before each GC, is at most what was
   allocated (1); what minor GCs promote, walked after them, is at most that again (1); the
   full walks of the old generation are held to RTS_SANITY_FULL_BUDGET (4) words per word
   allocated, a budget the major GCs' full walks share (here, with every thread live and
   -F2, they use about all of it); the remembered objects, walked before and after each GC
   (here the TSOs and stacks of threads that ran since the GC before: each thread runs twice),
   and the roots, well under the remaining 2.
"""
import ast
import os
import subprocess
import sys
import tempfile

GROWTH = 1.5
BOUND = 8.0


def walked_per_allocated(cmd, rts):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stats")
        full = cmd + ["+RTS", "-DS", "-s" + path, "--machine-readable"] + rts + ["-RTS"]
        p = subprocess.run(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            sys.exit("%s exited with %d:\n%s" % (" ".join(full), p.returncode, p.stderr))
        with open(path) as fh:
            stats = dict(ast.literal_eval(fh.read()))
    walked = int(stats["rtslab_sanity_words_walked"])
    alloc_words = int(stats["allocated_bytes"]) // 8
    checks, full = int(stats["rtslab_sanity_checks"]), int(stats["rtslab_sanity_full_checks"])
    if checks != 2 * int(stats["num_GCs"]):
        sys.exit("%d sanity checks for %s GCs" % (checks, stats["num_GCs"]))
    return walked / alloc_words, walked, alloc_words, checks, full


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rtslab, prog, small, big = sys.argv[1:5]
    rts = sys.argv[5:]
    results = {}
    for n in (small, big):
        results[n] = walked_per_allocated([rtslab, prog, n], rts)
        r, walked, alloc, checks, full = results[n]
        print("N=%s: %d words walked, %.2f per word allocated; %d checks, %d whole-heap"
              % (n, walked, r, checks, full))
    rs, rb = results[small][0], results[big][0]
    bad = []
    if rb > GROWTH * rs:
        bad.append("words walked per word allocated grew from %.2f (N=%s) to %.2f (N=%s), "
                   "more than %.1f times" % (rs, small, rb, big, GROWTH))
    if rb > BOUND:
        bad.append("%.2f words walked per word allocated at N=%s, more than %.1f"
                   % (rb, big, BOUND))
    if bad:
        sys.exit("sanity cost: " + "; ".join(bad))
    print("sanity cost ok")


if __name__ == "__main__":
    main()
