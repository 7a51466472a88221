#!/usr/bin/env python3
"""Reading GHC's binary eventlog (what `+RTS -l` writes), checking its structure, and turning
rtslab's into the Chrome Trace Event JSON that `--eventlog-format=chrome` writes.

    ghc_eventlog.py check FILE          the structure, and counts: "ok: ..." or the faults
    ghc_eventlog.py json FILE [-o OUT]  the same events as Chrome trace JSON (stdout or OUT)
    ghc_eventlog.py counts FILE         events per type, by name
    ghc_eventlog.py same FILE JSON      FILE's events, converted, are JSON's (a Chrome trace
                                        of the same run of events), all but the times

The format (GHC's user's guide, "Eventlog encodings"; Note [GHC eventlog format] in
runtime/trace/eventlog_ghc.h): big-endian; "hdrb" "hetb", the event types (each "etb\\0",
Word16 number, Int16 payload size or -1 for variable, Word32 length and the description,
Word32 length and extra information, "ete\\0"), "hete" "hdre" "datb", the events (Word16
number, Word64 time in ns, a Word16 payload size for variable ones, the payload), and Word16
0xffff. Events come in blocks: a BLOCK_MARKER (Word32 the block's size in bytes, marker
included; Word64 its last event's time; Word16 its capability, 0xffff for none) and then the
block's events, which belong to that capability.

check verifies the header and its markers; that every event's type is declared and its size
is the declared one (a fixed-size event is read with the header's size, as every reader
does, so a wrong size shows as the events after it not parsing); the block framing (sizes
that end on an event boundary, end times equal to the block's last event, no event outside
a block); that timestamps never decrease within a capability's blocks, and that the log ends
with 0xffff and nothing after it. Python 3 standard library only.
"""

import json
import os
import struct
import sys

# GHC's event numbers (EventLogFormat.h) and rtslab's own; TESTS checks that these are the
# numbers of runtime/trace/eventlog_ghc.h.
EV_CREATE_THREAD = 0
EV_RUN_THREAD = 1
EV_STOP_THREAD = 2
EV_THREAD_RUNNABLE = 3
EV_MIGRATE_THREAD = 4
EV_THREAD_WAKEUP = 8
EV_GC_START = 9
EV_GC_END = 10
EV_REQUEST_SEQ_GC = 11
EV_REQUEST_PAR_GC = 12
EV_BLOCK_MARKER = 18
EV_GC_IDLE = 20
EV_GC_WORK = 21
EV_GC_DONE = 22
EV_CAPSET_CREATE = 25
EV_CAPSET_DELETE = 26
EV_CAPSET_ASSIGN_CAP = 27
EV_RTS_IDENTIFIER = 29
EV_OSPROCESS_PID = 32
EV_CAP_CREATE = 45
EV_CAP_DELETE = 46
EV_HEAP_ALLOCATED = 49
EV_HEAP_SIZE = 50
EV_HEAP_LIVE = 51
EV_GC_STATS_GHC = 53
EV_GC_GLOBAL_SYNC = 54
EV_USER_MARKER = 58
EV_HACK_BUG_T9003 = 59
EV_RTSLAB_ENTER_BARRIER = 2000
EV_RTSLAB_ENTER_BARRIER_END = 2001
EV_RTSLAB_AWAIT_GC_THREADS = 2002
EV_RTSLAB_AWAIT_GC_THREADS_END = 2003
EV_RTSLAB_LEAVE_BARRIER = 2004
EV_RTSLAB_LEAVE_BARRIER_END = 2005
EV_RTSLAB_SLEEP = 2006
EV_RTSLAB_SLEEP_END = 2007
EV_RTSLAB_IDLE = 2008
EV_RTSLAB_IDLE_END = 2009
EV_RTSLAB_MAJOR_GC = 2010
EV_RTSLAB_WAKE = 2011
EV_RTSLAB_SPIN = 2012
# {{patch:idle-optout
EV_RTSLAB_OPT_OUT = 2013            # an idle capability opts out of a GC (Note [Idle opt-out])
EV_RTSLAB_REJOIN = 2014             # ... and rejoins (Word8: it waited for the release)
# }}patch:idle-optout

NO_CAP = 0xFFFF
BLOCK_EVENT_SIZE = 2 + 8 + 14

