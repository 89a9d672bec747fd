#!/bin/sh
# The sunkd.yaml loader's fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-conf-yaml conf-yaml
