#!/usr/bin/env python3
"""-O<size>, the minimum old generation (GHC's -O): counted, not timed.

    min_old_gen.py RTSLAB PROGRAM.scm

Runs PROGRAM.scm (min_old_gen.scm: a ring of 500 short lists, each replaced in turn, so that
every list is promoted by a minor GC and then dies in the old generation; about 50 MB
allocated, a few hundred KB live) at -N1 -A64k with no -O and with -O256k, -O4m and -O64m,
under `-s --machine-readable`, and checks:

 - no -O is -O4m (rts_config.h's RTS_MIN_OLD_GEN_LIMIT): the same number of major GCs;
 - a larger -O, fewer major GCs: 256k > 4m > 64m, and at -O64m none at all (everything
   the program promotes fits under 64 MB);
 - the heap follows the floor: the most heap in use is under 4 MiB at -O256k, at least
   4 MiB at -O4m (no major GC until the old generation passes it) and larger again at -O64m.
"""
import ast
import os
import subprocess
import sys
import tempfile

MIB = 1 << 20


def stats(cmd, rts):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "stats")
        full = cmd + ["+RTS", "-N1", "-A64k", "-s" + path, "--machine-readable"] + rts + ["-RTS"]
        p = subprocess.run(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        if p.returncode != 0 or p.stdout.strip() != "20":
            sys.exit(f"min_old_gen: {' '.join(full)} exited {p.returncode}, stdout "
                     f"{p.stdout!r}:\n{p.stderr[-2000:]}")
        with open(path) as fh:
            d = dict(ast.literal_eval(fh.read()))
    return int(d["major_gcs"]), int(d["max_mem_in_use_bytes"])


def main():
    rtslab, prog = sys.argv[1], sys.argv[2]
    cmd = [rtslab, prog]
    runs = {o: stats(cmd, [f"-O{o}"] if o else []) for o in ["", "256k", "4m", "64m"]}
    for o, (majors, mem) in runs.items():
        print(f"-O{o or ' (default)'}: {majors} major GCs, most heap in use {mem} bytes")
    failed = []
    if runs[""][0] != runs["4m"][0]:
        failed.append("no -O does not behave as -O4m")
    if not runs["256k"][0] > runs["4m"][0] > runs["64m"][0] == 0:
        failed.append("major GCs do not fall as -O grows (256k > 4m > 64m = 0)")
    if not runs["256k"][1] < 4 * MIB <= runs["4m"][1] < runs["64m"][1]:
        failed.append("the heap does not follow -O (256k < 4 MiB <= 4m < 64m)")
    for f in failed:
        print("min_old_gen: " + f)
    if failed:
        sys.exit(1)
    print("min old gen ok")


if __name__ == "__main__":
    main()
