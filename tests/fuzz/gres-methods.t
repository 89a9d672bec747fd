#!/bin/sh
# The gres module's socket method over hostile outside text (fuzz-methods.c).
# libslurm's own hostlist leaks are suppressed (gres-methods.lsan says why).
LSAN_OPTIONS="suppressions=$SUNKD_SRCDIR/tests/fuzz/gres-methods.lsan${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export LSAN_OPTIONS
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-gres-methods gres-methods
