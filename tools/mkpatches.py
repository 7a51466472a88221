#!/usr/bin/env python3
"""The patch queue: turns the tree, with its switchable ideas (seven: configure.ac's
RTSLAB_PATCH lines), into a base and one
`git format-patch` file per idea (`make patches`), and proves that they work
(`make check-patches`).

    python3 tools/mkpatches.py generate [--src DIR] [--out DIR] [--rev REV]
    python3 tools/mkpatches.py verify   [--src DIR] [--rev REV]   # patches/ is current
    python3 tools/mkpatches.py base DIR [--src DIR]          # the base, as a git repository
    python3 tools/mkpatches.py check    [--src DIR] [--scratch DIR] [--check-args ARGS] [-j N]
    python3 tools/mkpatches.py lint     [--src DIR] [--dir DIR] [--all]  # mail-ready files

What belongs to a patch (docs/new-patch.md, the rules every patch follows):
  * in C (.c, .h, .inc): the `#if RTS_PATCH_<MACRO>` islands, which unifdef strips
    (-U<MACRO>); a C file that is nothing but islands of stripped patches (at most an
    `#include "rtslab_config.h"` besides) is the patch's own file and goes with it;
  * everything under testsuite/patches/<name>/, and docs/patches/<name>.md (the patch's
    upstream description: its first line is the subject, the rest the body of the commit
    message, whose one copy it is: the file is in no tree made here, Note [One source for
    the message]); its experiment, experiments/<name>/, is the fork's and in no tree made here
    (the base's and the patch's alike), and the commit message points to it; so are the
    tests of two patches together, testsuite/pairs/ (Note [Tests of a pair]);
  * in any other text file, the lines from one holding `{{patch:<name>` to the one holding
    `}}patch:<name>` (markers on lines of their own, in the file's comment syntax; they may
    nest, two deep at most), including configure.ac's RTSLAB_PATCH line for it. The lines
    between `{{nopatch:<name>` and `}}nopatch:<name>` are the text's #else: they hold when
    the patch is off, so stripping the patch keeps them and drops only the two markers (the
    test driver reads both kinds in TESTS files as needs=<name> and needs=!<name>).
The names, macros and series order come from configure.ac's RTSLAB_PATCH lines. A patch is
*written* when testsuite/patches/<name>/ exists; only written patches get a patch file.

The base is the tree with every patch stripped (the files of patches/ left out, the files
autoreconf generates left out too, see Note [Generated files]), and must mention none of
them: not a name, not a macro.
patches/NNNN-<name>.patch is the change from the base to the base with only <name> kept,
NNNN its position in configure.ac. Every commit is made with a fixed author and date and
written with --zero-commit, so the output depends on the tree alone and `verify` can compare.

The tree is git's tracked files as the working tree holds them, so `generate` and `verify`
refuse a tree with changes git has not committed (Note [A committed tree]): with --rev REV
they read commit REV instead (e.g. --rev HEAD: the last commit, whatever the working tree
holds; `verify --rev REV` compares with REV's own patches/).
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_DEFAULT = os.path.dirname(HERE)
C_SUFFIXES = (".c", ".h", ".inc")
# Note [Generated files]
# configure, rtslab_config.h.in, aclocal.m4 and Makefile.in are generated from configure.ac,
# m4/ and Makefile.am (with the auxiliary scripts of build-aux/ that automake installs), and
# every patch adds to the same lists in them (configure's options and help, autoheader's
# sorted templates, Makefile.in's program lists and rules), so patches that carried them
# would conflict when stacked, whatever the source looks like. The base and the patches
# carry configure.ac and Makefile.am only, like most projects' git trees: after `git am`, run
# `autoreconf -fi` (autoconf 2.71 and automake 1.16.5, as for the tree itself) before
# ./configure.
GENERATED = ("configure", "rtslab_config.h.in", "aclocal.m4", "Makefile.in")
GENERATED_DIRS = ("build-aux/",)
AUTOGEN = ["autoreconf", "-fi"]
# Raw results of the experiments (experiments/NAME/results/: JSON, CSV, logs of every run)
# are data, kept in the tree as measured; the patches and the base carry the runners and the
# reports, whose tables quote them, but not the raw files (megabytes no upstream reviewer
# reads), so the trees made here leave them out.
RAW_RESULTS = re.compile(r"^experiments/[^/]+/results/")
# The queue's own report (experiments/patch-matrix/: `make bench-patches`, every patch against
# the others) is about the queue, as patches/ is, and names every patch; the base and each
# patch carry its programs (the runner is testsuite/bench_patches.py, the plot plot.py) but not
# the report and its pictures, which could only name patches a tree does not have. So is the
# table of every patch's headline figures (experiments/README.md, re-derived from the raw
# runs by experiments/figures.py; issue 42): the fork's evidence, like each experiment. So is
# experiments/external-load/ (issue 43): the baseline and the patches that claim its ground
# beside a busy process, run and reported together.
QUEUE_REPORT = re.compile(
    r"^experiments/(patch-matrix/(?!.*\.py$)|external-load/|README\.md$|figures\.py$)")
# A patch's experiment (experiments/NAME/: its runner, report and pictures) is the fork's
# evidence for the patch, not part of what a maintainer reviews: it stays in the fork's tree
# only, like the queue's report, and the patch's commit message points to it. So a patch file
# is runtime code, its tests and its docs (issue 32: 0001 carried 1,744 lines of experiments,
# 1,538 of them SVG).
def is_patch_experiment(path, patches):
    return any(path.startswith(f"experiments/{p.name}/") for p in patches)


# Note [Tests of a pair]
# Where two patches meet, a test runs the pair together on purpose (docs/new-patch.md,
# section 8). Such a test belongs to neither patch alone: in one patch's tree the other's
# name is unknown (the test driver refuses a needs= it cannot resolve, and the base_mentions
# lint a patch's file that names another patch), and a patch made against the base cannot
# add lines to the other's files. So the tests of pairs live in testsuite/pairs/, which, like
# the queue's report, is the fork's and in no tree made here; the all-patches builds run them.
PAIR_TESTS = "testsuite/pairs/"


# Note [One source for the message]
# A patch's description, docs/patches/NAME.md, is the source of its commit message (subject,
# body; `description` adds the tests, the Testing paragraph and the sign-off). Carried in the
# patch as well, the file repeated the message a reviewer has just read (issue 44 item 3: "no
# docs/patches/*.md copy of the message"), and an upstream tree has no use for it: so it is in
# no tree made here, the patch's included, as the experiments are not, and the commit message
# is its only copy in a patch file.
def is_description(path, patches):
    return any(path == f"docs/patches/{p.name}.md" for p in patches)


# The order of a patch file's hunks: the runtime first (what a reviewer reads first), then the
# build, the tests, the docs and the rest (git format-patch -O).
HUNK_ORDER = ["runtime/*", "configure.ac", "Makefile.am", "testsuite/*", "docs/*", "*"]
# Files copied as they are: the tests of the generator and of the sources lint, whose fixtures
# are full of markers, and the page that teaches the markers (with a made-up patch's name).
VERBATIM = ("testsuite/patchgen/", "testsuite/lint/test_sources.py", "docs/new-patch.md")
OUT_DIR = "patches"
UNIFDEF = os.environ.get("UNIFDEF") or "unifdef"   # configure's choice, through make
BEGIN = re.compile(r"\{\{(no)?patch:([a-z0-9-]+)")
END = re.compile(r"\}\}(no)?patch:([a-z0-9-]+)")
PATCH_LINE = re.compile(r"^RTSLAB_PATCH\(\[([a-z0-9-]+)\],\s*\[(RTS_PATCH_[A-Z0-9_]+)\]", re.M)
GIT_ENV = {
    "GIT_AUTHOR_NAME": "rtslab", "GIT_AUTHOR_EMAIL": "rtslab@localhost",
    "GIT_COMMITTER_NAME": "rtslab", "GIT_COMMITTER_EMAIL": "rtslab@localhost",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+0000", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+0000",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
}


class PatchError(Exception):
    pass


# --- what the patches are -------------------------------------------------------------------

class Patch:
    def __init__(self, index, name, macro):
        self.index, self.name, self.macro = index, name, macro

    @property
    def file_name(self):
        return f"{self.index:04d}-{self.name}.patch"

    def owns(self, path):
        """Whether PATH (relative to the tree) is one of the patch's own files."""
        return (path.startswith(f"testsuite/patches/{self.name}/")
                or path.startswith(f"experiments/{self.name}/")
                or path == f"docs/patches/{self.name}.md")


