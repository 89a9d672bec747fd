#!/bin/sh
# The files the health module's built-in checks read: their fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-health-inputs health-inputs
