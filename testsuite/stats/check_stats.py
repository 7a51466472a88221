#!/usr/bin/env python3
"""Runs a program under one of the statistics options and checks what it prints against GHC's
formats, nofib's parser and docs/stats.md.

    check_stats.py MODE [--caps N] [--serial-gc] -- PROGRAM ARGS...

The checker appends `+RTS <options> -RTS` to the command line (a second +RTS block is fine),
runs it in the current directory, requires exit status 0, and prints "stats ok: MODE".

MODE
  summary     -s: the summary on stderr parses with GHC's formats and nofib's regexes
  sstderr     -sstderr: the same
  file        -s<file>: the summary goes into the file (truncated first), none to stderr
  machine     -s --machine-readable: a Haskell list of pairs with exactly docs/stats.md's keys
  verbose     -S: one line per GC, then the summary; lines agree with the summary
  verbose-mr  -S<file> --machine-readable: one line per GC, then the key/value list

--caps N     the run uses N capabilities: `using -N<N>`, n_capabilities
--serial-gc  every GC runs on one GC thread: no `par` GCs, no work balance
--no-gc      the run does no GC at all: no work balance either (as --serial-gc)
--balanced   parallel GCs copied on more than one GC thread: the work balance is printed,
             above 0 (GHC's formula: balanced copied bytes / copied bytes, over the
             parallel GCs; rts/Stats.c, Note [Work Balance])
"""

import argparse
import ast
import os
import re
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(SRC, "docs", "stats.md")


