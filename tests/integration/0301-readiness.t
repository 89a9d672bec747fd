#!/bin/bash
# Readiness for systemd (NOTIFY_SOCKET) and s6 (--notify-fd).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s
    work: 800ms
    ready_gate: true"

python3 "$SUNKD_SRCDIR/tests/lib/notify-listen.py" "$T/notify.sock" "$T/notify.log" &
LISTENER=$!
wait_for_file "$T/notify.sock" 50 || bail_out "notify listener did not start"
NOTIFY_SOCKET="$T/notify.sock" sunkd_start
sleep 0.3
ok "READY=1 is not sent before the gate job's first run" test ! -s "$T/notify.log" -o -z "$(grep READY=1 "$T/notify.log")"
wait_for_ready() { for i in $(seq 50); do grep -q READY=1 "$T/notify.log" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
ok "READY=1 arrives after the first run" wait_for_ready
is "$(ctl --json jobs | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.ok"][0]["runs"])')" 1 "the gate job ran once"
kill -HUP "$SUNKD_PID"; sleep 0.5
like "$(cat "$T/notify.log")" "RELOADING=1 .*MONOTONIC_USEC=[0-9]+" "reload is bracketed with RELOADING=1"
sunkd_stop
like "$(cat "$T/notify.log")" "STOPPING=1" "STOPPING=1 on SIGTERM"
kill "$LISTENER"

# s6: a newline on the notification fd, then the fd is closed.
exec 4>&-
rm -f "$T/fifo"; mkfifo "$T/fifo"
"$SUNKD" -c "$T/sunkd.yaml" --notify-fd=3 3> "$T/fifo" 2> "$T/s6.log" &
SUNKD_PID=$!
start=$(date +%s%N)
line=$(timeout 10 cat "$T/fifo" | od -An -c | tr -d ' ')
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
is "$line" '\n' "a single newline is written to the notification fd, which is then closed"
ok "only after the gate job ran (${elapsed} ms)" test "$elapsed" -ge 600
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
