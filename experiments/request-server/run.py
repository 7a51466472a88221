#!/usr/bin/env python3
"""The request server under load (seed 004; issue 19 "Measure"): requests per second and
latency of testsuite/bench/io/http-server.scm, baseline and all patches, at several -N, on
the fixed page and the allocating route, and nginx serving the same page in the same run.

    python3 experiments/request-server/run.py [--variant [NAME=]BUILD]... [--caps 1,2,0]
        [--routes /,/alloc] [--conns 64] [--duration 5] [--reps 3] [--wrk-threads 2]
        [--nginx-workers auto] [--layouts K] [--out DIR] [--quick]

Variants default to baseline (the in-tree build, ROOT) and all-patches (_build/all-patches/,
configured when missing and brought up to date by make). A BUILD is a build directory, an rtslab binary, or
VARIANT or VARIANT@REV (`baseline`, `all-patches`, `baseline@v0.1`, `all-patches@my-branch`:
built in _build/ from the working tree or from that git revision, tools/variant.py); NAME,
the column's name, defaults to BUILD. The exact revision, configure arguments and patches of
every variant head the tables and go to results.json ("builds"). --caps lists the -N
values; 0 means plain `-N` (one capability per CPU the process may use). Every
configuration (variant x -N x route, and nginx x route /) runs --reps times, interleaved
(rep 1 of every configuration, then rep 2), each a fresh server started, driven by wrk for
--duration seconds over --conns keep-alive connections on 127.0.0.1, and stopped; the
median of the reps is reported. A run in which wrk saw a socket error or a non-2xx answer,
or the server did not stop cleanly with its own check passed, fails the whole experiment.

Code layout is a random factor (Note [Code layout as a factor], tools/layout.py): with
--layouts K (default 5, with --reps 5) every variant's rtslab is linked K ways (seeds 1..K),
each copied, and rep i runs layout i % K, so give --reps a multiple of K. Every run records
its layout's seed, and each variant's requests per second get benchstats' mean ratio to the
first variant with its 95 % interval over layouts and runs (testsuite/benchstats.py; every
variant runs seeds 1..K, so it is paired by seed; fewer than 3 layouts is a screen). 0
measures each build's own binary, with no interval, and the report says a difference may
then be a layout artefact. --quick is a smoke run: 1 s, 1 rep, the builds' own binaries.

nginx (Debian's package) serves the server's fixed page as a static file, one worker per
CPU (`worker_processes auto`), access log off, and keep-alive without a request limit, as
our server has none. Its throughput is the anchor: the report gives ours as a ratio of it.

Writes OUT/results.json (every run: wrk's text and figures, the server's -s statistics),
OUT/tables.md (what it prints) and OUT/throughput.png (requests per second against -N, one
line per variant and route, nginx as a horizontal line) when matplotlib is installed. OUT
defaults to experiments/request-server/results/.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "testsuite"))
import bench  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tools"))
import variant as variant_tool  # noqa: E402  (tools/variant.py: builds named by VARIANT@REV)
import layout  # noqa: E402  (tools/layout.py: a build's rtslab over K seeded layouts)
import benchstats  # noqa: E402  (testsuite/benchstats.py: intervals over layouts and runs)
import benchlib  # noqa: E402
import serverload  # noqa: E402

SERVER = os.path.join(ROOT, "testsuite", "bench", "io", "http-server.scm")
WORK = "500"                           # /alloc's keys per request (the suite's norm size)
STOPPED = "http-server: stopped; /alloc answers checked against (496 655854401), all equal\n"

NGINX_CONF = """\
worker_processes {workers};
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    keepalive_requests 100000000;
    keepalive_timeout 65;
    server {{
        listen 127.0.0.1:{port};
        root {dir}/www;
        location = / {{ default_type text/html; try_files /index.html =404; }}
    }}
}}
"""


def index_page(binary):
    """The server's fixed page, as it sends it (asked of a server started for the purpose)."""
    srv = serverload.Server([binary, SERVER, "127.0.0.1", "0", "10"])
    try:
        status, body, _ = serverload.get(srv.host, srv.port, "/")
        if status != 200:
            raise serverload.ServerError(f"GET / answered {status}")
        return body
    finally:
        srv.stop()


