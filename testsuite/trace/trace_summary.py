#!/usr/bin/env python3
"""Summarise an rtslab eventlog (`+RTS -l`): GHC's binary eventlog format, or Chrome Trace
Event JSON (`--eventlog-format=chrome`).

    trace_summary.py FILE             per-capability times and a GC pause histogram
    trace_summary.py --json FILE      the same as JSON (times in microseconds)
    trace_summary.py --check FILE     validate the file; exit 1 on any violation
    trace_summary.py --check --strict FILE   ... and on any warning too

Per capability (like eio-trace's gc-stats): Total (first to last event), App (a thread
running, outside GC, barriers and idle), GC (inside a minor/major GC span), and the waiting
shown apart: stw request (the leader trying to stop the world), enter barrier (a follower
waiting for the leader's go), leave barrier and await gc threads (waiting inside the GC
span), with the time asleep within them; Idle. %GC+wait counts GC spans plus stw request
and enter barrier, over Total; %GC-wait counts GC spans less leave barrier and await gc
threads, over Total. All times are wall-clock, so they include time spent blocked.

Per collection (like olly's gc-stats, but counting the time spent becoming leader and
sleeping in barriers, which olly misses): the GC spans of all capabilities that overlap form
one GC; its pause runs from the earliest stw request/enter barrier leading into it to the
end of its last GC span. Percentiles are nearest-rank.

A binary eventlog is read by ghc_eventlog.py, which checks its structure (header, block
framing, event sizes, timestamps per capability) and converts it to the JSON's events, so
everything below applies to both.

--check verifies: valid JSON with a traceEvents list; every event has a phase, and every
non-metadata event an integer tid and a numeric ts; timestamps never decrease within a tid;
B/E balanced and properly nested per tid with matching names. It prints
"ok: N events, M spans, K GCs (minor a, major b)" (N counts every entry in traceEvents).
Oddities of the runtime's conventions (gc work outside a GC span, sleep outside a barrier,
a GC with two leaders, ...) are warnings on stderr.
"""

import argparse
import json
import math
import os
import sys

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib  # noqa: E402

MAX_ERRORS_SHOWN = 20
PCTS = (("min", 0), ("p50", 50), ("p90", 90), ("p99", 99), ("max", 100))


def cap_summary(cap):
    t = cap.t
    total = cap.total
    gc = t["gc"]
    wait = sum(cap.waits.values())
    gc_with_wait = gc + t["pre_wait"]
    gc_without_wait = gc - t["in_wait"]
    other = max(0.0, total - t["app"] - gc_with_wait - t["idle"])

    def pct(x):
        return 100.0 * x / total if total > 0 else 0.0

    wakes = {}
    spins = {}
    for i in cap.instants:
        if i.name == "wake":
            by = str(i.args.get("by", "?"))
            wakes[by] = wakes.get(by, 0) + 1
        elif i.name == "spin":
            lock = str(i.args.get("lock", "?"))
            n = i.args.get("spins", 0)
            d = spins.setdefault(lock, {"events": 0, "spins": 0})
            d["events"] += 1
            d["spins"] += n if isinstance(n, int) else 0
    return {
        "cap": cap.tid,
        "label": cap.label,
        "total_us": total,
        "app_us": t["app"],
        "gc_us": gc,
        "minor_gc_us": t["minor"],
        "major_gc_us": t["major"],
        "gc_work_us": t["gc_work"],
        "wait_us": wait,
        "waits_us": dict(cap.waits),
        "sleep_us": t["sleep_in_wait"],
        "sleep_all_us": t["sleep"],
        "idle_us": t["idle"],
        "other_us": other,
        "gc_with_wait_us": gc_with_wait,
        "gc_without_wait_us": gc_without_wait,
        "pct_gc_with_wait": pct(gc_with_wait),
        "pct_gc_without_wait": pct(gc_without_wait),
        "wakes": wakes,
        "spins": spins,
    }


def sum_rows(rows):
    keys = [k for k in rows[0] if k.endswith("_us") and not isinstance(rows[0][k], dict)]
    out = {"cap": "all", "label": "all"}
    for k in keys:
        out[k] = sum(r[k] for r in rows)
    out["waits_us"] = {n: sum(r["waits_us"][n] for r in rows) for n in tracelib.WAIT_NAMES}
    total = out["total_us"]
    out["pct_gc_with_wait"] = 100.0 * out["gc_with_wait_us"] / total if total > 0 else 0.0
    out["pct_gc_without_wait"] = 100.0 * out["gc_without_wait_us"] / total if total > 0 else 0.0
    wakes, spins = {}, {}
    for r in rows:
        for k, v in r["wakes"].items():
            wakes[k] = wakes.get(k, 0) + v
        for k, v in r["spins"].items():
            d = spins.setdefault(k, {"events": 0, "spins": 0})
            d["events"] += v["events"]
            d["spins"] += v["spins"]
    out["wakes"] = wakes
    out["spins"] = spins
    return out