def read_patches(src):
    with open(os.path.join(src, "configure.ac"), encoding="utf-8") as f:
        found = PATCH_LINE.findall(f.read())
    if not found:
        raise PatchError("configure.ac has no RTSLAB_PATCH line")
    return [Patch(i + 1, name, macro) for i, (name, macro) in enumerate(found)]


def is_written(src, patch):
    return os.path.isdir(os.path.join(src, "testsuite", "patches", patch.name))


# --- stripping ------------------------------------------------------------------------------

# Note [A committed tree]
# The trees are made from git's tracked files as the working tree holds them (tracked_files):
# an edit not committed is read, a file git does not track is not. On a tree with both (a new
# file, and a Makefile.am line that names it) `generate` wrote a patch that names a file it
# does not add, and said nothing (issue 45 item 18). So `generate` and `verify` refuse a tree
# whose tracked files differ from HEAD or that has files git neither tracks nor ignores,
# naming them; patches/ (what `generate` writes) and --out are left out of the question. With
# --rev REV they take the tree from commit REV: a checkout of it beside (a shared clone), which
# is exactly what git would hold. (The library functions take the tree they are given:
# testsuite/patchgen/test_newpatch.py makes a queue from a tree whose new files are staged.)
def uncommitted(src, outputs=()):
    """The changes of SRC's work tree that git has not committed, as `git status --short`
    lines (tracked files edited, staged or deleted; files neither tracked nor ignored), leaving
    out OUT_DIR/ and OUTPUTS (directories, relative to SRC)."""
    r = subprocess.run(["git", "-C", src, "status", "--porcelain=v1", "-z",
                        "--untracked-files=all", "--ignore-submodules=none"],
                       capture_output=True)
    if r.returncode:
        raise PatchError(f"{src} is not a git work tree, which the queue reads its files from "
                         f"(git status: {r.stderr.decode(errors='replace').strip()})")
    skip = tuple(d.rstrip("/") + "/" for d in (OUT_DIR,) + tuple(outputs))
    out, entries = [], r.stdout.decode(errors="replace").split("\0")
    i = 0
    while i < len(entries):
        e = entries[i]
        i += 1
        if not e:
            continue
        code, path = e[:2], e[3:]
        if code[0] in "RC":          # a rename or copy: the next entry is its source
            i += 1
        if not (path + "/").startswith(skip):
            out.append(f"{code} {path}")
    return out


def refuse_uncommitted(src, outputs=()):
    changes = uncommitted(src, outputs)
    if changes:
        shown = "\n".join("  " + c for c in changes[:20])
        more = f"\n  ... and {len(changes) - 20} more" if len(changes) > 20 else ""
        raise PatchError(
            f"the tree has changes git has not committed ({len(changes)} file(s); '??' is a "
            f"file git does not track):\n{shown}{more}\n"
            f"The queue is made from git's tracked files as they are on disk, so it would "
            f"carry the edits but leave out the untracked files, and could name a file it does "
            f"not add. Commit them (or stash them, or list build outputs in .gitignore), or "
            f"make the queue from a commit with --rev HEAD (Note [A committed tree]).")


