#!/bin/sh
# Replays the seed corpus of one fuzz target as TAP.  Usage: replay.sh TARGET CORPUS
target="$SUNKD_BUILDDIR/tests/fuzz/$1"
corpus="$SUNKD_SRCDIR/tests/fuzz/corpus/$2"
[ -x "$target" ] || { echo "Bail out! $target is missing"; exit 1; }
[ -d "$corpus" ] || { echo "Bail out! $corpus is missing"; exit 1; }
exec "$target" "$corpus"
