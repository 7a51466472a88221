#!/usr/bin/env python3
"""Servers under load: start a server program, find its port, drive it with wrk, stop it.

Shared by the suite runner (bench.py, for the programs whose header has a `;; load:` line,
testsuite/bench/io/), the test driver's quick run of those programs, the IO tests
(testsuite/io/http.py) and experiments/request-server/.

A server program prints `... listening on HOST PORT` on standard error once it accepts; it
stops on SIGTERM, printing to standard output what it checked, and exits 0.

    python3 testsuite/serverload.py smoke [--routes /,/alloc] -- CMD...
        starts CMD (in the current directory), GETs each route once
        (each must answer 200), loads each for a second (wrk when it is installed; else
        a few hundred keep-alive requests from Python), stops the server and prints its
        standard output, exiting with its status; a failure is reported on stderr, exit 1.
"""

import argparse
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import threading

LISTENING = re.compile(r"listening on (\S+) (\d+)")


class ServerError(Exception):
    pass


class Server:
    """A running server program: proc, host, port."""

    def __init__(self, cmd, cwd=None, env=None, start_timeout=30.0):
        self.cmd = cmd
        self.proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.stderr_lines = []
        self.host = self.port = None
        ready = threading.Event()

        def pump():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                self.stderr_lines.append(line)
                m = LISTENING.search(line)
                if m and not ready.is_set():
                    self.host, self.port = m.group(1), int(m.group(2))
                    ready.set()
            ready.set()

        self._stderr_thread = threading.Thread(target=pump, daemon=True)
        self._stderr_thread.start()
        if not ready.wait(start_timeout) or self.port is None:
            self.kill()
            raise ServerError(f"the server did not say it was listening within "
                              f"{start_timeout:.0f} s; stderr: {self.stderr_tail()}")

    def stderr_tail(self, n=10):
        return " | ".join(self.stderr_lines[-n:]) or "(nothing)"

    def url(self, path):
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{path}"

    def pid(self):
        return self.proc.pid

    def open_fds(self):
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self, timeout=30.0):
        """SIGTERM, then wait: (exit status, stdout text)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
            self._stderr_thread.join(5)
            raise ServerError(f"the server did not stop within {timeout:.0f} s of SIGTERM")
        self._stderr_thread.join(5)
        return self.proc.returncode, out.decode("utf-8", errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def get(host, port, path, timeout=10.0, method="GET"):
    """One request on a fresh connection: (status, body bytes, headers dict)."""
    c = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        c.request(method, path)
        r = c.getresponse()
        body = r.read()
        return r.status, body, {k.lower(): v for k, v in r.getheaders()}
    finally:
        c.close()


# --- wrk ----------------------------------------------------------------------------------

def have_wrk():
    return shutil.which("wrk") is not None


_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def _duration(text):
    m = re.fullmatch(r"([0-9.]+)(us|ms|s|m)", text)
    if not m:
        raise ValueError(f"not a wrk duration: {text!r}")
    return float(m.group(1)) * _UNITS[m.group(2)]


def parse_wrk(text):
    """What `wrk --latency` printed, as a dict: requests, seconds, requests_per_second,
    latency_p50/p75/p90/p99 and latency_avg/max (seconds), errors (socket errors of every
    kind plus non-2xx/3xx responses) and error_detail."""
    out = {"errors": 0, "error_detail": {}}
    m = re.search(r"^\s*(\d+) requests in ([0-9.]+)(us|ms|s|m)", text, re.M)
    if not m:
        raise ValueError("wrk printed no 'N requests in T' line")
    out["requests"] = int(m.group(1))
    out["seconds"] = _duration(m.group(2) + m.group(3))
    m = re.search(r"^Requests/sec:\s*([0-9.]+)", text, re.M)
    if not m:
        raise ValueError("wrk printed no 'Requests/sec:' line")
    out["requests_per_second"] = float(m.group(1))
    m = re.search(r"^\s*Latency\s+([0-9.]+\w+)\s+[0-9.]+\w+\s+([0-9.]+\w+)", text, re.M)
    if m:
        out["latency_avg"], out["latency_max"] = _duration(m.group(1)), _duration(m.group(2))
    for pct, value in re.findall(r"^\s*(50|75|90|99)%\s+([0-9.]+\w+)\s*$", text, re.M):
        out[f"latency_p{pct}"] = _duration(value)
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if m:
        for kind, n in zip(("connect", "read", "write", "timeout"), m.groups()):
            if int(n):
                out["error_detail"][kind] = int(n)
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if m and int(m.group(1)):
        out["error_detail"]["non-2xx"] = int(m.group(1))
    out["errors"] = sum(out["error_detail"].values())
    return out


def wrk(url, connections, duration, threads=2, timeout_s=None, request_timeout=2):
    """Runs wrk against url (bounded: `duration` whole seconds, `connections` connections, a
    request timeout of `request_timeout` seconds, which wrk counts as an error) and returns
    parse_wrk's dict plus the command and its text."""
    threads = max(1, min(threads, connections))
    duration = max(1, int(duration))                  # wrk takes whole seconds
    cmd = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--timeout", f"{request_timeout}s",
           "--latency", url]
    p = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=timeout_s or duration + 30)
    if p.returncode != 0:
        raise ServerError(f"wrk exited {p.returncode}: {p.stderr.strip() or p.stdout.strip()}")
    r = parse_wrk(p.stdout)
    r["command"], r["text"] = cmd, p.stdout
    return r


