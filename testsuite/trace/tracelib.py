"""Reading rtslab eventlogs (`+RTS -l`): one track per capability, in GHC's binary eventlog
format (the default; ghc_eventlog.py turns it into the JSON below, event for event, and its
structural faults become errors here) or Chrome Trace Event JSON (`--eventlog-format=chrome`).

Shared by trace_summary.py and trace_timeline.py (Python 3 standard library only).

The file is `{"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}` (a bare
list of events is accepted too). Every event has "pid", "tid" (the capability number) and
"ts" (microseconds since the process started, a float). Spans are "B"/"E" pairs properly
nested per tid ("X" complete events are counted but otherwise ignored); instants are "i"/"I";
"M" events are metadata (thread_name gives a track its label).

Span names the runtime writes:
    mutator                 a lightweight thread runs (args {"thread": id} on B)
    minor GC, major GC      this capability's part of a GC, from the world being stopped to
                            its release (leader or follower)
    stw request             the leader: from winning the election to the last arrival
    enter barrier           a follower: from its arrival to the leader's go
    gc work                 evacuating/scavenging (inside the GC span)
    leave barrier           a follower waiting to be released (inside the GC span)
    await gc threads        the leader waiting for the GC threads (inside the GC span)
    sleep                   a nanosleep inside any barrier wait (inside the barrier span)
    idle                    the capability asleep with nothing to run
Instants: "wake" (args {"by": "gc"|"work"}), "spin" (args {"lock": name, "spins": n}),
"gc idle"/"gc resume" (inside gc work), "thread create"/"thread runnable" (args {"thread"}),
"thread wakeup"/"thread migrate" (args {"thread", "cap"}), "gc stats" (args {"gen", "copied",
"threads", "max_copied", "balanced_copied"}); a "C" counter "heap" (args {"allocated",
"size", "live"}). E of a mutator span: args {"status": GHC's stop status}.
Unknown names and phases are kept/ignored gracefully.
"""

import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ghc_eventlog  # noqa: E402

GC_NAMES = ("minor GC", "major GC")
PRE_WAITS = ("stw request", "enter barrier")          # before the GC span, not nested
IN_WAITS = ("leave barrier", "await gc threads")      # nested inside the GC span
WAIT_NAMES = PRE_WAITS + IN_WAITS
SLEEP = "sleep"
IDLE = "idle"
MUTATOR = "mutator"
GC_WORK = "gc work"
KNOWN_SPANS = (MUTATOR,) + GC_NAMES + WAIT_NAMES + (GC_WORK, SLEEP, IDLE)

# Categories a moment on a capability's track falls in (innermost significant span wins);
# used by the timeline picture.
CATEGORIES = ("mutator", "minor GC", "major GC", "wait", "sleep", "idle", "other")


class TraceError(Exception):
    """The file is not a trace at all (unreadable, not JSON, wrong shape)."""


class Span:
    __slots__ = ("tid", "name", "start", "end", "args", "depth", "parent", "index")

    def __init__(self, tid, name, start, end, args, depth, parent, index):
        self.tid = tid
        self.name = name
        self.start = start
        self.end = end
        self.args = args
        self.depth = depth          # 0 for a top-level span on its track
        self.parent = parent        # the enclosing Span or None
        self.index = index          # position of the B event in traceEvents

    @property
    def dur(self):
        return self.end - self.start

    def __repr__(self):
        return f"Span(tid={self.tid}, {self.name!r}, {self.start}..{self.end})"


class Instant:
    __slots__ = ("tid", "name", "ts", "args")

    def __init__(self, tid, name, ts, args):
        self.tid = tid
        self.name = name
        self.ts = ts
        self.args = args


class Cap:
    """Everything about one track (capability)."""

    def __init__(self, tid):
        self.tid = tid
        self.label = f"cap {tid}"
        self.first = None           # first and last event timestamps (us)
        self.last = None
        self.n_events = 0
        self.n_x = 0                # "X" complete events, which the runtime does not write
        self.spans = []
        self.instants = []
        # exclusive/inclusive times in microseconds, filled by the sweep
        self.t = {
            "gc": 0.0,              # inside a minor/major GC span
            "minor": 0.0,
            "major": 0.0,
            "pre_wait": 0.0,        # stw request / enter barrier, outside a GC span
            "in_wait": 0.0,         # leave barrier / await gc threads, inside a GC span
            "gc_work": 0.0,
            "sleep": 0.0,           # all sleep spans
            "sleep_in_wait": 0.0,   # sleep inside a barrier span
            "idle": 0.0,            # idle, outside GC and waits
            "app": 0.0,             # mutator, outside GC, waits and idle
        }
        self.waits = {name: 0.0 for name in WAIT_NAMES}   # innermost barrier span
        self.segments = []          # (start, end, category) for the picture

    @property
    def total(self):
        if self.first is None:
            return 0.0
        return self.last - self.first


