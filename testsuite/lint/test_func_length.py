#!/usr/bin/env python3
"""Self-test of func_length.py, so that the check of functions' lengths cannot pass by
checking nothing.

    python3 testsuite/lint/test_func_length.py

Writes throwaway trees in a temporary directory and runs func_length.py on each. A tree
passes whose functions are at most 150 lines (one exactly 150, braces in comments, strings
and character literals, an island whose two branches each open a brace, a long initialiser
and a long struct that are no functions), whose one long function is the listed exception
(scheme/vm.c vm_loop), and with a long function outside runtime/. Each of these is then
reported, at its line and with its length, and nothing else: a function of 151 lines; one
defined only in an island's #else branch; one after the island with two opening braces; a
long one whose header spans lines; and the exception, when its function is gone or short.
Prints "test_func_length: N checks passed" and exits 0, or names the first failed check and
exits 1.
"""
import os
import subprocess
import sys
import tempfile

CHECK_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "func_length.py")
checks = 0


def body(n, indent="    "):
    """N lines of statements."""
    return "".join(f"{indent}x += {i};\n" for i in range(n))


def fn(name, lines, head=None):
    """A function of LINES lines, HEAD's first line to the closing brace."""
    head = head or f"static int {name}(int x)\n"
    head_lines = head.count("\n")
    return head + "{\n" + body(lines - head_lines - 2) + "}\n"


VM_C = ("/* The VM */\n" + fn("vm_loop", 300) + "\n" + fn("vm_run", 10))

FILES = {
    "runtime/scheme/vm.c": VM_C,
    "runtime/sm/gc.c": ("#include \"sm/gc.h\"\n"
                        "/* a comment with a { brace and a } brace */\n"
                        + fn("collect", 150)                     # exactly the limit: fine
                        + "static const char *s = \"{{{\"; static char c = '{';\n"
                        + "static const int table[] = {\n" + "    1,\n" * 200 + "};\n"
                        + "struct big {\n" + "    int a;\n" * 200 + "};\n"
                        + fn("short_one", 5)),
    "runtime/sm/gc.h": "int collect(int x);\n",
    "runtime/sched/stack.c": ("#if RTS_PATCH_X\n"
                              "static void f(int a) {\n"
                              "    if (a) {\n"
                              "#else\n"
                              "static void f(int a) {\n"
                              "    if (!a) {\n"
                              "#endif\n"
                              "        a++;\n"
                              "    }\n"
                              "}\n"
                              + fn("stack_room", 20)),
    "testsuite/unit/test_long.c": fn("main", 400, "int main(void)\n"),
}


class Failed(Exception):
    pass


def expect(what, cond, detail=""):
    global checks
    checks += 1
    if not cond:
        raise Failed(f"{what}{': ' + detail if detail else ''}")


def run(tmp, name, extra=None):
    root = os.path.join(tmp, name)
    for rel, text in {**FILES, **(extra or {})}.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    p = subprocess.run([sys.executable, CHECK_PY, "--src", root], capture_output=True,
                       text=True)
    found = [l for l in p.stderr.splitlines() if l.startswith("func_length: ")
             and not l.endswith(" problem(s)")]
    return p.returncode, found, p.stdout + p.stderr


def expect_reported(tmp, name, extra, wanted):
    """wanted: [complaint], exactly what must be reported (without "func_length: ")."""
    code, found, out = run(tmp, name, extra)
    expect(f"{name}: fails", code == 1, out)
    expect(f"{name}: reports exactly {wanted}",
           sorted(found) == sorted("func_length: " + w for w in wanted), out)


def main():
    with tempfile.TemporaryDirectory(prefix="test_func_length-") as tmp:
        code, found, out = run(tmp, "clean")
        expect("clean tree passes", code == 0 and not found and "func_length ok" in out, out)
        expect("clean tree: the longest other function is collect, 150 lines",
               "the longest other is collect (150 lines)" in out, out)

        expect_reported(tmp, "over-by-one", {
            "runtime/sm/evac.c": "int y;\n" + fn("evacuate", 151)},
            ["runtime/sm/evac.c:2: evacuate is 151 lines (over 150): split it"])
        expect_reported(tmp, "in-else-branch", {
            "runtime/sm/evac.c": ("#if RTS_PATCH_X\n" + fn("evacuate", 10) + "#else\n"
                                  + fn("evacuate_base", 200) + "#endif\n")},
            ["runtime/sm/evac.c:13: evacuate_base is 200 lines (over 150): split it"])
        expect_reported(tmp, "after-island", {
            "runtime/sched/stack.c": FILES["runtime/sched/stack.c"] + fn("stack_reserve", 160)},
            ["runtime/sched/stack.c:31: stack_reserve is 160 lines (over 150): split it"])
        # 152 lines from its type's line: 151 from its name's, where ctags counts from.
        expect_reported(tmp, "header-on-lines", {
            "runtime/os/topology.c": ("/* topology */\n"
                                      + fn("topo_load", 152, "static bool\ntopo_load(int x,\n"
                                                             "          int y)\n"))},
            ["runtime/os/topology.c:3: topo_load is 151 lines (over 150): split it"])
        expect_reported(tmp, "exception-gone", {
            "runtime/scheme/vm.c": fn("vm_run", 10)},
            ["runtime/scheme/vm.c: vm_loop, an exception of func_length.py, is no function "
             "there: take it off EXCEPTIONS"])
        expect_reported(tmp, "exception-short", {
            "runtime/scheme/vm.c": fn("vm_loop", 150)},
            ["runtime/scheme/vm.c: vm_loop, an exception of func_length.py, is 150 lines "
             "(not over 150): take it off EXCEPTIONS"])
    print(f"test_func_length: {checks} checks passed")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Failed as e:
        print(f"test_func_length: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
