#!/bin/sh
# The baseline step of issue 16 (the Chase-Lev deque replacing the spinlocked LIFO queue):
# skewed_live at -N2 (default -F2: major GCs steal) and gcbench (norm) at -N2, the build before
# the step against the build after it, interleaved, 5 runs each.
#   sh experiments/gen0-steal/baseline_step.sh BEFORE_DIR AFTER_DIR OUT_DIR
B=$1; A=$2; OUT=$3; mkdir -p "$OUT"
for i in 1 2 3 4 5; do
  for v in before after; do
    d=$B; [ $v = after ] && d=$A
    "$d/bench/micro/skewed_live" +RTS -N2 -s"$OUT/skewed-$v-$i.stats" --machine-readable -RTS > "$OUT/skewed-$v-$i.out"
  done
done
python3 testsuite/bench.py --use-build before="$B" --use-build after="$A" -c before=:-N2 -c after=:-N2 \
  -p gc/gcbench -k 5 --out "$OUT/bench" --metrics elapsed,gc,balance