def stats(values):
    v = sorted(values)
    if not v:
        return {"n": 0}
    out = {"n": len(v), "mean": sum(v) / len(v)}
    for name, p in PCTS:
        out[name] = v[0] if p == 0 else tracelib.percentile(v, p)
    return out


def histogram(values):
    """Power-of-two buckets in microseconds: [lo, 2*lo)."""
    if not values:
        return []
    lo_exp = math.floor(math.log2(max(min(values), 1e-3)))
    hi_exp = math.floor(math.log2(max(max(values), 1e-3)))
    buckets = []
    for e in range(lo_exp, hi_exp + 1):
        lo, hi = 2.0 ** e, 2.0 ** (e + 1)
        n = sum(1 for x in values if lo <= x < hi or (e == lo_exp and x < lo))
        buckets.append({"lo_us": lo, "hi_us": hi, "count": n})
    return buckets


def summarise(tr):
    caps = [cap_summary(tr.caps[t]) for t in sorted(tr.caps)]
    gcs = []
    for g in tr.gcs:
        gcs.append({
            "kind": g.kind,
            "start_us": g.start,
            "gc_start_us": g.gc_start,
            "end_us": g.end,
            "pause_us": g.pause,
            "stw_us": g.stw,
            "leaders": g.leaders,
            "caps": sorted(s.tid for s in g.spans),
        })
    pauses = {
        "all": stats([g["pause_us"] for g in gcs]),
        "minor": stats([g["pause_us"] for g in gcs if g["kind"] == "minor"]),
        "major": stats([g["pause_us"] for g in gcs if g["kind"] == "major"]),
    }
    stw = stats([g["stw_us"] for g in gcs if g["stw_us"] is not None])
    return {
        "file": tr.path,
        "n_caps": len(caps),
        "otherData": tr.other,
        "start_us": tr.start,
        "end_us": tr.end,
        "caps": caps,
        "all": sum_rows(caps) if caps else None,
        "gcs": {
            "count": len(gcs),
            "minor": sum(1 for g in gcs if g["kind"] == "minor"),
            "major": sum(1 for g in gcs if g["kind"] == "major"),
            "pause_us": pauses,
            "stw_us": stw,
            "histogram": histogram([g["pause_us"] for g in gcs]),
            "list": gcs,
        },
        "warnings": tr.warnings,
        "errors": tr.errors,
    }


def ms(us):
    return f"{us / 1000.0:.3f}"


def fmt_us(x):
    if x is None:
        return "-"
    return f"{x:.1f}" if x < 100000 else f"{x:.0f}"


