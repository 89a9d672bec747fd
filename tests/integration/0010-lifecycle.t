#!/bin/bash
# Start, serve, SIGTERM: a clean exit with modules finalised in reverse order.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "log_level: debug
modules:
  testmod:
    interval: 1h"
sunkd_start
is "$(ctl ping)" "pong" "sunkd answers on its socket"
ok "state directory of the module created" test -d "$T/state/testmod"
is "$(stat -c %a "$T/state/testmod")" 700 "module state directory is private"

# A job blocking its worker must not hold up shutdown beyond the deadline.
ctl run testmod.ok >/dev/null
sunkd_stop
is "$SUNKD_EXIT" 0 "SIGTERM exits 0"
log=$(cat "$T/sunkd.log")
like "$log" "Received Terminated, shutting down" "shutdown is logged"
like "$log" "Stopped\." "stop is logged"
ok "socket removed on exit" test ! -e "$SOCK"
unlike "$log" "ERROR: AddressSanitizer|runtime error" "no sanitizer reports"

# SIGINT as well.
sunkd_start
kill -INT "$SUNKD_PID"; wait "$SUNKD_PID"; rc=$?; SUNKD_PID=
is "$rc" 0 "SIGINT exits 0"

# A second instance on the same socket is refused while the first runs.
sunkd_start
"$SUNKD" -c "$T/sunkd.yaml" 2> "$T/second.log"; rc=$?
is "$rc" 3 "a second sunkd on a live socket exits 3 (temporarily unavailable)"
like "$(cat "$T/second.log")" "in use|already" "and says the socket is in use"
is "$(ctl ping)" "pong" "the first one still answers"
sunkd_stop

# A job that ignores cancellation keeps the process until the shutdown
# deadline, but the socket goes at once: clients are told sunkd is stopping.
sunkd_config "shutdown_timeout: 3s
modules:
  testmod:
    interval: 1h
    block: 10s"
sunkd_start
python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Agent.Trigger '{"job":"testmod.block"}' >/dev/null
block_running() { [ "$(job_field testmod.block state)" = running ]; }
wait_until 300 block_running || diag "testmod.block did not start"
kill -TERM "$SUNKD_PID"
ok "the socket is removed as soon as shutdown begins" wait_until 300 test ! -e "$SOCK"
ok "while the stuck job still holds the process" kill -0 "$SUNKD_PID"
ctl ping >/dev/null 2>&1; is "$?" 3 "a client now gets 'not running' (exit 3)"
wait "$SUNKD_PID"; rc=$?; SUNKD_PID=
is "$rc" 0 "the deadline ends it with exit 0"
like "$(cat "$T/sunkd.log")" "Shutdown deadline reached" "and says why"

done_testing
