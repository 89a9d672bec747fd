#!/bin/sh
# The health module's socket methods over hostile outside text (fuzz-methods.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-health-methods health-methods
