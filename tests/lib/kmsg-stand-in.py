#!/usr/bin/env python3
"""Write /dev/kmsg records to a stand-in (a FIFO) as the kernel hands them:
"prio,seq,usec,flags;message\n", usec on CLOCK_MONOTONIC as the kernel stamps.

  kmsg-stand-in.py PATH record SEQ MESSAGE   one record, stamped now
  kmsg-stand-in.py PATH raw TEXT             TEXT's bytes as they are (no newline added)
  kmsg-stand-in.py PATH storm SEQ N BUS XID  N records of XID on BUS from SEQ on,
                                             stamped over the last second
"""
import os
import sys
import time


def stamp():
    return int(time.monotonic() * 1e6)


def main():
    path, verb, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if verb == "record":
        data = "3,%d,%d,-;%s\n" % (int(args[0]), stamp(), args[1])
    elif verb == "raw":
        data = os.fsdecode(os.fsencode(args[0]))
    elif verb == "storm":
        first, n, bus, xid = int(args[0]), int(args[1]), args[2], int(args[3])
        start = stamp() - 1000000
        step = 1000000 // n or 1
        data = "".join("3,%d,%d,-;NVRM: Xid (PCI:%s): %d, pid=%d, name=python3, Ch %08x\n"
                       % (first + i, start + i * step, bus, xid, 4000 + i % 64, i % 16) for i in range(n))
    else:
        sys.exit("unknown verb " + verb)
    with open(path, "wb") as f:
        f.write(os.fsencode(data))


if __name__ == "__main__":
    main()
