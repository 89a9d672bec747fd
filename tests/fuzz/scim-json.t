#!/bin/sh
# The SCIM page parser's and nsscache.conf reader's fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-scim-json scim-json
