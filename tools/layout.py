#!/usr/bin/env python3
"""Links an rtslab binary with a seeded code and data layout and the same code
(Note [Code layout as a factor]).

    make rtslab-layout LAYOUT_SEED=N     # in a build directory: layouts/rtslab-N and .map
    make rtslab-layout LAYOUT_SEED=N LAYOUT_PROGRAM=bench/micro/NAME   # a microbenchmark
    python3 tools/layout.py link --seed N --out PATH --cc CC --objects OBJ... \
                                 --libs LIBS -- LINK...

`make rtslab-layout` calls `link` with the build's objects (the program's own, e.g.
runtime/main/main.o, and every object of librtslab.a) and its link command; nothing is
compiled again. The runners take
layouts through binaries(): `bench.py --layouts K` links seeds 1..K of every variant.

Note [Code layout as a factor]
A 32-byte shift of one GC loop moved a GC-bound program by 40-75 % with identical code
(gc/deep-stack: the loop of evac_range straddled two cache lines after a patch's code,
linked before evac.o, moved it by 0x360 bytes). Where code and data land is
decided by the link and differs between any two builds, so one binary per configuration
measures one draw of an uncontrolled factor (Mytkowicz et al., ASPLOS 2009). As Kalibera and
Jones (ISMM 2013) prescribe, the runners make the layout a level of random repetition:
each configuration is linked K ways and its runs spread over the K binaries.

A layout with seed N is:
  - the objects in an order shuffled by a PRNG seeded with N (main.o among them);
  - before each object and after the last, a padding object the same PRNG sizes: text
    0..4080 bytes in steps of 16 (an object's text is 16-byte aligned, so every hot loop can
    land at each offset of its cache line and anywhere in its page), and rodata, data and
    bss 0..4088 bytes in steps of 8 (global variables of different modules share or leave a
    cache line by chance, as they do between real builds).
Function order within an object is left as the compiler emits it: shuffling it would need
-ffunction-sections (a rebuild) and a linker that orders sections. Objects' own offsets are
enough for the effect this answers; two loops in one object keep their relative alignment.
The padding is never executed or read. The map, PATH.map, lists the order and the pads.
Python's random.Random(N) is stable across versions for randrange and shuffle, so a seed
names one layout of a given set of objects.
"""
import argparse
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TEXT_PAD = (0, 4096, 16)     # randrange arguments: bytes of text before an object
DATA_PAD = (0, 4096, 8)      # of rodata, data and bss


class LayoutError(Exception):
    pass


def plan(seed, objects):
    """[(pads, object)] in link order, then the pads after the last object (object None):
    pads is {section: bytes}."""
    rng = random.Random(seed)
    order = list(objects)
    rng.shuffle(order)
    out = []
    for obj in order + [None]:
        pads = {"text": rng.randrange(*TEXT_PAD)}
        for sec in ("rodata", "data", "bss"):
            pads[sec] = rng.randrange(*DATA_PAD)
        out.append((pads, obj))
    return out


def pad_source(pads):
    """Assembly for one padding object. Only the pads' sizes matter; the text pad is traps
    (0xcc on x86-64) or zero elsewhere, never reached."""
    fill = "0xcc" if os.uname().machine in ("x86_64", "i686", "i386") else "0"
    return "\n".join([
        '\t.section .text,"ax",@progbits', f"\t.skip {pads['text']}, {fill}",
        '\t.section .rodata,"a",@progbits', f"\t.skip {pads['rodata']}",
        '\t.section .data,"aw",@progbits', f"\t.skip {pads['data']}",
        '\t.section .bss,"aw",@nobits', f"\t.skip {pads['bss']}",
        '\t.section .note.GNU-stack,"",@progbits', ""])


def up_to_date(out, objects, cmd_line):
    """OUT is newer than every object and was linked by the same command from the same
    objects (its map says)."""
    try:
        t = os.path.getmtime(out)
        with open(out + ".map", encoding="utf-8") as f:
            f.readline()
            same = f.readline().rstrip("\n") == "# " + cmd_line
    except OSError:
        return False
    return same and all(os.path.getmtime(o) < t for o in objects)


