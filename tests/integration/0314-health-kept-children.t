#!/bin/bash
# deadline: 600
# The health module's file-system checks run in kept children
# (SUNKD_JOB_CHILD_REUSE): round after round, the same processes answer,
# so no round pays for a fork of the daemon.  A kept child is a copy of the
# daemon made after the checks were added: a reload that changes a check
# gets children that hold the new one, and the old ones end.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"

echo A > "$T/data"
# config WORD: the file check wants a line starting with WORD
config() {
        sunkd_config "modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
    pass_after: 1
    checks:
      - {name: data, type: file, path: $T/data, match: \"^$1\"}
      - {name: space, type: disk_free, path: $T, min_free_pct: 1}"
}
# the daemon's child processes, sorted, one line
children() { ps --ppid "$SUNKD_PID" -o pid= | sort -n | tr -s ' \n' ' ' | sed 's/^ //; s/ $//'; }

config A
sunkd_start
ctl health run > "$T/out" 2>&1
is "$?" 0 "the first round passes"
first=$(children)
ok "the checks' children are kept after the round" test -n "$first"
n=$(wc -w <<< "$first")
ok "at most one for each check that runs in a child ($n)" test "$n" -le 2
for i in 1 2 3 4 5; do
        ctl health run > /dev/null 2>&1 || fail "round $i did not pass"
done
is "$(children)" "$first" "five rounds later the same processes are there: none forked"

# A reload changes the check: the kept copies of the old one must not answer.
config B
sunkd_hup
like "$(log_since)" "Configuration reloaded" "the reload is applied"
ctl health run > "$T/out" 2>&1
is "$?" 1 "the changed check fails: it ran as reloaded, not as a kept copy had it"
like "$(cat "$T/out")" "file-mismatch" "saying the file does not match"
# gone PIDS...: none of them runs
gone() {
        local p
        for p in "$@"; do
                kill -0 "$p" 2>/dev/null && return 1
        done
        return 0
}
ok "the children kept before the reload have ended" wait_until 600 gone $first
config A
sunkd_hup
ctl health run > /dev/null 2>&1
is "$?" 0 "and back: it passes again"
last=$(children)
ok "children are kept again" test -n "$last"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
ok "no kept child outlives it" wait_until 600 gone $last
done_testing
