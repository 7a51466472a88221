#!/usr/bin/env python3
"""Checks that the runtime's modules depend only downwards, layer by layer.

    python3 testsuite/lint/layers.py --src SRCDIR [--build BUILDDIR]

The runtime (runtime/) is a stack of layers: the table LAYERS at the top of this script
(testsuite/lint/layers.py), bottom first; runtime/README.md describes them in prose. A
module is a directory under runtime/ or, where the table names files, those files. Two
rules:

Rule A (includes). Every `#include "..."` in runtime/**/*.{c,h} must resolve to a file under
  runtime/ (searched as the compiler does: the including file's directory, then
  runtime/include/, then runtime/) or to a file the build generates (GENERATED). The included
  file's module must be the includer's own module, or one of a lower rank; a module of the
  same rank is not allowed either. Some modules may include only what ONLY_INCLUDES lists.
  An include that resolves to nothing is an error.

Rule B (symbol references; only with --build, once the build has made
  BUILDDIR/runtime/**/*.o). `nm` lists what each object defines and what it leaves
  undefined. Every undefined symbol that another runtime object defines must be defined in
  the user's own module or in one of a lower rank, as in rule A. This catches a call up
  that goes through a header of a lower layer (say, one of the public API in
  runtime/include/). Within a module listed in FILE_ORDER (the Scheme front-end), a file
  may use only its own symbols and those of files listed before it. Without nm (or without
  objects) rule B is skipped, with a note.

Rule C (inline functions in headers; with rule B). A `static inline` function of a header
  is compiled into every object that includes it, so rule B charges its calls to the
  includer, not to the header: a public header's inline that calls into the storage manager
  looks, to nm, like the VM calling it. So the calls in the bodies of a header's inline
  functions are judged as the header's own: each name called there that a runtime object
  defines must be defined in the header's module or one of a lower rank.

Every violation is a line such as
    runtime/sched/capability.c:7: includes sm/gc.h (sm, rank 4) from sched (rank 5): goes up
    runtime/sm/storage.o: calls rts_exit (defined in rts/rts.c, rank 7) from sm (rank 4): goes up
    runtime/include/rtslab.h:103: inline rts_set_field calls sm_write (defined in sm/storage.c, rank 4) from include (rank 0): goes up
on stderr, after a first line that counts them; the exit status is then 1. With none it
prints "layers: N files, M includes, K symbol references: all go down" and exits 0. A file
under runtime/ that no entry of LAYERS covers is an error too: give it a layer.

testsuite/lint/TESTS runs it in `make check` (and test_layers.py, its self-test).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

# The layers of the runtime, bottom (rank 0) to top. runtime/README.md's table shows them,
# with a line of prose each (layer_table.py checks that its rows are these). Each entry is (rank, module, paths), paths relative to
# runtime/: "dir/" is every file under that directory that no file entry names; "dir/x.c"
# is that one file. Several modules may share a rank; each is still a module of its own.
LAYERS = [
    (0, "include",        ["include/"]),           # public headers (and rtslab_config.h)
    (1, "base",           ["base/"]),              # leaf utilities: errors, clocks, options
    (2, "os",             ["os/"]),
    (2, "io",             ["io/"]),                # the IO manager's back ends (uring, epoll)
    (2, "trace",          ["trace/"]),             # the eventlog
    (3, "sync",           ["sync/"]),
    (4, "sm",             ["sm/"]),
    (5, "sched",          ["sched/"]),
    (6, "stats",          ["stats/"]),             # observers: -s, -S, --machine-readable
    (7, "rts",            ["rts/"]),               # start-up, option parsing, rts/vm_api.h
    (8, "scheme",         ["scheme/"]),            # the front-end (see ONLY_INCLUDES)
    (9, "main",           ["main/"]),              # the rtslab driver program
]

# Files the build generates (in the build directory, found through -I), and their modules.
GENERATED = {
    "rtslab_config.h": "include",       # configure
    "scheme_prelude.inc": "scheme",     # runtime/scheme/prelude.scm, for prim_ctl.c
}

# Modules that may include only these: other modules' headers are off limits whatever
# their rank. Paths are relative to runtime/.
ONLY_INCLUDES = {
    "scheme": {"modules": {"include", "scheme"}, "files": {"rts/vm_api.h"},
               "say": "runtime/include/, rts/vm_api.h and scheme/ headers"},
}

# Modules whose files are ordered too (rule B): a file may use symbols of files listed before
# it, never after. The Scheme front-end's order is Note [Scheme layers] in scheme/scheme.h.
FILE_ORDER = {
    "scheme": ["object", "datum", "port", "read", "print", "prim_num", "prim_data",
               "prim_port", "vm", "expand", "compile", "prim_ctl"],
}

# nm's symbol types (binutils): defined globals, and undefined references.
NM_DEFINED = set("ABCDGRSTVWiIu")
NM_UNDEFINED = set("Uwv")
NM_CODE = set("TWiI")

INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)

RANK = {name: rank for rank, name, _ in LAYERS}


def module_of(rel):
    """The module of the file runtime/REL, or None when the table does not cover it."""
    best, best_len = None, -1
    for _, name, paths in LAYERS:
        for p in paths:
            if p.endswith("/"):
                if rel.startswith(p) and len(p) > best_len:
                    best, best_len = name, len(p)
            elif rel == p:
                return name
    return best


def strip_comments(text):
    """Blanks C comments, keeping newlines (so line numbers stay right). String and
    character literals are matched only so that a comment marker inside one is left alone."""
    def blank(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s
        return re.sub(r"[^\n]", " ", s)
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  blank, text, flags=re.DOTALL)


def source_files(runtime):
    out = []
    for dirpath, dirnames, filenames in os.walk(runtime):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith((".c", ".h")):
                out.append(os.path.relpath(os.path.join(dirpath, f), runtime).replace(os.sep, "/"))
    return out


def resolve(runtime, includer, target):
    """(module, path shown) for `#include "TARGET"` in runtime/INCLUDER, or (None, why)."""
    candidates = [os.path.join(os.path.dirname(includer), target), GENERATED,
                  os.path.join("include", target), target]
    for c in candidates:
        if c is GENERATED:
            if target in GENERATED:
                return GENERATED[target], target
            continue
        c = os.path.normpath(c).replace(os.sep, "/")
        if c.startswith("../") or c.startswith("/"):
            continue
        if os.path.isfile(os.path.join(runtime, c)):
            mod = module_of(c)
            if mod is None:
                return None, f"resolves to runtime/{c}, which no layer covers"
            return mod, c
    return None, "not found under runtime/ (nor a generated file)"


def judge(user, used, used_path):
    """Why USER (a module) may not depend on USED, or None when it may."""
    if user == used:
        return None
    only = ONLY_INCLUDES.get(user)
    if only is not None and used_path is not None:
        if used not in only["modules"] and used_path not in only["files"]:
            return f"{user} may include only {only['say']}"
    if RANK[used] > RANK[user]:
        return "goes up"
    if RANK[used] == RANK[user]:
        return "another module of the same rank"
    return None


def check_includes(src):
    runtime = os.path.join(src, "runtime")
    files = source_files(runtime)
    violations, n_includes = [], 0
    for rel in files:
        shown = f"runtime/{rel}"
        mod = module_of(rel)
        if mod is None:
            violations.append(f"{shown}: no layer covers it (add it to LAYERS in "
                              f"testsuite/lint/layers.py and to runtime/README.md)")
            continue
        with open(os.path.join(runtime, rel), encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for m in INCLUDE_RE.finditer(text):
            n_includes += 1
            line = text.count("\n", 0, m.start()) + 1
            target = m.group(1)
            used, path = resolve(runtime, rel, target)
            if used is None:
                violations.append(f"{shown}:{line}: includes {target}: {path}")
                continue
            why = judge(mod, used, path)
            if why:
                violations.append(f"{shown}:{line}: includes {target} ({used}, rank "
                                  f"{RANK[used]}) from {mod} (rank {RANK[mod]}): {why}")
    return files, n_includes, violations


def nm_symbols(nm, obj):
    """(defined {name: type}, undefined set) of one object, from `nm -P`."""
    out = subprocess.run([nm, "-P", obj], check=True, capture_output=True, text=True).stdout
    defined, undefined = {}, set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2 or line.endswith(":"):
            continue
        name, kind = parts[0], parts[1]
        if kind in NM_UNDEFINED:
            undefined.add(name)
        elif kind in NM_DEFINED:
            defined[name] = kind
    return defined, undefined


def file_order_violation(mod, user_obj, definer_src):
    """Why a reference from one file of an ordered module to another goes up, or None."""
    order = FILE_ORDER[mod]
    user = os.path.basename(user_obj)[:-2]
    definer = os.path.basename(definer_src)[:-2]
    if user == definer:
        return None
    for name in (user, definer):
        if name not in order:
            return f"{mod}/{name} is missing from FILE_ORDER[{mod!r}]: give it a place"
    if order.index(definer) > order.index(user):
        return f"goes up within {mod} ({definer} comes after {user} in FILE_ORDER)"
    return None


INLINE_RE = re.compile(r"\bstatic\s+(?:__inline__|__inline|inline)\b[^;{}()]*?\b(\w+)\s*\(")
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def inline_calls(text):
    """[(line, function, called name)] for the static inline functions defined in TEXT (a
    header, comments blanked): the names followed by "(" in each body."""
    out = []
    for m in INLINE_RE.finditer(text):
        i = m.end()
        depth = 1                        # skip the parameter list
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        j = i
        while j < len(text) and text[j] in " \t\n":
            j += 1
        if j >= len(text) or text[j] != "{":
            continue                     # a declaration, not a definition
        depth, k = 1, j + 1
        while k < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        body = text[j:k]
        for c in CALL_RE.finditer(body):
            out.append((text.count("\n", 0, j + c.start()) + 1, m.group(1), c.group(1)))
    return out


def check_inlines(src, definers):
    """Rule C: (calls checked, violations) of the headers' inline functions."""
    runtime = os.path.join(src, "runtime")
    violations, n = [], 0
    for rel in source_files(runtime):
        mod = module_of(rel)
        if not rel.endswith(".h") or mod is None:
            continue
        with open(os.path.join(runtime, rel), encoding="utf-8", errors="replace") as f:
            text = strip_comments(f.read())
        for line, fn, name in inline_calls(text):
            if name not in definers:
                continue
            n += 1
            where, used, _ = definers[name][0]
            why = judge(mod, used, None)
            if why:
                violations.append(f"runtime/{rel}:{line}: inline {fn} calls {name} (defined in "
                                  f"{where}, rank {RANK[used]}) from {mod} (rank {RANK[mod]}): "
                                  f"{why}")
    return n, violations


