#!/usr/bin/env python3
"""A TCP proxy on 127.0.0.1 that cuts connections mid-answer.

cut-proxy.py UPSTREAM_PORT CUT_BYTES CUT_CONNECTIONS PORT_FILE

Forwards each connection to 127.0.0.1:UPSTREAM_PORT; the first
CUT_CONNECTIONS connections are closed (both ways) once CUT_BYTES bytes came
back from upstream, the later ones are forwarded whole.  Writes its port to
PORT_FILE once listening and appends one line per connection to
PORT_FILE.log ("cut" or "whole").
"""
import socket
import sys
import threading

upstream, cut_bytes, cut_conns, port_file = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
lock = threading.Lock()
count = 0


def pump(src, dst, limit, done):
    sent = 0
    try:
        while True:
            data = src.recv(4096)
            if not data:
                break
            if limit is not None and sent + len(data) >= limit:
                dst.sendall(data[: limit - sent])
                break
            dst.sendall(data)
            sent += len(data)
    except OSError:
        pass
    done.set()


def handle(client, cut):
    server = socket.create_connection(("127.0.0.1", upstream))
    done = threading.Event()
    threading.Thread(target=pump, args=(client, server, None, done), daemon=True).start()
    threading.Thread(target=pump, args=(server, client, cut_bytes if cut else None, done), daemon=True).start()
    done.wait()
    for s in (client, server):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % listener.getsockname()[1])
import os
os.rename(port_file + ".tmp", port_file)
while True:
    c, _ = listener.accept()
    with lock:
        count += 1
        cut = count <= cut_conns
    with open(port_file + ".log", "a") as f:
        f.write("cut\n" if cut else "whole\n")
    threading.Thread(target=handle, args=(c, cut), daemon=True).start()
