#!/usr/bin/env python3
"""Draw an rtslab eventlog (`+RTS -l`: GHC's binary format, or Chrome Trace Event JSON) as
a ThreadScope-like SVG.

    trace_timeline.py FILE -o OUT.svg [--from MS] [--to MS] [--width PX] [--title TEXT]

One row per capability, time (ms since the process started) on the x axis with a labelled
scale. Mutator green, minor GC orange, major GC dark orange, waiting (stw request, enter
barrier, leave barrier, await gc threads) yellow, asleep within a wait darker yellow and
hatched, idle light grey, other spans blue-grey; wake instants are blue ticks and spin
contention red ticks above a row. Where a row has more spans than the picture has pixels,
each pixel column shows the most important state in it (GC > sleep > wait > mutator > idle),
as ThreadScope does, so that short GCs stay visible. Hovering over a span in a browser shows
its name and duration. Pure SVG text; Python 3 standard library only.
"""

import argparse
import math
import os
import sys
from xml.sax.saxutils import escape

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracelib  # noqa: E402

STYLE = {   # category -> (fill, legend label)
    "mutator": ("#2ca02c", "mutator"),
    "minor GC": ("#ff9a1f", "minor GC"),
    "major GC": ("#d95f02", "major GC"),
    "wait": ("#f5d800", "waiting (stw request, barriers, await)"),
    "sleep": ("url(#sleep)", "asleep while waiting"),
    "idle": ("#d9d9d9", "idle"),
    "other": ("#8da0cb", "other span"),
}
STACK_ORDER = ("mutator", "minor GC", "major GC", "wait", "sleep", "other", "idle")
IMPORTANT = ("minor GC", "major GC", "wait", "sleep")   # kept visible however short
MIN_H = 2.0
ROW_BG = "#fafafa"
WAKE_COLOUR = "#1f5fd0"
SPIN_COLOUR = "#d62728"

LEFT = 90
RIGHT = 30
TOP = 64
ROW_H = 26
ROW_GAP = 12
TICK_H = 6


def nice_step(span, target=10):
    """A 1/2/5 x 10^k step that cuts span into about target pieces."""
    if span <= 0:
        return 1.0
    raw = span / target
    k = math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        step = m * 10 ** k
        if step >= raw:
            return step
    return 10 ** (k + 1)


def fmt_ms(x, step):
    decimals = max(0, -math.floor(math.log10(step))) if step < 1 else 0
    return f"{x:.{decimals}f}"


def fmt_dur(us):
    if us >= 1000:
        return f"{us / 1000:.3f} ms"
    return f"{us:.1f} us"


def _dense_row(w, segs, t0, scale, ncols, y):
    """Too many spans for the width: each pixel column is a stacked bar of the share of time
    each state takes in it (the states in IMPORTANT get at least MIN_H pixels when present,
    so that short GCs stay visible, as in ThreadScope). One path per state per row."""
    cols = [dict() for _ in range(ncols)]
    for a, b, c in segs:
        xa = (a - t0) * scale
        xb = (b - t0) * scale
        i = int(xa)
        while i < ncols and i < xb:
            lo = max(xa, i)
            hi = min(xb, i + 1)
            if hi > lo:
                d = cols[i]
                d[c] = d.get(c, 0.0) + (hi - lo)
            i += 1
    paths = {c: [] for c in STACK_ORDER}
    for i, d in enumerate(cols):
        if not d:
            continue
        tot = sum(d.values())
        share = min(tot, 1.0)          # a column partly outside the trace is partly empty
        room = ROW_H * share
        h = {}
        for c in IMPORTANT:
            if c in d:
                h[c] = max(MIN_H, room * d[c] / tot)
        imp = sum(h.values())
        if imp > room:
            for c in h:
                h[c] *= room / imp
            imp = room
        rest = sum(v for c, v in d.items() if c not in IMPORTANT)
        for c, v in d.items():
            if c not in IMPORTANT:
                h[c] = (room - imp) * v / rest if rest > 0 else 0.0
        yy = y + ROW_H
        for c in STACK_ORDER:
            hc = h.get(c, 0.0)
            if hc > 0.01:
                yy -= hc
                paths[c].append(f"M{LEFT + i},{yy:.2f}h1v{hc:.2f}h-1z")
    for c in STACK_ORDER:
        if paths[c]:
            w(f'<path fill="{STYLE[c][0]}" d="{"".join(paths[c])}"/>')