def check_symbols(src, build, notes):
    """(number of references checked, violations), or None when rules B and C are
    skipped."""
    objroot = build          # automake's subdir-objects: runtime/sm/gc.c -> BUILD/runtime/sm/gc.o
    objs = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(objroot, "runtime")):
        dirnames.sort()
        objs += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(".o")]
    if not objs:
        notes.append(f"no objects under {os.path.join(objroot, 'runtime')} (build first): "
                     "rule B (symbol references) skipped")
        return None
    nm = os.environ.get("NM", "nm")
    if shutil.which(nm) is None:
        notes.append(f"{nm} not found (install binutils, or set NM): "
                     "rule B (symbol references) skipped")
        return None
    info = []           # (shown object, module, defined, undefined)
    for obj in objs:
        rel = os.path.relpath(obj, objroot).replace(os.sep, "/")   # runtime/sm/storage.o
        source = rel[:-2] + ".c"
        if not os.path.isfile(os.path.join(src, source)):
            notes.append(f"{rel}: no {source} in the source tree (a stale object?): left out")
            continue
        mod = module_of(source[len("runtime/"):])
        if mod is None:
            continue    # rule A reports the source
        try:
            defined, undefined = nm_symbols(nm, obj)
        except subprocess.CalledProcessError as e:
            notes.append(f"{rel}: {nm} failed ({e.stderr.strip() or e.returncode}): left out")
            continue
        info.append((rel, mod, defined, undefined))
    definers = {}       # symbol -> [(source shown, module, nm type)]
    for rel, mod, defined, _ in info:
        for name, kind in defined.items():
            definers.setdefault(name, []).append((rel[len("runtime/"):-2] + ".c", mod, kind))
    violations, n_refs = [], 0
    for rel, mod, _, undefined in info:
        for name in sorted(undefined):
            if name not in definers:
                continue
            n_refs += 1
            where, used, kind = definers[name][0]
            why = judge(mod, used, None)
            if not why and used == mod and mod in FILE_ORDER:
                why = file_order_violation(mod, rel, where)
            if why:
                verb = "calls" if kind in NM_CODE else "uses"
                violations.append(f"{rel}: {verb} {name} (defined in {where}, rank "
                                  f"{RANK[used]}) from {mod} (rank {RANK[mod]}): {why}")
    n_inline, inline_violations = check_inlines(src, definers)
    return n_refs + n_inline, violations + inline_violations