class Nginx:
    def __init__(self, page, workers):
        self.dir = tempfile.mkdtemp(prefix="rtslab-nginx-")
        os.chmod(self.dir, 0o755)                      # its workers run as nobody
        os.makedirs(os.path.join(self.dir, "www"))
        with open(os.path.join(self.dir, "www", "index.html"), "wb") as f:
            f.write(page)
        os.chmod(os.path.join(self.dir, "www"), 0o755)
        os.chmod(os.path.join(self.dir, "www", "index.html"), 0o644)
        import socket
        with socket.socket() as s:                     # a free port, given to nginx
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(NGINX_CONF.format(workers=workers, dir=self.dir, port=self.port))
        self.proc = subprocess.Popen(["nginx", "-p", self.dir, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.time() + 10
        while True:
            try:
                status, body, _ = serverload.get("127.0.0.1", self.port, "/", timeout=2)
                if status == 200 and body == page:
                    break
                raise serverload.ServerError(f"nginx answered {status}, {len(body)} bytes")
            except OSError:
                if time.time() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise serverload.ServerError("nginx did not start: " + self.log())
                time.sleep(0.1)

    def log(self):
        try:
            with open(os.path.join(self.dir, "error.log")) as f:
                return f.read()[-500:]
        except OSError:
            return "(no error log)"

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()                      # SIGTERM: fast shutdown
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


def run_rtslab(binary, caps, route, a):
    stats_fd, stats_path = tempfile.mkstemp(prefix="rtslab-rs-", suffix=".stats")
    os.close(stats_fd)
    n = "-N" if caps == 0 else f"-N{caps}"
    cmd = [binary, SERVER, "127.0.0.1", "0", WORK, "+RTS", n, "-s" + stats_path,
           "--machine-readable", "-RTS"]
    srv = serverload.Server(cmd)
    try:
        load = serverload.wrk(srv.url(route), a.conns, a.duration, threads=a.wrk_threads)
    except Exception:
        srv.kill()
        raise
    status, out = srv.stop()
    with open(stats_path) as f:
        stats = benchlib.parse_machine_readable(f.read())
    os.unlink(stats_path)
    why = None
    if load["errors"]:
        why = f"wrk saw errors {load['error_detail']}"
    elif status != 0 or out != STOPPED:
        why = f"the server exited {status}, printing {out!r}"
    return {"command": cmd, "load": load, "stats": stats, "why": why}


def run_nginx(nginx, route, a):
    load = serverload.wrk(nginx.url(route), a.conns, a.duration, threads=a.wrk_threads)
    why = f"wrk saw errors {load['error_detail']}" if load["errors"] else None
    return {"command": ["nginx"], "load": load, "stats": {}, "why": why}


def median(xs):
    return statistics.median(xs) if xs else None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", action="append", default=[], metavar="[NAME=]BUILD",
                    help="a variant to measure (repeat): BUILD is " + variant_tool.SPEC_HELP)
    ap.add_argument("--caps", default="1,2,0")
    ap.add_argument("--routes", default="/,/alloc")
    ap.add_argument("--conns", type=int, default=64)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--reps", type=int, default=benchstats.CLAIM_LAYOUTS,
                    help="runs per configuration, rep i on layout i mod K (default %d)"
                         % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--wrk-threads", type=int, default=2)
    ap.add_argument("--nginx-workers", default="auto")
    ap.add_argument("--no-nginx", action="store_true")
    ap.add_argument("--layouts", type=int, default=benchstats.CLAIM_LAYOUTS, metavar="K",
                    help="link each variant's rtslab K ways and spread the reps over them "
                         "(tools/layout.py; default %d, fewer than 3 is a screen); 0: each "
                         "build's own binary, no interval" % benchstats.CLAIM_LAYOUTS)
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--quick", action="store_true", help="1 s runs, 1 rep: a smoke run")
    a = ap.parse_args()
    if a.quick:
        a.duration, a.reps, a.layouts = 1, 1, 0
    if a.layouts < 0:
        ap.error("--layouts must be 0 or more")
    if a.layouts and a.reps % a.layouts:
        ap.error(f"--reps {a.reps} does not spread evenly over --layouts {a.layouts} "
                 f"(give a multiple of it)")
    if not serverload.have_wrk():
        sys.exit("request-server: wrk is not installed (Debian: apt-get install wrk)")
    if not a.no_nginx and not shutil.which("nginx"):
        sys.exit("request-server: nginx is not installed (Debian: apt-get install nginx), "
                 "or say --no-nginx")

    variants, builds = {}, {}      # variants: {name: [(layout seed, binary)]}, rep i runs i % K
    tmp = tempfile.mkdtemp(prefix="rtslab-rs-layouts-")
    for spec in a.variant or [f"baseline={ROOT}", "all-patches"]:
        name, eq, build = spec.partition("=")
        if not eq:
            build = name
        bdir, builds[name] = variant_tool.resolve_or_exit(build or name, ROOT, "request-server")
        if not a.layouts:
            variants[name] = [(0, builds[name]["binary"])]
            continue
        if os.path.basename(builds[name]["binary"]) != "rtslab":
            sys.exit(f"request-server: {build}: --layouts relinks a build's rtslab, not "
                     f"another binary")
        try:
            spread = layout.spread(bdir, "rtslab", a.layouts, log=print)
        except layout.LayoutError as e:
            sys.exit(f"request-server: {e}")
        variants[name] = []
        for seed, binary in spread:       # copies: a later relink cannot change a run's binary
            copy = os.path.join(tmp, f"{len(variants)}-{seed}-rtslab")
            shutil.copy2(binary, copy)
            variants[name].append((seed, copy))
    caps = [int(c) for c in a.caps.split(",")]
    routes = [r for r in a.routes.split(",") if r]
    configs = [(v, c, r) for v in variants for c in caps for r in routes]
    page = index_page(next(iter(variants.values()))[0][1])
    if not a.no_nginx:
        configs += [("nginx", None, "/")]

    runs = []
    print(f"request-server: {len(configs)} configurations x {a.reps} reps, {a.duration} s of "
          f"wrk each ({a.conns} connections, {a.wrk_threads} threads), "
          f"{os.cpu_count()} CPUs", flush=True)
    nginx = None
    try:
        for rep in range(1, a.reps + 1):
            for v, c, r in configs:
                if v == "nginx":
                    nginx = nginx or Nginx(page, a.nginx_workers)
                    res = run_nginx(nginx, r, a)
                else:
                    seed, binary = variants[v][(rep - 1) % len(variants[v])]
                    res = run_rtslab(binary, c, r, a)
                    res["layout"] = seed
                res.update(variant=v, caps=c, route=r, rep=rep)
                runs.append(res)
                ld = res["load"]
                print(f"  rep {rep} {v:12} {'-N' + str(c) if c else ('-N' if c == 0 else ''):5}"
                      f"{'' if res.get('layout') is None else ' layout %d' % res['layout']}"
                      f" {r:7} {ld['requests_per_second']:9.0f} req/s  p50 "
                      f"{ld.get('latency_p50', 0) * 1e3:6.2f} ms  p99 "
                      f"{ld.get('latency_p99', 0) * 1e3:6.2f} ms"
                      + (f"  FAILED: {res['why']}" if res["why"] else ""), flush=True)
    finally:
        if nginx:
            nginx.stop()
        shutil.rmtree(tmp, ignore_errors=True)

    def cell(v, c, r, key):
        return median([x["load"].get(key) for x in runs
                       if (x["variant"], x["caps"], x["route"]) == (v, c, r)
                       and x["load"].get(key) is not None])

    def versus(v, c, r):
        """benchstats' mean requests per second of V against the first variant's at (-N C,
        route R), with its 95 % interval over layouts and runs; '-' for the first variant or
        with fewer than 2 runs a side."""
        first = next(iter(variants))
        if v == first:
            return "-"
        side = {}
        for w in (first, v):
            side[w] = benchstats.sample_of(
                [x for x in runs if (x["variant"], x["caps"], x["route"]) == (w, c, r)],
                lambda x: x["load"].get("requests_per_second"))
            if sum(map(len, side[w].values())) < 2:
                return "-"
        return benchstats.fmt_ci(benchstats.ratio_ci(side[first], side[v]))

    nginx_rps = cell("nginx", None, "/", "requests_per_second") if not a.no_nginx else None
    k = max(len(b) for b in variants.values())
    if k > 1:
        note = benchstats.design(k, a.reps // k)
        spread = (f"; every variant over {k} code layouts (seeds 1..K each: paired by seed), "
                  f"the interval is benchstats' mean ratio to {next(iter(variants))} and its 95 "
                  f"% interval over layouts and runs" + (f"; {note}" if note else ""))
    else:
        spread = ("; one binary per variant, so there is no interval and a difference may be "
                  f"a layout artefact (--layouts K); {benchstats.design(1, a.reps)}")
    lines = [f"Machine: {platform.node()}, {os.cpu_count()} CPUs, "
             f"{datetime.datetime.now().astimezone().isoformat(timespec='seconds')}; "
             f"commit {bench.git_commit(ROOT)}",
             f"wrk: {a.conns} connections, {a.wrk_threads} threads, {a.duration} s per run, "
             f"median of {a.reps} interleaved runs; /alloc: {WORK} keys per request{spread}"]
    lines += ["  " + variant_tool.describe(v, builds[v]) for v in variants] + [""]
    if nginx_rps:
        lines.append(f"nginx 1.22 (`worker_processes {a.nginx_workers}`), fixed page: "
                     f"{nginx_rps:.0f} req/s, p50 "
                     f"{cell('nginx', None, '/', 'latency_p50') * 1e3:.2f} ms, p99 "
                     f"{cell('nginx', None, '/', 'latency_p99') * 1e3:.2f} ms")
        lines.append("")
    lines.append(f"| variant | -N | route | req/s | vs {next(iter(variants))}, 95 % interval | "
                 "p50 ms | p99 ms | of nginx | GC time | max pause ms |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|")
    for v in variants:
        for r in routes:
            for c in caps:
                rps = cell(v, c, r, "requests_per_second")
                sel = [x for x in runs if (x["variant"], x["caps"], x["route"]) == (v, c, r)]
                gc = median([x["stats"].get("GC_wall_seconds", 0) /
                             max(x["stats"].get("total_wall_seconds", 1), 1e-9) for x in sel])
                pause = median([max(x["stats"].get("gen_0_max_pause_seconds", 0),
                                    x["stats"].get("gen_1_max_pause_seconds", 0)) for x in sel])
                ratio = (f"{rps / nginx_rps:.2f}" if (nginx_rps and r == "/") else "")
                lines.append(f"| {v} | {'-N' if c == 0 else c} | {r} | {rps:.0f} | "
                             f"{versus(v, c, r)} | "
                             f"{cell(v, c, r, 'latency_p50') * 1e3:.2f} | "
                             f"{cell(v, c, r, 'latency_p99') * 1e3:.2f} | {ratio} | "
                             f"{gc * 100:.1f}% | {pause * 1e3:.2f} |")
    failed = [x for x in runs if x["why"]]
    if failed:
        lines.append("")
        lines.append(f"FAILED runs: {len(failed)}")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"args": vars(a), "variants": variants, "builds": builds,
                   "nginx_rps": nginx_rps,
                   "machine": bench.machine(), "commit": bench.git_commit(ROOT),
                   "runs": runs}, f, indent=1)
    try:
        plot(runs, variants, caps, routes, nginx_rps, os.path.join(a.out, "throughput.png"))
    except ImportError:
        print("request-server: no matplotlib, no plot")
    return 1 if failed else 0


def plot(runs, variants, caps, routes, nginx_rps, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ncpu = os.cpu_count() or 1
    xs = sorted({c if c else ncpu for c in caps})
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for v in variants:
        for r in routes:
            pts = []
            for c in caps:
                vals = [x["load"]["requests_per_second"] for x in runs
                        if (x["variant"], x["caps"], x["route"]) == (v, c, r)]
                if vals:
                    pts.append((c if c else ncpu, statistics.median(vals)))
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                    linestyle="-" if r == "/" else "--", label=f"{v} {r}")
    if nginx_rps:
        ax.axhline(nginx_rps, color="grey", linestyle=":", label="nginx /")
    ax.set_xticks(xs)
    ax.set_xlabel("capabilities (-N)")
    ax.set_ylabel("requests per second (wrk, median)")
    ax.set_yscale("log")
    ax.set_title("http-server.scm under wrk on 127.0.0.1")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    sys.exit(main())