class CheckError(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise CheckError(msg)


# ---------------------------------------------------------------------------------------------
# nofib: the expressions runstdtest/runstdtest.prl (process_stats_file) applies to `+RTS -s`
# output, in Python's syntax (the Perl ones carry over unchanged). nofib-analyse reads only
# what runstdtest extracts with these.

NOFIB = {
    "alloc": r"^\s*([0-9,]+) bytes allocated in the heap",
    "gcwork": r"^\s*([0-9,]+) bytes (copied during GC|globalised)",
    "totmem": r"^\s+([0-9]+)\s+M[Bb] total memory",
    "init": r"^\s*INIT\s+time\s*(-*\d+\.\d\d+)s\s*\(\s*(-*\d+\.\d\d+)s elapsed\)",
    "mut": r"^\s*MUT\s+time\s*(-*\d+\.\d\d+)s\s*\(\s*(-*\d+\.\d\d+)s elapsed\)",
    "mutgc0": r"^\s*MUT\+GC0\s+time\s*(-*\d+\.\d\d+)s\s*\(\s*(-*\d+\.\d\d+)s elapsed\)"
              r"\s+\(\s*(-*\d+\.\d\d+)s\s+MUT\s+\+\s+(-*\d+\.\d\d+)s\s+GC0",
    "gc": r"^\s*GC\s+time\s*(-*\d+\.\d\d+)s\s*\(\s*(-*\d+\.\d\d+)s elapsed\)",
    "gc1": r"^\s*GC1\s+time\s*(-*\d+\.\d\d+)s\s*\(\s*(-*\d+\.\d\d+)s elapsed\)",
    "generation": r"Generation (\d+):\s*(\d+) collections,\s*\d+ parallel,"
                  r"\s*(-*\d+\.\d\d+)s\s*,\s*(-*\d+\.\d\d+)s elapsed",
    "gen": r"^\s*Gen\s+(\d+)(.\d+)?\s*(\d+) colls,\s*(local|\d+\s*par)\s+(\d+\.\d+)s\s+(\d+\.\d+)s",
    "balance": r"work balance: ([0-9.]+)",
    # a -S line (nofib takes its third column as a residency sample, unless it says Gen: 0)
    "sline": r"^\s*\d+\s+\d+\s+(\d+)\s+\d+\.\d+",
    "counter": r"^\s+\(([A-Z_0-9]+)\)\s+:\s+([0-9,]+)",
}


def nofib_extract(lines):
    """runstdtest's process_stats_file, transcribed: returns what nofib would report."""
    r = {"GCWork": 0, "GCs": 0, "Gc0Count": 0, "Gc1Count": 0}
    for l in lines:
        m = re.search(NOFIB["sline"], l)
        if m and not re.search(r"Gen:\s+0", l):
            r.setdefault("live_samples", []).append(int(m.group(1)))
        m = re.search(NOFIB["alloc"], l)
        if m:
            r["BytesAlloc"] = int(m.group(1).replace(",", ""))
        m = re.search(NOFIB["gcwork"], l)
        if m:
            r["GCWork"] += int(m.group(1).replace(",", ""))
        m = re.search(NOFIB["totmem"], l)
        if m:
            r["TotMem"] = int(m.group(1))
        for key, name in (("init", "Init"), ("mut", "Mut"), ("gc", "Gc"), ("gc1", "Gc1")):
            m = re.search(NOFIB[key], l)
            if m:
                r[name + "Time"], r[name + "Elapsed"] = float(m.group(1)), float(m.group(2))
                break
        m = re.search(NOFIB["gen"], l)
        if m:
            g, n = int(m.group(1)), int(m.group(3))
            r["GCs"] += n
            r["Gc%dCount" % g] += n
            r["Gc%dTime" % g], r["Gc%dElapsed" % g] = float(m.group(5)), float(m.group(6))
        m = re.search(NOFIB["balance"], l)
        if m:
            r["Balance"] = float(m.group(1))
    return r


# ---------------------------------------------------------------------------------------------
# GHC's `-s` lines (rts/Stats.c, report_summary): each regular expression reads one line, and
# the line must equal GHC's printf format applied to what was read.

def commas(n):
    return "{:,}".format(n)


def ints(s):
    return int(s.replace(",", ""))


SUMMARY_LINES = [
    # (name, regex, rebuild(match) -> the line as GHC's format prints it)
    ("alloc", r"^\s*([0-9,]+) bytes allocated in the heap$",
     lambda m: "%16s bytes allocated in the heap" % commas(ints(m[1]))),
    ("copied", r"^\s*([0-9,]+) bytes copied during GC$",
     lambda m: "%16s bytes copied during GC" % commas(ints(m[1]))),
    ("residency", r"^\s*([0-9,]+) bytes maximum residency \(([0-9]+) sample\(s\)\)$",
     lambda m: "%16s bytes maximum residency (%d sample(s))" % (commas(ints(m[1])), int(m[2]))),
    ("memory", r"^\s*([0-9]+) MB total memory in use \(([0-9]+) MB lost due to fragmentation\)$",
     lambda m: "%16d MB total memory in use (%d MB lost due to fragmentation)"
               % (int(m[1]), int(m[2]))),
    ("gen_header", r"^\s+Tot time \(elapsed\)\s+Avg pause\s+Max pause$",
     lambda m: "                                     Tot time (elapsed)  Avg pause  Max pause"),
    ("gen0", r"^\s*Gen\s+(0)\s+([0-9]+) colls,\s+([0-9]+) par\s+([0-9.]+)s\s+([0-9.]+)s"
             r"\s+([0-9.]+)s\s+([0-9.]+)s$", None),
    ("gen1", r"^\s*Gen\s+(1)\s+([0-9]+) colls,\s+([0-9]+) par\s+([0-9.]+)s\s+([0-9.]+)s"
             r"\s+([0-9.]+)s\s+([0-9.]+)s$", None),
    ("balance", r"^\s*Parallel GC work balance: ([0-9.]+)% \(serial 0%, perfect 100%\)$",
     lambda m: "  Parallel GC work balance: %.2f%% (serial 0%%, perfect 100%%)" % float(m[1])),
    ("tasks", r"^\s*TASKS: ([0-9]+) \(([0-9]+) bound, ([0-9]+) peak workers \(([0-9]+) total\),"
              r" using -N([0-9]+)\)$",
     lambda m: "  TASKS: %d (%d bound, %d peak workers (%d total), using -N%d)"
               % tuple(int(m[i]) for i in range(1, 6))),
    ("init", r"^\s*INIT\s+time\s+([0-9.]+)s\s+\(\s*([0-9.]+)s elapsed\)$",
     lambda m: "  INIT    time  %7.3fs  (%7.3fs elapsed)" % (float(m[1]), float(m[2]))),
    ("mut", r"^\s*MUT\s+time\s+([0-9.]+)s\s+\(\s*([0-9.]+)s elapsed\)$",
     lambda m: "  MUT     time  %7.3fs  (%7.3fs elapsed)" % (float(m[1]), float(m[2]))),
    ("gc", r"^\s*GC\s+time\s+([0-9.]+)s\s+\(\s*([0-9.]+)s elapsed\)$",
     lambda m: "  GC      time  %7.3fs  (%7.3fs elapsed)" % (float(m[1]), float(m[2]))),
    ("exit", r"^\s*EXIT\s+time\s+([0-9.]+)s\s+\(\s*([0-9.]+)s elapsed\)$",
     lambda m: "  EXIT    time  %7.3fs  (%7.3fs elapsed)" % (float(m[1]), float(m[2]))),
    ("total", r"^\s*Total\s+time\s+([0-9.]+)s\s+\(\s*([0-9.]+)s elapsed\)$",
     lambda m: "  Total   time  %7.3fs  (%7.3fs elapsed)" % (float(m[1]), float(m[2]))),
    ("gcpct", r"^\s*%GC\s+time\s+([0-9.]+)%\s+\(([0-9.]+)% elapsed\)$",
     lambda m: "  %%GC     time     %5.1f%%  (%.1f%% elapsed)" % (float(m[1]), float(m[2]))),
    ("allocrate", r"^\s*Alloc rate\s+([0-9,]+) bytes per MUT second$",
     lambda m: "  Alloc rate    %s bytes per MUT second" % commas(ints(m[1]))),
    ("productivity", r"^\s*Productivity\s+([0-9.]+)% of total user, ([0-9.]+)% of total elapsed$",
     lambda m: "  Productivity %5.1f%% of total user, %.1f%% of total elapsed"
               % (float(m[1]), float(m[2]))),
]

OPTIONAL = {"balance"}


def rebuild_gen(m):
    return ("  Gen %2d     %5d colls, %5d par   %6.3fs  %6.3fs     %3.4fs    %3.4fs"
            % (int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5]), float(m[6]),
               float(m[7])))