# STOP_THREAD's status values (GHC's user's guide).
STOP_STATUS = {
    1: "HeapOverflow", 2: "StackOverflow", 3: "ThreadYielding", 4: "ThreadBlocked",
    5: "ThreadFinished", 6: "ForeignCall", 7: "BlockedOnMVar", 8: "BlockedOnBlackHole",
    9: "BlockedOnRead", 10: "BlockedOnWrite", 11: "BlockedOnDelay", 12: "BlockedOnSTM",
    13: "BlockedOnDoProc", 16: "BlockedOnMsgThrowTo",
}

# rtslab's span events without a GHC counterpart: number -> (phase, span name)
OWN_SPANS = {
    EV_RTSLAB_ENTER_BARRIER: ("B", "enter barrier"),
    EV_RTSLAB_ENTER_BARRIER_END: ("E", "enter barrier"),
    EV_RTSLAB_AWAIT_GC_THREADS: ("B", "await gc threads"),
    EV_RTSLAB_AWAIT_GC_THREADS_END: ("E", "await gc threads"),
    EV_RTSLAB_LEAVE_BARRIER: ("B", "leave barrier"),
    EV_RTSLAB_LEAVE_BARRIER_END: ("E", "leave barrier"),
    EV_RTSLAB_SLEEP: ("B", "sleep"),
    EV_RTSLAB_SLEEP_END: ("E", "sleep"),
    EV_RTSLAB_IDLE: ("B", "idle"),
    EV_RTSLAB_IDLE_END: ("E", "idle"),
}

THREAD_EVENTS = {
    EV_CREATE_THREAD: "thread create",
    EV_THREAD_RUNNABLE: "thread runnable",
    EV_THREAD_WAKEUP: "thread wakeup",
    EV_MIGRATE_THREAD: "thread migrate",
}


class EventlogError(Exception):
    """Not an eventlog at all (unreadable, or the header does not parse)."""


class EventType:
    __slots__ = ("num", "size", "desc")

    def __init__(self, num, size, desc):
        self.num, self.size, self.desc = num, size, desc


class Event:
    __slots__ = ("num", "ts", "cap", "payload")

    def __init__(self, num, ts, cap, payload):
        self.num, self.ts, self.cap, self.payload = num, ts, cap, payload


class Eventlog:
    def __init__(self):
        self.path = None
        self.types = {}             # num -> EventType
        self.events = []            # every event but the block markers, in file order
        self.blocks = 0
        self.errors = []            # violations of the format
        self.caps = []              # from CAP_CREATE
        self.rts = None             # RTS_IDENTIFIER

    def name(self, num):
        t = self.types.get(num)
        return t.desc if t else f"undeclared {num}"


def _u16(b, o):
    return struct.unpack_from(">H", b, o)[0]


def _u32(b, o):
    return struct.unpack_from(">I", b, o)[0]


def _u64(b, o):
    return struct.unpack_from(">Q", b, o)[0]


def is_eventlog(path):
    """Whether PATH starts as a GHC eventlog does."""
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"hdrb"
    except OSError:
        return False


