#!/usr/bin/env python3
"""The idle-optout patch's events in the eventlog (Note [Idle opt-out] in
runtime/sync/stw.h): one "opt out" instant per opt-out and one "rejoin" per rejoin, as many
as `-s` counts, in both formats.

    eventlog_optout.py DIR PROGRAM ARGS... +RTS ... -RTS

Runs PROGRAM twice, with `-l` in GHC's format and as Chrome JSON (files in DIR), and
`-s --machine-readable`; each log must check (testsuite/trace/tracelib.py) and hold as many
"opt out" instants as rtslab_idle_optouts, "rejoin" instants as rtslab_idle_rejoins, and
rejoins that waited as rtslab_idle_rejoin_waits, at least one opt-out among them. Prints
"optout events ok: ..." or what differs (exit 1).
"""
import ast
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "trace"))
import tracelib  # noqa: E402


def main(argv):
    if len(argv) < 2 or "+RTS" not in argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out, cmd = argv[0], argv[1:]
    os.makedirs(out, exist_ok=True)
    i = cmd.index("+RTS")
    said = []
    for fmt in ("ghc", "chrome"):
        log = os.path.join(out, f"optout.{os.getpid()}.{fmt}")
        run = cmd[:i + 1] + [f"-l{log}", f"--eventlog-format={fmt}", "-s", "--machine-readable"] + cmd[i + 1:]
        p = subprocess.run(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"FAILED: {' '.join(run)} exited with {p.returncode}: {p.stderr[-500:]}")
            return 1
        keys = dict(ast.literal_eval(p.stderr[p.stderr.index("["):p.stderr.rindex("]") + 1]))
        tr = tracelib.load(log)
        if tr.errors:
            print(f"FAILED: {log}: {tr.errors[:3]}")
            return 1
        outs = sum(1 for x in tr.instants if x.name == "opt out")
        rejoins = [x for x in tr.instants if x.name == "rejoin"]
        waited = sum(1 for x in rejoins if x.args.get("waited"))
        want = (int(keys["rtslab_idle_optouts"]), int(keys["rtslab_idle_rejoins"]),
                int(keys["rtslab_idle_rejoin_waits"]))
        if (outs, len(rejoins), waited) != want or outs == 0:
            print(f"FAILED: {fmt}: the eventlog has {outs} opt-outs, {len(rejoins)} rejoins "
                  f"({waited} waited); -s says {want[0]}, {want[1]} ({want[2]})")
            return 1
        os.remove(log)
        said.append(f"{fmt}: {outs} opt-outs, {len(rejoins)} rejoins ({waited} waited)")
    print("optout events ok: " + "; ".join(said) + ", as -s says")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
