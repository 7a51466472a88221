#!/usr/bin/env python3
"""Checks a run's `-s --machine-readable` keys against expressions.

    check_keys.py [--prefix P] [--stdout TEXT]... [--check EXPR]... [--floor KEY>=N]...
                  [--runs R] -- PROGRAM ARGS... +RTS ... -RTS

Runs the program with `-s --machine-readable` added (its stderr), requires exit status 0 and,
with --stdout, TEXT in its standard output, then checks each EXPR against the keys:
`KEY>=N`, `KEY<=N`, `KEY=N`, `KEY>N`, where KEY is a --machine-readable key, with or without
the prefix P, and N a number or another key (`caps` is n_capabilities, `caps-1` one less). A
missing key fails. Prints "keys ok: ..." with the keys that start with P (and the GCs and
capabilities) and exits 0, or the failed checks and exits 1.

--floor KEY>=N is a check on something the test wants to see happen but cannot force (a
matter of timing): its count may add up over up to --runs runs (default 3), and every run
must pass every --check.

run(cmd, env=None, timeout=900) is the run alone, for a checker of its own: it returns the
subprocess.CompletedProcess (stdout and stderr as text) and the keys as a dict."""
import ast
import re
import subprocess
import sys


def main():
    args = sys.argv[1:]
    checks, floors, want_stdout, runs, prefix = [], [], [], 3, ""
    while args and args[0] != "--":
        if args[0] in ("--check", "--floor", "--runs", "--stdout", "--prefix") and len(args) > 1:
            if args[0] == "--check":
                checks.append(args[1])
            elif args[0] == "--floor":
                floors.append(args[1])
            elif args[0] == "--runs":
                runs = int(args[1])
            elif args[0] == "--stdout":
                want_stdout.append(args[1])
            else:
                prefix = args[1]
            args = args[2:]
        else:
            sys.exit("check_keys: unknown argument %r" % args[0])
    if len(args) < 2:
        sys.exit(__doc__)
    cmd = args[1:] + ["+RTS", "-s", "--machine-readable", "-RTS"]
    totals = {}
    for n in range(1, runs + 1):
        shown, d = one_run(cmd, checks, want_stdout, prefix)
        missing = []
        for f in floors:
            m = re.fullmatch(r"([A-Za-z0-9_]+)>=([0-9]+)", f)
            if not m:
                sys.exit("check_keys: bad floor %r (KEY>=N)" % f)
            key = m.group(1) if m.group(1) in d else prefix + m.group(1)
            if key not in d:
                print("keys checks failed: %s: no key" % f)
                sys.exit(1)
            totals[f] = totals.get(f, 0) + int(float(d[key]))
            if totals[f] < int(m.group(2)):
                missing.append("%s: %d over %d run(s)" % (f, totals[f], n))
        if not missing:
            more = (" (floors over %d runs: %s)" % (n, ", ".join("%s %d" % (f, totals[f]) for f in floors))
                    if n > 1 else "")
            print("keys ok: " + shown + more)
            return
    print("keys floors FAILED: %s (last: %s)" % ("; ".join(missing), shown))
    sys.exit(1)


def run(cmd, env=None, timeout=900):
    """Runs CMD (with `-s --machine-readable` in it) once: (the process, its keys)."""
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    lines = [l for l in p.stderr.splitlines() if l.startswith((" [(", " ,(", " ]"))]
    return p, dict(ast.literal_eval("\n".join(lines))) if lines else {}


def one_run(cmd, checks, want_stdout, prefix):
    """Runs CMD once; exits 1 on a failed check; returns (the keys shown, the keys)."""
    p, d = run(cmd)
    if p.returncode != 0:
        sys.exit("check_keys: %s exited %d:\n%s" % (cmd[0], p.returncode, p.stderr[-3000:]))
    fails = []
    for text in want_stdout:
        if text not in p.stdout:
            fails.append("stdout lacks %r: %r" % (text, p.stdout[-500:]))

    def value(term):
        term = term.strip()
        if re.fullmatch(r"[0-9]+", term):
            return int(term)
        if term.startswith("caps"):
            return int(d["n_capabilities"]) + int(term[4:] or 0)
        for key in (term, prefix + term):
            if key in d:
                return int(float(d[key]))
        raise KeyError(term)

    for c in checks:
        m = re.fullmatch(r"([A-Za-z0-9_]+)(>=|<=|=|>)([A-Za-z0-9_+-]+)", c)
        if not m:
            sys.exit("check_keys: bad check %r" % c)
        try:
            a, b = value(m.group(1)), value(m.group(3))
        except KeyError as e:
            fails.append("%s: no key %s" % (c, e))
            continue
        ok = {">=": a >= b, "<=": a <= b, "=": a == b, ">": a > b}[m.group(2)]
        if not ok:
            fails.append("%s: %d vs %d" % (c, a, b))
    shown = " ".join("%s=%s" % (k[len(prefix):], d[k]) for k in sorted(d)
                     if prefix and k.startswith(prefix)) + " GCs=%s caps=%s" % (
                         d.get("num_GCs"), d.get("n_capabilities"))
    if fails:
        print("keys checks failed (%s):\n  %s" % (shown.strip(), "\n  ".join(fails)))
        sys.exit(1)
    return shown.strip(), d


if __name__ == "__main__":
    main()
