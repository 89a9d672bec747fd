#!/bin/sh
# The Varlink codec's fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-varlink-msg varlink-msg