def read(path):
    """Parse PATH; raise EventlogError if it is not an eventlog at all. Faults in the events
    after a good header are collected in .errors, and reading stops at the first that leaves
    the rest unparseable."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise EventlogError(f"cannot read {path}: {e.strerror}")
    log = Eventlog()
    log.path = path
    err = log.errors.append
    o = 0

    def need(n, what):
        if o + n > len(data):
            raise EventlogError(f"{path}: truncated in {what} (offset {o})")

    need(8, "the header")
    if data[0:4] != b"hdrb" or data[4:8] != b"hetb":
        raise EventlogError(f"{path}: not a GHC eventlog (no \"hdrb\" \"hetb\" at the start)")
    o = 8
    while True:
        need(4, "the event types")
        m = data[o:o + 4]
        if m == b"hete":
            o += 4
            break
        if m != b"etb\0":
            raise EventlogError(f"{path}: an event type at offset {o} does not start with \"etb\\0\"")
        need(4 + 2 + 2 + 4, "an event type")
        num, size = struct.unpack_from(">Hh", data, o + 4)
        dlen = _u32(data, o + 8)
        o += 12
        need(dlen + 4, "an event type")
        desc = data[o:o + dlen].decode("utf-8", "replace")
        o += dlen
        xlen = _u32(data, o)
        o += 4
        need(xlen + 4, "an event type")
        o += xlen
        if data[o:o + 4] != b"ete\0":
            raise EventlogError(f"{path}: event type {num} does not end with \"ete\\0\"")
        o += 4
        if num in log.types:
            err(f"event type {num} declared twice")
        if size < -1:
            err(f"event type {num} has size {size}")
        log.types[num] = EventType(num, size, desc)
    need(8, "the header")
    if data[o:o + 4] != b"hdre":
        raise EventlogError(f"{path}: no \"hdre\" after the event types")
    if data[o + 4:o + 8] != b"datb":
        raise EventlogError(f"{path}: no \"datb\" after the header")
    o += 8
    marker = log.types.get(EV_BLOCK_MARKER)
    if marker is not None and marker.size != 14:
        err(f"BLOCK_MARKER declared with size {marker.size}, not 14")

    block_end = None                # offset where the current block ends
    block_cap = None
    block_last = None               # the block's end time, from its marker
    last_ts_in_block = None
    last_ts = {}                    # cap -> last timestamp in its blocks
    ended = False
    while o < len(data):
        if len(data) - o < 2:
            err(f"a partial event at offset {o}")
            break
        num = _u16(data, o)
        if num == 0xFFFF:
            o += 2
            ended = True
            break
        if block_end is not None and o >= block_end:
            if o != block_end:
                err(f"block ending at offset {block_end} ends inside an event")
            if block_last is not None and last_ts_in_block is not None and block_last != last_ts_in_block:
                err(f"block of cap {block_cap} ending at offset {block_end}: its marker says the "
                    f"last event is at {block_last}, the last event is at {last_ts_in_block}")
            block_end = block_cap = block_last = last_ts_in_block = None
        t = log.types.get(num)
        if t is None:
            err(f"event at offset {o}: type {num} is not declared in the header")
            break
        if len(data) - o < 10:
            err(f"a partial event at offset {o}")
            break
        ts = _u64(data, o + 2)
        p = o + 10
        if t.size == -1:
            if len(data) - p < 2:
                err(f"a partial event at offset {o}")
                break
            size = _u16(data, p)
            p += 2
        else:
            size = t.size
        if len(data) - p < size:
            err(f"event {num} ({t.desc}) at offset {o} runs past the end of the file")
            break
        payload = data[p:p + size]
        start = o
        o = p + size
        if num == EV_BLOCK_MARKER:
            if block_end is not None:
                err(f"a block marker at offset {start} inside the block ending at {block_end}")
            if size < 14:
                err(f"a block marker at offset {start} of {size} bytes")
                continue
            bsize, bend, bcap = struct.unpack_from(">IQH", payload, 0)
            log.blocks += 1
            if bsize < BLOCK_EVENT_SIZE:
                err(f"block at offset {start}: size {bsize} is less than its marker")
            block_end = start + bsize
            block_cap = None if bcap == NO_CAP else bcap
            block_last = bend if bsize > BLOCK_EVENT_SIZE else None
            last_ts_in_block = None
            if block_end > len(data):
                err(f"block at offset {start} (size {bsize}) runs past the end of the file")
            if block_cap is not None and block_cap in last_ts and ts < last_ts[block_cap]:
                err(f"cap {block_cap}: block at offset {start} starts at {ts}, before the "
                    f"previous block's last event at {last_ts[block_cap]}")
            continue
        if block_end is None:
            err(f"event {num} ({t.desc}) at offset {start} is outside any block")
        cap = block_cap
        if cap is not None:
            prev = last_ts.get(cap)
            if prev is not None and ts < prev:
                err(f"cap {cap}: timestamp goes backwards at offset {start} ({t.desc}): "
                    f"{ts} after {prev}")
            last_ts[cap] = ts if prev is None or ts > prev else prev
        last_ts_in_block = ts
        log.events.append(Event(num, ts, cap, payload))
        if num == EV_CAP_CREATE and size >= 2:
            log.caps.append(_u16(payload, 0))
        elif num == EV_RTS_IDENTIFIER and size >= 4:
            log.rts = payload[4:].decode("utf-8", "replace")
    if block_end is not None:
        if o - (2 if ended else 0) != block_end:
            err(f"the last block (ending at offset {block_end}) does not end where the data does")
        elif block_last is not None and last_ts_in_block is not None and block_last != last_ts_in_block:
            err(f"the last block: its marker says the last event is at {block_last}, the last "
                f"event is at {last_ts_in_block}")
    if not ended:
        err("no end of data (0xffff) at the end of the file")
    elif o != len(data):
        err(f"{len(data) - o} bytes after the end of data")
    return log


def to_chrome(log):
    """The Chrome trace JSON object (as eventlog_chrome.c writes it) of rtslab's events."""
    caps = sorted(set(log.caps)) or sorted({e.cap for e in log.events if e.cap is not None})
    evs = [{"ph": "M", "name": "thread_name", "pid": 1, "tid": c, "args": {"name": f"cap {c}"}}
           for c in caps]
    stacks = {}                     # cap -> open span names (to tell GC_WORK's two meanings)
    major = {}                      # cap -> the GC starting is a major one
    heap = {}                       # cap -> the heap values seen so far for the counter

    def ev(ph, name, tid, ts, args=None, instant=False):
        e = {"ph": ph, "name": name, "pid": 1, "tid": tid, "ts": round(ts / 1e3, 3)}
        if instant:
            e = {"ph": "i", "s": "t", "name": name, "pid": 1, "tid": tid, "ts": round(ts / 1e3, 3)}
        if args is not None:
            e["args"] = args
        evs.append(e)

    for e in log.events:
        c = e.cap
        if c is None:
            continue
        st = stacks.setdefault(c, [])
        n, p, ts = e.num, e.payload, e.ts

        def begin(name, args=None):
            st.append(name)
            ev("B", name, c, ts, args)

        def end(name, args=None):
            if st and st[-1] == name:
                st.pop()
            elif name in st:
                del st[len(st) - 1 - st[::-1].index(name):]
            ev("E", name, c, ts, args)

        if n == EV_RUN_THREAD:
            begin("mutator", {"thread": _u32(p, 0)})
        elif n == EV_STOP_THREAD:
            end("mutator", {"status": STOP_STATUS.get(_u16(p, 4), "?")})
        elif n in (EV_REQUEST_PAR_GC, EV_REQUEST_SEQ_GC):
            begin("stw request")
        elif n == EV_GC_GLOBAL_SYNC:
            end("stw request")
        elif n == EV_RTSLAB_MAJOR_GC:
            major[c] = True
        elif n == EV_GC_START:
            begin("major GC" if major.pop(c, False) else "minor GC")
        elif n == EV_GC_END:
            open_gc = [s for s in st if s in ("minor GC", "major GC")]
            end(open_gc[-1] if open_gc else "minor GC")
        elif n == EV_GC_WORK:
            if st and st[-1] == "gc work":
                ev("i", "gc resume", c, ts, instant=True)
            else:
                begin("gc work")
        elif n == EV_GC_IDLE:
            ev("i", "gc idle", c, ts, instant=True)
        elif n == EV_GC_DONE:
            end("gc work")
        elif n in OWN_SPANS:
            ph, name = OWN_SPANS[n]
            (begin if ph == "B" else end)(name)
        elif n == EV_RTSLAB_WAKE:
            ev("i", "wake", c, ts, {"by": "gc" if p[0] else "work"}, instant=True)
        elif n == EV_RTSLAB_SPIN:
            ev("i", "spin", c, ts, {"lock": p[8:].decode("utf-8", "replace"), "spins": _u64(p, 0)},
               instant=True)
        # {{patch:idle-optout
        elif n == EV_RTSLAB_OPT_OUT:
            ev("i", "opt out", c, ts, instant=True)
        elif n == EV_RTSLAB_REJOIN:
            ev("i", "rejoin", c, ts, {"waited": bool(p[0])}, instant=True)
        # }}patch:idle-optout
        elif n in THREAD_EVENTS:
            args = {"thread": _u32(p, 0)}
            if n in (EV_THREAD_WAKEUP, EV_MIGRATE_THREAD):
                args["cap"] = _u16(p, 4)
            ev("i", THREAD_EVENTS[n], c, ts, args, instant=True)
        elif n == EV_GC_STATS_GHC:
            gen, copied = struct.unpack_from(">HQ", p, 4)
            threads, max_copied = struct.unpack_from(">IQ", p, 30)
            balanced = _u64(p, 58 - 8) if len(p) >= 58 else 0
            ev("i", "gc stats", c, ts, {"gen": gen, "copied": copied, "threads": threads,
                                        "max_copied": max_copied, "balanced_copied": balanced},
               instant=True)
        elif n == EV_HEAP_ALLOCATED:
            heap.setdefault(c, {})["allocated"] = _u64(p, 4)
        elif n == EV_HEAP_SIZE:
            heap.setdefault(c, {})["size"] = _u64(p, 4)
        elif n == EV_HEAP_LIVE:
            h = heap.pop(c, {})
            ev("C", "heap", c, ts, {"allocated": h.get("allocated", 0), "size": h.get("size", 0),
                                    "live": _u64(p, 4)})
        # anything else (GHC's events rtslab does not write, other tools' own) is skipped
    other = {"n_caps": len(caps), "converted_from": "GHC eventlog"}
    if log.rts:
        other["rts"] = log.rts
        if log.rts.startswith("rtslab-"):
            other["rtslab"] = log.rts[len("rtslab-"):]
    return {"displayTimeUnit": "ns", "otherData": other, "traceEvents": evs}


