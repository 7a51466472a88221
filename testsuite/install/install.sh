#!/bin/sh
# make install into a temporary DESTDIR, then: the files are where configure's directories
# say; a program embedding the runtime builds against them with pkg-config (rtslab.pc) and
# runs; `make uninstall` removes every file install put there.
#     sh install.sh SRCDIR BUILDDIR
# Run by make check (testsuite/install/TESTS) in the build directory, which must be built.
set -eu
src=$1 build=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rtslab-install.XXXXXX")
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
dest=$tmp/dest
# MAKEFLAGS of the make check that runs this would pass -j and the jobserver on.
env -u MAKEFLAGS -u MFLAGS make -C "$build" --no-print-directory install DESTDIR="$dest" \
    >"$tmp/install.log" 2>&1 || { cat "$tmp/install.log" >&2; echo "make install failed" >&2; exit 1; }
# rtslab.pc says where the library and the headers are: they must be there.
pc=$(cd "$dest" && find . -name rtslab.pc -path '*/pkgconfig/*')
test -n "$pc" || { echo "make install did not install rtslab.pc" >&2; exit 1; }
export PKG_CONFIG_PATH="$dest/${pc%/rtslab.pc}" PKG_CONFIG_SYSROOT_DIR="$dest"
libdir=$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=libdir rtslab)
includedir=$(PKG_CONFIG_SYSROOT_DIR= pkg-config --variable=includedir rtslab)
for f in "$libdir/librtslab.a" "$includedir/rtslab/rtslab.h" "$includedir/rtslab/rtslab_config.h"; do
    test -f "$dest$f" || { echo "rtslab.pc names $f, which make install did not install" >&2; exit 1; }
done
test -n "$(cd "$dest" && find . -path '*/bin/rtslab' -type f)" ||
    { echo "make install did not install the rtslab driver" >&2; exit 1; }
echo "installed: $(cd "$dest" && find . -type f | wc -l) files"
# pkg-config reads rtslab.pc from DESTDIR; its paths name the final prefix, so the sysroot
# (PKG_CONFIG_SYSROOT_DIR, above) puts DESTDIR in front of them, as for a staged install.
# The compiler the build used (a sanitized build's library needs its sanitizer runtime, which
# rtslab.pc's Libs names, and that compiler's).
cc=$(sed -n 's/^CC = //p' "$build/Makefile")
cflags=$(pkg-config --cflags rtslab) libs=$(pkg-config --libs rtslab)
${cc:-cc} $cflags -o "$tmp/embed" "$src/testsuite/install/embed.c" $libs
"$tmp/embed" +RTS -A64k -RTS
env -u MAKEFLAGS -u MFLAGS make -C "$build" --no-print-directory uninstall DESTDIR="$dest" \
    >"$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log" >&2; echo "make uninstall failed" >&2; exit 1; }
left=$(cd "$dest" && find . -type f)
if [ -n "$left" ]; then
    echo "make uninstall left files behind:" >&2
    echo "$left" >&2
    exit 1
fi
echo "uninstalled: nothing left"
