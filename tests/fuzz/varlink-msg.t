#!/bin/sh
# Replays the seed corpus of the Varlink codec's fuzz target (TAP).
target="$SUNKD_BUILDDIR/tests/fuzz/fuzz-varlink-msg"
corpus="$SUNKD_SRCDIR/tests/fuzz/corpus/varlink-msg"
if [ ! -x "$target" ]; then
        echo "Bail out! $target is missing"
        exit 1
fi
exec "$target" "$corpus"
