#!/usr/bin/env python3
"""docs/stats.md against the patches' registered statistics (Note [Patch statistics] in
runtime/stats/stats.h), so that the doc cannot drift from the code.

    python3 testsuite/stats/doc_keys.py --doc docs/stats.md -- PROGRAM

PROGRAM +RTS --stats-keys prints the --machine-readable keys of the patches compiled in, as
"NAME KEY" lines, and +RTS --info which patches those are. The key table under '### Keys'
in the doc lists a patch's keys between its markers (<!-- {{patch:NAME --> ...
<!-- }}patch:NAME -->). For each patch of the build, the keys it registers must be exactly
the keys of its marker blocks; no patch may register a key the doc lists outside its own
blocks. Before the real check, the same comparison runs on doctored copies (a key dropped
from the doc, a key added to it), which it must reject: the check can fail. Prints
"stats ok: doc keys" and exits 0, or says what differs and exits 1.
"""
import argparse
import re
import subprocess
import sys


def doc_blocks(text):
    """(patch name or None) -> set of keys, from the '### Keys' table."""
    section = text.split("### Keys", 1)
    if len(section) != 2:
        raise SystemExit("doc_keys: the doc has no '### Keys' section")
    blocks, stack = {}, []
    for line in section[1].splitlines():
        pm = re.match(r"^<!-- (\{\{|\}\})patch:([a-z0-9-]+) -->$", line)
        m = re.match(r"^\| `([^`]+)` \|", line)
        if pm:
            if pm.group(1) == "{{":
                stack.append(pm.group(2))
            elif stack:
                stack.pop()
        elif m:
            blocks.setdefault(stack[-1] if stack else None, set()).add(m.group(1))
        elif line.startswith("## "):
            break
    return blocks


def compare(blocks, registered, patches):
    """The differences between the doc's blocks and the registered keys (patch -> set)."""
    errors = []
    for name in sorted(patches):
        reg, doc = registered.get(name, set()), blocks.get(name, set())
        for k in sorted(reg - doc):
            errors.append(f"{name} registers {k}, which the doc does not list in its block")
        for k in sorted(doc - reg):
            errors.append(f"the doc lists {k} in {name}'s block, but {name} does not register it")
    for name, reg in sorted(registered.items()):
        if name not in patches:
            errors.append(f"{name} registers keys but is not among the build's patches")
        for other, doc in blocks.items():
            if other != name:
                for k in sorted(reg & doc):
                    where = f"{other}'s block" if other else "the base's table"
                    errors.append(f"{name} registers {k}, which the doc lists in {where}")
    return errors


def run(cmd, *rts):
    p = subprocess.run([cmd, "+RTS", *rts, "-RTS"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    if p.returncode != 0:
        raise SystemExit(f"doc_keys: {cmd} +RTS {' '.join(rts)} -RTS exited {p.returncode}: "
                         f"{p.stderr.strip()}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--doc", required=True)
    ap.add_argument("program", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    prog = [a for a in args.program if a != "--"]
    if len(prog) != 1:
        raise SystemExit("doc_keys: name one program after --")
    with open(args.doc, encoding="utf-8") as f:
        blocks = doc_blocks(f.read())
    registered = {}
    for line in run(prog[0], "--stats-keys").splitlines():
        name, key = line.split()
        registered.setdefault(name, set()).add(key)
    m = re.search(r'\("Patches","([^"]*)"\)', run(prog[0], "--info"))
    if not m:
        raise SystemExit("doc_keys: --info names no patches")
    patches = set(m.group(1).split()) - {"none"}

    # the check can fail: a key dropped from the doc, and one added to it, are caught
    for name, keys in registered.items():
        k = sorted(keys)[0]
        dropped = {n: set(v) - ({k} if n == name else set()) for n, v in blocks.items()}
        if not compare(dropped, registered, patches):
            raise SystemExit(f"doc_keys: dropping {k} from the doc went unnoticed")
    added = {n: set(v) for n, v in blocks.items()}
    for name in patches:
        added.setdefault(name, set()).add("rtslab_doc_keys_not_a_key")
        if not compare(added, registered, patches):
            raise SystemExit(f"doc_keys: a key added to {name}'s block went unnoticed")
        added[name].discard("rtslab_doc_keys_not_a_key")

    errors = compare(blocks, registered, patches)
    if errors:
        print("doc_keys: docs/stats.md and the registered keys differ:\n  " + "\n  ".join(errors))
        return 1
    n = sum(len(v) for v in registered.values())
    print(f"stats ok: doc keys ({n} registered keys of {len(patches)} patch(es))")
    return 0


if __name__ == "__main__":
    sys.exit(main())
