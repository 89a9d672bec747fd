#!/usr/bin/env python3
"""Checks nsscache index files against their cache file, in bytes.

Usage: nss-index-check.py CACHE SUFFIX:FIELD...   e.g. /etc/passwd.cache ixname:0 ixuid:2
Every record of CACHE.SUFFIX must name the byte offset of the start of a line
of CACHE whose FIELD (colon-separated, from 0) is the record's key, and all
records must have the same length (libnss-cache bisects fixed-width records).
libnss-cache itself skips an unparsable line after a seek, so an offset a few
bytes short still finds the entry: getent alone cannot show the offsets are
bytes.  Prints one line per fault; exits 1 if there was any.
"""
import sys


def check(cache, suffix, field):
    data = open(cache, "rb").read()
    faults = []
    records = open("%s.%s" % (cache, suffix), "rb").read().split(b"\n")
    if records[-1] != b"":
        faults.append("%s.%s: does not end with a newline" % (cache, suffix))
    records = records[:-1]
    if len({len(r) for r in records}) > 1:
        faults.append("%s.%s: records of different lengths %s" % (cache, suffix, sorted({len(r) for r in records})))
    for rec in records:
        parts = rec.split(b"\0")
        if len(parts) < 2 or not parts[1].isdigit():
            faults.append("%s.%s: malformed record %r" % (cache, suffix, rec))
            continue
        key, off = parts[0], int(parts[1])
        if off >= len(data) or (off > 0 and data[off - 1:off] != b"\n"):
            faults.append("%s.%s: %r -> byte %d is not the start of a line" % (cache, suffix, key, off))
            continue
        fields = data[off:data.index(b"\n", off)].split(b":")
        if len(fields) <= field or fields[field] != key:
            faults.append("%s.%s: %r -> byte %d starts another entry %r" % (cache, suffix, key, off, data[off:off + 40]))
    return faults


def main():
    cache = sys.argv[1]
    faults = []
    for spec in sys.argv[2:]:
        suffix, field = spec.split(":")
        faults += check(cache, suffix, int(field))
    for f in faults:
        print(f)
    sys.exit(1 if faults else 0)


if __name__ == "__main__":
    main()