def main(argv=None):
    summary, _usage, rest = __doc__.split("\n\n", 2)
    ap = argparse.ArgumentParser(
        description=summary + "\n\n" + rest, formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="%(prog)s --src SRCDIR [--build BUILDDIR]")
    ap.add_argument("--src", required=True,
                    help="the source tree (the one holding runtime/)")
    ap.add_argument("--build", help="a build directory: also check its objects' symbol "
                    "references with nm (rule B)")
    args = ap.parse_args(argv)
    if not os.path.isdir(os.path.join(args.src, "runtime")):
        ap.error(f"no runtime/ in {args.src}")

    notes = []
    files, n_includes, violations = check_includes(args.src)
    refs = None
    if args.build:
        refs = check_symbols(args.src, args.build, notes)
    else:
        notes.append("no --build: rule B (symbol references) skipped")
    if refs is not None:
        violations += refs[1]

    for n in notes:
        print(f"layers: note: {n}")
    if violations:
        print(f"layers: {len(violations)} violation{'s' * (len(violations) != 1)} of the "
              "layering (LAYERS in testsuite/lint/layers.py; runtime/README.md):",
              file=sys.stderr)
        for v in violations:
            print(v, file=sys.stderr)
        print(f"layers: {len(violations)} violation{'s' * (len(violations) != 1)}",
              file=sys.stderr)
        return 1
    sym = f", {refs[0]} symbol references" if refs is not None else ""
    print(f"layers: {len(files)} files, {n_includes} includes{sym}: all go down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
