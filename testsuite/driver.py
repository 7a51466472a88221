#!/usr/bin/env python3
"""rtslab test driver: runs the tests that the TESTS manifests under testsuite/ list, and
the Scheme programs in testsuite/scheme/ (see SCHEME_RUNS and testsuite/scheme/README.md), and
the benchmark programs of testsuite/bench/ at their quick size (see BENCH_RUNS).

    python3 testsuite/driver.py --build BUILDDIR --src SRCDIR [--only-parallel]
                                [--filter SUBSTR,...] [-j N] [--timeout-factor F]

`make check` runs it. It prints one line per test, "PASS name", "FAIL name: reason" (a
failure also shows the first lines of the test's stderr) or "SKIP name: needs ..." (a test
for other builds, see `needs=`), and ends with exactly one line
"N passed, N failed, N skipped". The exit status is 1 if any test failed, else 0.

Manifest format
---------------
Every file named TESTS in a directory under SRCDIR/testsuite/ is a manifest. A line whose
first non-blank character is `#` is a comment; blank lines are ignored. Every other line is
one test, split into words as a POSIX shell would (quotes group, no expansion):

    NAME [exit=N] [stderr="substring"] [stdout="substring"] [env=VAR=VALUE]... [parallel] [heavy] [alone] [tool] [tree]
         [timeout=SECONDS] [needs=[!]FEATURE]... -- COMMAND ARGS...

NAME          unique within its manifest; the test is reported as DIR/NAME, where DIR is the
              manifest's directory relative to testsuite/ (e.g. gc/stress_A4k).
exit=N        the expected exit status (default 0); a negative N means killed by signal -N.
stderr="s"    stderr must contain s; may be given more than once (all must appear).
stdout="s"    stdout must contain s; likewise.
env=VAR=VALUE set VAR in the test's environment; may be repeated. RTSLAB_RTS is removed from
              the inherited environment unless a test sets it, so tests are hermetic.
parallel      the test exercises parallelism; `--only-parallel` runs just these (the
              thread-sanitised `make check-tsan` does).
heavy         a parallel test that `--only-parallel` leaves out: a variant of a parallel test
              that also runs there in a lighter form (e.g. a race test under the sanity
              checker -DS, whose whole-heap checks take minutes under ThreadSanitizer, while
              the same race without -DS runs under it).
tool          the test checks one of the project's own tools (the patch generator, the
              benchmark runner and its statistics, perf's diagnoses, the lint's self-tests),
              not the runtime: it passes or fails the same in every build of a tree, so the
              builds that repeat the suite for a patch (`make check-patches`' per-patch
              builds, the variant matrix, the sanitizer builds) pass --skip-tool-tests and
              leave it out; the baseline's `make check`, the base and distcheck run it.
tree          the test checks the tree's own files (the lint of the sources), not the
              runtime's behaviour: a tree's builds agree on it, another tree may not (each
              patch's tree runs it). --tree-tests runs these and the tool tests only.
alone         the test runs after all the others, with no other test beside it: for a
              floor that needs the machine's cores (work a second GC thread must get a CPU
              to do), never for a timing.
timeout=S     seconds before the test is killed and fails (default 120), multiplied by
              --timeout-factor.
needs=F       the test is for builds that have F; needs=!F: for builds without it. F is a
              patch of configure.ac's RTSLAB_PATCH lines (configure's --enable-F)
              or a library configure found (liburing, libnuma), or io_uring (the build
              has liburing and the kernel lets it set up a ring: the IO manager's uring
              back end can run here), or ipv6 (this machine has an IPv6 loopback, ::1,
              that a socket can bind), or wrk or nginx (that program is installed: the
              request server's load and its anchor), or strace (strace is installed and
              may trace a child here), or perf (`perf stat` may count a child's software
              events here: testsuite/oscounters.py's probe), or mountns (`unshare -m` may
              make a mount namespace and bind a file over /etc/hosts in it: a test's own
              host names), or ghc-events (GHC and its ghc-events library are installed: a
              test reads the eventlog with the real library), or slurm (Slurm's daemons
              and commands are installed and the tests run as root: testsuite/slurm/
              starts a Slurm of its own), or netns (`ip netns add` may make a network
              namespace: a second Slurm node), or sanitizer (the build has
              ASan or TSan: --info's "Sanitizer"), or tsan (the build has TSan: a
              parallel test's smaller size for the race detector, Note [Sizes under
              ThreadSanitizer]); any other name is a manifest error. May
              be repeated: all must hold.
              What the build has is read from its `rtslab +RTS --info -RTS` ("Patch F" and
              library lines, YES or NO). A test whose needs do not hold is not run, and is
              printed as "SKIP DIR/NAME: needs F" (or "needs !F") and counted as skipped.
COMMAND       a path relative to the build directory (e.g. tests/gc/gc_stress); a bare name
              without `/` (e.g. sh) is looked up in PATH. In COMMAND and ARGS, $SRC expands to
              the source directory and $BUILD to the build directory (both absolute). The
              test runs in the build directory with stdin from /dev/null.

Tests of a patch's own mechanism live in testsuite/patches/PATCH/ (PATCH a patch name as in
needs=, e.g. testsuite/patches/NAME/TESTS): every test under that directory needs
PATCH, as if each line said needs=PATCH, so in builds without the patch they are skipped,
never passed. A manifest directly in testsuite/patches/, or under a directory that names no
patch, is a manifest error.

Patch marker lines (tools/mkpatches.py, `make patches`): the tests between
"# {{nopatch:NAME" and "# }}nopatch:NAME" need !NAME (the baseline's form of a test that the
patch changes: the base, with the patch stripped, keeps them without the markers). Those
between "# {{patch:NAME" and "# }}patch:NAME" exist only with the patch's sources and carry
their own needs= (a test of the error an option gives without the patch needs !NAME).

If DIR/NAME.stdout exists next to the manifest, the test's stdout must equal its contents
exactly. A test passes when its exit status, its stderr and stdout substrings and its
expected stdout all match, and its stderr holds no sanitizer report (AddressSanitizer,
LeakSanitizer, UndefinedBehaviorSanitizer or ThreadSanitizer).

Examples:
    # heap exhaustion under -M
    heap_overflow  exit=251 stderr="heap overflow" -- tests/gc/alloc_forever +RTS -M8m -RTS
    # an option that only the patch NAME gives meaning to is an error without it
    opt_needs_patch  needs=!NAME exit=1 stderr="-Xopt" -- tests/gc/err_heap +RTS -Xopt -RTS
"""

