#!/bin/bash
# deadline: 600
# `sunkctl health run`, as slurmd's HealthCheckProgram runs it: every check
# runs once more and the command exits 0 when all pass, 1 when one fails.
# The check here waits on a FIFO, so each round is held open until the test
# lets it end: two callers that come during one round are both answered by
# it (one run of the check, not two), and a caller killed while it waits
# leaves sunkd serving the other caller and the next run.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"

# gate: one line per start in $T/started, then what the FIFO says decides
mkfifo "$T/gate" || bail_out "mkfifo failed"
printf '#!/bin/sh\necho start >> "%s/started"\nread v < "%s/gate"\n[ "$v" = pass ] && { echo fine; exit 0; }\necho "told to fail"\nexit 1\n' \
        "$T" "$T" > "$T/gate.sh"
chmod 755 "$T/gate.sh"
: > "$T/started"
sunkd_config "log_level: debug
modules:
  health:
    node_name: n1
    transport: none
    interval: 1h
    fail_after: 1
    checks:
      - name: gate
        type: script
        path: $T/gate.sh
        timeout: 10m"
starts() { wc -l < "$T/started"; }
# release pass|fail: the round waiting on the FIFO ends so
release() { printf '%s\n' "$1" > "$T/gate"; }
calls() { log_since | grep -c 'Calling io.sunkd.Health.Run for uid=0 pid='; }
# held_round N OUT1 OUT2 CMD...: a round held open on the FIFO with two
# callers in it: CMD's run (the check's Nth start, output in OUT1, pid in
# $FIRST), then `ctl health run` called during it (OUT2, $SECOND).
held_round() {
        local n="$1" out1="$2" out2="$3"
        shift 3
        log_mark
        "$@" > "$out1" 2>&1 &
        FIRST=$!
        ok "a caller's run starts the check" wait_until 600 eval '[ "$(starts)" -ge '"$n"' ]'
        ok "its call has come" wait_until 600 eval '[ "$(calls)" -ge 1 ]'
        ctl health run > "$out2" 2>&1 &
        SECOND=$!
        ok "a second caller's call has come during the round" wait_until 600 eval '[ "$(calls)" -ge 2 ]'
}
# one_round N pass|fail OUT: a caller's round (the check's Nth start), held
# open until the test releases it so; returns the caller's exit status.
one_round() {
        local pid
        ctl health run > "$3" 2>&1 &
        pid=$!
        ok "a caller's run starts" wait_until 600 eval '[ "$(starts)" -ge '"$1"' ]'
        release "$2"
        wait "$pid"
}
sunkd_start

# The first round starts by itself, within the splay.
ok "the first round starts" wait_until 600 eval '[ "$(starts)" -ge 1 ]'
release pass
ok "and ends" wait_until 600 eval '[ "$(job_field health.gate runs)" = 1 ] && [ "$(job_field health.gate state)" != running ]'

# 1. Two callers during one round: both answered, exit 0, by one run.
held_round 2 "$T/a.out" "$T/b.out" ctl health run
release pass
wait "$FIRST"
is "$?" 0 "the first caller is answered: all pass, exit 0"
wait "$SECOND"
is "$?" 0 "the second caller is answered too"
like "$(cat "$T/a.out")" "gate" "the first answer shows the check"
is "$(cat "$T/b.out")" "$(cat "$T/a.out")" "both got the same round's answer"
is "$(starts)" 2 "one run of the check served both"

# 2. A failing check: exit 1, as HealthCheckProgram's caller sees it.
one_round 3 fail "$T/c.out"
is "$?" 1 "a failing check: exit 1"
like "$(cat "$T/c.out")" "told to fail" "saying why"

# 3. A caller killed while it waits: sunkd answers the other one and lives.
held_round 4 "$T/d.out" "$T/e.out" "$SUNKCTL" -s "$SOCK" --timeout 300 health run
kill -KILL "$FIRST"
wait "$FIRST" 2>/dev/null
ok "the first caller's connection is closed" wait_log "Closing connection of uid=0 pid=$FIRST"
release pass
wait "$SECOND"
is "$?" 0 "the caller that stayed is answered"
ok "sunkd is alive" kill -0 "$SUNKD_PID"
one_round 5 pass "$T/f.out"
is "$?" 0 "a later run is answered"
is "$(starts)" 5 "each round ran the check once"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
