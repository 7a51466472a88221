#!/usr/bin/env python3
"""Is the release tarball complete? Compares the files of an unpacked release (DIST, e.g.
make distcheck's $(distdir)) with the files git tracks in the source tree SRC.

    python3 tools/distfiles.py --src SRC --dist DIST
    python3 tools/distfiles.py --self-test

Every tracked file must be in the release, but for those a release leaves out on purpose
(NOT_RELEASED: the CI script and .gitignore, which are the repository's, and the experiments'
raw results, which dist-hook in Makefile.am takes out as `make patches` leaves them out of the
queue); and the release must carry no file git does not track (a stray file of a developer's
tree that EXTRA_DIST's whole directories would have swept in). `make distcheck` runs it
(distcheck-hook): it proves that the release is complete for every file at once, where a test
run in the unpacked release proved it only for the files that the tests happened to read.
When SRC is not a git work tree (a release checking itself), there is nothing to compare
with: it says so and passes. Exit status 1 on a difference, each file named.
"""
import argparse
import os
import re
import subprocess
import sys

# What a release leaves out on purpose, each with why.
NOT_RELEASED = [
    (re.compile(r"^\.ci/"), "the CI script is the repository's"),
    (re.compile(r"^\.gitignore$"), "the repository's"),
    (re.compile(r"^experiments/[^/]+/results/"), "an experiment's raw results (dist-hook)"),
]
SHOWN = 40


def tracked(src):
    out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                         capture_output=True).stdout
    return {p for p in out.decode("utf-8", errors="surrogateescape").split("\0") if p}


def released(dist):
    files = set()
    for d, dirs, names in os.walk(dist):
        for n in names + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            files.add(os.path.relpath(os.path.join(d, n), dist).replace(os.sep, "/"))
    return files


def compare(tracked_files, released_files):
    """(missing, extra): tracked files the release lacks (less NOT_RELEASED), and released
    files git does not track."""
    missing = sorted(p for p in tracked_files - released_files
                     if not any(rx.match(p) for rx, _ in NOT_RELEASED))
    extra = sorted(released_files - tracked_files)
    return missing, extra


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory(prefix="distfiles-test.") as work:
        src, dist = os.path.join(work, "src"), os.path.join(work, "dist")
        tracked_list = ["README.md", "runtime/a.c", "testsuite/x/TESTS", ".ci/run",
                        ".gitignore", "experiments/e/results/raw.csv", "experiments/e/run.py"]
        for p in tracked_list:
            os.makedirs(os.path.dirname(os.path.join(src, p)) or src, exist_ok=True)
            with open(os.path.join(src, p), "w") as f:
                f.write(p + "\n")
        subprocess.run(["git", "init", "-q", src], check=True)
        subprocess.run(["git", "-C", src, "add", "-A"], check=True)
        released_list = ["README.md", "runtime/a.c", "testsuite/x/TESTS", "experiments/e/run.py"]
        for p in released_list:
            os.makedirs(os.path.dirname(os.path.join(dist, p)), exist_ok=True)
            with open(os.path.join(dist, p), "w") as f:
                f.write(p + "\n")
        checks = [(compare(tracked(src), released(dist)), ([], []), "a complete release")]
        os.remove(os.path.join(dist, "testsuite/x/TESTS"))
        with open(os.path.join(dist, "runtime/stray.o"), "w") as f:
            f.write("")
        checks.append((compare(tracked(src), released(dist)),
                       (["testsuite/x/TESTS"], ["runtime/stray.o"]), "a file missing, one stray"))
        for got, want, what in checks:
            if got != want:
                print(f"distfiles self-test: FAILED: {what}: {got}, wanted {want}")
                return 1
    print(f"distfiles self-test: {len(checks)} checks passed")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--src")
    ap.add_argument("--dist")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.src or not a.dist:
        ap.error("--src and --dist are needed (or --self-test)")
    if subprocess.run(["git", "-C", a.src, "rev-parse", "--is-inside-work-tree"],
                      capture_output=True).returncode != 0:
        print(f"distfiles: {a.src} is not a git work tree: no file list to compare with")
        return 0
    files = tracked(a.src)
    missing, extra = compare(files, released(a.dist))
    for what, paths in (("tracked by git but not in the release (add it to EXTRA_DIST in "
                         "Makefile.am, or to NOT_RELEASED here with why)", missing),
                        ("in the release but not tracked by git (a stray file, or a build "
                         "output that dist-hook should take out)", extra)):
        if paths:
            print(f"distfiles: {len(paths)} file(s) {what}:", file=sys.stderr)
            for p in paths[:SHOWN]:
                print(f"  {p}", file=sys.stderr)
            if len(paths) > SHOWN:
                print(f"  ... ({len(paths) - SHOWN} more)", file=sys.stderr)
    if missing or extra:
        return 1
    print(f"distfiles: the release holds every tracked file ({len(files)} tracked, "
          f"{sum(1 for p in files if any(rx.match(p) for rx, _ in NOT_RELEASED))} left out "
          f"on purpose) and nothing else")
    return 0


if __name__ == "__main__":
    sys.exit(main())