import argparse
import concurrent.futures
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

DEFAULT_TIMEOUT = 120.0
STDERR_LINES_SHOWN = 10

# What a test may need (needs=, testsuite/patches/PATCH/): the patches of configure.ac's patch
# table and the libraries configure looks for, each with the key of its `--info` line.
SRC_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATCHES = tuple(benchlib.patch_names(SRC_ROOT))
LIBRARIES = ("liburing", "libnuma", "io_uring")
# sanitizer: built with ASan or TSan (--info's "Sanitizer"), whose allocators keep freed
# memory and shadow it, so a test of the resident set size says needs=!sanitizer.
# tsan: built with ThreadSanitizer (its "Sanitizer" line says thread), for a parallel test's
# smaller size under the race detector beside its full size, needs=!tsan (Note [Sizes under
# ThreadSanitizer]).
FEATURES = {**{p: "Patch " + p for p in PATCHES}, **{lib: lib for lib in LIBRARIES},
            "sanitizer": "Sanitizer", "tsan": "Sanitizer"}
# A feature whose --info line says more than YES: which YES it needs.
FEATURE_DETAIL = {"tsan": lambda value: "thread" in value}

# Note [Sizes under ThreadSanitizer]
# ThreadSanitizer finds a race from the interleavings it sees, each access checked against
# the others' recent ones: a test finds a race in a run of a few rounds of its GCs, barriers
# or hand-offs as well as in 100,000, and under TSan each round costs 5-15 times more. So
# the slowest parallel tests run under TSan (make check-tsan, check-tsan-patches) at a
# smaller size, a line of their own needs=tsan beside the full-size line needs=!tsan, which
# every other build runs (the plain builds, ASan): the same program, the same checks, fewer
# rounds. The full size is for what needs many rounds to show (a lost wake-up that a rare
# timing exposes, a counter floor); the race detector needs the rounds to cover the code.


def have_ipv6_loopback():
    """Whether a TCP socket can bind ::1 here (the feature ipv6)."""
    import socket
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def have_command(name):
    return lambda: shutil.which(name) is not None


