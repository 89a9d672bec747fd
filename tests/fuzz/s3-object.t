#!/bin/sh
# The s3 object reader's fuzz corpus (source = s3).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-s3-object s3-object