def checkout_rev(src, rev, dest):
    """A checkout of commit REV of SRC's repository in DEST (a clone sharing SRC's objects);
    returns the full commit."""
    r = git(src, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
    if r.returncode:
        raise PatchError(f"--rev {rev}: not a commit of {src}")
    commit = r.stdout.decode().strip()
    git(os.path.dirname(dest) or ".", "clone", "-q", "--shared", "--no-checkout", src, dest)
    git(dest, "checkout", "-q", "--detach", commit)
    return commit


def tracked_files(src):
    """The files of the tree: git's tracked files as they are in the working tree."""
    out = subprocess.run(["git", "-C", src, "ls-files", "-z"], check=True,
                         capture_output=True).stdout.decode()
    return sorted(p for p in out.split("\0") if p and os.path.isfile(os.path.join(src, p))
                  and not p.startswith(OUT_DIR + "/"))


def strip_markers(text, drop, path):
    """TEXT without the lines between {{patch:NAME and }}patch:NAME for NAME in DROP, and
    without the marker lines (only) of {{nopatch:NAME blocks for NAME in DROP."""
    out, stack = [], []          # stack: (kind, name), kind "" or "no"
    for no, line in enumerate(text.splitlines(keepends=True), 1):
        b, e = BEGIN.search(line), END.search(line)
        marker_of_dropped = False
        if b:
            stack.append((b.group(1) or "", b.group(2)))
            if len(stack) > 2:
                raise PatchError(f"{path}:{no}: patch markers nest more than two deep")
            marker_of_dropped = b.group(2) in drop
        dropped = any(kind == "" and n in drop for kind, n in stack)
        if e:
            here = (e.group(1) or "", e.group(2))
            if not stack or stack[-1] != here:
                opened = ("{{%spatch:%s" % stack[-1]) if stack else "any marker"
                raise PatchError(f"{path}:{no}: }}}}{here[0]}patch:{here[1]} does not close "
                                 f"{opened}")
            stack.pop()
            marker_of_dropped = here[1] in drop
        if not dropped and not marker_of_dropped:
            out.append(line)
    if stack:
        raise PatchError(f"{path}: {{{{{stack[-1][0]}patch:{stack[-1][1]} is never closed")
    return "".join(out)


def strip_c(data, macros, path):
    """unifdef -U each of MACROS over DATA (bytes)."""
    if not macros:
        return data
    if not shutil.which(UNIFDEF):
        raise PatchError(f"{UNIFDEF} not found: install unifdef (Debian: apt-get install unifdef)")
    r = subprocess.run([UNIFDEF, "-B", *(f"-U{m}" for m in macros)], input=data,
                       capture_output=True)
    if r.returncode not in (0, 1):
        raise PatchError(f"{path}: unifdef failed: {r.stderr.decode(errors='replace').strip()}")
    return r.stdout


def only_islands_left(before, after):
    """Whether a C file was nothing but islands that were stripped (it is a patch's own)."""
    def code(b):
        lines = b.decode(errors="replace").splitlines()
        return [l for l in lines if l.strip() and l.strip() != '#include "rtslab_config.h"']
    return code(before) and not code(after)


def make_tree(src, files, dest, drop, patches):
    """Writes into DEST the tree SRC with the patches DROP (a set of names) stripped."""
    dropped = [p for p in patches if p.name in drop]
    macros = [p.macro for p in dropped]
    for path in files:
        if (any(p.owns(path) for p in dropped) or path in GENERATED
                or is_description(path, patches)
                or path.startswith(GENERATED_DIRS) or RAW_RESULTS.match(path)
                or QUEUE_REPORT.match(path) or is_patch_experiment(path, patches)
                or path.startswith(PAIR_TESTS)):
            continue
        with open(os.path.join(src, path), "rb") as f:
            data = f.read()
        out = data
        if path.endswith(C_SUFFIXES):
            out = strip_c(data, macros, path)
            if only_islands_left(data, out):
                continue
        elif b"\0" not in data and not path.startswith(VERBATIM):
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                out = strip_markers(text, drop, path).encode("utf-8")
        target = os.path.join(dest, path)
        os.makedirs(os.path.dirname(target) or dest, exist_ok=True)
        with open(target, "wb") as f:
            f.write(out)
        shutil.copymode(os.path.join(src, path), target)
    check_configure_ac(dest)


def check_configure_ac(tree):
    """Whether the stripped configure.ac (and Makefile.am, when the tree has one) still make a
    configure script and a Makefile.in: autoreconf runs on a scratch copy of what it reads
    (the trees carry no generated files, see Note [Generated files])."""
    if not os.path.exists(os.path.join(tree, "configure.ac")):
        return
    with tempfile.TemporaryDirectory(prefix="mkpatches-autoconf.") as tmp:
        if os.path.exists(os.path.join(tree, "Makefile.am")):
            # What autoreconf reads: the top-level files (configure.ac, Makefile.am, the
            # templates AC_CONFIG_FILES names, the docs automake looks for) and m4/.
            for entry in os.listdir(tree):
                path = os.path.join(tree, entry)
                if os.path.isfile(path):
                    shutil.copy2(path, tmp)
            if os.path.isdir(os.path.join(tree, "m4")):
                shutil.copytree(os.path.join(tree, "m4"), os.path.join(tmp, "m4"))
            cmd, cwd = list(AUTOGEN), tmp
        else:
            cmd = ["autoconf", "-f", "-o", os.path.join(tmp, "configure"), "configure.ac"]
            cwd = tree
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
        shutil.rmtree(os.path.join(tree, "autom4te.cache"), ignore_errors=True)
        # automake says which auxiliary scripts it installs; anything else is a warning.
        said = [l for l in r.stderr.splitlines()
                if l.strip() and not re.search(r": installing '[^']+'$", l)]
        if r.returncode or said:
            raise PatchError(f"{' '.join(cmd)} fails or warns on the stripped configure.ac "
                             f"or Makefile.am of {tree}:\n{r.stderr}")


def word_regex(words):
    """A mention of one of WORDS: not inside a longer word of letters, digits and '_' (a '-'
    ends it: the text my-idea mentions a patch named my). Group 1 is the word."""
    return re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(w) for w in words)
                      + r")(?![A-Za-z0-9_])")


def mentions(tree, patches, exempt=None):
    """(path, line number, patch name) for every mention of PATCHES in TREE (not in the
    files exempt(path) is true of)."""
    words = {}
    for p in patches:
        words[p.name] = p.name
        words[p.macro] = p.name
    if not words:               # a queue of one patch: nothing else to mention
        return []
    rx = word_regex(words)
    found = []
    for root, _, names in os.walk(tree):
        if ".git" in root.split(os.sep):
            continue
        for n in names:
            path = os.path.join(root, n)
            if exempt and exempt(os.path.relpath(path, tree).replace(os.sep, "/")):
                continue
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            for no, line in enumerate(data.decode(errors="replace").splitlines(), 1):
                m = rx.search(line)
                if m:
                    found.append((os.path.relpath(path, tree), no, words[m.group(1)]))
    return found


def check_mentions(tree, patches, what, exempt=None):
    found = mentions(tree, patches, exempt)
    if found:
        shown = "\n".join(f"  {p}:{n}: mentions {name}" for p, n, name in found[:40])
        more = f"\n  ... and {len(found) - 40} more" if len(found) > 40 else ""
        raise PatchError(f"{what} still mentions patches it should not have (put the lines in "
                         f"#if islands or {{{{patch:NAME markers):\n{shown}{more}")


# --- git ------------------------------------------------------------------------------------

def git(repo, *args, check=True, env=None, **kw):
    env = env or {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", repo, *args], check=check, env=env,
                          capture_output=True, **kw)


def commit_tree(repo, tree, message, env=None):
    """Replaces REPO's work tree by TREE's files and commits them."""
    git(repo, "rm", "-rq", "--ignore-unmatch", ".")
    for entry in os.listdir(tree):
        s, d = os.path.join(tree, entry), os.path.join(repo, entry)
        if os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        else:
            shutil.copy2(s, d)
    git(repo, "add", "-A", ".")
    with tempfile.NamedTemporaryFile("w", delete=False, encoding="utf-8") as f:
        f.write(message)
    try:
        git(repo, "commit", "-q", "--allow-empty", "--cleanup=verbatim", "-F", f.name,
            env={**os.environ, **GIT_ENV, **(env or {})})
    finally:
        os.unlink(f.name)


# Note [The author of the patches]
# The patch files are mailed to a maintainer, who answers their From: and reads their
# Signed-off-by: (the Developer's Certificate of Origin), so both name a person:
# PATCH_AUTHOR="Name <email>" if it is set, else `git config user.name` and `user.email` as
# the tree's repository sees them; not the fixed rtslab@localhost of the base's commit. The
# date stays fixed, so the files still depend only on the tree and the author. `verify` asks
# whether patches/ is the tree's queue, not who made it: without PATCH_AUTHOR it takes the
# author from the committed files' From: (so CI, with no git identity, and a colleague, with
# another, verify the lead's files).
AUTHOR_RX = re.compile(r"^\s*([^<>\n]*[^<>\s])\s*<([^<>\s@]+@[^<>\s]+)>\s*$")
PLACEHOLDER_EMAIL = GIT_ENV["GIT_AUTHOR_EMAIL"]


def parse_author(text, what):
    m = AUTHOR_RX.match(text or "")
    if not m:
        raise PatchError(f"{what}: {text!r} is not an author, \"Name <email>\"")
    if m.group(2) == PLACEHOLDER_EMAIL:
        raise PatchError(f"{what}: {PLACEHOLDER_EMAIL} is no one to mail: name a person")
    return m.group(1), m.group(2)


