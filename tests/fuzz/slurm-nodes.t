#!/bin/sh
# The health module's readers of slurmctld's answers: their fuzz corpus.
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-slurm-nodes slurm-nodes
