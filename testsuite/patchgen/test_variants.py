#!/usr/bin/env python3
"""The variant matrix's covering sets (testsuite/variants.py): the pairwise covering set covers
every pair of patches in all four values for every queue length it accepts; the rows that
`make check-patches` builds (the base, each written patch alone) with all patches cover every
pair, so `pairwise --after-queue` (CI's) adds no build; a patch not written leaves pairs that
the rows it adds do cover; and the command line refuses --after-queue outside pairwise."""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))
import variants  # noqa: E402
from tally import check, summary  # noqa: E402


def singles(k, written):
    return [tuple(1 if i == j else 0 for i in range(k)) for j in written]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(HERE)))
    args = ap.parse_args()

    for k in range(1, 11):
        rows = variants.covering_set(k)
        check(not variants.uncovered_pairs(rows, k), f"covering_set({k}) covers every pair")
    # uncovered_pairs itself: one row covers one value of each pair; two rows that differ in
    # every column still miss the pairs whose values are equal-and-different.
    check(len(variants.uncovered_pairs([(0, 0, 0)], 3)) == 9, "one row of 3 leaves 9 of 12")
    check(sorted(variants.uncovered_pairs([(0, 0), (1, 1)], 2)) == [(0, 1, 0, 1), (0, 1, 1, 0)],
          "all off and all on leave on/off and off/on")

    for k in range(2, 11):
        given = [(0,) * k] + singles(k, range(k)) + [(1,) * k]
        check(variants.rows_after(given, k) == [], f"k={k}: base, singles and all on need nothing")
        # patch 1 not written: its on/off pairs are missing, and the rows added cover them
        given = [(0,) * k] + singles(k, [j for j in range(k) if j != 1]) + [(1,) * k]
        missing = variants.uncovered_pairs(given, k)
        extra = variants.rows_after(given, k)
        check(missing and all(1 in (i, j) for i, j, _, _ in missing),
              f"k={k}: without patch 1 alone, only pairs with patch 1 are missing")
        check(extra and not variants.uncovered_pairs(given + extra, k),
              f"k={k}: the rows added cover what patch 1 alone would have")
        # nothing given but the ends: the whole covering set's middle, or less
        ends = [(0,) * k, (1,) * k]
        extra = variants.rows_after(ends, k)
        check(not variants.uncovered_pairs(ends + extra, k) and len(extra) <= 5,
              f"k={k}: from the ends alone, at most 5 rows cover every pair")

    tool = os.path.join(os.path.dirname(HERE), "variants.py")
    r = subprocess.run([sys.executable, tool, "list", "pairwise", "--after-queue",
                        "--src", args.src], capture_output=True, text=True)
    patches = variants.benchlib.patch_names(args.src)
    written = [p for p in patches
               if os.path.isdir(os.path.join(args.src, "testsuite", "patches", p))]
    if len(written) == len(patches):
        check(r.returncode == 0 and r.stdout == "",
              f"this tree: every patch written, --after-queue lists no build (got {r.stdout!r})")
    else:
        check(r.returncode == 0 and r.stdout.strip(),
              "this tree: a patch not written, --after-queue lists builds")
    r = subprocess.run([sys.executable, tool, "full", "--after-queue", "--src", args.src],
                       capture_output=True, text=True)
    check(r.returncode == 2 and "--after-queue is for pairwise" in r.stderr,
          "full --after-queue is refused")

    print("variants self-test:", end=" ")
    return summary()


if __name__ == "__main__":
    sys.exit(main())