def members_used(link_cmd, own, archive, library_objects, libs, tmp):
    """The objects of LIBRARY_OBJECTS that the ordinary link of OWN with ARCHIVE pulls in (the
    linker's map names each archive member it took): a layout links the same code as the
    program, not every object of the library. All of them when the map says nothing (a
    linker without -Map)."""
    mapfile = os.path.join(tmp, "probe.map")
    cmd = link_cmd + ["-o", os.path.join(tmp, "probe"), *own, archive, *libs,
                      f"-Wl,-Map={mapfile}"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise LayoutError(f"the ordinary link failed: {shlex.join(cmd)}\n{r.stderr}")
    name = re.escape(os.path.basename(archive))
    try:
        with open(mapfile, encoding="utf-8", errors="replace") as f:
            taken = set(re.findall(rf"^{name}\(([^)]+)\)", f.read(), re.M))
    except OSError:
        taken = set()
    if not taken:
        return list(library_objects)
    return [o for o in library_objects if os.path.basename(o) in taken]


def link(seed, out, cc, objects, link_cmd, libs):
    """Links OUT from OBJECTS in seed's layout: LINK_CMD (the compiler driver and its flags),
    -o OUT, the objects with their padding, then LIBS. Writes OUT.map; does nothing when OUT
    is newer than the objects and was linked by the same command."""
    if not objects:
        raise LayoutError("no objects to link")
    missing = [o for o in objects if not os.path.exists(o)]
    if missing:
        raise LayoutError(f"no object {missing[0]} (build the binary first)")
    cmd_line = shlex.join(link_cmd + ["-o", out] + sorted(objects) + libs)
    if up_to_date(out, objects, cmd_line):
        return out
    layout = plan(seed, objects)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="rtslab-layout-") as tmp:
        argv = []
        for i, (pads, obj) in enumerate(layout):
            s = os.path.join(tmp, f"pad{i}.s")
            o = os.path.join(tmp, f"pad{i}.o")
            with open(s, "w", encoding="utf-8") as f:
                f.write(pad_source(pads))
            r = subprocess.run(shlex.split(cc) + ["-c", "-o", o, s], capture_output=True,
                               text=True)
            if r.returncode:
                raise LayoutError(f"assembling a padding object failed:\n{r.stderr}")
            argv.append(o)
            if obj:
                argv.append(obj)
        # Linked beside OUT and renamed over it, the map first: a program running OUT, or
        # another link of the same seed at the same time, never sees half a file (a run
        # keeps the old inode); a map newer than its binary only makes up_to_date relink.
        part = f"{out}.{os.getpid()}.part"
        cmd = link_cmd + ["-o", part] + argv + libs
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            if os.path.exists(part):
                os.unlink(part)
            raise LayoutError(f"linking layout {seed} failed: {shlex.join(cmd)}\n{r.stderr}")
        with open(part + ".map", "w", encoding="utf-8") as f:
            f.write(f"# layout seed {seed}: link order, with the padding before each object\n")
            f.write(f"# {cmd_line}\n")
            f.write("# text rodata data bss (bytes)  object\n")
            for pads, obj in layout:
                f.write(f"{pads['text']:5} {pads['rodata']:5} {pads['data']:5} {pads['bss']:5}  "
                        f"{obj or '(end)'}\n")
        os.replace(part + ".map", out + ".map")
        os.replace(part, out)
    return out


def program_objects(table):
    """{program: [objects]} from 'PROGRAM:OBJ OBJ PROGRAM:OBJ ...' (Makefile.am's
    LAYOUT_OBJECTS; an object never holds a colon)."""
    out, current = {}, None
    for word in table.split():
        if ":" in word:
            current, _, obj = word.partition(":")
            out[current] = [obj] if obj else []
        elif current:
            out[current].append(word)
    return out


def path(bdir, seed, program="rtslab"):
    return os.path.join(bdir, "layouts", f"{program}-{seed}")


