#!/usr/bin/env python3
"""The idle-optout patch's counters after a run (Note [Idle opt-out] in runtime/sync/stw.h).

    check_optout.py [--stdout TEXT] [--check EXPR]... -- PROGRAM ARGS... +RTS ... -RTS

Runs the program with `-s --machine-readable` added (its stderr), requires exit status 0 and,
with --stdout, TEXT in its standard output, then checks each EXPR against the `-s` keys:
`KEY>=N`, `KEY<=N`, `KEY=N`, `KEY>N`, where KEY is a --machine-readable key with or without
its `rtslab_idle_` prefix, and N a number or another key (`optouts=caps-1`, where `caps` is
n_capabilities and `caps-1` one less). A missing key fails (a build without the patch lacks
the patch's keys). Prints "optout ok: ..." with the counters and exits 0, or the failed
checks and exits 1.

--floor KEY>=N is a check on something the test wants to see happen but cannot force: that a
rejoin found a GC in progress and waited it out (WAKING) needs a capability's wake-up to land
inside a GC, which is a matter of timing. Its count may add up over up to --runs runs (default
3); every run must pass every --check: on a loaded machine one run may see none, but the
count is 0 in every run of a build whose rejoins never wait."""
import ast
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    checks, floors, want_stdout, runs = [], [], [], 3
    while args and args[0] != "--":
        if args[0] == "--check":
            checks.append(args[1]); args = args[2:]
        elif args[0] == "--floor":
            floors.append(args[1]); args = args[2:]
        elif args[0] == "--runs":
            runs = int(args[1]); args = args[2:]
        elif args[0] == "--stdout":
            want_stdout.append(args[1]); args = args[2:]
        else:
            sys.exit("check_optout: unknown argument %r" % args[0])
    if len(args) < 2:
        sys.exit(__doc__)
    cmd = args[1:] + ["+RTS", "-s", "--machine-readable", "-RTS"]
    totals = {}
    for run in range(1, runs + 1):
        shown = one_run(cmd, checks, want_stdout)
        d = shown[1]
        missing = []
        for f in floors:
            m = re.fullmatch(r"([A-Za-z0-9_]+)>=([0-9]+)", f)
            if not m:
                sys.exit("check_optout: bad floor %r (KEY>=N)" % f)
            key = m.group(1) if m.group(1) in d else "rtslab_idle_" + m.group(1)
            if key not in d:
                print("optout checks failed: %s: no key (a build without the idle-optout patch?)" % f)
                sys.exit(1)
            totals[f] = totals.get(f, 0) + int(float(d[key]))
            if totals[f] < int(m.group(2)):
                missing.append("%s: %d over %d run(s)" % (f, totals[f], run))
        if not missing:
            more = (" (floors over %d runs: %s)" % (run, ", ".join("%s %d" % (f, totals[f]) for f in floors))
                    if run > 1 else "")
            print("optout ok: " + shown[0] + more)
            return
    print("optout floors FAILED: %s (last: %s)" % ("; ".join(missing), shown[0]))
    sys.exit(1)


def one_run(cmd, checks, want_stdout):
    """Runs CMD once; exits 1 on a failed check; returns (the counters shown, the keys)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)
    if p.returncode != 0:
        sys.exit("check_optout: %s exited %d:\n%s" % (cmd[0], p.returncode, p.stderr[-3000:]))
    fails = []
    for text in want_stdout:
        if text not in p.stdout:
            fails.append("stdout lacks %r: %r" % (text, p.stdout[-500:]))
    lines = [l for l in p.stderr.splitlines() if l.startswith((" [(", " ,(", " ]"))]
    d = dict(ast.literal_eval("\n".join(lines)))

    def value(term):
        term = term.strip()
        if re.fullmatch(r"[0-9]+", term):
            return int(term)
        if term.startswith("caps"):
            return int(d["n_capabilities"]) + int(term[4:] or 0)
        for key in (term, "rtslab_idle_" + term):
            if key in d:
                return int(float(d[key]))
        raise KeyError(term)

    for c in checks:
        m = re.fullmatch(r"([A-Za-z0-9_]+)(>=|<=|=|>)([A-Za-z0-9_+-]+)", c)
        if not m:
            sys.exit("check_optout: bad check %r" % c)
        try:
            a, b = value(m.group(1)), value(m.group(3))
        except KeyError as e:
            fails.append("%s: no key %s (a build without the idle-optout patch?)" % (c, e))
            continue
        ok = {">=": a >= b, "<=": a <= b, "=": a == b, ">": a > b}[m.group(2)]
        if not ok:
            fails.append("%s: %d vs %d" % (c, a, b))
    shown = " ".join("%s=%s" % (k.replace("rtslab_idle_", ""), d[k]) for k in sorted(d)
                     if k.startswith("rtslab_idle_")) + " GCs=%s caps=%s" % (
                         d.get("num_GCs"), d.get("n_capabilities"))
    if fails:
        print("optout checks failed (%s):\n  %s" % (shown, "\n  ".join(fails)))
        sys.exit(1)
    return shown, d


if __name__ == "__main__":
    main()
