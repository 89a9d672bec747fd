#!/bin/sh
# The gres module's socket method over hostile outside text (fuzz-methods.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-gres-methods gres-methods
