#!/usr/bin/env python3
"""Runs a program with `+RTS -s --machine-readable -RTS` appended and checks its stack-chunk
counters (docs/stats.md: rtslab_stack_*), e.g.

    check_chunks.py --min linked=1000 --max linked=200 -- PROGRAM ARGS... [+RTS ... -RTS]

KEY is a key without its `rtslab_stack_` prefix: chunks_linked (or linked), chunks_allocated
(allocated), chunks_reused (reused), underflows, objects_scanned (scanned), chunks_skipped
(skipped). The program's stdout and stderr are passed through (the statistics are left out of
stderr) and its exit status is kept, unless a check fails: then the status is 3. Prints
"chunks ok: KEY=N ..." when every check holds. A build without stack chunks has no such keys
(and rejects -kc/-kb), so every test using this fails there.
"""
import re
import subprocess
import sys

ALIASES = {"linked": "chunks_linked", "allocated": "chunks_allocated", "reused": "chunks_reused",
           "scanned": "objects_scanned", "skipped": "chunks_skipped"}


def main():
    args = sys.argv[1:]
    checks = []
    while args and args[0] != "--":
        kind, spec = args[0], args[1]
        key, _, n = spec.partition("=")
        checks.append((kind, ALIASES.get(key, key), int(n)))
        args = args[2:]
    cmd = args[1:]
    p = subprocess.run(cmd + ["+RTS", "-s", "--machine-readable", "-RTS"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    sys.stdout.write(p.stdout)
    values = {}
    rest = []
    for line in p.stderr.splitlines(keepends=True):
        m = re.match(r'^\s*[\[,]?\("rtslab_stack_([a-z_]+)", "(-?[0-9]+)"\)', line)
        if m:
            values[m.group(1)] = int(m.group(2))
        elif not re.match(r'^\s*[\[,]\("', line) and line.strip() != "]":
            rest.append(line)
    sys.stderr.write("".join(rest))
    bad = []
    if not values:
        bad.append("no rtslab_stack_* statistics (a build without stack chunks?)")
    for kind, key, n in checks:
        v = values.get(key)
        if v is None:
            bad.append(f"no key rtslab_stack_{key}")
        elif kind == "--min" and v < n:
            bad.append(f"{key} = {v}, expected at least {n}")
        elif kind == "--max" and v > n:
            bad.append(f"{key} = {v}, expected at most {n}")
    if bad:
        print("check_chunks: " + "; ".join(bad), file=sys.stderr)
        sys.exit(3)
    print("chunks ok: " + " ".join(f"{k}={values[k]}" for k in sorted(values)))
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
