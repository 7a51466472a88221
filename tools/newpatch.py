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

NAME: lower-case words joined by '-' (the configure flag's name); the description: one line
(no brackets: it goes into m4). Fails, changing nothing, if NAME exists or a seam it edits is
not where it expects it.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NAME_RE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


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


def registration_c(name, desc, macro, ident):
    return f"""#include "rtslab_config.h"
#if {macro}
/* The {name} patch's registration (Note [Patch registration] in rts/patch.h): {desc}.
 *
 * Made by tools/newpatch.py with no options and no counters. To give the patch
 *   - an RTS option: an RtsPatchOption entry below (its field in RtsOptions: one of the
 *     reserved words of runtime/include/rtslab_options.h) and its syntax and range in
 *     options.c's patch_option_specs[] (Note [Options that need a patch]), the option's
 *     prefix in configure.ac's RTSLAB_PATCH line (its fifth argument), a test in
 *     testsuite/patches/{name}/TESTS and one in testsuite/errors/TESTS for a build without it;
 *   - --info lines: an info function (.info, after the base line .info_after names);
 *   - counters: an RtsStatsSection (Note [Patch statistics] in trace/stats.h), its keys in
 *     docs/stats.md inside this patch's markers (stats/doc_keys checks them).
 * docs/new-patch.md has the rules. */
#include <stddef.h>
#include "rts/patch.h"

const RtsPatch rts_patch_{ident} = {{
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


def scaffold(src, name, desc, autoreconf=True, log=print):
    if not NAME_RE.match(name):
        raise ScaffoldError("NAME must be lower-case words joined by '-' (e.g. my-idea), not %r" % name)
    if not desc or "\n" in desc or any(c in desc for c in "[]"):
        raise ScaffoldError("the description must be one line without brackets")
    desc = desc.strip().rstrip(".")
    macro, ident = names(name)
    ac = read(src, "configure.ac")
    known = known_patches(ac)
    if name in known:
        raise ScaffoldError("patch %s exists already (configure.ac)" % name)
    own = ["runtime/rts/patch_%s.c" % ident, "testsuite/patches/%s/TESTS" % name,
           "docs/patches/%s.md" % name, "experiments/%s/run.py" % name,
           "experiments/%s/README.md" % name]
    for rel in own:
        if os.path.exists(os.path.join(src, rel)):
            raise ScaffoldError("%s exists already" % rel)

    # Every edit is computed before anything is written, so that a failure changes nothing.
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
    for rel, text in list(edits.items()) + list(files.items()):
        path = os.path.join(src, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        log(("edited  " if rel in edits else "created ") + rel)
    os.chmod(os.path.join(src, "experiments/%s/run.py" % name), 0o755)
    # The patch queue reads git's tracked files (tools/mkpatches.py): the new files are added
    # to the index (not committed) where the tree is a git work tree.
    if os.path.isdir(os.path.join(src, ".git")):
        subprocess.run(["git", "-C", src, "add", "--"] + sorted(files), check=True)
        log("git add: the new files")
    if autoreconf:
        log("running autoreconf -fi")
        subprocess.run(["autoreconf", "-fi"], cwd=src, check=True,
                       stdout=subprocess.DEVNULL)
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
