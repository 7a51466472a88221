#!/usr/bin/env python3
"""Self-test of experiments_data.py, so that the check of experiments/' raw data cannot pass
by checking nothing.

    python3 testsuite/lint/test_experiments_data.py

Writes throwaway trees in a temporary directory and runs experiments_data.py on each: small
files, a large runs.json.gz and a large picture pass; a large runs.json, a large runs.csv
and a `.s` file are each reported, and nothing else; and in a git checkout, a large file
.gitignore ignores (an experiment's scratch output) is not reported while a large one git
would add is. Prints "test_experiments_data: N checks passed" and exits 0, or names the
first failed check and exits 1.
"""
import os
import shutil
import subprocess
import sys
import tempfile

CHECK_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiments_data.py")
checks = 0
BIG = 150 * 1000
FILES = {
    "experiments/README.md": 100,
    "experiments/a/README.md": 2000,
    "experiments/a/run.py": 3000,
    "experiments/a/results/runs.json.gz": BIG,
    "experiments/a/results/small.json": 90 * 1000,
    "experiments/a/timeline.svg": BIG,
    "experiments/a/results/skewed-1.stats": 3000,
}


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def make(root, files):
    for rel, size in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("x" * size)


def run(root):
    p = subprocess.run([sys.executable, CHECK_PY, "--src", root], capture_output=True,
                       text=True)
    found = sorted(l.split(":")[1].strip() for l in p.stderr.splitlines()
                   if l.startswith("experiments_data: ") and " problem(s) in " not in l)
    return p.returncode, found, p.stdout + p.stderr


def main():
    with tempfile.TemporaryDirectory(prefix="test_experiments_data-") as tmp:
        clean = os.path.join(tmp, "clean")
        make(clean, FILES)
        code, found, out = run(clean)
        expect("clean tree passes", code == 0 and not found and "experiments_data ok" in out,
               out)

        for name, extra in (("runs-json", {"experiments/a/results/x/runs.json": BIG}),
                            ("runs-csv", {"experiments/b/results/runs.csv": BIG}),
                            ("assembly", {"experiments/a/results/skewed-1.s": 3000})):
            root = os.path.join(tmp, name)
            make(root, {**FILES, **extra})
            code, found, out = run(root)
            expect(f"{name}: fails", code == 1, out)
            expect(f"{name}: reports {list(extra)} and nothing else", found == list(extra), out)

        if shutil.which("git"):
            root = os.path.join(tmp, "git")
            make(root, {**FILES, "experiments/a/results/timeline/big.json": BIG,
                        "experiments/a/results/new/runs.json": BIG})
            with open(os.path.join(root, "experiments", "a", ".gitignore"), "w") as f:
                f.write("results/timeline/\n")
            subprocess.run(["git", "init", "-q", root], check=True)
            code, found, out = run(root)
            expect("git: an ignored file is not reported, one git would add is",
                   code == 1 and found == ["experiments/a/results/new/runs.json"], out)
        else:
            print("test_experiments_data: no git: the git checkout's case is not run")
    print(f"test_experiments_data: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_experiments_data: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
