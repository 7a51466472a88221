#!/usr/bin/env python3
"""The request server (testsuite/bench/io/http-server.scm) as a test, from Python clients.

    python3 httptest.py BUILD BACKEND 'RTSOPTS' [STAGE...]

starts the server with `+RTS --io-manager=BACKEND RTSOPTS -RTS` and runs the stages (all of them
when none is named), printing one line `STAGE: ok` per stage that passed, or `STAGE: FAILED
...` and exit 1. Every stage checks the answers byte for byte, and after the last one the
server must have no connection open (its /stats) and as many descriptors as before the first
(/proc/PID/fd); SIGTERM then stops it, and what it printed is checked.

Stages:
  roundtrip   keep-alive requests on one connection (GET, HEAD, /alloc, /stats), pipelined
              requests in one write, HTTP/1.0 (closed after) and Connection: close
  errors      400 (malformed request lines, a header without a colon, a bad
              Content-Length, bytes that are not UTF-8), 404, 405 (after its body), 413,
              431 (one long header, many headers), 501 (Transfer-Encoding): each answered
              and the connection closed
  slow        a client sending its request one byte at a time, and a 431 head the same way
  disconnect  clients that go away mid-request: half a head then close, half a head then
              reset (SO_LINGER 0), a whole request then close before reading, a reset in
              the middle of a body
  many        CONNS connections open at once (default 1000), each sending a request and
              reading its answer while all the others are open
  wrk         wrk, 64 connections for 2 s on / and on /alloc: no socket error, every answer
              200 (needs wrk)
  soak        the server's memory over many connections (issue 33): wrk makes a new
              connection per request (Connection: close, 16 at a time) for SOAK_FIRST
              connections (default 10,000), then SOAK_MORE more (default 40,000); the
              server's VmRSS after the second load must be within 10 % of it after the
              first (needs wrk). Before aging (Note [Aging] in runtime/sm/storage.h) and the
              server's slot table, RSS grew by about 60 % between the two
  idle        the head timeout (HTTP_TEST_HEAD_TIMEOUT seconds, the server's fourth argument;
              needs it set): 60 slowloris connections (nothing sent, half a head, a byte a
              second) and a keep-alive connection idle after its answer are all closed by the
              server between the timeout and three times it, while a connection that sends
              its request at once is answered
  limit       the bound on open connections (HTTP_TEST_MAX_CONNS, the server's fifth
              argument; needs it set): three times that many connections opened and kept
              silent leave the server with at most that many more descriptors; once every
              one sends a request, every one is answered (the held back ones as others close)
  nonreader   the write timeout (HTTP_TEST_WRITE_TIMEOUT seconds, the server's sixth argument,
              with HTTP_TEST_MAX_CONNS; needs both set): MAX_CONNS clients send pipelined
              requests and never read the answers, until the server's writes to them block
              and every slot is taken; then a normal client, waiting in the listen backlog, is
              answered within NONREADER_BOUND seconds (default 20), and every non-reading
              connection has been closed by the server (before: each held its slot for ever,
              and the normal client was never answered)
"""

import os
import select
import selectors
import signal
import socket
import struct
import subprocess
import tempfile
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import serverload  # noqa: E402

SERVER = os.path.join(os.path.dirname(HERE), "bench", "io", "http-server.scm")
WORK = "200"
INDEX = (b"<!DOCTYPE html>\n<html><head><title>rtslab</title></head>\n"
         b"<body><h1>rtslab</h1><p>A request served by a Scheme thread.</p></body></html>\n")
ALLOC = b"keys 199 checksum 435160181\n"          # what /alloc answers for WORK 200
STOPPED = ("http-server: stopped; /alloc answers checked against (199 435160181), "
           "all equal\n")


class Failed(Exception):
    pass


def expect(cond, what):
    if not cond:
        raise Failed(what)


