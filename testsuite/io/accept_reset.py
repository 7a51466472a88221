#!/usr/bin/env python3
"""tcp-accept of a connection reset before it was accepted (issue 45, item 3).

    python3 accept_reset.py BUILD BACKEND [valgrind]

runs accept_reset.scm (+RTS --io-manager=BACKEND), connects to the port it prints, resets the
connection (SO_LINGER 0, then close) and only then lets the program accept it; prints what
the program printed, whose errors name the accepted port. With `valgrind`, runs the program
under valgrind's memcheck and prints its error summary (not a make-check test: minutes)."""
import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    build, backend = sys.argv[1], sys.argv[2]
    cmd = [os.path.join(build, "rtslab"), os.path.join(HERE, "accept_reset.scm"),
           "+RTS", f"--io-manager={backend}", "-RTS"]
    if sys.argv[3:] == ["valgrind"]:
        cmd = ["valgrind", "--error-exitcode=99", "-q"] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(p.stdout.readline())
    s = socket.create_connection(("127.0.0.1", port))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()                                   # a reset, before the accept
    time.sleep(0.1)
    out, _ = p.communicate("go\n", timeout=300)
    print(out, end="")
    print(f"exit {p.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
