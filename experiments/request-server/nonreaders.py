#!/usr/bin/env python3
"""The request server's write timeout under load (issue 45, item 1): clients that never read
beside normal clients under wrk.

    python3 experiments/request-server/nonreaders.py [--rtslab ./rtslab] [--io-manager epoll]
        [--seconds 60] [--nonreaders 8] [--normal 8] [--write-timeout 2] [--head-timeout 5]
        [--max-conns 16] [-N 2]

starts testsuite/bench/io/http-server.scm (HEAD-TIMEOUT, MAX-CONNS and WRITE-TIMEOUT as given)
and, for --seconds, keeps --nonreaders clients connected that send pipelined requests of / and
never read the answers (each with a 4 KiB receive buffer; one closed by the server is replaced
by a new one at once), while wrk drives --normal keep-alive connections on / (`wrk -t2
-c<normal> --timeout 10s --latency`). MAX-CONNS defaults to nonreaders + normal, so the
non-readers alone can take every slot the normal clients do not hold.

It prints wrk's figures (requests, requests/s, latency p50/p99/max, errors: every socket
error and every non-2xx answer), and for the non-readers: connections made, closed by the
server, the time each was held (connect to the server's close) and the time from its first
refused send (the server had stopped reading it: its write to it was blocked) to the close,
median and max. The run passes (exit 0) when wrk saw no error and answered requests, every
non-reader that blocked was closed no later than WRITE-TIMEOUT + 1 s after it blocked (the
server's write blocks a little before the client's send does, so this bounds the slot's hold
past the write timeout by 1 s of scheduling), and the server stopped cleanly (exit 0, every
/alloc answer checked). Needs wrk. On 127.0.0.1 only.
"""
import argparse
import os
import select
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import serverload  # noqa: E402

SERVER = os.path.join(ROOT, "testsuite", "bench", "io", "http-server.scm")
REQUEST = b"GET / HTTP/1.1\r\nHost: soak\r\n\r\n"


