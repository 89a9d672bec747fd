#!/bin/bash
# ABI 1.2 jobs in the real daemon: work in a child process (uid drop, killed
# at its timeout), asynchronous runs ended by the module, the per-module
# share of workers, and a shutdown whose deadline passes with work running.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup

status_field() {
        ctl --json status | python3 -c "
import json, sys
for m in json.load(sys.stdin)['modules']:
    if m['name'] == '$1':
        print(m.get('status', {}).get('$2', ''))"
}

jobs_config() {
        sunkd_config "workers: 2
modules:
  testmod:
    interval: 1h
    splay: 1h
    hang_timeout: 1s
    child_uid: 65534
    gate_file: $T/gate
    async_command: $1
  abi10: {}"
}
jobs_config "exit 0"
sunkd_start

ok "a child job runs" ctl run testmod.child
child=$(status_field testmod child_result)
like "$child" '"uid":65534' "its work ran as child_uid"
like "$child" '"gid":65534' "with its gid"
like "$child" '"groups":0' "and no supplementary groups"
pid=$(printf '%s' "$child" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
ok "in another process than sunkd" test "$pid" != "$SUNKD_PID"

out=$(ctl run testmod.childhang 2>&1); rc=$?
ok "a child that never returns fails the run" test "$rc" -ne 0
like "$out" "timed out|Timer expired" "as timed out"
is "$(pgrep -P "$SUNKD_PID" | wc -l)" 0 "and the child was killed"

ok "an async run ends when the module completes it" ctl run testmod.async

jobs_config "exec sleep 1000"
ok "reload" ctl reload
out=$(ctl run testmod.async 2>&1); rc=$?
ok "an async run past its timeout fails" test "$rc" -ne 0
like "$out" "timed out|Timer expired" "as timed out"
is "$(status_field testmod async_cancels)" 1 "after the module was asked to cancel it"

# Half of two workers: testmod's second thread job waits, abi10 still runs.
ctl run testmod.gated >/dev/null 2>&1 &
gated=$!
wait_for_file "$T/gate.started" 300 || bail_out "testmod.gated did not start"
ctl run testmod.block >/dev/null 2>&1 &
block=$!
job_state() {
        ctl --json jobs | python3 -c "import json,sys; print(next(j['state'] for j in json.load(sys.stdin)['jobs'] if j['name']=='$1'))"
}
i=0
until [ "$(job_state testmod.block)" = waiting ]; do
        i=$((i + 1))
        [ $i -lt 600 ] || break
        sleep 0.1
done
is "$(job_state testmod.block)" waiting "a module's job beyond its share of workers waits"
ok "another module's job still runs meanwhile" timeout 60 "$SUNKCTL" -s "$SOCK" run abi10.work
touch "$T/gate"
wait "$gated"; is "$?" 0 "the first job ends"
kill "$block" 2>/dev/null; wait "$block" 2>/dev/null

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

# Shutdown deadline with work that ignores cancellation.
rm -f "$T/gate" "$T/gate.started"
sunkd_config "shutdown_timeout: 1s
modules:
  testmod:
    interval: 1h
    splay: 1h
    gate_file: $T/gate"
sunkd_start
ctl run testmod.gated >/dev/null 2>&1 &
wait_for_file "$T/gate.started" 300 || bail_out "testmod.gated did not start"
sunkd_stop
is "$SUNKD_EXIT" 0 "at the deadline sunkd exits cleanly with the job still running"
like "$(cat "$T/sunkd.log")" "Shutdown deadline reached with 1 job" "and says what it left behind"
unlike "$(cat "$T/sunkd.log")" "AddressSanitizer|runtime error|LeakSanitizer" "without touching freed memory"
touch "$T/gate"

done_testing
