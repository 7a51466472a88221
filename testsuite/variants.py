#!/usr/bin/env python3
"""The variant matrix: builds rtslab with patches switched on and off, out of tree in
SRC/_build/<variant>/, and runs the tests in each (testsuite/README "Which runs where").

    python3 testsuite/variants.py full     [--src DIR] [-j N]   # each patch alone, all patches
    python3 testsuite/variants.py all-patches [--src DIR] [-j N]  # all patches, -Werror
    python3 testsuite/variants.py pairwise [--src DIR] [-j N]   # a covering set, -Werror, smoke
    python3 testsuite/variants.py pairwise --after-queue        # only what make check-patches left
    python3 testsuite/variants.py all      [--src DIR] [-j N]   # all 2^k combinations, smoke
    python3 testsuite/variants.py list     [pairwise|all]       # the combinations, one a line

--only NAME[,NAME...] runs just those variants of the mode (as `list` names them: the
patches on, joined by `+`), e.g. to run again a combination that `all` reported as failed.

full:     the whole `make check` on each written patch alone (--enable-NAME) and on all of
          them (--enable-all-patches); the baseline is `make check` itself. A patch not
          written yet (no testsuite/patches/NAME/) has no code, so its variant is the
          baseline: it is named and skipped.
all-patches: the whole `make check` on all patches, built with -Werror.
pairwise: a covering set of combinations in which every pair of patches is seen on/on,
          on/off, off/on and off/off (6 rows cover up to 10 patches, against 2^6 = 64; the
          all-off row is the baseline and the all-on row is all-patches, run on their own),
          each built with -Werror and run on the smoke tests (SMOKE below).
          --after-queue: the rows that `make check-patches` has built and tested already (the
          base is the all-off row, and each written patch alone is a row with that patch on and
          the others off) and the all-on row (all-patches, run on its own) are taken as given,
          and only rows that cover a pair those leave uncovered are built. With every patch
          written there are none: the base covers off/off, the singles on/off and off/on, all
          patches on/on (CI runs it so: .ci/run).
all:      every combination (`make check-combinations`), built with -Werror, smoke tests.
Every variant prints its summary line; the command fails if a build or a test does. The
last line is "variants: N built, N failed".
"""
import argparse
import itertools
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import variant as variant_tool  # noqa: E402  (tools/variant.py: out-of-tree variant builds)

# The smoke subset: the unit tests, the patches' own tests, the lint, the Scheme programs at
# every RTS configuration they run under, and the GC stress tests at several capabilities.
SMOKE = "unit/,patches/,lint/,scheme/,gc/stress_N"


def covering_set(k):
    """Rows (tuples of 0/1, one per patch) in which every pair of the k columns takes all four
    values: the columns are distinct 3-element subsets of rows 1..5 (row 0 all off), and two
    distinct 3-subsets of 5 always meet, and always differ both ways. Covers k <= 10."""
    if k > 10:
        raise SystemExit("variants: the covering set here covers at most 10 patches")
    cols = list(itertools.combinations(range(1, 6), 3))[:k]
    rows = []
    for r in range(6):
        rows.append(tuple(1 if r in c else 0 for c in cols))
    return rows


def uncovered_pairs(rows, k):
    """The (i, j, value of i, value of j), i < j, that no row of ROWS shows."""
    seen = {(i, j, r[i], r[j]) for r in rows for i in range(k) for j in range(i + 1, k)}
    return [(i, j, a, b) for i in range(k) for j in range(i + 1, k)
            for a in (0, 1) for b in (0, 1) if (i, j, a, b) not in seen]


def rows_after(given, k):
    """Rows of covering_set(k) that cover what GIVEN leaves uncovered, greedily (each row
    taken covers at least one more pair; together with GIVEN they cover every pair)."""
    have, extra = list(given), []
    for r in covering_set(k):
        missing = uncovered_pairs(have, k)
        if not missing:
            break
        if any(r[i] == a and r[j] == b for i, j, a, b in missing):
            have.append(r)
            extra.append(r)
    if uncovered_pairs(have, k):          # covering_set covers every pair by construction
        raise SystemExit("variants: internal error: the rows do not cover every pair")
    return extra


def queue_rows(src, patches):
    """The rows `make check-patches` builds: the base, and each written patch alone."""
    k = len(patches)
    rows = [(0,) * k]
    for j, p in enumerate(patches):
        if os.path.isdir(os.path.join(src, "testsuite", "patches", p)):
            rows.append(tuple(1 if i == j else 0 for i in range(k)))
    return rows


def name_of(patches, row):
    on = [p for p, b in zip(patches, row) if b]
    if not on:
        return "baseline", []
    if len(on) == len(patches):
        return "all-patches", ["--enable-all-patches"]
    return "+".join(on), [f"--enable-{p}" for p in on]


