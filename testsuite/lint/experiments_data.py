#!/usr/bin/env python3
"""experiments/ keeps its raw data compressed, and no generated assembly.

    python3 testsuite/lint/experiments_data.py --src SRCDIR

The experiments keep every run they report (experiments/*/results/), and raw runs are large:
a bench.py runs.json reaches megabytes, and gzip makes it a tenth. This check fails on a
file under SRCDIR/experiments/ larger than 100 KB that is not compressed: its name must end
in `.gz` (every reader of a runs.json takes runs.json.gz as it is: bench.py --report,
bench_patches.py --summary, figures.py, the experiments' own scripts; `zcat` for the rest),
unless it is a picture a README shows (.png, .jpg, .svg). It fails too on a file named like
generated assembly (`*.s`, `*.S`, `*.asm`), which belongs in a build or temporary directory
(`-s` statistics files are `*.stats`). In a git checkout it reads the files git tracks or
would add (not those .gitignore ignores: an experiment's scratch output); elsewhere (a
release) every file. Exit status 1 on a violation, each printed as
"experiments_data: PATH: what is wrong".
"""
import argparse
import os
import shutil
import subprocess
import sys

LIMIT = 100 * 1000
PICTURES = (".png", ".jpg", ".jpeg", ".svg")
ASSEMBLY = (".s", ".S", ".asm")


def listed(src):
    """The files under SRCDIR/experiments/, relative to SRCDIR."""
    if shutil.which("git") and os.path.isdir(os.path.join(src, ".git")):
        p = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others",
                            "--exclude-standard", "--", "experiments"],
                           capture_output=True, text=True)
        if p.returncode == 0:
            return sorted(f for f in p.stdout.split("\0")
                          if f and os.path.isfile(os.path.join(src, f)))
    out = []
    for root, dirs, files in os.walk(os.path.join(src, "experiments")):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        out += [os.path.relpath(os.path.join(root, f), src) for f in sorted(files)]
    return out


def check(src):
    problems = []
    for rel in listed(src):
        name = os.path.basename(rel)
        if os.path.splitext(name)[1] in ASSEMBLY:
            problems.append(f"{rel}: generated assembly in the tree (write it to a build or "
                            f"temporary directory; -s statistics are *.stats)")
            continue
        size = os.path.getsize(os.path.join(src, rel))
        if size > LIMIT and not name.endswith(".gz") and not name.lower().endswith(PICTURES):
            problems.append(f"{rel}: {size // 1000} KB uncompressed (over {LIMIT // 1000} KB: "
                            f"gzip -9 -n it; readers take NAME.gz)")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".", help="the source tree (default: .)")
    args = ap.parse_args()
    problems = check(args.src)
    for p in problems:
        print(f"experiments_data: {p}", file=sys.stderr)
    if problems:
        print(f"experiments_data: {len(problems)} problem(s) in {args.src}/experiments",
              file=sys.stderr)
        return 1
    print("experiments_data ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
