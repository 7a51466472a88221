#!/bin/bash
# The request server's memory over many connections (issue 33, item 9): starts
# testsuite/bench/io/http-server.scm at -N2 on one IO back end, loads it with wrk making a new
# connection per request (Connection: close, 16 at a time) in slices (1 s, then 5 s each), and
# after each slice prints the connections served so far, the server's resident set (VmRSS)
# and its /stats line (connections open at that moment). On 127.0.0.1 only, bounded in time.
#   usage: soak.sh RTSLAB_BINARY epoll|uring SLICES [RTS option...]
# The RTS options are added to the server's (e.g. -O1m). FIRST_N=10000 makes the first slice
# that many connections (wrk stops each of its two threads after half of them) instead of 1 s.
set -eu
bin=$(realpath "$1") iom=$2 slices=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here/../../testsuite/bench/io"
"$bin" http-server.scm 127.0.0.1 0 200 +RTS -N2 --io-manager="$iom" -s"$tmp/s" "$@" -RTS \
    >"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 100); do grep -q listening "$tmp/err" && break; sleep 0.1; done
port=$(grep -o 'listening on [^ ]* [0-9]*' "$tmp/err" | awk '{print $4}')
total=0
for s in $(seq "$slices"); do
    d=5s script=
    if [ "$s" = 1 ]; then
        d=1s
        if [ -n "${FIRST_N:-}" ]; then
            d=60s script="$tmp/stop.lua"
            printf 'local n = 0\nfunction response()\n  n = n + 1\n  if n >= %d then wrk.thread:stop() end\nend\n' \
                $((FIRST_N / 2)) >"$script"
        fi
    fi
    wrk -t2 -c16 -d$d ${script:+-s "$script"} -H 'Connection: close' "http://127.0.0.1:$port/" \
        >"$tmp/wrk" 2>/dev/null &
    wrk_pid=$!
    if [ -n "$script" ]; then
        # wrk waits for its -d even once every thread has stopped: interrupt it (it prints its
        # summary on SIGINT) once the server's count of answers (its /stats, less these asks)
        # has reached 90 % of FIRST_N and stays put for 0.25 s
        before=$(curl -s "http://127.0.0.1:$port/stats" | awk '{print $4}') asked=0 last=-1 still=0
        while kill -0 "$wrk_pid" 2>/dev/null; do
            asked=$((asked + 1))
            got=$(( $(curl -s "http://127.0.0.1:$port/stats" | awk '{print $4}') - before - asked ))
            if [ "$got" = "$last" ]; then still=$((still + 1)); else still=0; fi
            last=$got
            [ $((got * 10)) -ge $((FIRST_N * 9)) ] && [ "$still" -ge 5 ] && { kill -INT "$wrk_pid"; break; }
            sleep 0.05
        done
    fi
    wait "$wrk_pid" || true
    n=$(awk '/requests in/{print $1}' "$tmp/wrk")
    total=$((total + n))
    echo "connections=$total rss_kb=$(awk '/VmRSS/{print $2}' "/proc/$pid/status")" \
         "stats=\"$(curl -s "http://127.0.0.1:$port/stats" | tr '\n' ' ')\""
done
kill -TERM "$pid"
wait "$pid" || { echo "the server exited $?"; exit 1; }
tail -n 1 "$tmp/out"
grep 'total memory in use' "$tmp/s"
