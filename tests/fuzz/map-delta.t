#!/bin/sh
# The map delta fuzz corpus (make and apply).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-map-delta map-delta
