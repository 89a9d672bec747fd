#!/usr/bin/env python3
"""Trace PID and hold it until killed: ptrace-hold.py PID READY_FILE.

A process killed while another one traces it stays a zombie that only the
tracer may reap, so its parent cannot reap it: from sunkd's side, a child
that outlives SIGKILL, as one stuck in the kernel does.  READY_FILE is
created once the trace is on."""
import ctypes
import os
import signal
import sys

PTRACE_SEIZE = 0x4206

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
if libc.ptrace(PTRACE_SEIZE, int(sys.argv[1]), None, None) != 0:
    sys.exit("ptrace-hold: cannot trace %s: %s" % (sys.argv[1], os.strerror(ctypes.get_errno())))
with open(sys.argv[2], "w") as f:
    f.write("traced\n")
while True:
    signal.pause()