def render(tr, t0, t1, width, title):
    """Return the SVG text for the window [t0, t1] (microseconds)."""
    caps = [tr.caps[t] for t in sorted(tr.caps)]
    plot_w = width - LEFT - RIGHT
    span = max(t1 - t0, 1e-9)
    scale = plot_w / span

    def x(t):
        return LEFT + (t - t0) * scale

    out = []
    w = out.append
    n_rows = len(caps)
    # rows with more spans than pixels are drawn as stacked shares per pixel column
    rows = []
    for cap in caps:
        segs = [(max(a, t0), min(b, t1), c) for a, b, c in cap.segments
                if c is not None and b > t0 and a < t1]
        rows.append((cap, segs, len(segs) > 2 * plot_w))
    dense_rows = [cap.label for cap, _, dense in rows if dense]
    top = TOP + (16 if dense_rows else 0)
    axis_y = top + n_rows * (ROW_H + ROW_GAP) + 2
    legend_y = axis_y + 56
    legend = []                     # (x, y, fill, label, kind), laid out before the height
    shown = ["mutator", "minor GC", "major GC", "wait", "sleep", "idle"]
    if any(c == "other" for cap in caps for _, _, c in cap.segments):
        shown.append("other")
    items = [(STYLE[c][0], STYLE[c][1], "rect") for c in shown]
    items.append((ROW_BG, "no span (scheduler)", "rect"))
    items += [(WAKE_COLOUR, "wake", "tick"), (SPIN_COLOUR, "spin contention", "tick")]
    lx, ly = LEFT, legend_y
    for fill, label, kind in items:
        tw = int(6.2 * len(label)) + 40
        if lx + tw > width - RIGHT and lx > LEFT:
            lx, ly = LEFT, ly + 22
        legend.append((lx, ly, fill, label, kind))
        lx += tw
    height = ly + 16
    w(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
      f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Helvetica, Arial, sans-serif" '
      f'font-size="12">')
    w('<defs><pattern id="sleep" patternUnits="userSpaceOnUse" width="6" height="6" '
      'patternTransform="rotate(45)"><rect width="6" height="6" fill="#c9a800"/>'
      '<line x1="0" y1="0" x2="0" y2="6" stroke="#7a6500" stroke-width="2.5"/></pattern>'
      f'<clipPath id="plot"><rect x="{LEFT}" y="0" width="{plot_w}" height="{height}"/></clipPath>'
      '</defs>')
    w(f'<rect width="{width}" height="{height}" fill="white"/>')
    w(f'<text x="{LEFT}" y="24" font-size="16" font-weight="bold">{escape(title)}</text>')
    n_minor = sum(1 for g in tr.gcs if g.kind == "minor")
    n_major = sum(1 for g in tr.gcs if g.kind == "major")
    sub = (f"{len(caps)} capabilities, {len(tr.gcs)} GCs (minor {n_minor}, major {n_major}); "
           f"showing {t0 / 1000:.3f} to {t1 / 1000:.3f} ms")
    w(f'<text x="{LEFT}" y="44" fill="#444">{escape(sub)}</text>')
    if dense_rows:
        note = (f'{"all rows" if len(dense_rows) == len(caps) else ", ".join(dense_rows)}: '
                f'more spans than pixels, so each pixel column ({fmt_dur(span / plot_w)}) '
                f'stacks its states by their share of the time (zoom in with --from/--to)')
        w(f'<text x="{LEFT}" y="60" fill="#444">{escape(note)}</text>')

    # grid and time scale
    step_ms = nice_step(span / 1000.0)
    first = math.ceil(t0 / 1000.0 / step_ms) * step_ms
    w('<g stroke="#e6e6e6" stroke-width="1">')
    ticks = []
    k = 0
    while True:
        tm = first + k * step_ms
        if tm * 1000.0 > t1 + 1e-9 or k > 1000:
            break
        ticks.append(tm)
        xx = x(tm * 1000.0)
        w(f'<line x1="{xx:.2f}" y1="{top - 4}" x2="{xx:.2f}" y2="{axis_y}"/>')
        k += 1
    w('</g>')
    w(f'<line x1="{LEFT}" y1="{axis_y}" x2="{LEFT + plot_w}" y2="{axis_y}" stroke="#333"/>')
    for tm in ticks:
        xx = x(tm * 1000.0)
        w(f'<line x1="{xx:.2f}" y1="{axis_y}" x2="{xx:.2f}" y2="{axis_y + 5}" stroke="#333"/>')
        w(f'<text x="{xx:.2f}" y="{axis_y + 18}" text-anchor="middle">{fmt_ms(tm, step_ms)}</text>')
    w(f'<text x="{LEFT + plot_w / 2:.1f}" y="{axis_y + 36}" text-anchor="middle" fill="#444">'
      f'time since process start (ms)</text>')

    # rows
    for r, (cap, segs, dense) in enumerate(rows):
        y = top + r * (ROW_H + ROW_GAP)
        w(f'<text x="{LEFT - 8}" y="{y + ROW_H / 2 + 4:.1f}" text-anchor="end">'
          f'{escape(cap.label)}</text>')
        w(f'<rect x="{LEFT}" y="{y}" width="{plot_w}" height="{ROW_H}" fill="{ROW_BG}" '
          f'stroke="#ccc" stroke-width="0.5"/>')
        w(f'<g clip-path="url(#plot)">')
        if not dense:
            for a, b, c in segs:
                fill = STYLE[c][0]
                xa, xb = x(a), x(b)
                ww = max(xb - xa, 0.6)
                w(f'<rect x="{xa:.2f}" y="{y}" width="{ww:.2f}" height="{ROW_H}" fill="{fill}">'
                  f'<title>{escape(c)}: {fmt_ms(a / 1000, 0.001)}-{fmt_ms(b / 1000, 0.001)} ms '
                  f'({fmt_dur(b - a)})</title></rect>')
        else:
            _dense_row(w, segs, t0, scale, int(math.ceil(plot_w)), y)
        # instants: ticks above the row, one per pixel and kind
        seen = set()
        for inst in cap.instants:
            if not (t0 <= inst.ts <= t1) or inst.name not in ("wake", "spin"):
                continue
            xx = x(inst.ts)
            key = (inst.name, int(xx))
            if key in seen:
                continue
            seen.add(key)
            colour = WAKE_COLOUR if inst.name == "wake" else SPIN_COLOUR
            if inst.name == "wake":
                tip = f"wake by {inst.args.get('by', '?')}"
            else:
                tip = f"spin on {inst.args.get('lock', '?')}: {inst.args.get('spins', '?')} spins"
            w(f'<line x1="{xx:.2f}" y1="{y - TICK_H}" x2="{xx:.2f}" y2="{y + 3}" '
              f'stroke="{colour}" stroke-width="2"><title>{escape(tip)} at '
              f'{fmt_ms(inst.ts / 1000, 0.001)} ms</title></line>')
        w('</g>')

    # legend
    for lx, ly, fill, label, kind in legend:
        if kind == "rect":
            w(f'<rect x="{lx}" y="{ly - 11}" width="18" height="13" fill="{fill}" '
              f'stroke="#888" stroke-width="0.5"/>')
        else:
            w(f'<line x1="{lx + 9}" y1="{ly - 12}" x2="{lx + 9}" y2="{ly + 3}" stroke="{fill}" '
              f'stroke-width="2"/>')
        w(f'<text x="{lx + 24}" y="{ly}">{escape(label)}</text>')
    w('</svg>')
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description="Draw an rtslab eventlog as an SVG timeline.")
    ap.add_argument("file")
    ap.add_argument("-o", "--output", required=True, help="the SVG file to write ('-': stdout)")
    ap.add_argument("--from", dest="t_from", type=float, help="start of the window (ms)")
    ap.add_argument("--to", dest="t_to", type=float, help="end of the window (ms)")
    ap.add_argument("--width", type=int, default=1200, help="picture width in pixels (1200)")
    ap.add_argument("--title", help="the title (default: the file's name)")
    a = ap.parse_args(argv)
    try:
        tr = tracelib.load(a.file)
    except tracelib.TraceError as e:
        print(f"trace_timeline: {e}", file=sys.stderr)
        return 1
    for m in tr.errors[:10]:
        print(f"warning: {a.file}: {m}", file=sys.stderr)
    if not tr.caps:
        print(f"trace_timeline: {a.file}: no capability tracks to draw", file=sys.stderr)
        return 1
    if a.width < LEFT + RIGHT + 100:
        print(f"trace_timeline: --width must be at least {LEFT + RIGHT + 100}", file=sys.stderr)
        return 1
    # from the process start, as ThreadScope does, unless the trace starts well after it
    t0 = a.t_from * 1000.0 if a.t_from is not None else (
        0.0 if 0 <= tr.start <= 0.05 * tr.end else tr.start)
    t1 = a.t_to * 1000.0 if a.t_to is not None else tr.end
    if t1 <= t0:
        print(f"trace_timeline: empty window: from {t0 / 1000} ms to {t1 / 1000} ms",
              file=sys.stderr)
        return 1
    title = a.title or f"rtslab eventlog: {os.path.basename(a.file)}"
    svg = render(tr, t0, t1, a.width, title)
    if a.output == "-":
        sys.stdout.write(svg)
    else:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(svg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