def binaries(bdir, seeds, log=None, program="rtslab"):
    """{seed: binary} for build directory BDIR: each layout of PROGRAM (rtslab or
    bench/micro/NAME) linked by `make rtslab-layout` (again only when an object changed
    since). Raises LayoutError."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    out = {}
    for seed in seeds:
        target = path(bdir, seed, program)
        r = subprocess.run(["make", "--no-print-directory", "rtslab-layout",
                            f"LAYOUT_SEED={seed}", f"LAYOUT_PROGRAM={program}"], cwd=bdir,
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise LayoutError(f"`make rtslab-layout LAYOUT_SEED={seed}` failed in {bdir} (a "
                              f"build of a revision older than layouts has no such target):\n"
                              f"{r.stdout[-2000:]}")
        if log:
            log(f"  layout {seed}: {target}")
        out[seed] = target
    return out


def spread(bdir, program, k, log=None):
    """An experiment's binaries of PROGRAM (rtslab or bench/micro/NAME) in build directory
    BDIR: [(seed, path)] -- K layouts (seeds 1..K), or with K = 0 the build's own program
    as seed 0. Repetition i of a configuration runs entry i % len(...), so its repetitions
    spread evenly over the layouts (Note [Code layout as a factor]). Raises LayoutError."""
    if k <= 0:
        return [(0, os.path.join(bdir, program))]
    return sorted(binaries(bdir, range(1, k + 1), log=log, program=program).items())


def spread_copies(bdir, program, k, into, tag, log=None):
    """spread(), each binary copied to directory INTO as rtslab-TAG-SEED, so that a rebuild
    during an experiment cannot change what it runs: [(seed, copy)]. Raises LayoutError."""
    out = []
    for seed, binary in spread(bdir, program, k, log=log):
        out.append((seed, os.path.join(into, f"rtslab-{tag}-{seed}")))
        shutil.copy(binary, out[-1][1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    ln = sub.add_parser("link", help="link one layout")
    ln.add_argument("--seed", type=int, required=True)
    ln.add_argument("--out", required=True)
    ln.add_argument("--cc", required=True, help="the compiler that assembles the padding")
    ln.add_argument("--objects", nargs="+", required=True,
                    help="the objects to link (the library's)")
    ln.add_argument("--program", default=None,
                    help="the program whose own objects join --objects (--program-objects)")
    ln.add_argument("--program-objects", default="",
                    help="'PROGRAM:OBJ... PROGRAM:OBJ...': each program's own objects")
    ln.add_argument("--archive", default=None,
                    help="the library the --objects make up: only the members an ordinary "
                         "link of --program takes are linked")
    ln.add_argument("--libs", default="", help="what the link command takes after the objects")
    ln.add_argument("link", nargs=argparse.REMAINDER,
                    help="-- then the link command (the compiler driver and its flags)")
    sh = sub.add_parser("plan", help="print a seed's layout of OBJECTS")
    sh.add_argument("--seed", type=int, required=True)
    sh.add_argument("objects", nargs="+")
    a = ap.parse_args()
    try:
        if a.cmd == "plan":
            for pads, obj in plan(a.seed, a.objects):
                print(f"{pads['text']:5} {pads['rodata']:5} {pads['data']:5} {pads['bss']:5}  "
                      f"{obj or '(end)'}")
            return 0
        cmd = a.link[1:] if a.link[:1] == ["--"] else a.link
        if not cmd:
            ap.error("link: give the link command after --")
        if a.seed < 0:
            ap.error("link: --seed must be 0 or more")
        objects, libs = list(a.objects), shlex.split(a.libs)
        if a.program:
            own = program_objects(a.program_objects).get(a.program)
            if not own:
                raise LayoutError(f"no program '{a.program}' in the layout table (Makefile.am's "
                                  f"LAYOUT_OBJECTS: rtslab and bench/micro/NAME)")
            if a.archive:
                with tempfile.TemporaryDirectory(prefix="rtslab-layout-") as tmp:
                    objects = members_used(cmd, own, a.archive, objects, libs, tmp)
            objects = own + objects
        link(a.seed, a.out, a.cc, objects, cmd, libs)
    except LayoutError as e:
        print(f"layout: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
