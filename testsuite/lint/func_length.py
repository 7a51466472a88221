#!/usr/bin/env python3
"""No function in runtime/ is longer than 150 lines, but the few this script names.

    python3 testsuite/lint/func_length.py --src SRCDIR [--max N] [--list]

A function's length is counted as ctags counts it: from the line of its name to the line of
its closing brace, both included (comments, blank lines and every `#if` island inside count:
they are what a reader reads). A function longer than MAX (150) is hard to read and review as
one piece (issue 46): split it into well-named functions. The exceptions are the table
EXCEPTIONS below, each with its reason; an exception that no longer names a function over
MAX is reported too, so the table stays true.

The scanner is a small one of its own (no ctags needed): it blanks comments, string and
character literals and preprocessor lines, reads each version of the file that its
conditionals give (first branches, second branches, ...: an island's `#else` may repeat an
opening brace, and a function may be defined in one branch only), and takes a `{` at file scope
whose text since the last `;` or `}` ends in a parameter list `NAME(...)` as the start of
the function NAME. Initialisers (`= {`), struct, union and enum bodies are not functions.

Every function over the limit is a line such as
    func_length: runtime/os/topology.c:120: topo_load is 266 lines (over 150): split it
on stderr, then a line that counts the problems; the exit status is then 1. With none it
prints "func_length ok: ..." and exits 0. --list prints every function with its length.
"""
import argparse
import os
import re
import sys

MAX_LINES = 150

# (file relative to runtime/, function): why it may be longer than MAX_LINES.
EXCEPTIONS = {
    ("scheme/vm.c", "vm_loop"):
        "the bytecode VM's dispatch loop: one label per opcode (computed goto, VM_DISPATCH), "
        "each a few lines, all sharing the VM's registers (pc, b, K, slots) in the loop's "
        "locals, which the compiler keeps in machine registers; as functions, every opcode "
        "would pass or reload them. Lua's luaV_execute and OCaml's caml_interprete are one "
        "function each for the same reason",
}

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DIRECTIVE = re.compile(r"^[ \t]*#[ \t]*([A-Za-z]*)")


def blank_comments_and_literals(text):
    """Comments and the insides of string and character literals become spaces, newlines
    kept (so line numbers stay right and no brace inside one counts)."""
    def blank(m):
        s = m.group(0)
        if s[0] in "\"'":
            return s[0] + re.sub(r"[^\n]", " ", s[1:-1]) + s[-1]
        return re.sub(r"[^\n]", " ", s)
    return re.sub(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                  blank, text, flags=re.DOTALL)


def directives(lines):
    """[(first line index, number of lines, word)] of the preprocessor directives."""
    out, i = [], 0
    while i < len(lines):
        m = DIRECTIVE.match(lines[i])
        if not m:
            i += 1
            continue
        n = 1
        while lines[i + n - 1].endswith("\\") and i + n < len(lines):
            n += 1
        out.append((i, n, m.group(1)))
        i += n
    return out


OPEN = ("if", "ifdef", "ifndef")
NEXT = ("elif", "else", "elifdef", "elifndef")


def branch_counts(dirs):
    """{index of an #if directive line: how many branches its conditional has}."""
    counts, stack = {}, []
    for i, _, word in dirs:
        if word in OPEN:
            stack.append(i)
            counts[i] = 1
        elif word in NEXT and stack:
            counts[stack[-1]] += 1
        elif word == "endif" and stack:
            stack.pop()
    return counts


def blank_preprocessor(text, pick):
    """TEXT as one version of the file: preprocessor lines (with their continuation lines)
    become empty, and of each conditional only branch number PICK (0: the first; its last
    branch when it has fewer) is kept, the others' lines made empty. So the braces that
    remain are those of one consistent version of the file."""
    lines = text.split("\n")
    dirs = directives(lines)
    counts = branch_counts(dirs)
    keep = [True] * len(lines)
    stack = []          # per open conditional: [branch number, branch kept, enclosing kept]
    active = True
    at = 0
    for i, n, word in dirs:
        for j in range(at, i):
            keep[j] = active
        for j in range(i, i + n):
            keep[j] = False
        at = i + n
        if word in OPEN:
            want = min(pick, counts[i] - 1)
            stack.append([0, want, active])
            active = active and want == 0
        elif word in NEXT and stack:
            top = stack[-1]
            top[0] += 1
            active = top[2] and top[0] == top[1]
        elif word == "endif" and stack:
            active = stack.pop()[2]
    for j in range(at, len(lines)):
        keep[j] = active
    return "\n".join(l if k else "" for l, k in zip(lines, keep)), \
        max(counts.values(), default=1)


