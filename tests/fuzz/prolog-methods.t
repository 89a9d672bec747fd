#!/bin/sh
# The prolog module's socket methods over hostile outside text (fuzz-methods.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-prolog-methods prolog-methods