def parse_summary(lines, args):
    """Checks GHC's -s lines; returns {name: match}."""
    found = {}
    for name, rx, rebuild in SUMMARY_LINES:
        hits = [(i, re.match(rx, l)) for i, l in enumerate(lines) if re.match(rx, l)]
        if name in OPTIONAL:
            check(len(hits) <= 1, "%s: %d lines match %r" % (name, len(hits), rx))
        else:
            check(len(hits) == 1, "%s: %d lines match %r, expected 1" % (name, len(hits), rx))
        if not hits:
            continue
        i, m = hits[0]
        want = (rebuild or rebuild_gen)(m)
        check(lines[i] == want, "%s: not in GHC's format:\n  got  %r\n  want %r"
              % (name, lines[i], want))
        found[name] = (i, m)
    # GHC's order
    order = [found[n][0] for n, _, _ in SUMMARY_LINES if n in found]
    check(order == sorted(order), "GHC's lines are out of order")

    f = lambda name, k: float(found[name][1][k])
    alloc = ints(found["alloc"][1][1])
    check(alloc > 0, "no bytes allocated")
    colls = [int(found["gen%d" % g][1][2]) for g in (0, 1)]
    par = [int(found["gen%d" % g][1][3]) for g in (0, 1)]
    check(sum(colls) == 0 if args.no_gc else sum(colls) >= 1,
          "%d GCs, %s" % (sum(colls), "expected none" if args.no_gc else "expected some"))
    for g in (0, 1):
        check(par[g] <= colls[g], "Gen %d: more par GCs than GCs" % g)
        if colls[g]:
            check(f("gen%d" % g, 7) >= f("gen%d" % g, 6), "Gen %d: max pause < avg pause" % g)
    check(int(found["residency"][1][2]) == colls[1], "residency samples != major GCs")
    for k in (1, 2):
        check(f("total", k) >= f("mut", k), "Total < MUT")
        parts = sum(f(n, k) for n in ("init", "mut", "gc", "exit"))
        check(abs(parts - f("total", k)) <= 0.0025,
              "INIT+MUT+GC+EXIT = %.3f != Total %.3f" % (parts, f("total", k)))
    check(abs(f("gen0", 4) + f("gen1", 4) - f("gc", 1)) <= 0.0015, "Gen CPU times != GC time")
    check(abs(f("gen0", 5) + f("gen1", 5) - f("gc", 2)) <= 0.0015, "Gen elapsed != GC elapsed")
    for k in (1, 2):
        check(0 <= f("productivity", k) <= 100.0, "productivity out of range")
        check(0 <= f("gcpct", k) <= 100.0, "%GC out of range")
    if args.caps:
        check(int(found["tasks"][1][5]) == args.caps, "not using -N%d" % args.caps)
    if args.serial_gc or args.no_gc:
        # GHC prints the line only when the balance is above 0 (report_summary)
        check(par == [0, 0], "a par GC with one GC thread")
        check("balance" not in found, "a work balance without parallel GCs")
    if args.balanced:
        check("balance" in found, "no work balance line after parallel GCs that copied")
    if "balance" in found:
        check(0 < float(found["balance"][1][1]) <= 100, "work balance out of range")
        check(sum(par) > 0, "a work balance without parallel GCs")

    # rtslab's spinlock table: acquisitions and spins per lock; a spin-wait never sleeps, so
    # no sleeps column (docs/stats.md, Spinlocks)
    heads = [i for i, l in enumerate(lines) if l.startswith("  Spinlocks:")]
    check(len(heads) == 1, "%d Spinlocks: tables, expected 1" % len(heads))
    check(lines[heads[0]] == "  Spinlocks:             acquired      spins",
          "Spinlocks: header %r" % lines[heads[0]])
    for l in lines[heads[0] + 1:heads[0] + 6]:
        check(re.match(r"^    \S.{21} [ \d]{11}\d [ \d]{9}\d$", l),
              "not a Spinlocks: row of acquisitions and spins: %r" % l)

    # nofib: every expression matches where GHC's line is, nothing of ours matches any
    counts = {k: sum(1 for l in lines if re.search(rx, l)) for k, rx in NOFIB.items()}
    want = {"alloc": 1, "gcwork": 1, "totmem": 1, "init": 1, "mut": 1, "mutgc0": 0, "gc": 1,
            "gc1": 0, "generation": 0, "gen": 2, "balance": 1 if "balance" in found else 0,
            "sline": 0, "counter": 0}
    for k in want:
        check(counts[k] == want[k], "nofib's %s expression matches %d lines, expected %d"
              % (k, counts[k], want[k]))
    nf = nofib_extract(lines)
    for k in ("BytesAlloc", "InitTime", "InitElapsed", "MutTime", "MutElapsed", "GcTime",
              "GcElapsed", "TotMem", "Gc0Time", "Gc0Elapsed", "Gc1Time", "Gc1Elapsed"):
        check(k in nf, "nofib would not find %s" % k)
    check(nf["BytesAlloc"] == alloc, "nofib reads another allocation")
    check(nf["GCs"] == sum(colls), "nofib counts %d GCs, expected %d" % (nf["GCs"], sum(colls)))
    check(nf["GCWork"] == ints(found["copied"][1][1]), "nofib reads other GC work")
    check(nf["MutTime"] == f("mut", 1) and nf["GcElapsed"] == f("gc", 2), "nofib reads other times")
    return found