def run_variant(src, name, flags, werror, check_args, jobs):
    bname = "v-" + name if werror else name
    cflags = ["CFLAGS=-O2 -g -Werror"] if werror else []
    start = time.monotonic()
    try:
        # configured (again only when its arguments changed) by tools/variant.py
        build = variant_tool.prepare(src, bname, [*flags, *cflags])
    except variant_tool.VariantError as e:
        print(f"variant {name} [{' '.join(flags) or '(no patch)'}]: FAILED: {e}", flush=True)
        return False
    log = os.path.join(build, "variant.log")
    with open(log, "w") as f:
        steps = [["make", f"-j{jobs}"],
                 ["make", "check"] + ([f"CHECK_ARGS={check_args}"] if check_args else [])]
        for cmd in steps:
            f.write("$ " + " ".join(cmd) + "\n")
            f.flush()
            r = subprocess.run(cmd, cwd=build, stdout=f, stderr=subprocess.STDOUT)
            if r.returncode:
                break
    with open(log, errors="replace") as f:
        text = f.read()
    summary = [l for l in text.splitlines() if l and l[0].isdigit() and " passed, " in l]
    fails = [l for l in text.splitlines() if l.startswith("FAIL ")]
    what = " ".join(flags) or "(no patch)"
    if r.returncode:
        print(f"variant {name} [{what}]: FAILED ({summary[-1] if summary else 'build failed'}); "
              f"log: {log}", flush=True)
        for l in (fails or text.splitlines()[-15:])[:15]:
            print("    " + l)
        return False
    print(f"variant {name} [{what}]: {summary[-1] if summary else '?'} "
          f"({time.monotonic() - start:.0f} s)", flush=True)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["full", "all-patches", "pairwise", "all", "list"])
    ap.add_argument("which", nargs="?", default="pairwise", help="list: pairwise or all")
    ap.add_argument("--src", default=os.path.dirname(HERE))
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--after-queue", action="store_true",
                    help="pairwise: only the rows that the base, each patch alone (make "
                         "check-patches) and all patches leave needed")
    ap.add_argument("--only", default="", metavar="NAME[,NAME...]",
                    help="only these variants of the mode (names as `list` prints them)")
    args = ap.parse_args()
    if args.after_queue and not (args.mode == "pairwise" or
                                 (args.mode == "list" and args.which == "pairwise")):
        ap.error("--after-queue is for pairwise")
    src = os.path.abspath(args.src)
    patches = benchlib.patch_names(src)
    k = len(patches)
    if args.mode == "full":
        rows = []
        for j, p in enumerate(patches):
            if os.path.isdir(os.path.join(src, "testsuite", "patches", p)):
                rows.append(tuple(1 if i == j else 0 for i in range(k)))
            else:
                print(f"variant {p}: skipped (not written yet: it has no code, so it is the baseline)")
        rows.append((1,) * k)
        werror, check_args = False, "--skip-tool-tests"
    elif args.mode == "all-patches":
        rows, werror, check_args = [(1,) * k], True, "--skip-tool-tests"
    else:
        which = args.mode if args.mode != "list" else args.which
        if which == "pairwise" and args.after_queue:
            given = queue_rows(src, patches) + [(1,) * k]
            rows = rows_after(given, k)
            if args.mode != "list":
                print(f"variants: pairwise after the queue: the base, {len(given) - 2} "
                      f"patches alone (make check-patches) and all patches leave "
                      f"{len(uncovered_pairs(given, k))} pairs of values uncovered; "
                      f"{len(rows)} more builds", flush=True)
        elif which == "pairwise":
            rows = [r for r in covering_set(k) if any(r) and not all(r)]
        else:
            rows = [r for r in itertools.product((0, 1), repeat=k) if any(r)]
        werror, check_args = True, f"--skip-tool-tests --filter {SMOKE}"
    if args.only:
        wanted = [n for n in args.only.split(",") if n]
        names = [name_of(patches, r)[0] for r in rows]
        unknown = [n for n in wanted if n not in names]
        if unknown:
            mode = args.mode if args.mode != "list" else args.which
            ap.error(f"--only: no variant {', '.join(unknown)} in mode {mode} "
                     f"(it has {', '.join(names)})")
        rows = [r for r, n in zip(rows, names) if n in wanted]
    if args.mode == "list":
        for r in rows:
            print(name_of(patches, r)[0])
        return 0
    built = failed = 0
    for r in rows:
        name, flags = name_of(patches, r)
        built += 1
        if not run_variant(src, name, flags, werror, check_args, args.jobs):
            failed += 1
    print(f"variants: {built} built, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