class Trace:
    def __init__(self):
        self.path = None
        self.events = []            # the raw traceEvents list
        self.other = {}             # otherData
        self.caps = {}              # tid -> Cap
        self.spans = []             # all spans, in order of their B events
        self.instants = []
        self.errors = []            # violations of the format (--check fails on these)
        self.warnings = []          # oddities worth a word (not fatal)
        self.gcs = []               # list of GC (see group_gcs)
        self.log = None             # the ghc_eventlog.Eventlog, when read from one

    def cap(self, tid):
        c = self.caps.get(tid)
        if c is None:
            c = self.caps[tid] = Cap(tid)
        return c

    @property
    def start(self):
        firsts = [c.first for c in self.caps.values() if c.first is not None]
        return min(firsts) if firsts else 0.0

    @property
    def end(self):
        lasts = [c.last for c in self.caps.values() if c.last is not None]
        return max(lasts) if lasts else 0.0


class GC:
    """One collection: the GC spans of all capabilities that overlap, with the barrier spans
    that lead into them."""

    def __init__(self):
        self.spans = []             # the GC spans, one per participating capability
        self.pre = []               # stw request / enter barrier spans leading into them
        self.kind = None

    @property
    def start(self):                # the world starts being stopped
        return min([s.start for s in self.spans] + [s.start for s in self.pre])

    @property
    def gc_start(self):
        return min(s.start for s in self.spans)

    @property
    def end(self):                  # the last capability is released
        return max(s.end for s in self.spans)

    @property
    def pause(self):
        return self.end - self.start

    @property
    def leaders(self):
        return sorted({s.tid for s in self.pre if s.name == "stw request"})

    @property
    def stw(self):
        """Time to stop the world: the leader's stw request span (None if there is none)."""
        d = [s.dur for s in self.pre if s.name == "stw request"]
        return max(d) if d else None