# ---------------------------------------------------------------------------------------------
# --machine-readable and docs/stats.md

# The patches the program under test was built with (its --info), set by main: the keys that
# docs/stats.md lists between a patch's markers (<!-- {{patch:NAME --> ... <!-- }}patch:NAME
# -->) are expected exactly in builds with that patch.
BUILD_PATCHES = None


def build_patches(cmd):
    p = subprocess.run([cmd[0], "+RTS", "--info", "-RTS"], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    m = re.search(r'\("Patches","([^"]*)"\)', p.stdout)
    check(m is not None, "%s +RTS --info: no Patches" % cmd[0])
    return set(m.group(1).split()) - {"none"}


def doc_keys():
    """Key -> unit, from the table under '### Keys' in docs/stats.md (those of patches that
    the build lacks left out)."""
    keys = {}
    with open(DOCS) as fh:
        text = fh.read()
    section = text.split("### Keys", 1)
    check(len(section) == 2, "docs/stats.md has no '### Keys' section")
    patch, skipped = None, set()
    for line in section[1].splitlines():
        m = re.match(r"^\| `([^`]+)` \| ([^|]+?) \| (.+) \|$", line)
        pm = re.match(r"^<!-- (\{\{|\}\})patch:([a-z0-9-]+) -->$", line)
        if pm:
            patch = pm.group(2) if pm.group(1) == "{{" else None
        elif m:
            check(m.group(1) not in keys and m.group(1) not in skipped,
                  "docs/stats.md lists %s twice" % m.group(1))
            if patch is not None and BUILD_PATCHES is not None and patch not in BUILD_PATCHES:
                skipped.add(m.group(1))
            else:
                keys[m.group(1)] = m.group(2)
        elif line.startswith("## "):
            break
    check(len(keys) > 50, "docs/stats.md: only %d keys found" % len(keys))
    return keys


INT_UNITS = {"count", "bytes", "MiB", "bytes/s"}
FLOAT_UNITS = {"s", "fraction", "CPUs"}


def parse_machine_readable(lines, args):
    check(lines and lines[-1] == " ]", "the list does not end with ' ]'")
    for i, l in enumerate(lines[:-1]):
        rx = r'^ \[\("[^"\\]+", "[^"\\]*"\)$' if i == 0 else r'^ ,\("[^"\\]+", "[^"\\]*"\)$'
        check(re.match(rx, l), "line %d not in GHC's machine-readable format: %r" % (i + 1, l))
    pairs = ast.literal_eval("\n".join(lines))
    check(isinstance(pairs, list) and all(isinstance(p, tuple) and len(p) == 2
                                          and all(isinstance(x, str) for x in p) for p in pairs),
          "not a list of pairs of strings")
    d = dict(pairs)
    check(len(d) == len(pairs), "a key appears twice")

    docs = doc_keys()
    # {{patch:futex-barrier
    # the futex-barrier patch's keys (documented "(futex-barrier patch)"): all or none
    with open(DOCS) as fh:
        futex_keys = re.findall(r"^\| `([^`]+)` \|.*\(futex-barrier patch\) \|$", fh.read(), re.M)
    if not any(k in d for k in futex_keys):
        docs = {k: u for k, u in docs.items() if k not in futex_keys}
    # }}patch:futex-barrier
    missing = [k for k in docs if k not in d]
    undocumented = [k for k in d if k not in docs]
    check(not missing, "documented keys missing from the output: %s" % missing)
    check(not undocumented, "keys not documented in docs/stats.md: %s" % undocumented)
    v = {}
    for k, unit in docs.items():
        if unit in INT_UNITS:
            check(re.match(r"^[0-9]+$", d[k]), "%s (%s): not an integer: %r" % (k, unit, d[k]))
            v[k] = int(d[k])
        elif unit in FLOAT_UNITS:
            check(re.match(r"^[0-9]+\.[0-9]{6}$", d[k]), "%s (%s): not %%f: %r" % (k, unit, d[k]))
            v[k] = float(d[k])
        else:
            raise CheckError("docs/stats.md: %s has an unknown unit %r" % (k, unit))

    eps = 2e-6
    check(v["bytes allocated"] > 0 and v["bytes allocated"] == v["allocated_bytes"],
          "bytes allocated")
    check(v["num_GCs"] == v["gen_0_collections"] + v["gen_1_collections"], "num_GCs")
    check(v["num_GCs"] == 0 if args.no_gc else v["num_GCs"] >= 1, "num_GCs")
    check(v["major_gcs"] == v["gen_1_collections"] == v["num_byte_usage_samples"], "major GCs")
    check(v["max_bytes_used"] == v["max_live_bytes"], "max_bytes_used")
    check(v["average_bytes_used"] <= v["max_bytes_used"], "average_bytes_used")
    check(v["peak_megabytes_allocated"] == v["max_mem_in_use_bytes"] // 2**20, "peak MiB")
    check(v["mut_cpu_seconds"] == v["mutator_cpu_seconds"]
          and v["mut_wall_seconds"] == v["mutator_wall_seconds"], "mutator aliases")
    for kind in ("cpu", "wall"):
        total = v["total_%s_seconds" % kind]
        check(total + eps >= v["mut_%s_seconds" % kind], "total < mutator (%s)" % kind)
        parts = sum(v["%s_%s_seconds" % (p, kind)] for p in ("init", "mut", "GC", "exit"))
        check(abs(parts - total) <= 5 * eps, "INIT+MUT+GC+EXIT != total (%s)" % kind)
        gens = v["gen_0_%s_seconds" % kind] + v["gen_1_%s_seconds" % kind]
        check(abs(gens - v["GC_%s_seconds" % kind]) <= 3 * eps, "gen times != GC (%s)" % kind)
    for g in (0, 1):
        check(v["gen_%d_par_collections" % g] <= v["gen_%d_collections" % g], "par > colls")
        check(v["gen_%d_max_pause_seconds" % g] + eps >= v["gen_%d_avg_pause_seconds" % g],
              "max pause < avg pause")
    for k in ("gc_cpu_percent", "gc_wall_percent", "productivity_cpu_percent",
              "productivity_wall_percent", "work_balance"):
        check(0 <= v[k] <= 1, "%s out of [0,1]" % k)
    check(v["cumulative_par_max_copied_bytes"] <= v["par_copied_bytes"] <= v["copied_bytes"],
          "copied bytes")
    check(v["cumulative_par_balanced_copied_bytes"] <= v["par_copied_bytes"], "balanced bytes")
    # GHC's work balance (stat_exitReport, rts/Stats.c): balanced / copied, over the parallel
    # GCs, 0 when they copied nothing; printed with %f
    want = (v["cumulative_par_balanced_copied_bytes"] / v["par_copied_bytes"]
            if v["par_copied_bytes"] else 0.0)
    check(abs(v["work_balance"] - want) <= 5e-7 + 1e-12,
          "work_balance %f, but cumulative_par_balanced_copied_bytes / par_copied_bytes = %f"
          % (v["work_balance"], want))
    if args.caps:
        check(v["n_capabilities"] == args.caps, "n_capabilities")
    if args.serial_gc or args.no_gc:
        check(v["gen_0_par_collections"] == v["gen_1_par_collections"] == 0, "par GCs")
        check(v["par_copied_bytes"] == v["cumulative_par_balanced_copied_bytes"] == 0
              and v["work_balance"] == 0, "parallel copying")
    if args.balanced:
        check(v["work_balance"] > 0, "work_balance 0 after parallel GCs that copied")
    check(v["rtslab_stw_syncs"] >= v["num_GCs"], "fewer syncs than GCs")
    check(v["rtslab_stw_max_seconds"] + eps >= v["rtslab_stw_mean_seconds"], "stw max < mean")
    check(v["rtslab_os_context_switches"] == v["rtslab_os_voluntary_context_switches"]
          + v["rtslab_os_involuntary_context_switches"], "context switches")
    return v


# ---------------------------------------------------------------------------------------------
# -S

S_HEADER = [
    "    Alloc    Copied     Live     GC     GC      TOT      TOT  Page Flts"
    "              Kind     Pause       STW Thr  Balance",
    "    bytes     bytes     bytes   user   elap     user     elap"
    "                                   (s)       (s)          (%)",
]
S_LINE = (r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+(\d+\.\d{3})\s+(\d+\.\d{3})"
          r"\s+(-|\d+)\s+(\d+)  \(Gen: +([01])\)  (minor|major)\s+(\d+\.\d{6})\s+(\d+\.\d{6})"
          r"\s+(\d+)\s+(-|\d+\.\d)$")


def rebuild_s_line(m):
    return ("%9d %9d %9d %6.3f %6.3f %8.3f %8.3f %4s %4d  (Gen: %2d)  %5s %9.6f %9.6f %3d %8s"
            % (int(m[1]), int(m[2]), int(m[3]), float(m[4]), float(m[5]), float(m[6]),
               float(m[7]), m[8], int(m[9]), int(m[10]), m[11], float(m[12]), float(m[13]),
               int(m[14]), m[15]))


def parse_verbose(lines, args, machine):
    check(lines[:2] == S_HEADER, "-S header:\n  got  %r\n  want %r" % (lines[:2], S_HEADER))
    start = next((i for i, l in enumerate(lines) if l.startswith(" [(")
                  or "bytes allocated in the heap" in l), None)
    check(start is not None, "no summary after the per-GC lines")
    gcs = []
    for l in lines[2:start]:
        m = re.match(S_LINE, l)
        check(m, "not a per-GC line: %r" % l)
        check(l == rebuild_s_line(m), "per-GC line not in format:\n  got  %r\n  want %r"
              % (l, rebuild_s_line(m)))
        check(re.search(NOFIB["sline"], l), "nofib would not read this -S line: %r" % l)
        gcs.append(m)
    rest = lines[start:]
    if machine:
        v = parse_machine_readable(rest, args)
        colls = [v["gen_0_collections"], v["gen_1_collections"]]
        copied, max_live = v["copied_bytes"], v["max_live_bytes"]
        caps, gc_wall = v["n_capabilities"], v["GC_wall_seconds"]
    else:
        found = parse_summary(rest, args)
        colls = [int(found["gen%d" % g][1][2]) for g in (0, 1)]
        copied, max_live = ints(found["copied"][1][1]), ints(found["residency"][1][1])
        caps, gc_wall = int(found["tasks"][1][5]), float(found["gc"][1][2])
    check(len(gcs) == sum(colls), "%d per-GC lines, but the summary counts %d GCs"
          % (len(gcs), sum(colls)))
    check(sum(1 for m in gcs if m[10] == "1") == colls[1], "major GC lines != Gen 1 colls")
    if machine:
        # each GC's Balance is its balanced / copied bytes, in percent to 0.1: weighted by
        # what each copied they add up to the run's balanced bytes, within the rounding
        par = [m for m in gcs if m[15] != "-"]
        balanced = sum(float(m[15]) / 100 * int(m[2]) for m in par)
        slack = sum(0.0005 * int(m[2]) for m in par) + 1
        check(abs(balanced - v["cumulative_par_balanced_copied_bytes"]) <= slack,
              "Balance column x Copied adds up to %.0f bytes, cumulative_par_balanced_copied"
              "_bytes is %d" % (balanced, v["cumulative_par_balanced_copied_bytes"]))
    check(sum(int(m[2]) for m in gcs) == copied, "Copied column does not add up to bytes copied")
    check(max([int(m[3]) for m in gcs if m[10] == "1"], default=0) == max_live,
          "largest Live after a major GC != maximum residency")
    pauses = sum(float(m[12]) for m in gcs)
    check(abs(pauses - gc_wall) <= 1e-6 * (len(gcs) + 2) + (0.0015 if not machine else 0),
          "Pause column adds up to %.6f, GC elapsed is %.6f" % (pauses, gc_wall))
    prev = (0.0, 0.0)
    for m in gcs:
        check((m[10] == "1") == (m[11] == "major"), "Kind does not match Gen")
        check(float(m[13]) <= float(m[12]) + 1e-6, "STW longer than the pause")
        thr = int(m[14])
        check(1 <= thr <= caps, "GC threads %d out of 1..%d" % (thr, caps))
        if args.serial_gc:
            check(thr == 1, "a GC with %d threads under --serial-gc" % thr)
        if thr == 1 or int(m[2]) == 0:
            check(m[15] == "-", "a balance for a serial or empty GC")
        else:
            check(m[15] != "-" and 0 <= float(m[15]) <= 100, "balance out of range")
        tot = (float(m[6]), float(m[7]))
        check(tot[0] >= prev[0] and tot[1] >= prev[1], "TOT columns go backwards")
        prev = tot
    return len(gcs)


# ---------------------------------------------------------------------------------------------

def run(cmd, rts):
    full = cmd + ["+RTS"] + rts + ["-RTS"]
    p = subprocess.run(full, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    check(p.returncode == 0, "%s exited with %d:\n%s" % (" ".join(full), p.returncode, p.stderr))
    return p


def body(text):
    lines = text.splitlines()
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["summary", "sstderr", "file", "machine", "verbose",
                                     "verbose-mr"])
    ap.add_argument("--caps", type=int)
    ap.add_argument("--serial-gc", action="store_true")
    ap.add_argument("--no-gc", action="store_true")
    ap.add_argument("--balanced", action="store_true")
    argv = sys.argv[1:]
    if "--" not in argv or argv.index("--") == len(argv) - 1:
        ap.error("no program after --")
    split = argv.index("--")
    args = ap.parse_args(argv[:split])
    cmd = argv[split + 1:]
    global BUILD_PATCHES
    try:
        BUILD_PATCHES = build_patches(cmd)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "stats.out")
            if args.mode in ("summary", "sstderr"):
                p = run(cmd, ["-s" if args.mode == "summary" else "-sstderr"])
                parse_summary(body(p.stderr), args)
            elif args.mode == "file":
                with open(path, "w") as fh:
                    fh.write("stale contents\n" * 100)
                p = run(cmd, ["-s" + path])
                check("bytes allocated" not in p.stderr, "-s<file> printed on stderr too")
                with open(path) as fh:
                    text = fh.read()
                check("stale contents" not in text, "-s<file> did not truncate the file")
                parse_summary(body(text), args)
            elif args.mode == "machine":
                p = run(cmd, ["-s", "--machine-readable"])
                parse_machine_readable(body(p.stderr), args)
            elif args.mode == "verbose":
                p = run(cmd, ["-S"])
                n = parse_verbose(body(p.stderr), args, machine=False)
                print("%d per-GC lines" % n)
            else:
                p = run(cmd, ["-S" + path, "--machine-readable"])
                check("bytes allocated" not in p.stderr, "-S<file> printed on stderr too")
                with open(path) as fh:
                    n = parse_verbose(body(fh.read()), args, machine=True)
                print("%d per-GC lines" % n)
    except CheckError as e:
        print("check_stats %s: %s" % (args.mode, e), file=sys.stderr)
        return 1
    print("stats ok: %s" % args.mode)
    return 0


if __name__ == "__main__":
    sys.exit(main())
