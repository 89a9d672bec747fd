#!/bin/sh
# The nsscache.conf reader's fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-ini ini