def print_text(s, out=sys.stdout):
    w = out.write
    w(f"{s['file']}: {s['n_caps']} capabilities, "
      f"{ms(s['end_us'] - s['start_us'])} ms from the first event to the last\n\n")
    if not s["caps"]:
        w("no capability tracks\n")
        return
    hdr = (f"{'Cap':>4} {'Total/ms':>10} {'App/ms':>10} {'GC/ms':>10} {'Wait/ms':>10} "
           f"{'Sleep/ms':>10} {'Idle/ms':>10} {'Other/ms':>10} {'%GC+wait':>9} {'%GC-wait':>9}\n")
    w(hdr)

    def row(r):
        w(f"{str(r['cap']):>4} {ms(r['total_us']):>10} {ms(r['app_us']):>10} "
          f"{ms(r['gc_us']):>10} {ms(r['wait_us']):>10} {ms(r['sleep_us']):>10} "
          f"{ms(r['idle_us']):>10} {ms(r['other_us']):>10} {r['pct_gc_with_wait']:>9.2f} {r['pct_gc_without_wait']:>9.2f}\n")
    for r in s["caps"]:
        row(r)
    w("\n")
    row(s["all"])
    w("\nApp = a thread running (mutator span) outside GC, barriers and idle; Other = no span "
      "open (the scheduler).\nTotal = App + GC + stw request + enter barrier + Idle + Other.\n"
      "GC = inside minor/major GC spans (includes leave barrier and await gc threads).\n"
      "Wait = stw request + enter barrier + leave barrier + await gc threads; Sleep = asleep "
      "within them.\n%GC+wait = (GC + stw request + enter barrier) / Total; "
      "%GC-wait = (GC - leave barrier - await gc threads) / Total.\n"
      "All times are wall-clock, so they include time spent blocked.\n\n")

    w("Waiting, per capability (ms):\n")
    names = tracelib.WAIT_NAMES
    w(f"{'Cap':>4} " + " ".join(f"{n:>16}" for n in names) + f" {'sleep':>10} {'gc work':>10}\n")
    for r in s["caps"] + [s["all"]]:
        w(f"{str(r['cap']):>4} " + " ".join(f"{ms(r['waits_us'][n]):>16}" for n in names)
          + f" {ms(r['sleep_us']):>10} {ms(r['gc_work_us']):>10}\n")
    w("\n")

    if s["all"]["wakes"] or s["all"]["spins"]:
        w("Instant events:\n")
        for r in s["caps"]:
            parts = []
            if r["wakes"]:
                parts.append("wakes " + ", ".join(f"by {k}: {v}" for k, v in sorted(r["wakes"].items())))
            if r["spins"]:
                parts.append("spin contention " + ", ".join(
                    f"{k}: {v['events']} x, {v['spins']} spins" for k, v in sorted(r["spins"].items())))
            if parts:
                w(f"  cap {r['cap']}: " + "; ".join(parts) + "\n")
        w("\n")

    g = s["gcs"]
    w(f"GCs: {g['count']} (minor {g['minor']}, major {g['major']})\n")
    if g["count"]:
        w("GC pauses, from the first stw request/enter barrier to the last capability's release "
          "(us):\n")
        w(f"{'':>6} {'n':>6} {'mean':>10}" + "".join(f" {n:>10}" for n, _ in PCTS) + "\n")
        for kind in ("minor", "major", "all"):
            st = g["pause_us"][kind]
            if st["n"] == 0:
                continue
            w(f"{kind:>6} {st['n']:>6} {fmt_us(st['mean']):>10}"
              + "".join(f" {fmt_us(st[n]):>10}" for n, _ in PCTS) + "\n")
        st = g["stw_us"]
        if st["n"]:
            w(f"{'stw':>6} {st['n']:>6} {fmt_us(st['mean']):>10}"
              + "".join(f" {fmt_us(st[n]):>10}" for n, _ in PCTS)
              + "   <- time to stop the world (the leader's stw request)\n")
        w("\nHistogram of GC pauses:\n")
        peak = max(b["count"] for b in g["histogram"]) or 1
        for b in g["histogram"]:
            bar = "#" * max(1 if b["count"] else 0, round(40 * b["count"] / peak))
            w(f"  [{fmt_us(b['lo_us']):>9}, {fmt_us(b['hi_us']):>9}) us {b['count']:>7}  {bar}\n")


def check(tr, strict):
    for m in tr.warnings:
        print(f"warning: {m}", file=sys.stderr)
    problems = list(tr.errors)
    if strict:
        problems += [f"(strict) {m}" for m in tr.warnings]
    if problems:
        for m in problems[:MAX_ERRORS_SHOWN]:
            print(f"error: {tr.path}: {m}", file=sys.stderr)
        if len(problems) > MAX_ERRORS_SHOWN:
            print(f"error: ... and {len(problems) - MAX_ERRORS_SHOWN} more", file=sys.stderr)
        print(f"FAILED: {tr.path}: {len(problems)} violation(s)")
        return 1
    n_minor = sum(1 for g in tr.gcs if g.kind == "minor")
    n_major = sum(1 for g in tr.gcs if g.kind == "major")
    print(f"ok: {len(tr.events)} events, {len(tr.spans)} spans, {len(tr.gcs)} GCs "
          f"(minor {n_minor}, major {n_major})")
    return 0


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Summarise or check an rtslab eventlog (Chrome Trace Event JSON).")
    ap.add_argument("file")
    ap.add_argument("--check", action="store_true", help="validate the file; exit 1 on a violation")
    ap.add_argument("--strict", action="store_true", help="with --check, warnings are violations")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args(argv)
    try:
        tr = tracelib.load(a.file)
    except tracelib.TraceError as e:
        if a.check:
            print(f"error: {e}", file=sys.stderr)
            print(f"FAILED: {a.file}: not a trace")
        else:
            print(f"trace_summary: {e}", file=sys.stderr)
        return 1
    if a.check:
        return check(tr, a.strict)
    for m in tr.errors[:MAX_ERRORS_SHOWN]:
        print(f"warning: {a.file}: {m} (run --check)", file=sys.stderr)
    for m in tr.warnings:
        print(f"warning: {a.file}: {m}", file=sys.stderr)
    s = summarise(tr)
    if a.json:
        json.dump(s, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print_text(s)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