class NonReader:
    def __init__(self, host, port):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(30)
        self.sock.connect((host, port))
        self.sock.setblocking(False)
        self.t_connect = time.time()
        self.t_blocked = None
        self.t_closed = None
        self.t_stalled = None       # when the server's Send-Q to it last changed (ss)
        self.port = self.sock.getsockname()[1]
        self.pending = b""
        self.poll = select.poll()
        self.poll.register(self.sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR)

    def step(self):
        """Sends what the kernel takes, and notices the server's close (its end of stream or
        reset, seen by poll without reading anything); True once closed."""
        if self.t_closed is not None:
            return True
        if self.poll.poll(0):
            self.t_closed = time.time()
            return True
        while True:
            if not self.pending:
                self.pending = REQUEST * 64
            try:
                n = self.sock.send(self.pending)
            except BlockingIOError:
                if self.t_blocked is None:
                    self.t_blocked = time.time()
                return False
            except OSError:
                self.t_closed = time.time()
                return True
            self.pending = self.pending[n:]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rtslab", default=os.path.join(ROOT, "rtslab"))
    ap.add_argument("--io-manager", default="epoll", choices=["epoll", "uring"])
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--nonreaders", type=int, default=8)
    ap.add_argument("--normal", type=int, default=8)
    ap.add_argument("--write-timeout", type=float, default=2.0)
    ap.add_argument("--head-timeout", type=float, default=5.0)
    ap.add_argument("--max-conns", type=int, default=None)
    ap.add_argument("-N", type=int, default=2)
    a = ap.parse_args()
    if not serverload.have_wrk():
        print("nonreaders: needs wrk", file=sys.stderr)
        return 2
    max_conns = a.max_conns or a.nonreaders + a.normal
    cmd = [a.rtslab, SERVER, "127.0.0.1", "0", "200", str(a.head_timeout), str(max_conns),
           str(a.write_timeout), "+RTS", f"-N{a.N}", f"--io-manager={a.io_manager}", "-RTS"]
    print("server:", " ".join(cmd), flush=True)
    srv = serverload.Server(cmd)
    done, finished = threading.Event(), []

    def nonreaders():
        live = []
        while not done.is_set():
            while len(live) < a.nonreaders and not done.is_set():
                try:
                    live.append(NonReader(srv.host, srv.port))
                except OSError as e:             # a connect that waited too long: counted
                    finished.append(("connect-failed", str(e)))
            for r in live:
                r.step()
            for r in [r for r in live if r.t_closed is not None]:
                live.remove(r)
                if r.port in sendq:
                    r.t_stalled = sendq.pop(r.port)[1]
                r.sock.close()
                finished.append(r)
            time.sleep(0.005)
        for r in live:
            r.sock.close()
            finished.append(r)

    # the server's side of each connection, from ss every 50 ms: when its Send-Q last changed
    # (the server wrote, or the client's kernel took bytes): from then on its write is stalled
    sendq = {}                            # client port -> (Send-Q, time it last changed)

    def watch_sendq():
        while not done.is_set():
            p = subprocess.run(["ss", "-tnH", "state", "established",
                                f"( sport = :{srv.port} )"], capture_output=True, text=True)
            now = time.time()
            for line in p.stdout.splitlines():
                f = line.split()
                if len(f) < 4:
                    continue
                q, peer = int(f[1]), int(f[3].rsplit(":", 1)[1])
                if sendq.get(peer, (None,))[0] != q:
                    sendq[peer] = (q, now)
            time.sleep(0.05)

    t = threading.Thread(target=nonreaders, daemon=True)
    t.start()
    w = threading.Thread(target=watch_sendq, daemon=True)
    w.start()
    time.sleep(0.5)                       # the non-readers connect first, and take their slots
    r = serverload.wrk(srv.url("/"), connections=a.normal, duration=a.seconds, threads=2,
                       request_timeout=10)
    done.set()
    t.join()
    w.join()
    code, out = srv.stop()
    readers = [x for x in finished if isinstance(x, NonReader)]
    failed_connects = [x for x in finished if not isinstance(x, NonReader)]
    closed = [x for x in readers if x.t_closed is not None]
    held = [x.t_closed - x.t_connect for x in closed]
    after_block = [x.t_closed - x.t_blocked for x in closed if x.t_blocked is not None]
    stalled = [x.t_closed - x.t_stalled for x in closed if x.t_stalled is not None]
    open_at_end = [x for x in readers if x.t_closed is None]
    open_past = [x for x in open_at_end
                 if x.t_blocked is not None and time.time() - x.t_blocked > a.write_timeout + 1]

    def fmt(v):
        return (f"median {statistics.median(v):.2f} s, max {max(v):.2f} s" if v else "none")

    print(f"wrk: {r['requests']} requests in {r['seconds']:.1f} s "
          f"({r['requests_per_second']:.0f}/s), latency p50 {r['latency_p50'] * 1e3:.2f} ms, "
          f"p99 {r['latency_p99'] * 1e3:.2f} ms, max {r['latency_max'] * 1e3:.1f} ms, "
          f"errors {r['errors']} {r['error_detail'] or ''}")
    print(f"non-readers: {len(readers)} connections, {len(closed)} closed by the server, "
          f"{len(open_at_end)} open at the end; {len(failed_connects)} connects failed")
    print(f"  held (connect to close): {fmt(held)}")
    print(f"  first refused send to close: {fmt(after_block)}")
    print(f"  server's Send-Q last changed to close (its write stalled): {fmt(stalled)} "
          f"(write timeout {a.write_timeout} s; ss every 50 ms)")
    print(f"server: exit {code}, printed {out.strip()!r}")
    ok = (r["errors"] == 0 and r["requests"] > 0 and not failed_connects and not open_past
          and all(x <= a.write_timeout + 1 for x in stalled) and len(closed) > 0
          and code == 0 and "all equal" in out)
    print("nonreaders: ok" if ok else "nonreaders: FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
