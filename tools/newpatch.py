#!/usr/bin/env python3
"""A new patch's scaffold (issue 34; the rules: docs/new-patch.md).

    python3 tools/newpatch.py NAME "one-line description" [--src DIR] [--no-autoreconf]

Creates everything a patch needs, and nothing it does not, in the tree at DIR (default: this
script's), as the patch's own files and islands:

  configure.ac   an RTSLAB_PATCH line in a {{patch:NAME block after the last patch, and a
                 new "slot" line after it (--enable-NAME, the macro RTS_PATCH_<NAME>, always
                 defined, 0 or 1; its help text is the description)
  Makefile.am    runtime/rts/patch_<name>.c in its block of the patches' registrations, and a
                 slot line after the last one of every slot-separated list
  runtime/rts/patch_<name>.c
                 its registration (Note [Patch registration] in runtime/rts/patch.h): no
                 options and no counters yet, the places to add them named
  testsuite/patches/NAME/TESTS
                 one test that passes only when the patch is on (--info's "Patch NAME" line)
  docs/patches/NAME.md   the upstream description (its first line is the commit's subject)
  experiments/NAME/run.py, README.md
                 the experiment's runner (the benchmark runner, testsuite/bench.py, the
                 baseline against the patch over code layouts) and its report's skeleton
  README.md      the patch's line in the list of patches
  CHANGES.md     an entry at the top of "Unreleased"

adds the new files to git's index (the patch queue reads the tracked files), then runs
`autoreconf -fi` (unless --no-autoreconf), since configure and Makefile.in are
generated and committed. After it: ./configure --enable-NAME && make && make check passes,
`make patches` gives patches/NNNN-NAME.patch, `make check-patches` builds and tests it, and
--info says "Patch NAME" YES. Nothing else in the tree lists the patches: the queue, the
variant matrix, the benchmark runner and the test driver read them from configure.ac.

NAME: lower-case words joined by '-' (the configure flag's name), at most 32 characters, that
no configure option, tool or word of the tree uses already (check_name says which and why);
the description: one line of at most 100 characters that m4, C comments and Markdown all
carry as written (check_description says which characters are refused and why). Everything
is checked, and every edit computed, before anything is written; the files are then written
beside their targets and renamed into place, so that a failure at any point (a bad name, a
seam not where it is expected, a full disk, git or autoreconf failing) leaves the tree, git's
index and the generated files as they were.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mkpatches  # noqa: E402  (what the patch queue reads, strips and refuses)

NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")
# The name becomes a configure option, a macro, a C identifier, a directory, file names and a
# column of the benchmark runner's tables: 32 characters is twice the longest patch's name
# and far from any file system's limit (255 bytes for runtime/rts/patch_<name>.c).
NAME_MAX = 32
# The description is the commit's subject ("rts: DESCRIPTION (NAME)") and configure's help:
# 100 characters (the longest patch's today has 93).
DESC_MAX = 100

# Names a patch may not take, besides the configure options configure.ac, m4/ and configure
# declare (configure_options) and the words the tree uses (tree_mentions): each means
# something else to a tool that takes patch names.
RESERVED = {
    # configure options that autoconf and automake add on their own (AC_PROG_CC, AM_INIT,
    # AM_SILENT_RULES, AM_MAINTAINER_MODE, AC_SYS_LARGEFILE, libtool): --enable-NAME twice
    "option-checking": "an option autoconf adds to every configure",
    "silent-rules": "an option AM_SILENT_RULES adds to configure",
    "dependency-tracking": "an option automake adds to configure",
    "maintainer-mode": "an option AM_MAINTAINER_MODE adds to configure",
    "largefile": "an option AC_SYS_LARGEFILE adds to configure",
    "year2038": "an option AC_SYS_YEAR2038 adds to configure",
    "shared": "an option libtool adds to configure", "static": "an option libtool adds",
    "fast-install": "an option libtool adds", "libtool-lock": "an option libtool adds",
    # the tools' own names
    "all-patches": "configure's --enable-all-patches and the variant of every patch on",
    "baseline": "the variant with no patch (testsuite/bench.py, tools/variant.py)",
    "none": "what RTSLAB_PATCHES and --info's \"Patches\" say when no patch is on",
    "all": "a mode of testsuite/variants.py (every combination)",
    "dnl": "m4's comment: configure.ac's RTSLAB_PATCH_REGS would lose the rest of its line",
    # the test driver's needs= features (testsuite/driver.py: LIBRARIES, HOST_FEATURES)
    **{f: "a feature the test driver's needs= already names (testsuite/driver.py)"
       for f in ("liburing", "libnuma", "sanitizer", "ipv6", "wrk", "nginx", "strace", "perf",
                 "mountns", "unifdef", "ghc-events")},
    # build directories of the tree's own (_build/NAME is a patch's variant build)
    **{d: "_build/%s/ is already the tree's (Makefile.am, tools/variant.py)" % d
       for d in ("src", "asan", "tsan", "fuzz", "check-patches")},
}


class ScaffoldError(Exception):
    pass


def names(name):
    """NAME -> (macro RTS_PATCH_X_Y, identifier x_y)."""
    ident = name.replace("-", "_")
    return "RTS_PATCH_" + ident.upper(), ident


def read(src, rel):
    with open(os.path.join(src, rel)) as f:
        return f.read()


def known_patches(configure_ac):
    return re.findall(r"^RTSLAB_PATCH\(\[([a-z0-9-]+)\]", configure_ac, re.M)


def last_slot(text, comment):
    """The highest N of the lines "<comment> -- slot N --" (the slot lists grow together: one
    slot per patch the tree has had, base lines that stay when the patches are stripped)."""
    nums = [int(m.group(1)) for m in
            re.finditer(r"^%s -- slot (\d+) --$" % re.escape(comment), text, re.M)]
    if not nums:
        raise ScaffoldError("no '%s -- slot N --' lines" % comment)
    return max(nums)


def add_slots(text, comment, block=None, block_after=None):
    """After every line "<comment> -- slot N --" with N the highest, a line for slot N+1;
    between the first of them after a line matching block_after (or the first of them) and its
    new slot line, block (lines). Returns the new text."""
    n = last_slot(text, comment)
    slot, new_slot = "%s -- slot %d --" % (comment, n), "%s -- slot %d --" % (comment, n + 1)
    lines = text.split("\n")
    start = 0
    if block_after is not None:
        start = next((i for i, l in enumerate(lines) if re.search(block_after, l)), None)
        if start is None:
            raise ScaffoldError("no line matching %r" % block_after)
    out, placed = [], block is None
    for i, line in enumerate(lines):
        out.append(line)
        if line == slot:
            if not placed and i >= start:
                out.extend(block)
                placed = True
            out.append(new_slot)
    if not placed:
        raise ScaffoldError("no %r line after %r" % (slot, block_after))
    return "\n".join(out)


def configure_options(src):
    """{name: where} for every --enable-NAME and --with-NAME the tree's configure has: the
    AC_ARG_ENABLE and AC_ARG_WITH of configure.ac and m4/ (the patches' among them), and the
    options the generated configure lists (ac_user_opts: autoconf's and automake's own)."""
    found = {}
    texts = [("configure.ac", read(src, "configure.ac"))]
    m4dir = os.path.join(src, "m4")
    if os.path.isdir(m4dir):
        texts += [("m4/" + f, read(src, "m4/" + f)) for f in sorted(os.listdir(m4dir))
                  if f.endswith(".m4")]
    for rel, text in texts:
        for m in re.finditer(r"AC_ARG_(ENABLE|WITH)\(\[([A-Za-z0-9_-]+)\]", text):
            found.setdefault(m.group(2), f"--{m.group(1).lower()}-{m.group(2)} ({rel})")
    if os.path.exists(os.path.join(src, "configure")):
        m = re.search(r"^ac_user_opts='\n(.*?)'$", read(src, "configure"), re.M | re.S)
        for opt in (m.group(1).split() if m else []):
            kind, _, rest = opt.partition("_")
            if kind in ("enable", "with"):
                found.setdefault(rest.replace("_", "-"), f"--{kind}-{rest.replace('_', '-')} "
                                 "(configure)")
    return found


def word_regex(words):
    """A mention of one of WORDS as the patch queue finds it (tools/mkpatches.py)."""
    return mkpatches.word_regex(words)


def tree_files(src):
    """The files the patch queue puts in its trees (tools/mkpatches.py, make_tree): git's
    tracked files, less the generated files, the experiments' raw results, the queue's
    report and the patches' experiments; without git, every file but the build's."""
    if os.path.isdir(os.path.join(src, ".git")):
        files = mkpatches.tracked_files(src)
    else:
        files = []
        for d, dirs, names in os.walk(src):
            rel = os.path.relpath(d, src)
            dirs[:] = [x for x in dirs if not (rel == "." and x in (".git", "_build", "_bench",
                                                                   mkpatches.OUT_DIR))]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    try:
        patches = mkpatches.read_patches(src)
    except mkpatches.PatchError:
        patches = []
    return [p for p in files
            if not (p in mkpatches.GENERATED or p.startswith(mkpatches.GENERATED_DIRS)
                    or mkpatches.RAW_RESULTS.match(p) or mkpatches.QUEUE_REPORT.match(p)
                    or mkpatches.is_patch_experiment(p, patches))]


def tree_mentions(src, words):
    """The first (path, line number, word) where the tree already uses one of WORDS as the
    patch queue reads a mention, or None."""
    rx = word_regex(words)
    for rel in tree_files(src):
        try:
            with open(os.path.join(src, rel), "rb") as f:
                data = f.read()
        except OSError:
            continue
        if b"\0" in data:
            continue
        text = data.decode(errors="replace")
        m = rx.search(text)
        if m:
            return rel, text.count("\n", 0, m.start()) + 1, m.group(1)
    return None


def check_name(src, name, known):
    """Refuses a NAME that a patch may not take, saying why (ScaffoldError)."""
    if not NAME_RE.match(name):
        raise ScaffoldError("NAME must be lower-case words joined by '-' (e.g. my-idea), not %r"
                            % name[:60])
    if len(name) > NAME_MAX:
        raise ScaffoldError(f"NAME is {len(name)} characters long; at most {NAME_MAX} (it "
                            f"becomes a configure option, a macro, file and directory names)")
    if name in known:
        raise ScaffoldError("patch %s exists already (configure.ac)" % name)
    if name in RESERVED:
        raise ScaffoldError(f"the name {name} is taken: {RESERVED[name]}")
    if name.startswith("rev-"):
        raise ScaffoldError("a name may not start with rev-: _build/rev-<commit>/ are the "
                            "benchmark runner's worktrees (tools/variant.py)")
    opts = configure_options(src)
    if name in opts:
        raise ScaffoldError(f"the name {name} is taken: configure has {opts[name]} already")
    for other in known:
        # the queue's mention of a patch stops at letters, digits and '_', not at '-': a name
        # holding another's (OTHER-2) would mention it in every line of its own
        if word_regex([other]).search(name):
            raise ScaffoldError(f"the name {name} holds the patch {other}'s name: the patch "
                                f"queue would read each of its lines as a mention of {other}")
    macro, ident = names(name)
    hit = tree_mentions(src, [name, macro, "patch_" + ident])
    if hit:
        raise ScaffoldError(f"the name {name} is already a word of the tree ({hit[0]}:{hit[1]}: "
                            f"{hit[2]}): the base must mention no patch, so `make patches` "
                            "would refuse it; choose a name the tree does not use")
    for rel in ("runtime/rts/patch_%s.c" % ident, "testsuite/patches/%s" % name,
                "docs/patches/%s.md" % name, "experiments/%s" % name):
        if os.path.lexists(os.path.join(src, rel)):
            raise ScaffoldError("%s exists already" % rel)


# What the description may not hold, and why: it goes into configure.ac's m4 (the help of
# --enable-NAME and the comment of rtslab_config.h.in), a C comment (the registration), a
# TESTS comment, Markdown (README.md, CHANGES.md, the experiment's README) and the commit's
# subject. m4 carries ( ) , $ # ' " and backquotes as they are (tried with autoreconf -fi).
DESC_REFUSED = [
    (re.compile(r"[\[\]]"), "'[' and ']' are m4's quotes (configure.ac)"),
    (re.compile(r"@"), "'@' starts autoconf's quadrigraphs (@<:@ is '[' in configure's help "
                       "but not in the C comment) and configure's @VAR@ substitutions"),
    (re.compile(r"\*"), "'*' ends or opens the C comment ('*/', '/*': -Wcomment under "
                        "-Werror) and is Markdown's emphasis (CHANGES.md's **bold**)"),
    (re.compile(r"\\"), "'\\' is Markdown's escape and C's line splice"),
    (re.compile(r"<[A-Za-z/!?]|-->"), "'<' before a letter, '/', '!' or '?' starts raw HTML in "
                                     "Markdown (README.md's <!-- --> island markers)"),
    (re.compile(r"[\x00-\x1f\x7f]"), "control characters (tabs, newlines: one line)"),
]

# autoconf's and automake's m4_pattern_forbid, on m4's words (autoconf 2.71: m4sugar, m4sh,
# autoconf; automake's AM_)
M4_FORBIDDEN = re.compile(r"^_?A[CHMSTU]_|_AC_|^_?m4_|^dnl$|^LIBOBJS$")


def check_description(desc, name, known):
    """The description as it will be written (stripped, without its final full stop), or a
    ScaffoldError saying what is wrong."""
    if "\n" in desc or "\r" in desc:
        raise ScaffoldError("the description must be one line")
    desc = desc.strip().rstrip(".").rstrip()
    if not desc:
        raise ScaffoldError("the description is empty")
    if len(desc) > DESC_MAX:
        raise ScaffoldError(f"the description is {len(desc)} characters long; at most "
                            f"{DESC_MAX} (it is the commit's subject and configure's help)")
    for rx, why in DESC_REFUSED:
        m = rx.search(desc)
        if m:
            shown = repr(m.group(0)) if not m.group(0).isprintable() else "'%s'" % m.group(0)
            raise ScaffoldError(f"the description may not hold {shown}: {why}")
    for token in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", desc):
        if M4_FORBIDDEN.search(token):
            raise ScaffoldError(f"the description may not hold the word {token!r}: it looks "
                                "like an m4 or autoconf macro (AC_..., AS_..., AM_..., m4_..., "
                                "dnl), which autoconf refuses to leave in configure "
                                "(m4_pattern_forbid)")
    if desc.count("`") % 2:
        raise ScaffoldError("the description's backquotes are not paired: Markdown's code "
                            "spans (README.md, CHANGES.md) would run on")
    if not (desc[0].isalnum() or re.match(r"-[A-Za-z]", desc)) or re.match(r"\d+[.)](\s|$)", desc):
        raise ScaffoldError("the description must start with a letter, a digit or an RTS "
                            "option such as -N (it starts a Markdown line in the experiment's "
                            "README.md, where '- ', '# ' or '1. ' would be a list or a heading)")
    if not desc.isprintable():
        raise ScaffoldError("the description holds a character that is not printable")
    others = [q for q in known if q != name]
    if others:
        m = word_regex(others + [names(q)[0] for q in others]).search(desc)
        if m:
            raise ScaffoldError(f"the description names another patch ({m.group(1)}): the tree "
                                f"with only this patch would mention it, and `make patches` "
                                "refuses that; describe the idea without it")
    return desc


def registration_c(name, desc, macro, ident):
    return f"""#include "rtslab_config.h"
#if {macro}
/* The {name} patch's registration (Note [Patch registration] in rts/patch.h): {desc}.
 *
 * Made by tools/newpatch.py with no options and no counters. To give the patch
 *   - an RTS option: a row in options[] below (the commented one is a start), with its own
 *     variable here, and .options = options in the registration (Note [The option table]
 *     in rts/options.c; docs/new-option.md); its tests in testsuite/patches/{name}/TESTS;
 *   - --info lines: an info function (.info, after the base line .info_after names);
 *   - counters: an RtsStatsSection (Note [Patch statistics] in stats/stats.h), its keys in
 *     docs/stats.md inside this patch's markers (stats/doc_keys checks them).
 * docs/new-patch.md has the rules. */
#include <stddef.h>
#include "rts/patch.h"

/* Its RTS options, one row each (rts/patch.h's RtsOption), e.g. a count -xy<n>:
 *
 * static unsigned xy = 1;           // the option's variable: the patch's own
 *
 * static const RtsOption options[] = {{
 *     {{ .name = "-xy", .syntax = "-xy<n>", .kind = RTS_OPT_NUMBER, .type = RTS_T_UNSIGNED,
 *       .var = &xy, .max = 100, .dflt = 1, .noun = "the xy count",
 *       .what = "what -xy<n> does, in one line", .section = RTS_USAGE_GC,
 *       .help = "  -xy<n>        what it does (0..{{max}}; default {{default}})\\n" }},
 *     {{ .name = NULL }},
 * }};
 */

const RtsPatch patch_{ident} = {{
    .name = "{name}",
}};
#endif
"""


def tests_file(name, desc):
    return f"""# The {name} patch: {desc}.
# Every test here needs the patch: the driver skips this directory in a build without it
# (testsuite/driver.py). docs/new-patch.md says what a patch's tests should show.

# the patch is compiled in and registered (runtime/rts/patch_{name.replace('-', '_')}.c)
info  stdout='("Patch {name}","YES")' -- ./rtslab +RTS --info -RTS
"""


def doc_file(name, desc):
    return f"""rts: {desc} ({name})

What: the mechanism, before and after, as a reviewer who knows GHC's RTS and OCaml 5's runtime
would want it said; the Notes in the code that hold its invariants.

Why: the seed or paper it comes from (cite it), and what our baseline did before.

Switch and options: ./configure --enable-{name}. No RTS options and no counters yet.

Measured: experiments/{name}/ (the fork's tree): the effect with its 95 % interval across code
layouts and runs, and the runtime's work counters beside the time.
"""


def run_py(name):
    return f'''#!/usr/bin/env python3
"""{name}: the baseline against the patch, over code layouts, with the benchmark runner.

    python3 experiments/{name}/run.py [-N 2] [--size norm] [--layouts 5] [-k 2] [-p REGEX]...

Runs testsuite/bench.py (which builds both variants out of tree, in _build/) with the
configurations baseline:-N<n> and {name}:-N<n>, each linked K ways (tools/layout.py) and
run R times per layout, interleaved, and prints its tables: the ratio of the patch to the
baseline per program with its 95 % interval (testsuite/benchstats.py). Results go to
results/ beside this script. Run it alone on a quiet machine (docs/new-patch.md, section 6).
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-N", default="2", help="capabilities (one number)")
    ap.add_argument("--size", default="norm", choices=["quick", "norm", "slow"])
    ap.add_argument("--layouts", default="5",
                    help="code layouts of each build (5: a claim; fewer than 3 is a screen)")
    ap.add_argument("-k", "--runs", default="2",
                    help="runs per layout (2: 10 runs, enough to see modes)")
    ap.add_argument("-p", "--programs", action="append", default=[])
    ap.add_argument("--metrics", default="elapsed,gc,gcs,copied,syncs")
    a = ap.parse_args()
    cmd = [sys.executable, os.path.join(ROOT, "testsuite", "bench.py"), "--src", ROOT,
           "--size", a.size, "--layouts", a.layouts, "-k", a.runs, "--metrics", a.metrics,
           "--out", os.path.join(HERE, "results"),
           "-c", "baseline:-N" + a.N, "-c", "{name}:-N" + a.N]
    for p in a.programs:
        cmd += ["-p", p]
    print(" ".join(cmd), flush=True)
    sys.exit(subprocess.call(cmd))


if __name__ == "__main__":
    main()
'''


def readme_md(name, desc):
    return f"""# Experiment: {name}

{desc}.

## Question

What the seed claims, and what this experiment must show on our runtime to support it (the
mechanism isolated on 2 cores, and what a larger machine would show, with reasons).

## Method

    python3 experiments/{name}/run.py -N 2 --size norm --layouts 5 -k 2

The baseline and `--enable-{name}`, each linked 5 ways, 2 runs per layout, interleaved, on a
quiet machine (nothing else building or testing).

## Results

Not measured yet.
"""


class Writes:
    """The scaffold's files, written all or none: each is first written beside its target
    (a temporary file in the same directory, so that the rename is atomic), then every one is
    renamed into place; rollback() puts back what was there (the edited files' old text,
    no new file, no new directory)."""

    def __init__(self, src):
        self.src = src
        self.staged = []      # (rel, temporary path, mode), not in place yet
        self.done = []        # (rel, the old content or None), in place
        self.made_dirs = []   # directories created, parents first

    def _makedirs(self, d):
        missing = []
        while not os.path.isdir(d):
            missing.append(d)
            d = os.path.dirname(d)
        for m in reversed(missing):
            os.mkdir(m)
            self.made_dirs.append(m)

    def stage(self, rel, text, mode=0o644):
        path = os.path.join(self.src, rel)
        self._makedirs(os.path.dirname(path))
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".newpatch.", suffix=".tmp")
        self.staged.append((rel, tmp, mode))
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        if os.path.exists(path):
            shutil.copymode(path, tmp)
        else:
            os.chmod(tmp, mode)

    def commit(self):
        while self.staged:
            rel, tmp, _ = self.staged[0]
            path = os.path.join(self.src, rel)
            old = None
            if os.path.exists(path):
                with open(path, "rb") as f:
                    old = f.read()
            os.replace(tmp, path)
            self.staged.pop(0)
            self.done.append((rel, old))

    def rollback(self):
        """Undoes everything; returns what could not be undone (empty when all was)."""
        left = []
        for rel, tmp, _ in self.staged:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            except OSError as e:
                left.append(f"{tmp}: {e}")
        self.staged = []
        for rel, old in reversed(self.done):
            path = os.path.join(self.src, rel)
            try:
                if old is None:
                    os.unlink(path)
                else:
                    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".newpatch.")
                    with os.fdopen(fd, "wb") as f:
                        f.write(old)
                    shutil.copymode(path, tmp)
                    os.replace(tmp, path)
            except OSError as e:
                left.append(f"{rel}: {e}")
        self.done = []
        for d in reversed(self.made_dirs):
            try:
                os.rmdir(d)
            except OSError as e:
                left.append(f"{d}: {e}")
        self.made_dirs = []
        return left


def generated_snapshot(src):
    """{rel: (bytes, mode)} of the files autoreconf -fi writes (Note [Generated files] in
    tools/mkpatches.py), to put back if it fails."""
    snap = {}
    rels = list(mkpatches.GENERATED)
    for d in mkpatches.GENERATED_DIRS:
        if os.path.isdir(os.path.join(src, d)):
            rels += [d + f for f in os.listdir(os.path.join(src, d))]
    for rel in rels:
        path = os.path.join(src, rel)
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                snap[rel] = (f.read(), os.stat(path).st_mode & 0o7777)
        elif os.path.islink(path):
            snap[rel] = (os.readlink(path), None)
    return snap


def restore_generated(src, snap):
    now = set(generated_snapshot(src))
    for rel in now - set(snap):
        os.unlink(os.path.join(src, rel))
    for rel, (data, mode) in snap.items():
        path = os.path.join(src, rel)
        if mode is None:                       # a symbolic link (automake -fi --symlink)
            if os.path.lexists(path):
                os.unlink(path)
            os.symlink(data, path)
            continue
        if os.path.lexists(path) and not os.path.islink(path):
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".newpatch.")
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)


def plan(src, name, desc):
    """Checks NAME and DESC and computes every edit and new file: (macro, edits, files), edits
    and files {rel: text}. Reads the tree only."""
    ac = read(src, "configure.ac")
    known = known_patches(ac)
    check_name(src, name, known)
    desc = check_description(desc, name, known)
    macro, ident = names(name)
    edits = {}
    edits["configure.ac"] = add_slots(
        ac, "dnl",
        block=["# {{patch:%s" % name,
               "RTSLAB_PATCH([%s], [%s],\n  [%s])" % (name, macro, desc),
               "# }}patch:%s" % name])
    mk = read(src, "Makefile.am")
    # the registrations' slot list is the one after the Note's name (Makefile.am's comment)
    edits["Makefile.am"] = add_slots(
        mk, "#", block_after=r"Note \[Patch registration\]",
        block=["# {{patch:%s" % name,
               "librtslab_a_SOURCES += runtime/rts/patch_%s.c" % ident,
               "# }}patch:%s" % name])

    readme = read(src, "README.md")
    # the patch's line goes after the list's last patch line, or (no patch yet) before the
    # line of --enable-all-patches, which ends the list
    first_list = re.search(r"^- `--enable-all-patches`", readme, re.M)
    if first_list is None:
        raise ScaffoldError("README.md: no line '- `--enable-all-patches`' (the list of patches)")
    ends = [m.end() for m in re.finditer(r"^<!-- \}\}patch:[a-z0-9-]+ -->\n", readme, re.M)
            if m.end() <= first_list.start()]
    entry = ("<!-- {{patch:%s -->\n- `--enable-%s`: %s\n<!-- }}patch:%s -->\n"
             % (name, name, desc, name))
    if ends:
        at = ends[-1]
        edits["README.md"] = readme[:at] + "\n" + entry + readme[at:]
    else:
        at = first_list.start()
        edits["README.md"] = readme[:at] + entry + "\n" + readme[at:]

    changes = read(src, "CHANGES.md")
    m = re.search(r"^## Unreleased\n\n", changes, re.M)
    if m is None:
        raise ScaffoldError("CHANGES.md: no '## Unreleased' section")
    entry = ("<!-- {{patch:%s -->\n- **%s: %s** (`--enable-%s`)\n  — what it changes for "
             "users, and its measured effect (experiments/%s/).\n<!-- }}patch:%s -->\n"
             % (name, name, desc, name, name, name))
    rest = changes[m.end():]
    if rest.startswith("<!-- {{patch:"):
        entry += "\n"         # two patches' islands never touch (docs/new-patch.md)
    edits["CHANGES.md"] = changes[:m.end()] + entry + rest

    files = {
        "runtime/rts/patch_%s.c" % ident: registration_c(name, desc, macro, ident),
        "testsuite/patches/%s/TESTS" % name: tests_file(name, desc),
        "docs/patches/%s.md" % name: doc_file(name, desc),
        "experiments/%s/run.py" % name: run_py(name),
        "experiments/%s/README.md" % name: readme_md(name, desc),
    }
    return macro, edits, files


def scaffold(src, name, desc, autoreconf=True, log=print):
    """Writes patch NAME's scaffold into the tree SRC (the module's doc says what); returns its
    macro. Raises ScaffoldError, with the tree, git's index and the generated files as they
    were, when anything is refused or fails."""
    try:
        macro, edits, files = plan(src, name, desc)
    except (OSError, UnicodeDecodeError) as e:
        raise ScaffoldError(f"cannot read the tree: {e}; nothing was changed")
    is_git = os.path.isdir(os.path.join(src, ".git"))
    writes, added, snap, step = Writes(src), False, None, "writing the files"
    try:
        for rel, text in edits.items():
            writes.stage(rel, text)
        for rel, text in files.items():
            writes.stage(rel, text, 0o755 if rel.endswith("/run.py") else 0o644)
        writes.commit()
        # The patch queue reads git's tracked files (tools/mkpatches.py): the new files are
        # added to the index (not committed) where the tree is a git work tree.
        if is_git:
            step = "git add"
            subprocess.run(["git", "-C", src, "add", "--"] + sorted(files), check=True,
                           capture_output=True)
            added = True
        if autoreconf:
            step = "autoreconf -fi"
            snap = generated_snapshot(src)
            log("running autoreconf -fi")
            subprocess.run(["autoreconf", "-fi"], cwd=src, check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError) as e:
        why = str(e)
        if isinstance(e, subprocess.CalledProcessError) and e.stderr:
            why += ": " + e.stderr.decode(errors="replace").strip()[-800:]
        left = []
        if snap is not None:
            try:
                restore_generated(src, snap)
            except OSError as e2:
                left.append(f"the generated files: {e2}")
        if added:
            r = subprocess.run(["git", "-C", src, "rm", "-q", "--cached", "--"] + sorted(files),
                               capture_output=True, text=True)
            if r.returncode:
                left.append("git's index: " + r.stderr.strip())
        left += writes.rollback()
        if left:
            raise ScaffoldError(f"{step} failed ({why}), and undoing it failed too; left "
                                "behind:\n  " + "\n  ".join(left))
        raise ScaffoldError(f"{step} failed ({why}); nothing was changed")
    for rel in edits:
        log("edited  " + rel)
    for rel in files:
        log("created " + rel)
    if added:
        log("git add: the new files")
    return macro


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("name")
    ap.add_argument("description")
    ap.add_argument("--src", default=os.path.dirname(HERE))
    ap.add_argument("--no-autoreconf", action="store_true",
                    help="do not regenerate configure and Makefile.in (run autoreconf -fi later)")
    a = ap.parse_args()
    try:
        macro = scaffold(a.src, a.name, a.description, autoreconf=not a.no_autoreconf)
    except ScaffoldError as e:
        sys.exit("newpatch: " + str(e))
    print(f"""
patch {a.name}: the code tests {macro} with #if (0 or 1, -Wundef). Next:
  ./configure --enable-{a.name} && make && make check     # testsuite/patches/{a.name}/ runs
  make patches && make check-patches                    # patches/NNNN-{a.name}.patch
docs/new-patch.md has the rules (islands, where two patches meet, off means off).""")


if __name__ == "__main__":
    main()