def patch_author(src):
    """(name, email) for the patches' From: and Signed-off-by: (Note [The author of the
    patches])."""
    env = os.environ.get("PATCH_AUTHOR")
    if env:
        return parse_author(env, "PATCH_AUTHOR")
    def config(key):
        r = subprocess.run(["git", "-C", src, "config", key], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else ""
    name, email = config("user.name"), config("user.email")
    if not (name and email):
        raise PatchError("who signs the patches? set PATCH_AUTHOR=\"Name <email>\" or git "
                         "config user.name and user.email (Note [The author of the patches])")
    return parse_author(f"{name} <{email}>", "git config user.name/user.email")


def author_env(author):
    name, email = author
    return {"GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": email}


def testing_paragraph(src, patch):
    """The exact commands that build a tree with PATCH applied and run its tests (the
    "Testing:" paragraph of its commit message)."""
    needs = set()
    manifest = os.path.join(src, "testsuite", "patches", patch.name, "TESTS")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    for n in re.findall(r"(?<!\S)needs=(\S+)", line.split(" -- ")[0]):
                        needs.update(x for x in n.split(",") if x and not x.startswith("!"))
    text = ("Testing: after `git am`, from the top of the tree (the generated files are not in "
            "the\npatches, so autoreconf first):\n"
            f"  autoreconf -fi && ./configure --enable-{patch.name} && make -j2\n"
            f"  make check CHECK_ARGS='--filter patches/{patch.name}/'    # the tests it adds\n"
            f"  make check    # the whole suite, with the patch on\n")
    if needs:
        text += ("A test marked needs=X is skipped, and says so, where X is missing: "
                 + ", ".join(sorted(needs)) + ".\n")
    return text


def testing_commands(patch_file, name):
    """The commands of the "Testing:" paragraph of PATCH_FILE's commit message, in order,
    without their comments: what `make check-patches` runs for the patch (Note [The
    message's commands are run])."""
    with open(patch_file, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    headers, i = mail_headers(lines)
    try:
        end = lines.index("---", i + 1)
    except ValueError:
        end = len(lines)
    cmds, inside = [], False
    for line in lines[i + 1:end]:
        if line.startswith("Testing:"):
            inside = True
        elif inside and not line.strip():
            break
        elif inside and line.startswith("  "):
            cmds.append(line.split("#", 1)[0].strip())
    build = [c for c in cmds if f"./configure --enable-{name} " in c + " "]
    checks = [c for c in cmds if c.startswith("make check")]
    if len(cmds) != 3 or len(build) != 1 or cmds[0] != build[0] or len(checks) != 2:
        raise PatchError(f"{os.path.basename(patch_file)}: the Testing: paragraph of its "
                         f"message does not give the three commands (build with "
                         f"--enable-{name}, its tests, the whole suite): {cmds}")
    return cmds


def description(src, patch, author=None):
    """The commit message of PATCH: docs/patches/NAME.md, the tests it adds, how to run them
    (Testing:) and AUTHOR's Signed-off-by (Note [The author of the patches])."""
    path = os.path.join(src, "docs", "patches", patch.name + ".md")
    if not os.path.exists(path):
        raise PatchError(f"{patch.name} is written (testsuite/patches/{patch.name}/ exists) but "
                         f"has no description, docs/patches/{patch.name}.md")
    with open(path, encoding="utf-8") as f:
        lines = f.read().rstrip("\n").splitlines()
    subject = lines[0].lstrip("# ").strip()
    body = lines[1:]
    while body and not body[0].strip():
        body.pop(0)
    for no, line in enumerate(body, 2):
        if line.startswith("#"):
            raise PatchError(f"docs/patches/{patch.name}.md:{no}: a commit message line may not "
                             f"start with '#' (git drops it); write the heading as plain text")
    tests = []
    manifest = os.path.join(src, "testsuite", "patches", patch.name, "TESTS")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            for line in f:
                if line.strip() and not line.lstrip().startswith("#"):
                    tests.append(line.split()[0])
    msg = subject + "\n\n" + "\n".join(body).rstrip() + "\n"
    if tests:
        # the names only, filled to 95 columns: the TESTS file itself is in the patch
        msg += ("\nTests it adds (testsuite/patches/%s/TESTS, run only where the patch is on):\n"
                % patch.name) + textwrap.fill(", ".join(tests), 95, initial_indent="  ",
                                              subsequent_indent="  ", break_on_hyphens=False,
                                              break_long_words=False) + "\n"
    msg += (f"\nSwitch: ./configure --enable-{patch.name} (macro {patch.macro}).\n"
            f"Generated by `make patches` (tools/mkpatches.py) from the rtslab tree.\n")
    msg += "\n" + testing_paragraph(src, patch)
    if author:
        msg += f"\nSigned-off-by: {author[0]} <{author[1]}>\n"
    return msg


# --- the mail lint ----------------------------------------------------------------------------

# Note [The mail lint]
# A patch file is mailed to a maintainer and reviewed alone (issue 44 item 3), like the
# kernel's checkpatch.pl checks a patch before it is sent. `mkpatches.py lint` reads each file
# of patches/ (the series) and reports, as FILE:LINE: RULE: what:
#   line-length  a line over 998 characters (RFC 5322's limit: a mailer breaks it, git am
#                then fails or changes the file);
#   binary       binary data: a `GIT binary patch` or `Binary files ... differ` section, bytes
#                that are not UTF-8, or a control character other than tab, form feed and CR;
#   fixtures     generated fixture data: more than FIXTURE_FILES_MAX files added under a
#                directory named fixtures/ (a tree of data files is made by a script at test
#                time, which is what a reviewer can read);
#   size         a file over PATCH_LINES_MAX lines: too long to review as one unit;
#   changes      more than one hunk in CHANGES.md (one entry per patch);
#   lab-history  the fork's history, which means nothing upstream, in the commit message or
#                in a line the patch adds (a comment, a test's description, a doc): an issue
#                number ("issue 43", "issues 12"), a seed ("seed 003"), a turn ("turn-3"), a
#                figure "measured before" a change that superseded it (LAB_HISTORY); cite a
#                source by its title instead;
#   testing      no "Testing:" paragraph, or one without the commands that configure the
#                patch on (--enable-NAME) and run make check;
#   author       a From: that is not "Name <email>" or is rtslab@localhost, or no
#                Signed-off-by: of the same person (Note [The author of the patches]);
#   docs-copy    the patch adds docs/patches/NAME.md, a copy of its own commit message
#                (Note [One source for the message]).
# `make check-patches` runs CI_RULES, the rules the queue passes; `lint --all` runs every rule.
# Every rule is in CI_RULES now: the queue passes them all, so a change that breaks one (a
# patch grown over PATCH_LINES_MAX, a second CHANGES hunk, an issue number in a comment)
# fails check-patches. A new rule may start outside CI_RULES while the queue is mended.
MAIL_LINE_MAX = 998
FIXTURE_FILES_MAX = 10
PATCH_LINES_MAX = 1500
LAB_HISTORY = [
    (re.compile(r"\bissues?\s+#?\d+", re.I), "an issue number"),
    (re.compile(r"\bseeds?\s+#?\d+", re.I), "a seed number"),
    (re.compile(r"\bturns?[-\s]#?\d+", re.I), "a turn number"),
    (re.compile(r"\bmeasured\s+before\s+(this|the|that)\b", re.I), "a superseded figure"),
]
LINT_RULES = ("line-length", "binary", "fixtures", "size", "changes", "lab-history", "testing",
              "author", "docs-copy")
CI_RULES = LINT_RULES
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def lint_patch(path, name, rules=LINT_RULES):
    """The mail lint's findings on the patch file PATH of the patch NAME, as (line, rule,
    what) (Note [The mail lint])."""
    import email.header
    with open(path, "rb") as f:
        data = f.read()
    found = []
    def say(no, rule, what):
        if rule in rules:
            found.append((no, rule, what))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        say(data[:e.start].count(b"\n") + 1, "binary", "bytes that are not UTF-8")
        text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if len(lines) > PATCH_LINES_MAX:
        say(len(lines), "size", f"{len(lines)} lines, over {PATCH_LINES_MAX}")
    headers, i = mail_headers(lines)
    body_start = i + 1
    try:
        end = lines.index("---", body_start)
    except ValueError:
        end = len(lines)
    message = lines[body_start:end]
    fixture_files, changes_hunks, current = [], 0, None
    for no, line in enumerate(lines, 1):
        if len(line) > MAIL_LINE_MAX:
            say(no, "line-length", f"{len(line)} characters, over {MAIL_LINE_MAX}: "
                                   f"{line[:60]!r}...")
        c = CONTROL.search(line)
        if c:
            say(no, "binary", f"a control character {c.group(0)!r}")
        if no <= end:
            continue
        m = re.match(r"^diff --git a/(\S+) b/(\S+)$", line)
        if m:
            current = m.group(2)
            if current == f"docs/patches/{name}.md":
                say(no, "docs-copy", f"{current} repeats the commit message (its source)")
            continue
        if line.startswith("+") and not line.startswith("+++ "):
            for rx, what in LAB_HISTORY:
                m = rx.search(line)
                if m:
                    say(no, "lab-history", f"{what} in a line added to {current}: "
                                           f"{m.group(0)!r}")
        if line == "GIT binary patch" or re.match(r"^Binary files .* differ$", line):
            say(no, "binary", f"binary data in {current}")
        elif line.startswith("new file mode") and current and "fixtures" in current.split("/")[:-1]:
            fixture_files.append((no, current))
        elif line.startswith("@@ ") and current == "CHANGES.md":
            changes_hunks += 1
            if changes_hunks == 2:
                second_hunk = no
    if len(fixture_files) > FIXTURE_FILES_MAX:
        say(fixture_files[0][0], "fixtures",
            f"{len(fixture_files)} files added under fixtures/ directories (at most "
            f"{FIXTURE_FILES_MAX}: generate them at test time), e.g. {fixture_files[0][1]}")
    if changes_hunks > 1:
        say(second_hunk, "changes", f"{changes_hunks} hunks in CHANGES.md (one entry per patch)")
    subject = headers.get("subject", (0, ""))
    for no, line in [subject] + list(enumerate(message, body_start + 1)):
        if line.startswith("Signed-off-by:"):
            continue                 # a person's name is no history
        for rx, what in LAB_HISTORY:
            m = rx.search(line)
            if m:
                say(no, "lab-history", f"{what} in the commit message: {m.group(0)!r}")
    # a paragraph: lines up to a blank line; "Testing:" begins one
    paragraphs, cur = [], []
    for line in message + [""]:
        if line.strip():
            cur.append(line)
        elif cur:
            paragraphs.append(cur)
            cur = []
    testing = [p for p in paragraphs if p[0].startswith("Testing:")]
    if not testing:
        say(0, "testing", "no \"Testing:\" paragraph in the commit message")
    elif not (any(f"--enable-{name}" in l for l in testing[0])
              and any("make check" in l for l in testing[0])):
        say(0, "testing", f"the Testing: paragraph does not give the commands (./configure "
                          f"--enable-{name}, make check)")
    no, frm = headers.get("from", (0, None))
    author = None
    if frm is None:
        say(0, "author", "no From: header")
    else:
        frm = str(email.header.make_header(email.header.decode_header(frm)))
        try:
            author = parse_author(frm, "From")
        except PatchError as e:
            say(no, "author", str(e))
    signed = [(n, l[len("Signed-off-by:"):].strip())
              for n, l in enumerate(message, body_start + 1) if l.startswith("Signed-off-by:")]
    if not signed:
        say(0, "author", "no Signed-off-by: in the commit message")
    elif author and not any(AUTHOR_RX.match(v) and AUTHOR_RX.match(v).groups() == author
                            for _, v in signed):
        say(signed[0][0], "author", f"no Signed-off-by: of the From:, {frm}")
    return found


def mail_headers(lines):
    """The headers of a patch file's LINES, {lowercase name: (line number, value)}, with folded
    values unfolded (git format-patch folds a long From:), and the index of the blank line
    that ends them."""
    headers, i, last = {}, 0, None
    while i < len(lines) and lines[i].strip():
        m = re.match(r"^([A-Za-z-]+): ?(.*)$", lines[i])
        if lines[i][:1] in " \t" and last:
            no, value = headers[last]
            headers[last] = (no, value + " " + lines[i].strip())
        elif m:
            last = m.group(1).lower()
            if last in headers:
                last = None          # the first of two headers of a name counts
            else:
                headers[last] = (i + 1, m.group(2))
        i += 1
    return headers, i


def lint(pdir, rules=LINT_RULES):
    """The mail lint over the series of PDIR: (file, line, rule, what) for every finding."""
    series = os.path.join(pdir, "series")
    if not os.path.exists(series):
        raise PatchError(f"{series} does not exist: run `make patches`")
    with open(series, encoding="utf-8") as f:
        names = f.read().split()
    out = []
    for n in names:
        m = re.match(r"^\d{4}-([a-z0-9-]+)\.patch$", n)
        if not m:
            raise PatchError(f"{series}: {n} is not NNNN-NAME.patch")
        out += [(n, no, rule, what) for no, rule, what
                in lint_patch(os.path.join(pdir, n), m.group(1), rules)]
    return out


def format_lint(found, pdir):
    rel = os.path.relpath(pdir)
    return "".join(f"{rel}/{f}:{no}: {rule}: {what}\n" for f, no, rule, what in found)


# --- the commands ---------------------------------------------------------------------------

def build_queue(src, work, author=None):
    """Builds WORK/repo: the base commit, then one branch per written patch, committed and
    signed off by AUTHOR, (name, email) (default: patch_author(src)). Returns (repo, patches,
    written patches)."""
    author = author or patch_author(src)
    patches = read_patches(src)
    written = [p for p in patches if is_written(src, p)]
    files = tracked_files(src)
    names = {p.name for p in patches}
    base = os.path.join(work, "base")
    trees = {p.name: os.path.join(work, "tree-" + p.name) for p in written}
    # The trees are independent, and making one is mostly waiting for unifdef and
    # autoreconf: made side by side (the queue of seven took 43 s one after the other).
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [pool.submit(make_tree, src, files, base, names, patches)]
        jobs += [pool.submit(make_tree, src, files, trees[p.name], names - {p.name}, patches)
                 for p in written]
        for job in jobs:
            job.result()
    check_mentions(base, patches, "the base")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "base")
    commit_tree(repo, base, "rtslab: the base, with every patch stripped\n")
    for p in written:
        tree = trees[p.name]
        # its own files (its report, its description) may name the patches it meets
        check_mentions(tree, [q for q in patches if q is not p], f"the base with only {p.name}",
                       exempt=p.owns)
        git(repo, "checkout", "-q", "-b", p.name, "base")
        commit_tree(repo, tree, description(src, p, author), env=author_env(author))
    return repo, patches, written


def series_readme(patches, written):
    rows = []
    for p in patches:
        state = f"`{p.file_name}`" if p in written else "not written yet (no testsuite/patches/%s/)" % p.name
        rows.append(f"| {p.index} | {p.name} | `--enable-{p.name}` | {state} | "
                    f"`experiments/{p.name}/` |")
    return README_TEMPLATE.format(rows="\n".join(rows))


README_TEMPLATE = """# The patch queue

Generated by `make patches` (tools/mkpatches.py); do not edit: edit the tree and regenerate.
`.ci/run` checks that these files are current.

Each idea of rtslab is one patch against the **base**, the tree with every patch stripped:

| # | patch | configure switch | file | experiment (the fork's tree) |
|---|-------|------------------|------|------------------------------|
{rows}

`series` lists the files in order. Each file is what a maintainer reviews, in this order: the
commit message (what, why, how it is switched, its tests, its headline figures), the
runtime code, the build (`configure.ac`, `Makefile.am`), its tests, its docs. The experiment
behind the figures (its runner, report and pictures) stays in rtslab's tree, in the directory
the table names, and is in no patch.

## Applying

    make patch-base BASE=/tmp/rtslab-base      # the base, as a git repository
    cd /tmp/rtslab-base
    git am /path/to/rtslab/patches/0003-NAME.patch           # any one patch, alone
    autoreconf -fi && ./configure --enable-NAME && make && make check

Each patch is made against the base alone, so any one of them applies with `git am` (and
`git apply --check`). To stack several, apply them in series order with `git am -3`: where two
patches touch neighbouring lines, git's three-way merge places the second beside the first.
Like most projects' git trees, the base and the patches carry `configure.ac` and
`Makefile.am` but not the files generated from them (`configure`, `rtslab_config.h.in`,
`aclocal.m4`, `Makefile.in`, `build-aux/`): every patch adds to the same lists in them, so
they would conflict when stacked. Run `autoreconf -fi` (autoconf 2.71, automake 1.16.5) after
applying; a patched tree builds its idea behind its switch,
`./configure --enable-<name>`. Islands of two patches never touch (an unchanged line lies
between them), so the series merges without conflicts: `make patches` (and so
`make check-patches-current`) refuses a queue that does not stack, naming the file.

## How they are made

`tools/mkpatches.py` reads the patches from configure.ac's `RTSLAB_PATCH` lines, and strips
a patch from a tree by running `unifdef -U<MACRO>` over the C files, leaving out the patch's
own files (`testsuite/patches/<name>/`, `docs/patches/<name>.md`, C files that are nothing
but its islands; its experiment, `experiments/<name>/`, stays in rtslab's tree only, as the
queue's own report `experiments/patch-matrix/` does but for its programs, and the base keeps
the base's experiments without their raw results) and dropping the lines between `{{patch:<name>`
and `}}patch:<name>` markers in every other text file (Makefile.am lists a patch's own
sources inside its markers); the generated files are left out (run `autoreconf -fi`). The base must mention no patch at all, and the tree
with one patch kept no other patch; the generator fails when either does. The commit message
of a patch is its `docs/patches/<name>.md` (its one copy: that file is in no patch), followed
by the tests it adds, a "Testing:" paragraph with the commands that run them, and the
`Signed-off-by:` of its author (`PATCH_AUTHOR`, or git's `user.name` and `user.email`).

`make check-patches` proves the queue: the patch files pass the mail lint
(`python3 tools/mkpatches.py lint`; `lint --all` adds the rules the queue does not pass yet);
the base builds and passes `make check`; each patch
applies alone (`git apply --check`, then `git am`) and its tree builds with `-Werror` and the
patch on and passes `make check`; the whole series applies in order and gives back the tree.
"""


def generate(src, out, author=None):
    with tempfile.TemporaryDirectory(prefix="mkpatches.") as work:
        repo, patches, written = build_queue(src, work, author)
        tmp_out = os.path.join(work, "out")
        os.makedirs(tmp_out)
        order = os.path.join(work, "hunk-order")
        with open(order, "w", encoding="utf-8") as f:
            f.write("".join(g + "\n" for g in HUNK_ORDER))
        for p in written:
            r = git(repo, "format-patch", "-q", "--zero-commit", "--no-signature", "--stdout",
                    "--subject-prefix=PATCH", f"-O{order}", f"base..{p.name}")
            with open(os.path.join(tmp_out, p.file_name), "wb") as f:
                f.write(r.stdout)
        with open(os.path.join(tmp_out, "series"), "w", encoding="utf-8") as f:
            f.write("".join(p.file_name + "\n" for p in written))
        with open(os.path.join(tmp_out, "README.md"), "w", encoding="utf-8") as f:
            f.write(series_readme(patches, written))
        series_applies(src, repo, "base", tmp_out, written, patches, work)
        if os.path.isdir(out):
            shutil.rmtree(out)
        shutil.copytree(tmp_out, out)
    return written


def series_applies(src, repo, branch, patch_dir, written, patches, work):
    """Applies PATCH_DIR's files of WRITTEN in order with `git am -3` to a clone of REPO's
    BRANCH (the base), and checks that the result is the tree (less the patches not written yet). A
    patch's island that touches another's (no unchanged line between them) makes the
    three-way merge conflict here; the error names the files."""
    series = os.path.join(work, "series")
    git(work, "clone", "-q", "-b", branch, repo, series)
    for p in written:
        r = git(series, "am", "-q", "-3", os.path.join(patch_dir, p.file_name), check=False)
        if r.returncode:
            conflicted = git(series, "diff", "--name-only", "--diff-filter=U",
                             check=False).stdout.decode().split()
            git(series, "am", "--abort", check=False)
            raise PatchError(
                f"the series does not stack: {p.file_name} conflicts when applied after the "
                f"patches before it (git am -3), in: {', '.join(conflicted) or '?'}. Islands "
                f"of two patches must not touch: put an unchanged line between them.\n"
                + r.stderr.decode(errors="replace").strip()[-1500:])
    unwritten = {p.name for p in patches} - {p.name for p in written}
    expect = os.path.join(work, "expect")
    make_tree(src, tracked_files(src), expect, unwritten, patches)
    r = subprocess.run(["diff", "-r", "-q", "-x", ".git", expect, series], capture_output=True,
                       text=True)
    if r.returncode:
        raise PatchError("the series applied to the base does not give back the tree:\n"
                         + r.stdout[:3000])
    shutil.rmtree(series)
    shutil.rmtree(expect)


def committed_author(pdir):
    """The author of the committed patch files in PDIR (their first From: header), or None."""
    series = os.path.join(pdir, "series")
    if not os.path.exists(series):
        return None
    with open(series, encoding="utf-8") as f:
        names = f.read().split()
    for n in names[:1]:
        with open(os.path.join(pdir, n), encoding="utf-8", errors="replace") as f:
            headers, _ = mail_headers(f.read().split("\n"))
        if "from" in headers:
            import email.header
            frm = str(email.header.make_header(email.header.decode_header(headers["from"][1])))
            try:
                return parse_author(frm, f"{OUT_DIR}/{n}: From")
            except PatchError:      # rtslab@localhost, from before the sign-off
                return None
    return None


def verify(src):
    committed = os.path.join(src, OUT_DIR)
    author = None if os.environ.get("PATCH_AUTHOR") else committed_author(committed)
    with tempfile.TemporaryDirectory(prefix="mkpatches-verify.") as work:
        fresh = os.path.join(work, "patches")
        generate(src, fresh, author)
        r = subprocess.run(["diff", "-ru", committed, fresh], capture_output=True, text=True)
        if r.returncode:
            sys.stderr.write(r.stdout[:4000])
            raise PatchError("patches/ is out of date with the tree: run `make patches` and "
                             "commit the result")


def write_base(src, dest):
    if os.path.exists(dest) and os.listdir(dest):
        raise PatchError(f"{dest} exists and is not empty")
    with tempfile.TemporaryDirectory(prefix="mkpatches.") as work:
        patches = read_patches(src)
        base = os.path.join(work, "base")
        make_tree(src, tracked_files(src), base, {p.name for p in patches}, patches)
        check_mentions(base, patches, "the base")
        os.makedirs(dest, exist_ok=True)
        git(dest, "init", "-q", "-b", "main")
        commit_tree(dest, base, "rtslab: the base, with every patch stripped\n")


def apply_alone(base, patch_file, dest):
    """Clones the base repository BASE into DEST and applies PATCH_FILE to it alone, with
    `git apply --check` and then `git am`; a patch that does not apply is reported."""
    git(os.path.dirname(dest) or ".", "clone", "-q", base, dest)
    for cmd in (["apply", "--check", patch_file], ["am", "-q", patch_file]):
        r = git(dest, *cmd, check=False)
        if r.returncode:
            git(dest, "am", "--abort", check=False)
            raise PatchError(f"{os.path.basename(patch_file)} does not apply to the base alone "
                             f"(git {cmd[0]}):\n{r.stderr.decode(errors='replace').strip()}")


def command_lists(line):
    """The commands of a "Testing:" line (`a && b && c`) as argument lists, read as a POSIX
    shell reads words and quotes (shlex); a line with any other shell syntax (a pipe, `;`,
    a redirection, `||`, a subshell) is refused: check-patches runs the commands without a
    shell (Note [The message's commands are run])."""
    lex = shlex.shlex(line, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    cmds, cur = [], []
    try:
        for tok in lex:
            if tok == "&&":
                if not cur:
                    raise PatchError(f"'{line}': nothing before '&&'")
                cmds.append(cur)
                cur = []
            elif tok and all(c in lex.punctuation_chars for c in tok):
                raise PatchError(f"'{line}': '{tok}' is shell syntax that check-patches does "
                                 f"not run (only commands joined by &&)")
            else:
                cur.append(tok)
    except ValueError as e:             # shlex: an unclosed quote
        raise PatchError(f"'{line}': {e}")
    if not cur:
        raise PatchError(f"'{line}': no command" + (" after '&&'" if cmds else ""))
    return cmds + [cur]


def run_logged(cmds, cwd, log, what, env=None):
    """Runs CMDS (argument lists) in order in CWD, without a shell, their output appended
    to LOG, until one fails; ENV: variables added to the environment."""
    print(f"check-patches: {what}", flush=True)
    start = time.monotonic()
    env_text = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
    rc = 0
    with open(log, "ab") as f:
        for argv in cmds:
            f.write(f"\n$ (cd {cwd} && {env_text}{shlex.join(argv)})\n".encode())
            f.flush()
            try:
                rc = subprocess.run(argv, cwd=cwd, stdout=f, stderr=subprocess.STDOUT,
                                    env={**os.environ, **GIT_ENV, **(env or {})}).returncode
            except OSError as e:        # no such program
                f.write(f"{argv[0]}: {e.strerror}\n".encode())
                rc = 127
            if rc:
                break
    if time.monotonic() - start >= 10:
        print(f"check-patches:   ({time.monotonic() - start:.0f} s)", flush=True)
    if rc:
        with open(log, "rb") as f:
            text = f.read().decode(errors="replace")
        # The failing tests' lines (FAIL with its indented detail) come first: in a long log
        # they are far from its end, and what is read of a CI run is often only its last page.
        fails, show = [], False
        for line in text[max(text.rfind("\n$ (cd "), 0):].splitlines():
            if line.startswith("FAIL "):
                show = True
                fails.append(line)
            elif show and line.startswith("    "):
                fails.append(line)
            else:
                show = False
        failed = ("the failing tests:\n" + "\n".join(fails[:150]) + "\n") if fails else ""
        raise PatchError(f"{what} failed (exit {rc}); {failed}the end of {log}:\n"
                         f"{text[-3000:]}")


def summary_of(log):
    with open(log, encoding="utf-8", errors="replace") as f:
        lines = [l.strip() for l in f if re.match(r"^\d+ passed, \d+ failed", l)]
    return lines[-1] if lines else "no summary"


# Note [The message's commands are run]
# A patch's commit message ends with the commands that test it (testing_paragraph). An
# outside engineer runs them after `git am` on a fresh clone of the base; so does
# `make check-patches`, reading them back from the patch file rather than from this script,
# so that the two cannot drift apart: the build command as written (with CFLAGS=-Werror in
# its environment, which configure takes), the patch's own tests as written, and the whole
# suite as the third command says, less what the second ran and the tools' tests, which
# pass or fail the same in every build and which the base has run. The build command's
# `make` built everything the tests need, so nothing is built again before them. The
# commands run as argument lists (command_lists: shlex reads the message's words and
# quotes, `&&` joins them), never through a shell, and what is added here (CHECK_ARGS, the
# patch's name) goes in whole as one argument of make: a quote in it reaches make as it was
# typed (before, an f-string quoted it for a shell, and a quote in CHECK_ARGS broke the
# command). The environment (CFLAGS) is every command's: in the shell line
# `CFLAGS=... autoreconf -fi && ./configure ...` it was autoreconf's only.
WERROR = {"CFLAGS": "-O2 -g -Werror"}


def check_args_value(*parts):
    """CHECK_ARGS=..., the driver's arguments, from the non-empty PARTS: one argument of make's
    command line (make's recipe splits its value into the driver's words)."""
    return "CHECK_ARGS=" + " ".join(p for p in parts if p)


def base_steps(jobs, check_args, base_tree_tests=False):
    """What check-patches runs in the base: [(what, command lists, environment)]."""
    what = "the base builds with -Werror and passes make check" + (
        " (the tests of its files: --tree-tests)" if base_tree_tests else "")
    test = ["make", "check"]
    args = check_args_value("--tree-tests" if base_tree_tests else "", check_args)
    if args != "CHECK_ARGS=":
        test.append(args)
    return [(what, [list(AUTOGEN), ["./configure"], ["make", f"-j{jobs}"], test], WERROR)]


def patch_steps(patch_file, name, check_args):
    """What check-patches runs in the base with the patch NAME (its file PATCH_FILE) applied:
    [(what, command lists, environment)], the commands of its message's Testing: paragraph
    (testing_commands) as Note [The message's commands are run] says."""
    build, own, whole = testing_commands(patch_file, name)
    whole_cmds = command_lists(whole)
    if whole_cmds != [["make", "check"]]:
        raise PatchError(f"{os.path.basename(patch_file)}: the whole suite's command of its "
                         f"Testing: paragraph is not `make check`: {whole}")
    # A patch's build leaves out the tests of the tree's tools (`tool` in testsuite/driver.py):
    # they pass or fail the same in every build, and the base has run them.
    rest = ["make", "check", check_args_value("--skip-tool-tests", check_args,
                                              f"--exclude patches/{name}/")]
    return [(f"{name}: the message's build, with -Werror: {build}", command_lists(build), WERROR),
            (f"{name}: the message's tests of the patch: {own}", command_lists(own), None),
            (f"{name}: the message's `{whole}`, less its tests (run above) and the tools' "
             f"tests (the base ran them)", [rest], None)]


def check(src, scratch, check_args, jobs, base_tree_tests=False):
    """make check-patches: everything the queue promises, in SCRATCH. BASE_TREE_TESTS: the
    base runs only the tests of its files (the tool tests and the lint, the driver's
    --tree-tests), not the runtime's suite: the base's code is the baseline's (every island
    stripped as the baseline's preprocessor drops it), whose suite `make check` runs on the
    tree (CI: .ci/run runs it last)."""
    patches = read_patches(src)
    written = [p for p in patches if is_written(src, p)]
    pdir = os.path.join(src, OUT_DIR)
    found = lint(pdir, CI_RULES)
    if found:
        raise PatchError("the patch files fail the mail lint (mkpatches.py lint, Note [The "
                         "mail lint]):\n" + format_lint(found, pdir))
    print(f"check-patches: the mail lint ({', '.join(CI_RULES)}) passes", flush=True)
    # Every patch's message is read before anything is built: a bad one fails at once.
    steps = {p.name: patch_steps(os.path.join(pdir, p.file_name), p.name, check_args)
             for p in written}
    if os.path.isdir(scratch):
        shutil.rmtree(scratch)
    os.makedirs(scratch)
    log = os.path.join(scratch, "check-patches.log")
    base = os.path.join(scratch, "base")
    write_base(src, base)
    for what, cmds, env in base_steps(jobs, check_args, base_tree_tests):
        run_logged(cmds, base, log, what, env)
    print(f"check-patches: base: {summary_of(log)}", flush=True)
    for p in written:
        tree = os.path.join(scratch, p.name)
        print(f"check-patches: {p.name}: applies alone to the base", flush=True)
        apply_alone(base, os.path.join(pdir, p.file_name), tree)
        for k, (what, cmds, env) in enumerate(steps[p.name]):
            run_logged(cmds, tree, log, what, env)
            if k:
                print(f"check-patches: {p.name}: "
                      + ("its own tests: " if k == 1 else "") + summary_of(log), flush=True)
        shutil.rmtree(tree)
    print("check-patches: the whole series applies in order", flush=True)
    with tempfile.TemporaryDirectory(prefix="mkpatches-series.", dir=scratch) as work:
        series_applies(src, base, "main", pdir, written, patches, work)
    print(f"check-patches: the series ({len(written)} patches) applies in order and gives back "
          f"the tree", flush=True)
    shutil.rmtree(scratch)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["generate", "verify", "base", "check", "lint"])
    ap.add_argument("dest", nargs="?", help="base: the directory to write the base into")
    ap.add_argument("--src", default=SRC_DEFAULT)
    ap.add_argument("--out", help="generate: where (default SRC/patches)")
    ap.add_argument("--rev", metavar="REV",
                    help="generate, verify: make the queue from commit REV (e.g. HEAD), not "
                         "from the working tree, which must otherwise have no change git has "
                         "not committed (Note [A committed tree])")
    ap.add_argument("--scratch", help="check: scratch directory (default SRC/_build/check-patches)")
    ap.add_argument("--check-args", default="",
                    help="check: arguments for the test driver (CHECK_ARGS), e.g. a --filter")
    ap.add_argument("--base-tree-tests", action="store_true",
                    help="check: the base runs only the tests of its files (tool tests, lint); "
                         "its runtime is the baseline's, whose suite make check runs")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--all", action="store_true",
                    help="lint: every rule, not only those make check-patches runs (CI_RULES)")
    ap.add_argument("--dir", help="lint: the patch files' directory (default SRC/patches)")
    args = ap.parse_args()
    src = os.path.abspath(args.src)
    if args.rev and args.command not in ("generate", "verify"):
        ap.error("--rev is for generate and verify")
    try:
        if args.command in ("generate", "verify"):
            out = os.path.abspath(args.out or os.path.join(src, OUT_DIR))
            with tempfile.TemporaryDirectory(prefix="mkpatches-rev.") as tmp:
                tree, at = src, ""
                if args.rev:
                    tree = os.path.join(tmp, "tree")
                    at = f" (commit {checkout_rev(src, args.rev, tree)[:12]})"
                else:
                    rel = os.path.relpath(out, src)
                    refuse_uncommitted(src, () if rel.startswith("..") else (rel,))
                if args.command == "generate":
                    written = generate(tree, out)
                    print(f"mkpatches: {len(written)} patches{at}: "
                          + (", ".join(p.file_name for p in written) or "none"))
                else:
                    verify(tree)
                    print(f"mkpatches: patches/ is current{at}")
        elif args.command == "lint":
            pdir = os.path.abspath(args.dir or os.path.join(src, OUT_DIR))
            rules = LINT_RULES if args.all else CI_RULES
            found = lint(pdir, rules)
            sys.stdout.write(format_lint(found, pdir))
            print(f"mkpatches: lint ({'every rule' if args.all else ', '.join(rules)}): "
                  f"{len(found)} finding(s) in {len({f for f, *_ in found})} file(s)")
            return 1 if found else 0
        elif args.command == "base":
            if not args.dest:
                ap.error("base needs a directory")
            write_base(src, os.path.abspath(args.dest))
            print(f"mkpatches: the base is in {args.dest}")
        else:
            check(src, os.path.abspath(args.scratch or os.path.join(src, "_build", "check-patches")),
                  args.check_args, args.jobs, args.base_tree_tests)
    except (PatchError, subprocess.CalledProcessError) as e:
        msg = str(e)
        if isinstance(e, subprocess.CalledProcessError) and e.stderr:
            msg += "\n" + e.stderr.decode(errors="replace")
        print(f"mkpatches: error: {msg}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
