#!/usr/bin/env python3
"""A NOTIFY_SOCKET listener: records every sd_notify datagram, one per line.

Usage: notify-listen.py SOCKET OUTFILE   (runs until killed)
"""
import os
import socket
import sys

path, out = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
with open(out, "a", buffering=1) as f:
    while True:
        data = s.recv(4096).decode(errors="replace")
        f.write(data.replace("\n", " ") + "\n")
