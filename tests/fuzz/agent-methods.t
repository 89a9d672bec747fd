#!/bin/sh
# The daemon's own socket methods over hostile text (fuzz-agent-methods.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-agent-methods agent-methods
