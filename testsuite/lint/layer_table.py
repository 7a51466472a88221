#!/usr/bin/env python3
"""runtime/README.md's table of layers is layers.py's table LAYERS.

    python3 testsuite/lint/layer_table.py --src SRCDIR

layers.py holds the runtime's layers as data (LAYERS: rank, module, paths) and checks the
code against them; runtime/README.md shows them to readers as a table whose rows are
`| rank | module | what it is | what it may use |`. This check reads both (LAYERS from
SRCDIR/testsuite/lint/layers.py) and fails unless the table has one row per entry of LAYERS,
in the same order, with the same rank and module. A module is written in the table as
its directory (`include/`), or, where LAYERS names a file, as that file without `.c` or
with it (`dir/file`, `dir/file.c`). Exit status 1 on a disagreement, each printed as "layer_table: what differs".
"""
import argparse
import importlib.util
import os
import re
import sys

ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|")


def load_layers(src):
    path = os.path.join(src, "testsuite", "lint", "layers.py")
    spec = importlib.util.spec_from_file_location("layers_of_tree", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [(rank, name) for rank, name, _ in mod.LAYERS]


def readme_rows(src):
    """[(rank, module, line number)] of the first table whose header starts `| rank |`."""
    rows, in_table = [], False
    with open(os.path.join(src, "runtime", "README.md"), encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            if re.match(r"^\|\s*rank\s*\|", line):
                in_table = True
                continue
            if in_table:
                if not line.startswith("|"):
                    break
                m = ROW.match(line)
                if m:
                    module = m.group(2).rstrip("/").removesuffix(".c")
                    rows.append((int(m.group(1)), module, no))
    return rows


def check(src):
    layers = load_layers(src)
    rows = readme_rows(src)
    if not rows:
        return ["runtime/README.md has no table of layers (a header `| rank | module | ...`)"]
    problems = []
    table = [(r, m) for r, m, _ in rows]
    for rank, name in layers:
        if (rank, name) not in table:
            other = [(r, no) for r, m, no in rows if m == name]
            if other:
                r, no = other[0]
                problems.append(f"runtime/README.md:{no}: {name} has rank {r}; layers.py "
                                f"gives it rank {rank}")
            else:
                problems.append(f"runtime/README.md: no row for {name} (rank {rank} in "
                                f"layers.py)")
    names = {n for _, n in layers}
    for r, m, no in rows:
        if m not in names:
            problems.append(f"runtime/README.md:{no}: {m} (rank {r}) is no module of "
                            f"layers.py")
    if not problems and table != layers:
        problems.append("runtime/README.md: the rows are not in layers.py's order: "
                        + ", ".join(m for _, m in layers))
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".", help="the source tree (default: .)")
    args = ap.parse_args()
    problems = check(args.src)
    for p in problems:
        print(f"layer_table: {p}", file=sys.stderr)
    if problems:
        print(f"layer_table: {len(problems)} difference(s) between runtime/README.md and "
              f"testsuite/lint/layers.py", file=sys.stderr)
        return 1
    print("layer_table ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
