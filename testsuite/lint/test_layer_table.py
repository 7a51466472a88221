#!/usr/bin/env python3
"""Self-test of layer_table.py, so that the check of runtime/README.md's table of layers
against layers.py cannot pass by checking nothing.

    python3 testsuite/lint/test_layer_table.py

Writes throwaway trees (a layers.py holding only a table LAYERS, and a runtime/README.md)
in a temporary directory and runs layer_table.py on each: a table that agrees passes
(modules written as `dir/`, `file` and `file.c`); a row missing, a rank changed, a module
the table has and layers.py has not, two rows swapped, and a README without the table are
each reported, and nothing else. Prints "test_layer_table: N checks passed" and exits 0,
or names the first failed check and exits 1.
"""
import os
import subprocess
import sys
import tempfile

TABLE_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layer_table.py")
checks = 0

LAYERS = """LAYERS = [
    (0, "include", ["include/"]),
    (1, "base", ["base/"]),
    (2, "os", ["os/"]),
    (2, "trace/eventlog", ["trace/eventlog.c"]),
    (3, "sm", ["sm/"]),
    (4, "rts/main", ["rts/main.c"]),
]
"""
ROWS = ["| 0 | `include/` | the public API | nothing |",
        "| 1 | `base/` | leaf utilities | include |",
        "| 2 | `os/` | OS services | base |",
        "| 2 | `trace/eventlog` | the eventlog | base |",
        "| 3 | `sm/` | storage manager | all of the above |",
        "| 4 | `rts/main.c` | the driver | everything |"]


def readme(rows):
    return ("# The runtime's layers\n\nProse.\n\n"
            "| rank | module | what it is | what it may use |\n|---|---|---|---|\n"
            + "\n".join(rows) + "\n\n## Calling up\n\n| 9 | `x/` | not the table |\n")


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def run(tmp, name, text):
    root = os.path.join(tmp, name)
    for rel, body in (("testsuite/lint/layers.py", LAYERS), ("runtime/README.md", text)):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(body)
    p = subprocess.run([sys.executable, TABLE_PY, "--src", root], capture_output=True,
                       text=True)
    found = [l.removeprefix("layer_table: ") for l in p.stderr.splitlines()
             if l.startswith("layer_table: ") and " difference(s) " not in l]
    return p.returncode, found, p.stdout + p.stderr


def expect_reported(tmp, name, text, wanted):
    code, found, out = run(tmp, name, text)
    expect(f"{name}: fails", code == 1, out)
    expect(f"{name}: reports exactly {wanted!r}", found == [wanted], out)


def main():
    with tempfile.TemporaryDirectory(prefix="test_layer_table-") as tmp:
        code, found, out = run(tmp, "clean", readme(ROWS))
        expect("agreeing table passes", code == 0 and not found and "layer_table ok" in out,
               out)
        expect_reported(tmp, "missing", readme(ROWS[:2] + ROWS[3:]),
                        "runtime/README.md: no row for os (rank 2 in layers.py)")
        expect_reported(tmp, "rank",
                        readme(ROWS[:4] + ["| 4 | `sm/` | storage | x |", ROWS[5]]),
                        "runtime/README.md:11: sm has rank 4; layers.py gives it rank 3")
        expect_reported(tmp, "extra", readme(ROWS + ["| 5 | `scheme/` | the front-end | x |"]),
                        "runtime/README.md:13: scheme (rank 5) is no module of layers.py")
        expect_reported(tmp, "order", readme([ROWS[0], ROWS[1], ROWS[3], ROWS[2]] + ROWS[4:]),
                        "runtime/README.md: the rows are not in layers.py's order: include, "
                        "base, os, trace/eventlog, sm, rts/main")
        code, found, out = run(tmp, "no-table", "# The runtime's layers\n\nProse only.\n")
        expect("no table fails", code == 1 and "has no table of layers" in out, out)
    print(f"test_layer_table: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_layer_table: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
