#!/bin/bash
# Readiness for systemd (NOTIFY_SOCKET) and s6 (--notify-fd).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
# testmod.ok is the readiness gate, and its first run lasts until release.ok.
gate_config
notify_has() { grep -E -q -- "$1" "$T/notify.log" 2>/dev/null; }

python3 "$SUNKD_SRCDIR/tests/lib/notify-listen.py" "$T/notify.sock" "$T/notify.log" &
LISTENER=$!
wait_for_file "$T/notify.sock" || bail_out "notify listener did not start"
NOTIFY_SOCKET="$T/notify.sock" sunkd_start
ok "at start sunkd says it waits for the readiness jobs" wait_until 300 notify_has "STATUS=Waiting for the first run"
ok "the gate job's first run is under way" wait_until 300 gate_running
# Readiness is notified and logged on the loop, which has just answered that
# the gate job still runs: had it been declared, both would show it by now.
unlike "$(cat "$T/notify.log")" "READY=1" "READY=1 is not sent before the gate job's first run"
unlike "$(cat "$T/sunkd.log")" "Ready:" "nor logged"
touch "$GATE/release.ok"
ok "READY=1 arrives after the first run" wait_until 300 notify_has READY=1
is "$(job_field testmod.ok runs)" 1 "the gate job ran once"
log_mark
kill -HUP "$SUNKD_PID"
wait_log "Configuration reloaded\."
ok "reload is bracketed with RELOADING=1" wait_until 300 notify_has "RELOADING=1 .*MONOTONIC_USEC=[0-9]+"
sunkd_stop
ok "STOPPING=1 on SIGTERM" wait_until 300 notify_has "STOPPING=1"
kill "$LISTENER"

# s6: a newline on the notification fd, then the fd is closed.  The fd is a
# plain file, so what sunkd wrote is there the moment it returns.
rm -f "$GATE/release.ok" "$SOCK"
: > "$T/s6.notify"
"$SUNKD" -c "$T/sunkd.yaml" --notify-fd=3 3> "$T/s6.notify" 2> "$T/sunkd.log" &
SUNKD_PID=$!
wait_for_file "$SOCK" || bail_out "sunkd did not create its socket"
ok "the gate job's first run is under way" wait_until 300 gate_running
is "$(stat -c %s "$T/s6.notify")" 0 "nothing is written to the notification fd before the gate job ran"
touch "$GATE/release.ok"
ok "then a line is written" wait_until 300 test -s "$T/s6.notify"
is "$(od -An -c "$T/s6.notify" | tr -d ' ')" '\n' "a single newline"
is "$(ctl ping)" pong "still serving"
nok "and the fd is closed" test "/proc/$SUNKD_PID/fd/3" -ef "$T/s6.notify"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