def load(path):
    """Read and parse PATH, a GHC eventlog or a Chrome trace; raise TraceError if it is
    neither."""
    if ghc_eventlog.is_eventlog(path):
        try:
            log = ghc_eventlog.read(path)
        except ghc_eventlog.EventlogError as e:
            raise TraceError(str(e))
        tr = Trace()
        tr.path = path
        data = ghc_eventlog.to_chrome(log)
        tr.events = data["traceEvents"]
        tr.other = data["otherData"]
        tr.log = log
        tr.errors.extend(f"{path}: {m}" for m in log.errors)
        analyse(tr)
        return tr
    try:
        with open(path, "r", encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise TraceError(f"cannot read {path}: {e.strerror}")
    except UnicodeDecodeError as e:
        raise TraceError(f"{path}: not UTF-8 text: {e}")
    except json.JSONDecodeError as e:
        raise TraceError(f"{path}: invalid JSON: {e.msg} at line {e.lineno} column {e.colno}")
    tr = Trace()
    tr.path = path
    if isinstance(data, list):
        tr.events = data
    elif isinstance(data, dict):
        evs = data.get("traceEvents")
        if not isinstance(evs, list):
            raise TraceError(f'{path}: no "traceEvents" list in the top-level object')
        tr.events = evs
        other = data.get("otherData")
        tr.other = other if isinstance(other, dict) else {}
    else:
        raise TraceError(f"{path}: the top level is neither an object nor a list")
    analyse(tr)
    return tr


def analyse(tr):
    """Match B/E pairs per track, collect violations, sweep per-capability times, group GCs.

    Lenient: an E with no open span is ignored, an E whose name is deeper in the stack closes
    the spans above it, spans still open at the end close at their track's last event; each of
    these is recorded in tr.errors so that --check fails on them."""
    err = tr.errors.append
    by_tid = {}                     # tid -> [(tid, ts, index, event)] for the track events
    last_ts = {}
    for i, ev in enumerate(tr.events):
        if not isinstance(ev, dict):
            err(f"event #{i}: not an object")
            continue
        ph = ev.get("ph")
        if not isinstance(ph, str):
            err(f"event #{i}: no \"ph\" (phase)")
            continue
        tid = ev.get("tid")
        if ph == "M":
            if ev.get("name") == "thread_name" and isinstance(tid, int):
                name = (ev.get("args") or {}).get("name") if isinstance(ev.get("args"), dict) else None
                if isinstance(name, str):
                    tr.cap(tid).label = name
            continue
        if type(tid) is not int:
            err(f"event #{i} ({ph} {ev.get('name')!r}): \"tid\" is not an integer: {tid!r}")
            continue
        ts = ev.get("ts")
        if type(ts) not in (int, float) or not math.isfinite(ts):
            err(f"event #{i} ({ph} {ev.get('name')!r}, tid {tid}): \"ts\" is not a number: {ts!r}")
            continue
        prev = last_ts.get(tid)
        if prev is None:
            by_tid[tid] = []
        elif ts < prev:
            err(f"tid {tid}: timestamp goes backwards at event #{i} ({ph} {ev.get('name')!r}): "
                f"ts={ts} after ts={prev}")
        last_ts[tid] = ts if prev is None or ts >= prev else prev
        by_tid[tid].append((tid, ts, i, ev))
    # Spans are matched in file order (the order the runtime wrote each capability's events
    # in), even where a timestamp went backwards: that is reported once, above.

    for tid in sorted(by_tid):
        _track(tr, tr.cap(tid), by_tid[tid])

    tr.spans.sort(key=lambda s: s.index)
    tr.instants.sort(key=lambda x: (x.ts, x.tid))
    _semantic_checks(tr)
    group_gcs(tr)


def _classify(names):
    """For a stack of open span names (outermost first): the time accumulators a moment in it
    counts towards, the innermost barrier span (or None) and the picture's category."""
    nameset = set(names)
    keys = []
    in_gc = bool(nameset.intersection(GC_NAMES))
    waits = [n for n in names if n in WAIT_NAMES]
    if in_gc:
        keys.append("gc")
        keys.append("major" if "major GC" in nameset else "minor")
        if waits:
            keys.append("in_wait")
    elif nameset.intersection(PRE_WAITS):
        keys.append("pre_wait")
    if GC_WORK in nameset:
        keys.append("gc_work")
    if SLEEP in nameset:
        keys.append("sleep")
        if waits:
            keys.append("sleep_in_wait")
    if not in_gc and not waits:
        if IDLE in nameset:
            keys.append("idle")
        elif MUTATOR in nameset:
            keys.append("app")
    if SLEEP in nameset:
        cat = "sleep"
    elif waits:
        cat = "wait"
    elif "major GC" in nameset:
        cat = "major GC"
    elif "minor GC" in nameset:
        cat = "minor GC"
    elif IDLE in nameset:
        cat = "idle"
    elif MUTATOR in nameset:
        cat = "mutator"
    else:
        cat = "other"
    return tuple(keys), (waits[-1] if waits else None), cat


_CLASSES = {}


def _attribute(cap, names, t0, t1):
    dt = t1 - t0
    if dt <= 0 or not names:
        return
    key = tuple(names)
    c = _CLASSES.get(key)
    if c is None:
        c = _CLASSES[key] = _classify(key)
    keys, wait, cat = c
    t = cap.t
    for k in keys:
        t[k] += dt
    if wait is not None:
        cap.waits[wait] += dt
    segs = cap.segments
    if segs and segs[-1][2] == cat and segs[-1][1] == t0:
        segs[-1] = (segs[-1][0], t1, cat)
    else:
        segs.append((t0, t1, cat))


def _track(tr, cap, evs):
    err = tr.errors.append
    stack = []                      # open Spans, outermost first
    names = []                      # their names
    prev = None
    for tid, ts, i, ev in evs:
        ph = ev["ph"]
        name = ev.get("name")
        if prev is None:
            cap.first = cap.last = ts
        elif ts > prev and names:
            _attribute(cap, names, prev, ts)
        prev = ts
        if ts < cap.first:
            cap.first = ts
        if ts > cap.last:
            cap.last = ts
        if ph == "B":
            if not isinstance(name, str):
                err(f"tid {tid}: B event #{i} at ts={ts} has no name")
                name = "?"
            args = ev.get("args")
            sp = Span(tid, name, ts, None, args if isinstance(args, dict) else {},
                      len(stack), stack[-1] if stack else None, i)
            stack.append(sp)
            names.append(name)
        elif ph == "E":
            if not stack:
                err(f"tid {tid}: E event #{i} {name!r} at ts={ts} with no open span")
                continue
            if name is not None and name != names[-1]:
                if name in names:
                    while names[-1] != name:
                        s = stack.pop()
                        names.pop()
                        err(f"tid {tid}: span {s.name!r} begun at ts={s.start} not ended before "
                            f"its parent {name!r} ends at ts={ts} (event #{i})")
                        _close(tr, cap, s, ts)
                else:
                    top = stack[-1]
                    err(f"tid {tid}: E event #{i} {name!r} at ts={ts} does not match the open "
                        f"span {top.name!r} begun at ts={top.start}")
                    continue
            top = stack.pop()
            names.pop()
            _close(tr, cap, top, ts)
            args = ev.get("args")
            if args and isinstance(args, dict):
                top.args = dict(top.args, **args)
        elif ph == "X":
            cap.n_x += 1
        elif ph in ("i", "I", "n"):
            args = ev.get("args")
            inst = Instant(tid, name if isinstance(name, str) else "?", ts,
                           args if isinstance(args, dict) else {})
            tr.instants.append(inst)
            cap.instants.append(inst)
        # other phases (counters, flows, async, ...) are ignored
    cap.n_events = len(evs)
    while stack:
        s = stack.pop()
        err(f"tid {cap.tid}: span {s.name!r} begun at ts={s.start} (event #{s.index}) is never ended")
        _close(tr, cap, s, cap.last)


def _close(tr, cap, span, ts):
    span.end = ts
    tr.spans.append(span)
    cap.spans.append(span)


def _semantic_checks(tr):
    """Oddities in the runtime's own conventions: warnings, not format violations."""
    warn = tr.warnings.append
    n_caps = tr.other.get("n_caps")
    if isinstance(n_caps, int) and n_caps != len(tr.caps) and tr.caps:
        warn(f"otherData.n_caps is {n_caps} but the trace has {len(tr.caps)} capability tracks")
    n_x = sum(c.n_x for c in tr.caps.values())
    if n_x:
        warn(f'{n_x} "X" (complete) event(s) ignored: the runtime writes B/E pairs')
    counts = {}
    for s in tr.spans:
        anc = set()
        p = s.parent
        while p is not None:
            anc.add(p.name)
            p = p.parent
        if s.name in (GC_WORK,) + IN_WAITS and not anc.intersection(GC_NAMES):
            key = (s.name, "outside a GC span")
        elif s.name == SLEEP and not anc.intersection(WAIT_NAMES):
            key = (s.name, "outside a barrier span")
        elif s.name in GC_NAMES and anc.intersection(GC_NAMES):
            key = (s.name, "nested inside another GC span")
        elif s.name not in KNOWN_SPANS:
            key = (s.name, "has an unknown name")
        else:
            continue
        counts[key] = counts.get(key, 0) + 1
    for (name, what), n in sorted(counts.items()):
        warn(f"{n} {name!r} span(s) {what}")


def group_gcs(tr):
    """Group the GC spans of all capabilities into collections by overlap, and attach to each
    span the stw request/enter barrier span that leads into it on its capability."""
    # per track: the pre-wait span since the previous GC span leads into the next GC span
    lead = {}
    for tid, cap in tr.caps.items():
        pending = None
        gc_end = None
        for s in sorted(cap.spans, key=lambda s: (s.start, s.depth)):
            if s.name in GC_NAMES:
                if s.parent is not None and s.parent.name in GC_NAMES:
                    continue
                lead[id(s)] = pending
                pending = None
                gc_end = s.end
            elif s.name in PRE_WAITS:
                if gc_end is not None and s.start < gc_end:
                    continue            # nested inside a GC span: not before it
                pending = s
    gcspans = [s for s in tr.spans if s.name in GC_NAMES
               and not (s.parent is not None and s.parent.name in GC_NAMES)]
    gcspans.sort(key=lambda s: (s.start, s.tid))
    gcs = []
    cur = None
    cur_end = None
    for s in gcspans:
        if cur is not None and s.start <= cur_end and s.tid not in {x.tid for x in cur.spans}:
            cur.spans.append(s)
            cur_end = max(cur_end, s.end)
        else:
            cur = GC()
            cur.spans.append(s)
            cur_end = s.end
            gcs.append(cur)
        p = lead.get(id(s))
        if p is not None:
            cur.pre.append(p)
    for g in gcs:
        kinds = {s.name for s in g.spans}
        g.kind = "major" if "major GC" in kinds else "minor"
        if len(kinds) > 1:
            tr.warnings.append(f"GC at ts={g.gc_start}: capabilities disagree on its kind "
                               f"({', '.join(sorted(kinds))}); counted as major")
        if len(g.leaders) > 1:
            tr.warnings.append(f"GC at ts={g.gc_start}: more than one leader (stw request on "
                               f"tids {g.leaders})")
    tr.gcs = gcs
    return gcs


def percentile(sorted_values, p):
    """Nearest-rank percentile of an ascending list (p in 0..100)."""
    if not sorted_values:
        return None
    k = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[min(k, len(sorted_values)) - 1]
