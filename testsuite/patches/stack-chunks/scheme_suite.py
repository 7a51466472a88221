#!/usr/bin/env python3
"""The whole Scheme testsuite (testsuite/scheme/*.scm with a .stdout) under tiny stack chunks.

    scheme_suite.py [--programs NAME,...] SRC BUILD RTS-OPTIONS...

Runs every program as the driver does (its `;; rts:` options, .stdin, .exit, .stderr) with
RTS-OPTIONS added (e.g. -kc1k -kb256: every chunk boundary case is hit), skipping the programs
marked `;; slow-under-sanity` when the options have -DS, and checks stdout, the exit status
and the stderr substrings. Prints "scheme suite ok: N programs (OPTIONS)" or the failures.
--programs: only those programs (names without .scm; each must exist and have a .stdout).
"""
import os
import subprocess
import sys


def main():
    args = sys.argv[1:]
    only = None
    if args[:1] == ["--programs"]:
        only, args = set(args[1].split(",")), args[2:]
    src, build, opts = os.path.abspath(args[0]), os.path.abspath(args[1]), args[2:]
    root = os.path.join(src, "testsuite", "scheme")
    if only is not None:
        missing = sorted(n for n in only if not os.path.exists(os.path.join(root, n + ".stdout")))
        if missing:
            sys.exit(f"scheme_suite.py: --programs: no program with a .stdout: {', '.join(missing)}")
    ok, failed = 0, []
    for fname in sorted(os.listdir(root)):
        if not fname.endswith(".scm"):
            continue
        if only is not None and fname[:-4] not in only:
            continue
        path = os.path.join(root, fname[:-4])
        if not os.path.exists(path + ".stdout"):
            continue
        text = open(path + ".scm", encoding="utf-8").read()
        header = []
        for line in text.splitlines():
            if not line.startswith(";"):
                break
            header.append(line.strip())
        if "-DS" in opts and ";; slow-under-sanity" in header:
            continue
        own = [o for h in header if h.startswith(";; rts:") for o in h[len(";; rts:"):].split()]
        exit_code = int(open(path + ".exit").read().strip()) if os.path.exists(path + ".exit") else 0
        stderr_has = []
        if os.path.exists(path + ".stderr"):
            stderr_has = [l for l in open(path + ".stderr", encoding="utf-8").read().splitlines()
                          if l.strip()]
        stdin = open(path + ".stdin", "rb") if os.path.exists(path + ".stdin") else subprocess.DEVNULL
        env = dict(os.environ)
        env.pop("RTSLAB_RTS", None)
        cmd = [os.path.join(build, "rtslab"), fname, "+RTS"] + opts + own + ["-RTS"]
        try:
            p = subprocess.run(cmd, cwd=root, stdin=stdin, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, timeout=300)
        except subprocess.TimeoutExpired:
            failed.append(f"{fname}: timed out")
            continue
        want = open(path + ".stdout", "rb").read()
        why = []
        if p.returncode != exit_code:
            why.append(f"exit {p.returncode}, expected {exit_code}")
        if p.stdout != want:
            why.append("stdout differs")
        err = p.stderr.decode("utf-8", "replace")
        for s in stderr_has:
            if s not in err:
                why.append(f"stderr lacks {s!r}")
        if why:
            failed.append(f"{fname}: " + "; ".join(why) + (f" (stderr: {err.strip()[-300:]})" if err else ""))
        else:
            ok += 1
    for f in failed:
        print("FAIL " + f)
    if failed or ok == 0:
        print(f"scheme suite: {len(failed)} failed, {ok} ok ({' '.join(opts)})")
        sys.exit(1)
    print(f"scheme suite ok: {ok} programs ({' '.join(opts)})")


if __name__ == "__main__":
    main()
