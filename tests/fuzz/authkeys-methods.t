#!/bin/sh
# The authkeys module's socket method over hostile outside text (fuzz-methods.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-authkeys-methods authkeys-methods
