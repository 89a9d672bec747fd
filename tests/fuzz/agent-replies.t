#!/bin/sh
# The host's side of outside text: job messages, the reply backstop, the rule (fuzz-agent-replies.c).
exec "$SUNKD_SRCDIR/tests/fuzz/replay.sh" fuzz-agent-replies agent-replies
