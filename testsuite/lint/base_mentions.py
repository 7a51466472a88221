#!/usr/bin/env python3
"""The base knows no patch (docs/new-patch.md, section 8; issue 44).

    python3 testsuite/lint/base_mentions.py [--src SRCDIR] [--report]

Makes the base as `make patches` makes it (tools/mkpatches.py's make_tree: every patch's
islands, marker blocks and own files stripped) in a scratch directory and fails when a file
of it -- code, test, doc or fixture -- still mentions a patch by
  * its name or its macro (my-idea, RTS_PATCH_MY_IDEA): what mkpatches itself refuses when
    it makes the queue, checked here before a commit;
  * its name in words or in identifiers, with a space, '-', '_' or nothing between its
    parts and inside them, in any case, the last part's plural 's' optional ("my idea",
    "My-Idea", "MY_ID_EA", "myidea", "rts_opts.my_idea"; a patch named big-pages: "big
    page");
  * one of its RTS options: the RtsOption rows of runtime/rts/patch_NAME.c (-xy,
    -xy1, -xy<n>, -xy32k...);
  * one of its -s / --machine-readable counter keys: the RtsStatsKey entries there (a key
    not starting with rtslab_ is a suffix of per-kind keys, rtslab_<...>_<suffix>).
Each mention is printed as "base_mentions: PATH:LINE: mentions PATCH (its KIND 'TEXT')".
Exit status 1 when there is one, unless its file is listed in REPORT_ONLY (or --report is
given): then the mention is printed and the check passes, saying so.

The tree is git's tracked files when SRCDIR is a git work tree, else every file under it
(a build's copy of the sources, `make distdir`), without patches/ and _build/.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC_DEFAULT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC_DEFAULT, "tools"))
import mkpatches  # noqa: E402  (what the base is, and the check of names and macros)

# Files whose mentions are reported but do not fail the check, and why. Empty since the
# patches' options moved into the patches (issue 46: Note [The option table] in
# runtime/rts/options.c).
REPORT_ONLY = {}

# A patch's option: a row of its option table, `{ .name = "-xy", ...` (rts/patch.h's
# RtsOption). A claim (RTS_OPT_CLAIM) is a value of a base option, which the base refuses
# in its own words (-qb<gen> at least 1), so it is not the patch's to mention.
OPTION = re.compile(r'\{\s*\.name\s*=\s*"(-[A-Za-z0-9-]+=?)"\s*,(?!\s*\.kind\s*=\s*RTS_OPT_CLAIM)')
KEY = re.compile(r'\{\s*"([a-z0-9_]+)"\s*,\s*(?:&|NULL\s*,|[a-z_]+\.[a-z_]+\s*,)')


def patch_file(src, patch):
    return os.path.join(src, "runtime", "rts", "patch_%s.c" % patch.name.replace("-", "_"))


def rules(src, patches):
    """[(kind, compiled regex, {matched text (lower case) -> patch name})]: what names a
    patch, besides its name and macro (mkpatches.mentions)."""
    words, options, keys = {}, {}, {}
    for p in patches:
        # a separator (space, '-', '_') or none between the parts and inside them ("my
        # idea", "MY_ID_EA"); the last part's plural 's' optional ("big page")
        parts = [r"[\s_-]?".join(re.escape(c) for c in w) for w in p.name.split("-")]
        if p.name.endswith("s"):
            parts[-1] += "?"
        words[r"[\s_-]?".join(parts)] = p.name
        path = patch_file(src, p)
        if not os.path.exists(path):
            continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        # rows in comments (newpatch.py's example row) are no options
        for opt in OPTION.findall(re.sub(r"/\*.*?\*/", "", text, flags=re.S)):
            options[opt] = p.name
        for key in KEY.findall(text):
            keys[key] = p.name
    out = []
    if words:
        # not inside a longer word, but inside an identifier or a file name too
        # (sync/wait_my_idea.c, rts_opts.my_idea)
        rx = re.compile(r"(?<![A-Za-z0-9])(" + "|".join("(?:%s)" % w for w in words)
                        + r")(?![A-Za-z0-9])", re.I)
        out.append(("words", rx, lambda m, w=words: next(
            n for pat, n in w.items() if re.fullmatch(pat, m, re.I))))
    if options:
        # the option and what follows it, a value or nothing: -xy, -xy1, -xy32k, not -xya
        opts = sorted(options, key=len, reverse=True)
        rx = re.compile(r"(?<![A-Za-z0-9_-])(" + "|".join(re.escape(o) for o in opts)
                        + r")(?=[0-9<]|[^A-Za-z0-9_]|$)")
        out.append(("option", rx, lambda m, o=options: o[m]))
    if keys:
        full = {k: n for k, n in keys.items() if k.startswith("rtslab_")}
        suffix = {k: n for k, n in keys.items() if not k.startswith("rtslab_")}
        alts = [re.escape(k) for k in sorted(full, key=len, reverse=True)]
        alts += [r"rtslab_[a-z0-9_]*_" + re.escape(k) for k in sorted(suffix, key=len,
                                                                         reverse=True)]
        rx = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(alts) + r")(?![A-Za-z0-9_])")

        def owner(m, full=full, suffix=suffix):
            if m in full:
                return full[m]
            return next(n for k, n in suffix.items() if m.endswith("_" + k))
        out.append(("counter key", rx, owner))
    return out


def tree_files(src):
    if os.path.isdir(os.path.join(src, ".git")) or os.path.isfile(os.path.join(src, ".git")):
        return mkpatches.tracked_files(src)
    files = []
    for root, dirs, names in os.walk(src):
        rel = os.path.relpath(root, src).replace(os.sep, "/")
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in ("patches", "_build", ".git")]
        for n in names:
            files.append(os.path.normpath(os.path.join(rel, n)).replace(os.sep, "/"))
    return sorted(files)


def make_base(src, dest, patches):
    """The base, as mkpatches makes it, without the check that autoconf still takes its
    configure.ac (mkpatches does that; it is not what this lint checks, and costs seconds)."""
    check = mkpatches.check_configure_ac
    mkpatches.check_configure_ac = lambda tree: None
    try:
        mkpatches.make_tree(src, tree_files(src), dest, {p.name for p in patches}, patches)
    finally:
        mkpatches.check_configure_ac = check


def scan(base, patches, extra):
    """[(path, line, patch, kind, text)]."""
    found = [(path, no, name, "name or macro", "")
             for path, no, name in mkpatches.mentions(base, patches)]
    for root, _, names in os.walk(base):
        for n in names:
            path = os.path.join(root, n)
            with open(path, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            for no, line in enumerate(data.decode(errors="replace").splitlines(), 1):
                for kind, rx, owner in extra:
                    for m in rx.finditer(line):
                        found.append((rel, no, owner(m.group(1)), kind, m.group(1)))
    return sorted(set(found))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=SRC_DEFAULT)
    ap.add_argument("--report", action="store_true",
                    help="print the mentions, but pass")
    a = ap.parse_args()
    try:
        patches = mkpatches.read_patches(a.src)
    except mkpatches.PatchError:
        patches = []            # the base itself: no patch to mention
    if not patches:
        print("base_mentions ok: the tree has no patch")
        return 0
    with tempfile.TemporaryDirectory(prefix="base_mentions.") as tmp:
        base = os.path.join(tmp, "base")
        try:
            make_base(a.src, base, patches)
        except mkpatches.PatchError as e:
            sys.exit("base_mentions: %s" % e)
        found = scan(base, patches, rules(a.src, patches))
    failing = 0
    for path, no, name, kind, text in found:
        quiet = a.report or path in REPORT_ONLY
        failing += not quiet
        what = "its %s '%s'" % (kind, text) if text else "its name or macro"
        print("base_mentions: %s:%d: mentions %s (%s)%s"
              % (path, no, name, what, " [report only]" if quiet else ""))
    for path in sorted({f[0] for f in found if f[0] in REPORT_ONLY}):
        n = sum(1 for f in found if f[0] == path)
        print("base_mentions: %s: %d mention(s) reported, not failed: %s"
              % (path, n, REPORT_ONLY[path]))
    if failing:
        print("base_mentions: %d mention(s) of patches in the base: move them into the "
              "patch's islands, marker blocks or files (docs/new-patch.md)" % failing)
        return 1
    print("base_mentions ok: the base (%d patches stripped) names none of them%s"
          % (len(patches), " but as reported above" if found else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