def counts(log):
    """Events per type number."""
    c = {}
    for e in log.events:
        c[e.num] = c.get(e.num, 0) + 1
    return c


def same(log, path):
    """The differences between log's events, converted, and the Chrome trace at path, track
    by track, times left out: a list of messages, empty when they agree."""
    with open(path, encoding="utf-8") as f:
        theirs = json.load(f)["traceEvents"]
    ours = to_chrome(log)["traceEvents"]

    def tracks(evs):
        t = {}
        for e in evs:
            key = (e.get("ph"), e.get("name"), json.dumps(e.get("args"), sort_keys=True))
            t.setdefault(e.get("tid"), []).append(key)
        return t

    a, b = tracks(ours), tracks(theirs)
    diffs = []
    for tid in sorted(set(a) | set(b), key=str):
        x, y = a.get(tid, []), b.get(tid, [])
        if x == y:
            continue
        i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
        diffs.append(f"tid {tid}: {len(x)} events converted, {len(y)} in {path}; first "
                     f"difference at event {i}: {x[i] if i < len(x) else None} vs "
                     f"{y[i] if i < len(y) else None}")
    return diffs


def main(argv):
    if len(argv) < 2 or argv[0] not in ("check", "json", "counts", "same"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    cmd, path = argv[0], argv[1]
    try:
        log = read(path)
    except EventlogError as e:
        print(f"error: {e}", file=sys.stderr)
        print("FAILED: not an eventlog")
        return 1
    if cmd == "check":
        for m in log.errors[:20]:
            print(f"error: {path}: {m}", file=sys.stderr)
        if log.errors:
            print(f"FAILED: {len(log.errors)} violation(s)")
            return 1
        c = counts(log)
        print(f"ok: {len(log.types)} event types, {log.blocks} blocks, {len(log.events)} events "
              f"on {len(log.caps)} capabilities; {c.get(EV_GC_START, 0)} GC_START, "
              f"{c.get(EV_GC_STATS_GHC, 0)} GC_STATS_GHC, {c.get(EV_CREATE_THREAD, 0)} "
              f"CREATE_THREAD, {c.get(EV_RUN_THREAD, 0)} RUN_THREAD")
        return 0
    if cmd == "same":
        if len(argv) != 3:
            print(__doc__.strip(), file=sys.stderr)
            return 2
        diffs = same(log, argv[2])
        for m in diffs:
            print(f"error: {m}", file=sys.stderr)
        if diffs or log.errors:
            print(f"FAILED: {len(diffs)} track(s) differ, {len(log.errors)} violation(s)")
            return 1
        print(f"same: {len(log.events)} events, as in {argv[2]}")
        return 0
    if cmd == "counts":
        for num, n in sorted(counts(log).items()):
            print(f"{n:10d}  {num:5d}  {log.name(num)}")
        return 1 if log.errors else 0
    out = None
    if len(argv) >= 4 and argv[2] == "-o":
        out = argv[3]
    text = json.dumps(to_chrome(log), separators=(",", ":"))
    if out:
        with open(out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    for m in log.errors[:20]:
        print(f"warning: {path}: {m}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
