#!/bin/sh
# The map file reader's fuzz corpus (source = http).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-map-file map-file
