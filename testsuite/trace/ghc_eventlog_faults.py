#!/usr/bin/env python3
"""Tests of ghc_eventlog.py, the binary eventlog's reader and checker.

    ghc_eventlog_faults.py numbers HEADER   its event numbers are those of HEADER
                                            (runtime/trace/eventlog_ghc.h)
    ghc_eventlog_faults.py faults FILE      FILE (a good eventlog, with at least one block of
                                            two events or more) passes the check, and copies
                                            of it broken in each way below each fail it, with
                                            the fault named

The broken copies: the first bytes not "hdrb"; cut short inside an event; a block's size two
bytes too long; a block's end time wrong; a timestamp going backwards inside a block; an
event of an undeclared type; a fixed-size type declared two bytes longer than it is written;
bytes after the end of data; the end of data missing. Prints one line per case and
"N faults caught", or what it missed (exit 1). Python 3 standard library only.
"""

import os
import re
import struct
import sys
import tempfile

sys.dont_write_bytecode = True      # don't leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ghc_eventlog as ge  # noqa: E402


def numbers(header):
    with open(header, encoding="utf-8") as f:
        text = f.read()
    defs = dict((name, int(v)) for name, v in re.findall(r"#define (EV_\w+)\s+(\d+)\b", text))
    bad = []
    for name, v in sorted(defs.items()):
        mine = getattr(ge, name, None)
        if mine != v:
            bad.append(f"{name}: {header} says {v}, ghc_eventlog.py {mine}")
    if bad or not defs:
        for b in bad:
            print(f"FAILED: {b}")
        return 1
    print(f"ok: {len(defs)} numbers")
    return 0


def walk(data, types):
    """(offset, number, payload size incl. a variable size field) of each event after the
    header, the end of data included as number 0xffff."""
    o = data.index(b"hdredatb") + 8
    out = []
    while o < len(data):
        num = struct.unpack_from(">H", data, o)[0]
        if num == 0xFFFF:
            out.append((o, num, 0))
            break
        size = types[num].size
        if size == -1:
            size = 2 + struct.unpack_from(">H", data, o + 10)[0]
        out.append((o, num, size))
        o += 10 + size
    return out


def faults(path):
    with open(path, "rb") as f:
        good = f.read()
    log = ge.read(path)
    if log.errors:
        print(f"FAILED: the good file {path} does not pass: {log.errors[:3]}")
        return 1
    evs = walk(good, log.types)
    # a block of a capability (not 0xffff) with at least two events after its marker
    blk = None
    for i, (o, num, size) in enumerate(evs):
        if num == ge.EV_BLOCK_MARKER and struct.unpack_from(">H", good, o + 10 + 12)[0] != ge.NO_CAP:
            if i + 2 < len(evs) and evs[i + 1][1] != ge.EV_BLOCK_MARKER and evs[i + 2][1] not in (ge.EV_BLOCK_MARKER, 0xFFFF):
                blk = i
                break
    if blk is None:
        print(f"FAILED: {path} has no capability block of two events")
        return 1
    mo = evs[blk][0]
    second = evs[blk + 2][0]
    fixed = next(t for t in log.types.values() if t.size > 0 and t.num != ge.EV_BLOCK_MARKER
                 and any(n == t.num for _, n, _ in evs))

    def patch(data, off, fmt, value):
        b = bytearray(data)
        struct.pack_into(fmt, b, off, value)
        return bytes(b)

    def redeclare(data, num, size):
        """The header with type num declared `size` bytes long."""
        b = bytearray(data)
        o = 8
        while b[o:o + 4] == b"etb\0":
            n, = struct.unpack_from(">H", b, o + 4)
            if n == num:
                struct.pack_into(">h", b, o + 6, size)
            dlen, = struct.unpack_from(">I", b, o + 8)
            xlen, = struct.unpack_from(">I", b, o + 12 + dlen)
            o += 12 + dlen + 4 + xlen + 4
        return bytes(b)

    bsize = struct.unpack_from(">I", good, mo + 10)[0]
    bend = struct.unpack_from(">Q", good, mo + 14)[0]
    cases = [
        ("not an eventlog", b"hdrx" + good[4:], "not a GHC eventlog"),
        ("cut short", good[:second + 5], "a partial event"),
        ("block too long", patch(good, mo + 10, ">I", bsize + 2), "inside the block ending"),
        ("block end time", patch(good, mo + 14, ">Q", bend + 1), "its marker says the last event"),
        ("time backwards", patch(good, second + 2, ">Q", 0), "timestamp goes backwards"),
        ("undeclared type", patch(good, second, ">H", 1999), "type 1999 is not declared"),
        (f"type {fixed.num} size", redeclare(good, fixed.num, fixed.size + 2), "FAILED"),
        ("bytes after the end", good + b"\0\0\0", "3 bytes after the end of data"),
        ("no end of data", good[:-2], "no end of data"),
    ]
    missed = 0
    with tempfile.TemporaryDirectory() as d:
        for name, data, want in cases:
            p = os.path.join(d, "broken.eventlog")
            with open(p, "wb") as f:
                f.write(data)
            try:
                errs = ge.read(p).errors
                said = "; ".join(errs)
                caught = bool(errs) and (want == "FAILED" or want in said)
            except ge.EventlogError as e:
                said = str(e)
                caught = want in said
            print(f"{'caught' if caught else 'MISSED'}: {name}: {said[:160]}")
            missed += not caught
    if missed:
        print(f"FAILED: {missed} of {len(cases)} faults missed")
        return 1
    print(f"{len(cases)} faults caught")
    return 0


def main(argv):
    if len(argv) == 2 and argv[0] == "numbers":
        return numbers(argv[1])
    if len(argv) == 2 and argv[0] == "faults":
        return faults(argv[1])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