def python_load(host, port, path, connections=4, requests=100):
    """Keep-alive requests from Python threads when wrk is not installed: the number that
    did not answer 200."""
    failures = []

    def client():
        c = http.client.HTTPConnection(host, port, timeout=10)
        try:
            for _ in range(requests):
                c.request("GET", path)
                r = c.getresponse()
                r.read()
                if r.status != 200:
                    failures.append(r.status)
        except (OSError, http.client.HTTPException) as e:
            failures.append(str(e))
        finally:
            c.close()

    ts = [threading.Thread(target=client) for _ in range(connections)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return failures


def smoke(cmd, routes):
    try:
        srv = Server(cmd)
    except ServerError as e:
        print(f"smoke: {e}", file=sys.stderr)
        return 1
    try:
        for route in routes:
            status, body, _ = get(srv.host, srv.port, route)
            if status != 200 or not body:
                raise ServerError(f"GET {route}: status {status}, {len(body)} bytes")
            if have_wrk():
                r = wrk(srv.url(route), connections=8, duration=1)
                if r["errors"] or r["requests"] == 0:
                    raise ServerError(f"wrk on {route}: {r['requests']} requests, "
                                      f"errors {r['error_detail']}")
            else:
                bad = python_load(srv.host, srv.port, route)
                if bad:
                    raise ServerError(f"load on {route}: {len(bad)} failures, e.g. {bad[0]}")
    except (ServerError, OSError, http.client.HTTPException) as e:
        srv.kill()
        print(f"smoke: {e}; server stderr: {srv.stderr_tail()}", file=sys.stderr)
        return 1
    status, out = srv.stop()
    sys.stdout.write(out)
    if status != 0:
        print(f"smoke: the server exited {status}; stderr: {srv.stderr_tail()}", file=sys.stderr)
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["smoke"])
    ap.add_argument("--routes", default="/")
    argv = sys.argv[1:]
    if "--" not in argv:
        ap.error("give the server's command after --")
    cut = argv.index("--")
    args = ap.parse_args(argv[:cut])
    cmd = argv[cut + 1:]
    if not cmd:
        ap.error("give the server's command after --")
    return smoke(cmd, [r for r in args.routes.split(",") if r])


if __name__ == "__main__":
    sys.exit(main())
