#!/bin/sh
# The sshkey cache map builder's fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-authkeys-map authkeys-map
