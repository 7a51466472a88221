#!/bin/sh
# A screenshot of ThreadScope showing an rtslab eventlog, under a virtual X server:
#
#   experiments/eventlog/threadscope_shot.sh RTSLAB OUT.png
#
# Runs parallel/partree (quick size, 14 5 100) at -N2 with +RTS -l, opens the log in
# ThreadScope under xvfb-run (Debian: threadscope, xvfb, imagemagick), waits for it to draw,
# and keeps its window (1200x600 at the top left of the 1280x800 screen) as OUT.png.
set -e
rtslab=$(realpath "$1")
out=$(realpath "$2")
here=$(dirname "$(realpath "$0")")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
"$rtslab" "$here/../../testsuite/bench/parallel/partree.scm" 14 5 100 +RTS -N2 -lpartree.eventlog -RTS > /dev/null
cat > shot.sh <<'SHOT'
threadscope partree.eventlog > threadscope.log 2>&1 &
pid=$!
sleep 20
import -window root screen.png
kill $pid
SHOT
xvfb-run -a -s "-screen 0 1280x800x24" sh shot.sh
convert screen.png -crop 1200x600+0+0 +repage "$out"
echo "$out"