def have_strace():
    """Whether strace is installed and may trace a child here (the feature strace)."""
    import subprocess
    if not shutil.which("strace"):
        return False
    try:
        return subprocess.run(["strace", "-o", os.devnull, "true"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def have_perf():
    """Whether `perf stat` may count a child's software events here (the feature perf)."""
    import oscounters
    return oscounters.probe() == "perf"


def have_ghc_events():
    """Whether GHC and its ghc-events library are installed (the feature ghc-events; Debian
    12's ghc and libghc-ghc-events-dev)."""
    import subprocess
    if not shutil.which("ghc") or not shutil.which("ghc-pkg"):
        return False
    try:
        return subprocess.run(["ghc-pkg", "--simple-output", "field", "ghc-events", "version"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def have_mountns():
    """Whether a file can be bound over /etc/hosts in a mount namespace (the feature mountns)."""
    import subprocess
    try:
        return subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind /etc/hosts /etc/hosts"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def have_slurm():
    """Whether Slurm's daemons and commands are installed and this is root (the feature
    slurm: Debian 12's slurm-wlm; testsuite/slurm/slurmtest.py starts a Slurm of its own)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "slurm"))
    import slurmtest
    return slurmtest.missing() is None


def have_netns():
    """Whether a network namespace can be made here (`ip netns add`; the feature netns)."""
    import subprocess
    name = f"rtslab-probe-{os.getpid()}"
    try:
        ok = subprocess.run(["ip", "netns", "add", name], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, timeout=30).returncode == 0
        if ok:
            subprocess.run(["ip", "netns", "del", name], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=30)
        return ok
    except (OSError, subprocess.TimeoutExpired):
        return False


HOST_FEATURES = {"ipv6": have_ipv6_loopback, "wrk": have_command("wrk"),
                 "nginx": have_command("nginx"), "strace": have_strace, "perf": have_perf,
                 "mountns": have_mountns, "unifdef": have_command("unifdef"),
                 "ghc-events": have_ghc_events, "slurm": have_slurm, "netns": have_netns}
# Programs of the build that print its --info, the first one found is asked.
INFO_PROGRAMS = ("rtslab", "tests/gc/err_stack")
INFO_TIMEOUT = 60.0
INFO_LINE = re.compile(r'^\s*[\[,]\("((?:[^"\\]|\\.)*)","((?:[^"\\]|\\.)*)"\)\s*$')

SANITIZER_REPORT = re.compile(
    r"^(==\d+==ERROR: (AddressSanitizer|LeakSanitizer)"
    r"|\S+:\d+:\d+: runtime error: "
    r"|WARNING: ThreadSanitizer"
    r"|==\d+==ERROR: ThreadSanitizer)",
    re.MULTILINE)


class ManifestError(Exception):
    pass


class Test:
    def __init__(self, name, manifest_dir, command):
        self.name = name                  # DIR/NAME
        self.manifest_dir = manifest_dir  # absolute directory holding the manifest
        self.command = command
        self.exit = 0
        self.stderr_has = []
        self.stdout_has = []
        self.env = {}
        self.parallel = False
        self.alone = False                # run after the others, with nothing beside it
        self.heavy = False                # parallel, but left out of --only-parallel
        self.tool = False                 # a test of a tool: left out by --skip-tool-tests
        self.tree = False                 # checks the tree's files (--tree-tests runs it)
        self.timeout = DEFAULT_TIMEOUT
        self.stdin_file = None            # default: /dev/null
        self.cwd = None                   # default: the build directory
        self.expected_stdout = None       # default: NAME.stdout next to the manifest
        self.needs = []                   # (feature, wanted): needs=F is (F, True), !F False

    @property
    def stdout_file(self):
        if self.expected_stdout:
            return self.expected_stdout
        return os.path.join(self.manifest_dir, self.name.rsplit("/", 1)[-1] + ".stdout")


def describe_need(feature, wanted):
    return feature if wanted else "!" + feature


def add_need(test, value):
    feature = value[1:] if value.startswith("!") else value
    wanted = not value.startswith("!")
    if feature not in FEATURES and feature not in HOST_FEATURES:
        raise ManifestError(f"unknown need {value!r} (a patch: {', '.join(PATCHES)}; "
                            f"a library: {', '.join(LIBRARIES)}; ! before it: without)")
    if (feature, not wanted) in test.needs:
        raise ManifestError(f"needs both {feature} and !{feature}: the test could never run")
    if (feature, wanted) not in test.needs:
        test.needs.append((feature, wanted))


def parse_line(words, rel_dir, manifest_dir, dir_needs=()):
    if "--" not in words:
        raise ManifestError("no `--` before the command")
    split = words.index("--")
    head, command = words[:split], words[split + 1:]
    if not head:
        raise ManifestError("no test name")
    if not command:
        raise ManifestError("no command after `--`")
    name = head[0]
    if "=" in name or "/" in name or name in ("parallel", "alone", "heavy", "tool", "tree"):
        raise ManifestError(f"bad test name {name!r}")
    test = Test(f"{rel_dir}/{name}", manifest_dir, command)
    for need in dir_needs:
        add_need(test, need)
    for opt in head[1:]:
        key, eq, value = opt.partition("=")
        if opt == "parallel":
            test.parallel = True
        elif opt == "alone":
            test.alone = True
        elif opt == "heavy":
            test.heavy = True
        elif opt == "tool":
            test.tool = True
        elif opt == "tree":
            test.tree = True
        elif key == "exit" and eq:
            try:
                test.exit = int(value)
            except ValueError:
                raise ManifestError(f"bad exit status {value!r}") from None
        elif key == "timeout" and eq:
            try:
                test.timeout = float(value)
            except ValueError:
                raise ManifestError(f"bad timeout {value!r}") from None
            if test.timeout <= 0:
                raise ManifestError(f"bad timeout {value!r}")
        elif key == "stderr" and eq:
            test.stderr_has.append(value)
        elif key == "stdout" and eq:
            test.stdout_has.append(value)
        elif key == "env" and eq:
            var, eq2, val = value.partition("=")
            if not eq2 or not var:
                raise ManifestError(f"bad env setting {value!r} (want env=VAR=VALUE)")
            test.env[var] = val
        elif key == "needs" and eq:
            add_need(test, value)
        else:
            raise ManifestError(f"unknown option {opt!r}")
    return test


def patch_dir_needs(rel_dir):
    """What every test under testsuite/REL_DIR needs: PATCH under patches/PATCH/."""
    parts = rel_dir.split("/")
    if parts[0] != "patches":
        return ()
    if len(parts) < 2:
        raise ManifestError("a manifest directly in testsuite/patches/: a patch's tests go in "
                            "testsuite/patches/PATCH/")
    if parts[1] not in PATCHES:
        raise ManifestError(f"testsuite/patches/{parts[1]}/ names no patch (the patches: "
                            f"{', '.join(PATCHES)})")
    return (parts[1],)


def read_build_info(build, timeout):
    """Asks the build what it has: returns ({feature: bool}, problems), problems being
    messages about its --info output (unreadable, or not what the driver expects)."""
    env = dict(os.environ)
    env.pop("RTSLAB_RTS", None)
    programs = [p for p in INFO_PROGRAMS if os.access(os.path.join(build, p), os.X_OK)]
    if not programs:
        return {}, [f"none of {', '.join(INFO_PROGRAMS)} is built in {build}, so the "
                    f"build's --info cannot be read"]
    argv = [os.path.join(build, programs[0]), "+RTS", "--info", "-RTS"]
    cmd = " ".join(argv)
    try:
        p = subprocess.run(argv, cwd=build, env=env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {}, [f"{cmd} timed out after {timeout:g} s"]
    except OSError as e:
        return {}, [f"cannot run {cmd}: {e.strerror}"]
    if p.returncode != 0:
        first = (decode(p.stderr).strip().splitlines() or [""])[0]
        return {}, [f"{cmd} exited with {describe_status(p.returncode)}: {first}"]
    info = {}
    for line in decode(p.stdout).splitlines():
        m = INFO_LINE.match(line)
        if m:
            info[m.group(1)] = m.group(2)
    have, problems = {}, []
    for feature, key in FEATURES.items():
        value = info.get(key)
        if value is None:
            problems.append(f"{cmd} has no line for {key!r}")
        elif value == "YES" or value.startswith("YES "):
            have[feature] = FEATURE_DETAIL.get(feature, lambda v: True)(value)
        elif value == "NO":
            have[feature] = False
        else:
            problems.append(f"{cmd} says {value!r} for {key!r} (expected YES or NO)")
    for feature, probe in HOST_FEATURES.items():
        have[feature] = probe()
    for key in info:
        if key.startswith("Patch ") and key[len("Patch "):] not in PATCHES:
            problems.append(f"{cmd} lists {key!r}, which configure.ac's patch table does "
                            f"not name")
    return have, problems


def unmet_needs(test, have):
    """The needs of `test` that the build does not meet, or None if it cannot tell."""
    if any(feature not in have for feature, _ in test.needs):
        return None
    return [describe_need(f, w) for f, w in test.needs if have[f] != w]


def read_manifests(src):
    """Returns (tests, errors); errors are (label, message) for malformed lines and
    manifests."""
    root = os.path.join(src, "testsuite")
    tests, errors, seen = [], [], set()
    manifests = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        if "TESTS" in filenames:
            manifests.append(dirpath)
    for manifest_dir in manifests:
        rel_dir = os.path.relpath(manifest_dir, root).replace(os.sep, "/")
        try:
            dir_needs = patch_dir_needs(rel_dir)
        except ManifestError as e:
            errors.append((f"{rel_dir}/TESTS", str(e)))
            continue
        path = os.path.join(manifest_dir, "TESTS")
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        blocks = []             # the patch marker blocks open here: needs they imply
        for lineno, line in enumerate(lines, 1):
            stripped = line.strip()
            label = f"{rel_dir}/TESTS:{lineno}"
            if stripped.startswith("#"):
                m = MARKER.match(stripped)
                if m and m.group(1) == "{{":
                    blocks.append((m.group(2) or "", m.group(3)))
                elif m and blocks and blocks[-1] == (m.group(2) or "", m.group(3)):
                    blocks.pop()
                elif m:
                    errors.append((label, f"{stripped[1:].strip()} closes no open block"))
                continue
            if not stripped:
                continue
            try:
                test = parse_line(shlex.split(stripped), rel_dir, manifest_dir,
                                  tuple(dir_needs) + tuple("!" + n for k, n in blocks if k))
            except (ManifestError, ValueError) as e:
                errors.append((label, str(e)))
                continue
            if test.name in seen:
                errors.append((label, f"duplicate test name {test.name!r}"))
                continue
            seen.add(test.name)
            tests.append(test)
        if blocks:
            errors.append((f"{rel_dir}/TESTS", f"a patch marker block is never closed "
                                               f"({', '.join(k + 'patch:' + n for k, n in blocks)})"))
    return tests, errors


# Patch marker lines (tools/mkpatches.py): in a TESTS file, the tests between
# "# {{nopatch:NAME" and "# }}nopatch:NAME" need !NAME (they are the baseline's form of a
# test the patch changes). Those between "# {{patch:NAME" and "# }}patch:NAME" exist only
# with the patch's sources and say what they need themselves (a test of the message an
# option gives when the patch is off needs !NAME, for one).
MARKER = re.compile(r"^#\s*(\{\{|\}\})(no)?patch:([a-z0-9-]+)\s*$")


# Scheme programs (testsuite/scheme/README.md): every NAME.scm with a NAME.stdout runs in
# each of these configurations, as `rtslab NAME.scm +RTS OPTIONS [the program's own] -RTS`.
# stress: a minor GC at every allocation (Note [GC stress] in runtime/sm/storage.h), so that
# a Value a primitive holds across an allocation without protecting it is moved at once, and
# its old copy poisoned (Note [Poisoned from-space] in runtime/sm/sanity.h; before: every 3
# allocations, without the poison).
SCHEME_RUNS = [("N1", "-N1"), ("N4", "-N4"), ("sanity", "-N1 -DS -A4k"), ("stress", "-N1 -DG1")]


def scheme_tests(src, subdir="scheme"):
    """Tests for the Scheme programs in testsuite/SUBDIR, three runs each."""
    root = os.path.join(src, "testsuite", subdir)
    tests = []
    if not os.path.isdir(root):
        return tests
    for fname in sorted(os.listdir(root)):
        if not fname.endswith(".scm"):
            continue
        base = fname[:-4]
        path = os.path.join(root, base)
        if not os.path.exists(path + ".stdout"):
            continue
        with open(path + ".scm", encoding="utf-8") as f:
            text = f.read()
        header = []
        for line in text.splitlines():
            if not line.startswith(";"):
                break
            header.append(line.strip())
        own_opts = [h[len(";; rts:"):].split() for h in header if h.startswith(";; rts:")]
        own_opts = [o for opts in own_opts for o in opts]
        slow = ";; slow-under-sanity" in header
        uses_threads = "(fork" in text
        exit_code = 0
        if os.path.exists(path + ".exit"):
            with open(path + ".exit", encoding="utf-8") as f:
                exit_code = int(f.read().strip())
        stderr_has = []
        if os.path.exists(path + ".stderr"):
            with open(path + ".stderr", encoding="utf-8") as f:
                stderr_has = [l for l in f.read().splitlines() if l.strip()]
        for run, opts in SCHEME_RUNS:
            if run in ("sanity", "stress") and slow:
                continue
            command = ["rtslab", fname, "+RTS"] + opts.split() + own_opts + ["-RTS"]
            test = Test(f"{subdir}/{base}.{run}", root, command)
            test.command[0] = "$BUILD/rtslab"
            test.cwd = root
            test.exit = exit_code
            test.stderr_has = stderr_has
            test.expected_stdout = path + ".stdout"
            if os.path.exists(path + ".stdin"):
                test.stdin_file = path + ".stdin"
            test.parallel = run == "N4" and uses_threads
            tests.append(test)
    return tests


# The benchmark programs (testsuite/bench/README.md) at their quick size, output checked:
# each at -N1, and those that fork threads also at -N2 (marked parallel, so `make check-tsan`
# runs them under ThreadSanitizer). Not -N4: with more capabilities than the 2-core CI
# machine has cores, the baseline makes thread-hand-off programs many times slower (every
# hop to another capability wakes its sleeping OS thread; testsuite/bench/README.md); the
# suite measures that, the tests need not wait for it.
BENCH_RUNS = [("quick", ["-N1"], False), ("quick-N2", ["-N2"], True)]


def bench_tests(src):
    tests = []
    if not os.path.isdir(os.path.join(src, "testsuite", "bench")):
        return tests
    for prog in benchlib.discover(src):
        with open(prog.path, encoding="utf-8") as f:
            text = f.read()
        # ... and the files it includes, named relative to its directory (lib/par.scm forks)
        for name in re.findall(r'\(include\s+"([^"]+)"', text):
            with open(os.path.join(os.path.dirname(prog.path), name), encoding="utf-8") as f:
                text += f.read()
        uses_threads = "(fork" in text or "(future" in text
        for run, opts, threaded_only in BENCH_RUNS:
            if threaded_only and not uses_threads:
                continue
            command = benchlib.command("$BUILD/rtslab", prog, "quick", opts)
            if prog.routes:     # a server: started, loaded briefly and stopped by serverload
                command = ["python3", "$SRC/testsuite/serverload.py", "smoke", "--routes",
                           ",".join(prog.routes), "--"] + command
            test = Test(f"bench/{prog.id}.{run}", os.path.dirname(prog.path), command)
            test.cwd = os.path.dirname(prog.path)
            test.expected_stdout = prog.expected_path("quick")
            test.parallel = threaded_only
            tests.append(test)
    return tests


def expand(word, src, build):
    return word.replace("$SRC", src).replace("$BUILD", build)


def decode(data):
    return data.decode("utf-8", errors="replace")



class RusagePopen(subprocess.Popen):
    """Popen that keeps the child's resource usage (os.wait4) when it reaps it: the CPU
    time (user + system) of the test's process and of the descendants it waited for, which
    --durations reports beside the wall time (the machine is shared: wall time alone is
    noise). Popen reaps through _try_wait (CPython 3.3 and later); if it did not, the CPU
    time is unknown (None), never a wrong figure."""
    rusage = None

    def _try_wait(self, wait_flags):
        try:
            pid, sts, ru = os.wait4(self.pid, wait_flags)
        except ChildProcessError:       # as Popen's own: the child is gone, status unknown
            return self.pid, 0
        if pid == self.pid:
            self.rusage = ru
        return pid, sts


def cpu_seconds(rusage):
    return None if rusage is None else rusage.ru_utime + rusage.ru_stime


class Runner:
    def __init__(self, src, build, timeout_factor):
        self.src, self.build = src, build
        self.timeout_factor = timeout_factor
        self.running = set()
        self.lock = threading.Lock()

    def run(self, test, usage=None):
        """Returns None if the test passed, else (reason, stderr text). USAGE, a list, gets
        the test's CPU seconds (None if unknown) appended."""
        argv = [expand(w, self.src, self.build) for w in test.command]
        if os.path.isabs(argv[0]):
            program = argv[0]
        elif "/" in argv[0]:
            program = os.path.join(self.build, argv[0])
        else:
            program = shutil.which(argv[0]) or argv[0]
        if not os.path.isfile(program) or not os.access(program, os.X_OK):
            return f"no such program: {argv[0]}", ""
        argv[0] = program
        env = dict(os.environ)
        env.pop("RTSLAB_RTS", None)
        env.update({k: expand(v, self.src, self.build) for k, v in test.env.items()})
        timeout = test.timeout * self.timeout_factor
        try:
            stdin = open(test.stdin_file, "rb") if test.stdin_file else subprocess.DEVNULL
            proc = RusagePopen(argv, cwd=test.cwd or self.build, env=env, stdin=stdin,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        except OSError as e:
            return f"cannot run {argv[0]}: {e.strerror}", ""
        finally:
            if test.stdin_file and stdin is not subprocess.DEVNULL:
                stdin.close()
        with self.lock:
            self.running.add(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_group(proc)
            out, err = proc.communicate()
            return f"timed out after {timeout:g} s", decode(err)
        finally:
            with self.lock:
                self.running.discard(proc)
            if usage is not None:
                usage.append(cpu_seconds(proc.rusage))
        stdout, stderr = decode(out), decode(err)
        if proc.returncode != test.exit:
            got = stdout.strip().splitlines()
            last = f" (its last stdout line: {got[-1][:200]!r})" if got else ""
            return f"exit status {describe_status(proc.returncode)}, expected " \
                   f"{describe_status(test.exit)}{last}", stderr
        for s in test.stderr_has:
            if s not in stderr:
                return f"stderr does not contain {s!r}", stderr
        for s in test.stdout_has:
            if s not in stdout:
                got = stdout.strip().splitlines()
                shown = got[-1][:200] if got else ""
                return f"stdout does not contain {s!r} (its last line: {shown!r})", stderr
        if os.path.exists(test.stdout_file):
            with open(test.stdout_file, "rb") as f:
                expected = f.read()
            if out != expected:
                return "stdout differs from " + os.path.basename(test.stdout_file) + ": " + \
                       benchlib.first_difference(decode(expected), stdout), stderr
        m = SANITIZER_REPORT.search(stderr)
        if m:
            return "sanitizer report: " + stderr[m.start():].splitlines()[0].strip(), \
                   stderr[m.start():]
        return None

    def kill_all(self):
        with self.lock:
            for proc in self.running:
                kill_group(proc)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def children_cpu():
    """CPU seconds (user + system) of every child this process has reaped so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def describe_status(code):
    if code < 0:
        try:
            return f"{code} ({signal.Signals(-code).name})"
        except ValueError:
            return f"{code} (signal {-code})"
    return str(code)


def main():
    ap = argparse.ArgumentParser(description="Run the rtslab testsuite (see the manifest "
                                             "format at the top of this file).")
    ap.add_argument("--build", default=".", help="build directory (default: .)")
    ap.add_argument("--src", default=SRC_ROOT,
                    help="source directory (default: this script's parent's parent)")
    ap.add_argument("--only-parallel", action="store_true",
                    help="run only the tests marked parallel")
    ap.add_argument("--skip-tool-tests", action="store_true",
                    help="skip the tests marked tool (tests of the project's tools, the same "
                         "in every build: the baseline's make check runs them)")
    ap.add_argument("--tree-tests", action="store_true",
                    help="run only what depends on the tree's files, not on the runtime's "
                         "code: the tests marked tool or tree (check-patches' base in CI)")
    ap.add_argument("--filter", metavar="SUBSTR[,SUBSTR...]", default="",
                    help="run only tests whose DIR/NAME contains one of the SUBSTRs")
    ap.add_argument("--exclude", metavar="SUBSTR[,SUBSTR...]", default="",
                    help="leave out the tests whose DIR/NAME contains one of the SUBSTRs "
                         "(after --filter; make check-patches: what a run before it ran)")
    # One more than the CPUs: many tests wait (sleeps, sockets, a child's start), and the
    # suite used 1.4 of 2 cores at -j2; -j3 took 55-57 s against 65 s on 2 cores (baseline,
    # twice each), -j4 54 s. Tests that must not share the machine are `alone`.
    ap.add_argument("-j", "--jobs", type=int, default=(os.cpu_count() or 1) + 1,
                    help="tests run at once (default: the number of CPUs, plus one)")
    ap.add_argument("--timeout-factor", type=float, default=1.0,
                    help="multiply every timeout (for sanitized or debug builds)")
    ap.add_argument("--durations", type=int, default=0, metavar="N",
                    help="before the summary, list the N tests that took longest (wall clock), "
                         "each with its CPU time (user + system), and the run's totals")
    args = ap.parse_args()

    src, build = os.path.abspath(args.src), os.path.abspath(args.build)
    tests, errors = read_manifests(src)
    tests += scheme_tests(src)
    try:
        tests += bench_tests(src)
    except benchlib.HeaderError as e:
        errors.append(("bench", str(e)))
    wanted = [w for w in args.filter.split(",") if w] or [""]
    tests = [t for t in tests
             if any(w in t.name for w in wanted) and (not args.only_parallel or (t.parallel and not t.heavy))]
    unwanted = [w for w in args.exclude.split(",") if w]
    tests = [t for t in tests if not any(w in t.name for w in unwanted)]
    if args.tree_tests:
        tests = [t for t in tests if t.tool or t.tree]

    passed = failed = skipped = 0
    out_lock = threading.Lock()

    def report(name, result):
        nonlocal passed, failed
        with out_lock:
            if result is None:
                passed += 1
                print(f"PASS {name}", flush=True)
                return
            failed += 1
            reason, stderr = result
            lines = [f"FAIL {name}: {reason}"]
            err_lines = stderr.rstrip("\n").splitlines()
            for line in err_lines[:STDERR_LINES_SHOWN]:
                lines.append("    " + line)
            if len(err_lines) > STDERR_LINES_SHOWN:
                lines.append(f"    ... ({len(err_lines) - STDERR_LINES_SHOWN} more lines)")
            print("\n".join(lines), flush=True)

    for label, message in errors:
        report(label, (f"bad manifest line: {message}", ""))

    if args.skip_tool_tests:
        for t in tests:
            if t.tool:
                skipped += 1
                print(f"SKIP {t.name}: a tool's test (--skip-tool-tests: the baseline's make "
                      f"check runs it)", flush=True)
        tests = [t for t in tests if not t.tool]

    # Tests for other builds (needs=) are skipped; when the build cannot say what it has, the
    # tests that need something fail, and so does the build's --info.
    if any(t.needs for t in tests):
        have, problems = read_build_info(build, INFO_TIMEOUT * args.timeout_factor)
        for message in problems:
            report("build --info", (message, ""))
        runnable = []
        for t in tests:
            unmet = unmet_needs(t, have)
            if unmet is None:
                report(t.name, ("needs " + ", ".join(describe_need(f, w) for f, w in t.needs)
                                + ", but the build's --info does not say (see above)", ""))
            elif unmet:
                skipped += 1
                print(f"SKIP {t.name}: needs {', '.join(unmet)}", flush=True)
            else:
                runnable.append(t)
        tests = runnable

    runner = Runner(src, build, args.timeout_factor)
    durations = []                        # (wall s, CPU s or None, name), for --durations

    def timed_run(t):
        start, usage = time.monotonic(), []
        try:
            return runner.run(t, usage)
        finally:
            with out_lock:
                durations.append((time.monotonic() - start, (usage or [None])[0], t.name))

    started = time.monotonic()
    cpu_started = children_cpu()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        futures = {pool.submit(timed_run, t): t for t in tests if not t.alone}
        for future in concurrent.futures.as_completed(futures):
            report(futures[future].name, future.result())
        for t in tests:                   # `alone`: one at a time, once the others are done
            if t.alone:
                report(t.name, timed_run(t))
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        runner.kill_all()
        print("interrupted", file=sys.stderr)
        return 130
    pool.shutdown()

    if args.durations > 0:
        # Wall time is what a run waits for; CPU time (user + system, the tests' processes
        # and what they waited for) is what it costs, and does not grow when another job
        # shares the machine: compare runs by CPU time.
        durations.sort(key=lambda d: d[0], reverse=True)
        total = sum(d for d, _, _ in durations)
        cpu_total = sum(c for _, c, _ in durations if c is not None)
        print(f"slowest {min(args.durations, len(durations))} of {len(durations)} tests "
              f"(wall {time.monotonic() - started:.1f} s for the run, "
              f"{total:.1f} s summed over tests; CPU {children_cpu() - cpu_started:.1f} s "
              f"for the run, {cpu_total:.1f} s summed over tests):")
        for d, cpu, name in durations[:args.durations]:
            cpu_text = "       ?" if cpu is None else f"{cpu:8.2f}"
            print(f"  {d:8.2f} s  {cpu_text} s CPU  {name}")
    print(f"{passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
