#!/usr/bin/env python3
"""A local user hogging sunkd's socket (integration tests).

Usage: socket-hog.py SOCKET DIR [probe]

With probe: prints "answered" or "refused" for one connection and exits.
Otherwise opens connections, each proven accepted by a Ping answered on it, until one
is refused (closed without an answer); then tries EXTRA more, all expected
refused, and writes the number held to DIR/held.  Once DIR/go exists it trickles
one byte of a never-finished request on every held connection each
TRICKLE seconds.  When the daemon closes a trickled connection, the seconds
since its first trickled byte go to DIR/deadline.  Runs until killed.
"""
import os
import socket
import sys
import time

EXTRA = 20
TRICKLE = 0.25
PING = b'{"method":"io.sunkd.Agent.Ping"}\0'


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def answered(s):
    """True after a Ping answered on s, False if the daemon closed it."""
    s.sendall(PING)
    buf = b""
    while b"\0" not in buf:
        chunk = s.recv(4096)
        if not chunk:
            return False
        buf += chunk
    return True


def open_one(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    try:
        if answered(s):
            return s
    except (ConnectionResetError, BrokenPipeError):
        pass
    s.close()
    return None


def main():
    path, out = sys.argv[1], sys.argv[2]
    if sys.argv[3:] == ["probe"]:
        print("answered" if open_one(path) else "refused")
        return
    held = []
    while True:
        s = open_one(path)
        if s is None:
            break
        held.append(s)
    refused_more = sum(1 for _ in range(EXTRA) if open_one(path) is None)
    write(os.path.join(out, "held"), "%d %d\n" % (len(held), refused_more))

    while not os.path.exists(os.path.join(out, "go")):
        time.sleep(0.05)
    started = {}
    while held:
        for s in list(held):
            started.setdefault(s, time.monotonic())
            try:
                s.send(b"{")
                s.setblocking(False)
                closed = s.recv(1) == b""
            except BlockingIOError:
                closed = False
            except (ConnectionResetError, BrokenPipeError):
                closed = True
            finally:
                s.setblocking(True)
            if closed:
                if not os.path.exists(os.path.join(out, "deadline")):
                    write(os.path.join(out, "deadline"), "%.1f\n" % (time.monotonic() - started[s]))
                held.remove(s)
                s.close()
        time.sleep(TRICKLE)


main()
