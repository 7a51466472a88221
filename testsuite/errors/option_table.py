#!/usr/bin/env python3
"""docs/rts-options.md's option table is the base's rows of the option table (Note [The option
table] in runtime/rts/options.c), as the runtime prints them.

    python3 testsuite/errors/option_table.py RTSLAB DOC [--write]

Runs `RTSLAB +RTS --print-option-table -RTS` (one line per row: OWNER, a tab, a Markdown table
row), keeps the base's rows, and compares them with the lines of DOC between BEGIN and END.
Prints "option_table: ok (N rows)", or the differences and exits 1. --write puts the rows
into DOC instead (after a change of a row: `make` then this with --write).
"""
import subprocess
import sys

BEGIN = "<!-- option table: made by `rtslab +RTS --print-option-table`, checked by testsuite/errors/option_table.py -->"
END = "<!-- end of the option table -->"
HEADER = ["| option | default | values | what it does |", "|---|---|---|---|"]


def base_rows(rtslab):
    out = subprocess.run([rtslab, "+RTS", "--print-option-table", "-RTS"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    if out.returncode != 0:
        sys.exit("option_table: %s +RTS --print-option-table exited %d: %s"
                 % (rtslab, out.returncode, out.stderr.strip()))
    rows = []
    for line in out.stdout.splitlines():
        owner, sep, row = line.partition("\t")
        if not sep or not row.startswith("| "):
            sys.exit("option_table: not a row: %r" % line)
        if owner == "base":
            rows.append(row)
    if not rows:
        sys.exit("option_table: the runtime printed no base rows")
    return HEADER + rows


def main():
    args = [a for a in sys.argv[1:] if a != "--write"]
    if len(args) != 2:
        sys.exit(__doc__)
    rtslab, doc = args
    rows = base_rows(rtslab)
    with open(doc, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        b = lines.index(BEGIN)
        e = lines.index(END, b)
    except ValueError:
        sys.exit("option_table: %s has no %r ... %r block" % (doc, BEGIN, END))
    if "--write" in sys.argv:
        lines[b + 1:e] = rows
        with open(doc, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        print("option_table: wrote %d rows into %s" % (len(rows) - 2, doc))
        return
    have = lines[b + 1:e]
    if have != rows:
        for i in range(max(len(have), len(rows))):
            h = have[i] if i < len(have) else "(nothing)"
            r = rows[i] if i < len(rows) else "(nothing)"
            if h != r:
                print("option_table: line %d of the table:\n  docs:    %s\n  runtime: %s"
                      % (i + 1, h, r))
        print("option_table: %s differs from the runtime's rows (regenerate it with --write)"
              % doc)
        sys.exit(1)
    print("option_table: ok (%d rows)" % (len(rows) - 2))


if __name__ == "__main__":
    main()