def functions(text):
    """[(name, first line, last line)] of the function definitions in C source TEXT, in every
    branch of its conditionals (each version of the file is scanned: every conditional's
    first branches, then its second ones, and so on)."""
    text = blank_comments_and_literals(text)
    found, pick, most = {}, 0, 1
    while pick < most:
        clean, most = blank_preprocessor(text, pick)
        for name, first, last in functions_of(clean):
            found[(name, first)] = max(found.get((name, first), last), last)
        pick += 1
    return sorted((name, first, last) for (name, first), last in found.items())


def functions_of(clean):
    """[(name, first line, last line)] of the functions in CLEAN (no comments, literals or
    preprocessor lines)."""
    found = []
    depth = 0
    head_start = 0          # where the text since the last ';' or '}' at file scope begins
    fn = None               # (name, line) of the function whose body is open
    line = 1
    for i, c in enumerate(clean):
        if c == "\n":
            line += 1
        elif c == "{":
            if depth == 0:
                fn = function_head(clean, head_start, i)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if fn is not None:
                    found.append((fn[0], fn[1], line))
                    fn = None
                head_start = i + 1
            elif depth < 0:          # unbalanced: give up on the rest of this version
                break
        elif c == ";" and depth == 0:
            head_start = i + 1
    return found


def function_head(clean, start, brace):
    """(name, line of the name) when clean[start:brace] ends in `NAME(...)` (a definition's
    declarator), else None."""
    head = clean[start:brace].rstrip()
    if not head.endswith(")") or "=" in strip_parens(head):
        return None
    # The parenthesis that opens the last parameter list.
    depth, j = 0, len(head) - 1
    while j >= 0:
        if head[j] == ")":
            depth += 1
        elif head[j] == "(":
            depth -= 1
            if depth == 0:
                break
        j -= 1
    if j < 0:
        return None
    k = j
    while k > 0 and head[k - 1] in " \t\n":
        k -= 1
    m = re.search(r"[A-Za-z_][A-Za-z0-9_]*$", head[:k])
    if not m or m.group(0) in ("if", "while", "for", "switch", "return", "sizeof"):
        return None
    line = clean.count("\n", 0, start + m.start()) + 1
    return m.group(0), line


def strip_parens(s):
    """S without what is inside parentheses (an `=` there is no initialiser's)."""
    out, depth = [], 0
    for c in s:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out)


def c_files(runtime):
    for dirpath, dirnames, filenames in os.walk(runtime):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if f.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, f), runtime).replace(os.sep, "/")


def check(src, max_lines=MAX_LINES, exceptions=None):
    """(problems, every function as (rel, name, first, length))."""
    exceptions = EXCEPTIONS if exceptions is None else exceptions
    runtime = os.path.join(src, "runtime")
    problems, every = [], []
    for rel in c_files(runtime):
        with open(os.path.join(runtime, rel), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, first, last in functions(text):
            every.append((rel, name, first, last - first + 1))
    seen = {}
    for rel, name, first, length in every:
        key = (rel, name)
        seen[key] = max(seen.get(key, 0), length)
        if length > max_lines and key not in exceptions:
            problems.append(f"runtime/{rel}:{first}: {name} is {length} lines (over "
                            f"{max_lines}): split it")
    for key in sorted(exceptions):
        rel, name = key
        if key not in seen:
            problems.append(f"runtime/{rel}: {name}, an exception of func_length.py, is no "
                            f"function there: take it off EXCEPTIONS")
        elif seen[key] <= max_lines:
            problems.append(f"runtime/{rel}: {name}, an exception of func_length.py, is "
                            f"{seen[key]} lines (not over {max_lines}): take it off "
                            f"EXCEPTIONS")
    return problems, every


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=".", help="the source tree (default: .)")
    ap.add_argument("--max", type=int, default=MAX_LINES, help="the limit (default: 150)")
    ap.add_argument("--list", action="store_true", help="print every function's length")
    args = ap.parse_args()
    problems, every = check(args.src, args.max)
    if args.list:
        for rel, name, first, length in sorted(every, key=lambda e: -e[3]):
            print(f"{length:5d} runtime/{rel}:{first} {name}")
    for p in problems:
        print(f"func_length: {p}", file=sys.stderr)
    if problems:
        print(f"func_length: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    rest = [e for e in every if (e[0], e[1]) not in EXCEPTIONS]
    longest = max(rest, key=lambda e: e[3]) if rest else None
    print(f"func_length ok: {len(every)} functions, none over {args.max} lines but "
          f"{len(EXCEPTIONS)} exception(s)"
          + (f"; the longest other is {longest[1]} ({longest[3]} lines)" if longest else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