def connect(srv, timeout=10.0):
    s = socket.create_connection((srv.host, srv.port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


class Reader:
    """Responses read off one socket, by Content-Length."""

    def __init__(self, sock):
        self.sock, self.buf = sock, b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Failed(f"the server closed the connection; unread: {self.buf[:80]!r}")
        self.buf += data

    def response(self, head_only=False):
        """(status, headers dict, body)."""
        while b"\r\n\r\n" not in self.buf:
            self.fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ", 2)
        expect(len(parts) == 3 and parts[0] == "HTTP/1.1", f"status line {lines[0]!r}")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        n = 0 if head_only else int(headers["content-length"])
        while len(self.buf) < n:
            self.fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return int(parts[1]), headers, body

    def closed(self):
        """Whether the server closes the connection (end of file, nothing more sent)."""
        try:
            data = self.sock.recv(65536)
        except ConnectionResetError:
            return True
        return data == b"" and self.buf == b""


def request(path, method="GET", extra=""):
    return f"{method} {path} HTTP/1.1\r\nHost: test\r\n{extra}\r\n".encode()


def check_index(r, close=False):
    status, headers, body = r
    expect(status == 200 and body == INDEX, f"GET /: status {status}, body {body[:60]!r}")
    expect(headers.get("content-type") == "text/html", f"GET /: headers {headers}")
    expect(("connection" in headers) == close, f"GET /: Connection header {headers}")


def stage_roundtrip(srv):
    with connect(srv) as s:
        rd = Reader(s)
        for _ in range(50):                                 # keep-alive
            s.sendall(request("/"))
            check_index(rd.response())
        s.sendall(request("/alloc"))
        status, _, body = rd.response()
        expect(status == 200 and body == ALLOC, f"GET /alloc: {status} {body!r}")
        s.sendall(request("/", "HEAD"))
        status, headers, body = rd.response(head_only=True)
        expect(status == 200 and headers["content-length"] == str(len(INDEX)),
               f"HEAD /: {status} {headers}")
        s.sendall(request("/alloc") + request("/") + request("/alloc"))    # pipelined
        expect(rd.response()[2] == ALLOC and rd.response()[2] == INDEX
               and rd.response()[2] == ALLOC, "pipelined answers out of order")
        s.sendall(request("/stats"))
        status, _, body = rd.response()
        expect(status == 200 and body.startswith(b"open "), f"GET /stats: {body!r}")
    # Connection is a list of options (RFC 9110, 7.6.1): "close" among others, in any case,
    # or in a second Connection header, closes (before: only a value of "close" alone did,
    # and "TE, close" stayed open until the head timeout)
    for req, what in ((b"GET / HTTP/1.0\r\n\r\n", "HTTP/1.0"),
                      (request("/", extra="Connection: close\r\n"), "Connection: close"),
                      (request("/", extra="Connection: TE, close\r\nTE: trailers\r\n"),
                       "Connection: TE, close"),
                      (request("/", extra="Connection: Close ,TE\r\n"), "Connection: Close ,TE"),
                      (request("/", extra="Connection: TE\r\nConnection: close\r\n"),
                       "two Connection headers"),
                      (b"GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n",
                       "HTTP/1.0 keep-alive, close")):
        with connect(srv) as s:
            rd = Reader(s)
            s.sendall(req)
            check_index(rd.response(), close=True)
            expect(rd.closed(), f"{what}: the connection stayed open")
    with connect(srv) as s:                                 # HTTP/1.0 asking to keep alive
        rd = Reader(s)
        for ka in (b"keep-alive", b"Keep-Alive", b"TE, keep-alive"):
            s.sendall(b"GET / HTTP/1.0\r\nConnection: " + ka + b"\r\n\r\n")
            check_index(rd.response())
    with connect(srv) as s:     # an absolute-form target (RFC 9112, 3.2.2; before: 404)
        rd = Reader(s)
        s.sendall(b"GET http://127.0.0.1/ HTTP/1.1\r\nHost: test\r\n\r\n")
        check_index(rd.response())
        s.sendall(b"GET HTTP://example.org:8080/alloc HTTP/1.1\r\nHost: test\r\n\r\n")
        status, _, body = rd.response()
        expect(status == 200 and body == ALLOC, f"GET http://.../alloc: {status} {body!r}")
    with connect(srv) as s:     # lines ended by a bare LF (RFC 9112, 2.2; before: never answered)
        rd = Reader(s)
        for req in (b"GET / HTTP/1.1\nHost: test\n\n", b"GET / HTTP/1.1\r\nHost: test\n\r\n",
                    b"GET / HTTP/1.1\nHost: test\r\n\n"):
            s.sendall(req)
            check_index(rd.response())


ERRORS = [
    (b"garbage\r\n\r\n", 400),
    (b"GET /\r\n\r\n", 400),
    (b"GET / HTTP/2.0\r\n\r\n", 400),
    (b"GET  / HTTP/1.1\r\n\r\n", 400),
    (b"G(T / HTTP/1.1\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nNo colon here\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\n: empty name\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: ten\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
    # Content-Length is ASCII digits alone (RFC 9112), not Scheme's number syntax, and two
    # that differ are a 400: before, "#x5" was read as 5 and the last header won, so the
    # bytes after a 5-byte body were taken as a second request (request smuggling)
    (b"GET / HTTP/1.1\r\nContent-Length: #x5\r\n\r\nhelloGET /nothing HTTP/1.1\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: +5\r\n\r\nhello", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: #e5\r\n\r\nhello", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: 5.0\r\n\r\nhello", 400),
    (b"GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 5\r\n\r\nhello", 400),
    (b"GET /\xff\xfe HTTP/1.1\r\n\r\n", 400),
    # a header value with NUL, a control character, bytes that are not UTF-8 or an overlong
    # form (before: each answered 200)
    (b"GET / HTTP/1.1\r\nX-A: a\x00b\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nX-A: a\x07b\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nX-A: \xff\xfe\r\n\r\n", 400),
    (b"GET / HTTP/1.1\r\nX-A: \xc0\x80\r\n\r\n", 400),
    (b"GET /nothing-here HTTP/1.1\r\n\r\n", 404),
    (b"POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 405),
    (b"GET / HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", 413),
    (b"GET / HTTP/1.1\r\nX-Long: " + b"a" * 9000 + b"\r\n\r\n", 431),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X-H%d: value\r\n" % i for i in range(800)) + b"\r\n",
     431),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 501),
]


def stage_errors(srv):
    for req, want in ERRORS:
        with connect(srv) as s:
            rd = Reader(s)
            try:
                s.sendall(req)
            except (BrokenPipeError, ConnectionResetError):
                pass                        # a 431 may close before the last bytes arrive
            status, headers, body = rd.response()
            expect(status == want, f"{req[:40]!r}: status {status}, expected {want}")
            expect(headers.get("connection") == "close" and body.startswith(b"%d " % want),
                   f"{req[:40]!r}: headers {headers} body {body!r}")
            expect(rd.closed(), f"{req[:40]!r}: the connection stayed open after {status}")


def stage_slow(srv):
    with connect(srv) as s:
        rd = Reader(s)
        for b in request("/", extra="User-Agent: one-byte-at-a-time\r\n"):
            s.sendall(bytes([b]))
            time.sleep(0.001)
        check_index(rd.response())
        s.sendall(request("/alloc"))                        # and the connection goes on
        expect(rd.response()[2] == ALLOC, "slow client: second answer")
    with connect(srv) as s:
        rd = Reader(s)
        head = b"GET / HTTP/1.1\r\nX-Long: " + b"b" * 8300
        for i in range(0, len(head), 7):                    # a 431 in dribbles
            try:
                s.sendall(head[i:i + 7])
            except (BrokenPipeError, ConnectionResetError):
                break
            if i % 700 == 0:
                time.sleep(0.002)
        status = rd.response()[0]
        expect(status == 431, f"slow 431: status {status}")


def reset(s):
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def stage_disconnect(srv):
    for _ in range(20):
        s = connect(srv)
        s.sendall(b"GET / HTTP/1.1\r\nHost: te")            # half a head, then close
        s.close()
        s = connect(srv)
        s.sendall(b"GET /alloc HTTP/1.1\r\n")               # half a head, then reset
        reset(s)
        s = connect(srv)
        s.sendall(request("/alloc") * 5)                    # requests, gone before the answers
        s.close()
        s = connect(srv)
        s.sendall(b"POST / HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + b"x" * 5000)
        reset(s)                                            # reset in the middle of a body
    with connect(srv) as s:                                 # and the server still answers
        rd = Reader(s)
        s.sendall(request("/"))
        check_index(rd.response())


def closing_request(i):
    """The request connection i sends in the many-connection stages: /alloc or /, then close."""
    return b"GET %s HTTP/1.1\r\nConnection: close\r\n\r\n" % (b"/alloc" if i % 2 else b"/")


def check_closing_answer(i, a, of=""):
    """What connection i read to the end of the stream: the whole answer to closing_request(i)."""
    body = ALLOC if i % 2 else INDEX
    expect(a.startswith(b"HTTP/1.1 200 OK\r\n") and a.endswith(b"\r\n\r\n" + body),
           f"connection {i}{of}: {a[:60]!r}...{a[-40:]!r}")


def stage_many(srv, conns):
    sel = selectors.DefaultSelector()
    socks = [socket.create_connection((srv.host, srv.port), timeout=30) for _ in range(conns)]
    answers = {}
    for i, s in enumerate(socks):
        s.sendall(closing_request(i))
        s.setblocking(False)
        answers[i] = b""
        sel.register(s, selectors.EVENT_READ, i)
    pending, deadline = conns, time.time() + 90
    while pending and time.time() < deadline:
        for key, _ in sel.select(timeout=1):
            data = key.fileobj.recv(65536)
            if data:
                answers[key.data] += data
            else:
                sel.unregister(key.fileobj)
                pending -= 1
    for s in socks:
        s.close()
    expect(pending == 0, f"{pending} of {conns} connections got no whole answer in 90 s")
    for i, a in answers.items():
        check_closing_answer(i, a)


def stage_wrk(srv):
    if not serverload.have_wrk():
        raise Failed("wrk is not installed")
    # Errors are what this checks, not latency: a request is a timeout only past 20 s (wrk's
    # 2 s counted slow answers of a sanitizer build on a loaded machine as errors).
    for path in ("/", "/alloc"):
        r = serverload.wrk(srv.url(path), connections=64, duration=2, request_timeout=20)
        expect(r["requests"] > 0 and r["errors"] == 0,
               f"wrk {path}: {r['requests']} requests, errors {r['error_detail']}, latency "
               f"p99 {r.get('latency_p99')} s, max {r.get('latency_max')} s")


SOAK_FIRST = int(os.environ.get("SOAK_FIRST", "10000"))
SOAK_MORE = int(os.environ.get("SOAK_MORE", "40000"))


def vm_rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise Failed("no VmRSS in /proc/PID/status")


def served(srv):
    _, body, _ = serverload.get(srv.host, srv.port, "/stats")
    return int(body.split()[3])                     # "open N served M"


def wrk_connections(srv, n):
    """n requests through wrk, each on a new connection (2 threads of 8 connections, each
    thread stopping after n / 2 answers); returns the requests wrk counted. wrk waits for
    its -d even when every thread has stopped, so it is interrupted (it prints its summary
    on SIGINT) once the server's /stats shows that the answers have stopped."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        script.write("local n = 0\nfunction response()\n  n = n + 1\n"
                     f"  if n >= {n // 2} then wrk.thread:stop() end\nend\n")
        script.flush()
        cmd = ["wrk", "-t2", "-c16", "-d600s", "--timeout", "20s", "-s", script.name,
               "-H", "Connection: close", srv.url("/")]
        before = served(srv)
        asked = still = 0
        last = -1
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            # wrk has stopped once the server's count (less these asks) reaches 90 % of n
            # and then stays put for 0.25 s (the count is wrk's answers as the server
            # counts them, a little below wrk's own)
            while p.poll() is None:
                asked += 1
                got = served(srv) - before - asked
                still = still + 1 if got == last else 0
                last = got
                if got >= 0.9 * n and still >= 5:
                    break
                time.sleep(0.05)
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
            out, err = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
    if p.returncode != 0:
        raise Failed(f"wrk exited {p.returncode}: {err.strip() or out.strip()}")
    r = serverload.parse_wrk(out)
    expect(r["errors"] == 0 and r["requests"] >= n,
           f"wrk: {r['requests']} requests of {n}, errors {r['error_detail']}")
    return r["requests"]


def stage_soak(srv):
    if not serverload.have_wrk():
        raise Failed("wrk is not installed")
    first = wrk_connections(srv, SOAK_FIRST)
    rss_first = vm_rss_kb(srv.pid())
    more = wrk_connections(srv, SOAK_MORE)
    rss_more = vm_rss_kb(srv.pid())
    print(f"soak: VmRSS {rss_first} kB after {first} connections, {rss_more} kB after "
          f"{first + more} ({100.0 * (rss_more - rss_first) / rss_first:+.1f} %)", flush=True)
    expect(rss_more <= 1.10 * rss_first,
           f"VmRSS grew from {rss_first} kB to {rss_more} kB, more than 10 %")


def closed_by_server(s, within):
    """Whether the server closes s (end of stream or reset) within `within` seconds; a
    trickling client's dribbles (bytes to send) are sent meanwhile, one a second."""
    s.settimeout(0.2)
    end = time.time() + within
    while time.time() < end:
        try:
            if s.recv(4096) == b"":
                return True
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
    return False


def stage_idle(srv):
    expect(HEAD_TIMEOUT is not None, "the idle stage needs HTTP_TEST_HEAD_TIMEOUT")
    t0 = time.time()
    silent = [connect(srv) for _ in range(20)]
    halves = [connect(srv) for _ in range(20)]
    for s in halves:
        s.sendall(b"GET / HTTP/1.1\r\nHost: test\r\nX-Slow: ")
    trickle = [connect(srv) for _ in range(20)]
    keep = connect(srv)
    rd = Reader(keep)
    keep.sendall(request("/"))
    check_index(rd.response())                   # answered; then idle on a live connection
    prompt = connect(srv)
    prompt.sendall(request("/"))
    check_index(Reader(prompt).response())       # a request sent at once is not cut off
    prompt.close()
    # the trickling clients send a byte a second: each byte does not extend the deadline
    for k in range(int(HEAD_TIMEOUT * 3) + 1):
        if time.time() - t0 > HEAD_TIMEOUT * 0.9:
            break
        for s in trickle:
            try:
                s.sendall(b"X-%d: y\r\n" % k)
            except OSError:
                pass
        time.sleep(1)
    end = t0 + HEAD_TIMEOUT * 3
    still = [s for s in silent + halves + trickle + [keep]
             if not closed_by_server(s, max(end - time.time(), 0.2))]
    took = time.time() - t0
    expect(not still, f"{len(still)} of 61 idle connections still open {took:.1f} s after they "
                      f"opened (head timeout {HEAD_TIMEOUT} s)")
    expect(took >= HEAD_TIMEOUT * 0.9, f"idle connections closed after {took:.1f} s, before the "
                                        f"head timeout of {HEAD_TIMEOUT} s")
    for s in silent + halves + trickle + [keep]:
        s.close()


NONREADER_BOUND = float(os.environ.get("NONREADER_BOUND", "20"))


class NonReader:
    """A client that sends pipelined requests and never reads the answers (a small receive
    buffer, so that the server's writes block soon)."""

    def __init__(self, srv):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        self.sock.settimeout(10)
        self.sock.connect((srv.host, srv.port))
        self.sock.setblocking(False)
        self.pending = b""
        self.blocked = False        # a send was refused: the server has stopped reading
        self.gone = False           # the server closed (or reset) the connection
        self.poll = select.poll()
        self.poll.register(self.sock, select.POLLRDHUP | select.POLLHUP | select.POLLERR)

    def push(self):
        """Sends requests until the kernel takes no more (keeps the server's reads fed)."""
        while not self.gone:
            if not self.pending:
                self.pending = request("/") * 64
            try:
                n = self.sock.send(self.pending)
            except BlockingIOError:
                self.blocked = True
                return
            except OSError:
                self.gone = True
                return
            self.pending = self.pending[n:]

    def closed_by_server(self):
        """Whether the server has closed it (its end of stream, or a reset), seen by poll
        without reading: reading would make it a client that reads, and let the server's
        blocked writes go on."""
        if not self.gone and self.poll.poll(0):
            self.gone = True
        return self.gone


def stage_nonreader(srv):
    expect(WRITE_TIMEOUT is not None and MAX_CONNS is not None,
           "the nonreader stage needs HTTP_TEST_WRITE_TIMEOUT and HTTP_TEST_MAX_CONNS")
    readers = [NonReader(srv) for _ in range(MAX_CONNS)]
    t0 = time.time()
    while not all(r.blocked for r in readers):     # every slot taken, the server's writes full
        expect(time.time() - t0 < NONREADER_BOUND,
               f"the non-reading clients could still send after {NONREADER_BOUND} s")
        for r in readers:
            r.push()
        time.sleep(0.01)
    normal = connect(srv)                  # in the listen backlog: every slot is held
    normal.sendall(request("/"))
    normal.setblocking(False)
    got, answered = b"", None
    while time.time() - t0 < NONREADER_BOUND:
        for r in readers:
            r.push()                       # the non-readers go on sending while they can
        try:
            data = normal.recv(65536)
            expect(data, f"the normal client's connection was closed; it read {got[:80]!r}")
            got += data
        except BlockingIOError:
            pass
        if len(got) >= len(INDEX) and got.endswith(INDEX):
            answered = time.time() - t0
            break
        time.sleep(0.01)
    normal.close()
    expect(answered is not None,
           f"a normal client behind {MAX_CONNS} non-reading ones got no answer in "
           f"{NONREADER_BOUND} s (write timeout {WRITE_TIMEOUT} s); it read {got[:80]!r}")
    expect(got.startswith(b"HTTP/1.1 200 OK\r\n"), f"the normal client read {got[:80]!r}")
    while time.time() - t0 < NONREADER_BOUND and not all(r.closed_by_server() for r in readers):
        time.sleep(0.05)
    still = sum(not r.closed_by_server() for r in readers)
    for r in readers:
        r.sock.close()
    expect(still == 0, f"{still} of {len(readers)} non-reading connections still open after "
                       f"{NONREADER_BOUND} s (write timeout {WRITE_TIMEOUT} s)")
    print(f"nonreader: the normal client answered {answered:.1f} s after the non-readers "
          f"connected, all {len(readers)} closed by the server after {time.time() - t0:.1f} s "
          f"(write timeout {WRITE_TIMEOUT} s)", flush=True)


def stage_limit(srv, fds_before):
    expect(MAX_CONNS is not None, "the limit stage needs HTTP_TEST_MAX_CONNS")
    socks = [connect(srv) for _ in range(3 * MAX_CONNS)]
    time.sleep(1.0)                         # time for an unbounded acceptor to take them all
    held = srv.open_fds() - fds_before
    for i, s in enumerate(socks):
        s.sendall(closing_request(i))
    for i, s in enumerate(socks):
        s.settimeout(30)
        a = b""
        while True:
            data = s.recv(65536)
            if not data:
                break
            a += data
        check_closing_answer(i, a, f" of {len(socks)}")
        s.close()
    expect(held <= MAX_CONNS, f"{len(socks)} silent connections: the server held {held} "
                              f"descriptors more, past its bound of {MAX_CONNS}")


STAGES = {"roundtrip": stage_roundtrip, "errors": stage_errors, "slow": stage_slow,
          "disconnect": stage_disconnect, "wrk": stage_wrk, "idle": stage_idle,
          "soak": stage_soak, "nonreader": stage_nonreader}
HEAD_TIMEOUT = (float(os.environ["HTTP_TEST_HEAD_TIMEOUT"])
                if os.environ.get("HTTP_TEST_HEAD_TIMEOUT") else None)
MAX_CONNS = (int(os.environ["HTTP_TEST_MAX_CONNS"])
             if os.environ.get("HTTP_TEST_MAX_CONNS") else None)
WRITE_TIMEOUT = (float(os.environ["HTTP_TEST_WRITE_TIMEOUT"])
                 if os.environ.get("HTTP_TEST_WRITE_TIMEOUT") else None)


def settle(srv, fds_before):
    """After the stages: no connection open (but the one asking) and no descriptor leaked;
    connection threads end when their peers' closes arrive, so wait a little for them."""
    deadline = time.time() + 20
    while True:
        _, body, _ = serverload.get(srv.host, srv.port, "/stats")
        fds = srv.open_fds()
        if body.startswith(b"open 1 ") and fds == fds_before:
            return body.decode().split()
        if time.time() > deadline:
            raise Failed(f"after the stages: /stats says {body!r}, descriptors {fds} "
                         f"(before: {fds_before})")
        time.sleep(0.1)


def main():
    build, backend, nopt = sys.argv[1], sys.argv[2], sys.argv[3]
    stages = sys.argv[4:] or ["roundtrip", "errors", "slow", "disconnect", "many"]
    conns = int(os.environ.get("HTTP_TEST_CONNS", "1000"))
    cmd = [os.path.join(build, "rtslab"), SERVER, "127.0.0.1", "0", WORK]
    if HEAD_TIMEOUT is not None or MAX_CONNS is not None or WRITE_TIMEOUT is not None:
        cmd.append(os.environ.get("HTTP_TEST_HEAD_TIMEOUT") or "60")
    if MAX_CONNS is not None or WRITE_TIMEOUT is not None:
        cmd.append(str(MAX_CONNS or 4096))
    if WRITE_TIMEOUT is not None:
        cmd.append(os.environ["HTTP_TEST_WRITE_TIMEOUT"])
    cmd += ["+RTS", f"--io-manager={backend}"] + nopt.split() + ["-RTS"]
    srv = serverload.Server(cmd)
    status, failed = 0, []
    try:
        time.sleep(0.2)
        fds_before = srv.open_fds()
        for name in stages:
            try:
                if name == "many":
                    stage_many(srv, conns)
                elif name == "limit":
                    stage_limit(srv, fds_before)
                else:
                    STAGES[name](srv)
                print(f"{name}: ok", flush=True)
            except (Failed, OSError) as e:
                print(f"{name}: FAILED {e}", flush=True)
                failed.append(f"{name}: {e}")
                status = 1
        if status == 0:
            stats = settle(srv, fds_before)
            print(f"no leak: open {stats[1]} (this request), descriptors {fds_before} before "
                  f"and after", flush=True)
    except (Failed, OSError, serverload.ServerError) as e:
        print(f"FAILED {e}", flush=True)
        failed.append(str(e))
        status = 1
    code, out = srv.stop()
    if out != STOPPED or code != 0:
        print(f"server: exit {code}, printed {out!r}; stderr {srv.stderr_tail()}")
        status = 1
    else:
        print("server: stopped by SIGTERM, exit 0, every /alloc answer checked")
    if failed:
        # last, so that the test driver, which shows a failed test's last line, shows why
        print("FAILED " + "; ".join(failed)[:600], flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
