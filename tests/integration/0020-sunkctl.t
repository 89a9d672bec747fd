#!/bin/bash
# sunkctl against a running sunkd: every verb, human and JSON output.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "modules:
  testmod:
    interval: 1h
    splay: 0s"
sunkd_start
wait_runs testmod.ok 1 || diag "first run of testmod.ok not seen"

out=$(ctl status); rc=$?
is "$rc" 0 "status exits 0"
like "$out" "^sunkd [0-9.]+, pid $SUNKD_PID, up .*, ready" "status headline"
like "$out" "socket:  $SOCK" "status shows the socket"
like "$out" "^MODULE +STATE +VERSION +ERROR" "status module table header"
like "$out" "^  flaky_runs +0" "module status shown as key: value lines"
like "$out" "^testmod +running " "testmod shown running"

json=$(ctl --json status)
is "$(echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["ready"], d["modules"][0]["name"], d["modules"][0]["state"])')" \
   "True testmod running" "status --json"

out=$(ctl jobs)
like "$out" "^JOB +MODULE +STATE +LAST RUN +DURATION +RESULT +NEXT RUN +RUNS/FAILED" "jobs header"
like "$out" "^testmod\.ok +testmod +scheduled .* success +in [0-9hms]+ +[0-9]+/0" "testmod.ok row"
like "$out" "^testmod\.hang +testmod +idle " "trigger-only job is idle"
# Columns line up: every row starts its STATE column at the same offset.
is "$(echo "$out" | awk 'NR>1 {print index($0, $3)}' | sort -u | wc -l)" 1 "jobs columns are aligned"

out=$(ctl run testmod.ok); rc=$?
is "$rc" 0 "run of a succeeding job exits 0"
like "$out" "^testmod\.ok: success in " "run prints the result"
out=$(ctl run testmod.fail); rc=$?
is "$rc" 1 "run of a failing job exits 1"
like "$out" "^testmod\.fail: failure after .*: Input/output error" "run prints the error"
err=$(ctl run nosuch 2>&1); rc=$?
is "$rc" 1 "run of an unknown job exits 1"
like "$err" "io.sunkd.NoSuchJob" "and names the error"
like "$err" "^sunkctl: no such job \(sunkctl jobs lists them\)" "in words"
ctl run >/dev/null 2>&1; is "$?" 2 "run without a job is a usage error"
json=$(ctl --json run testmod.ok)
like "$json" '"result": "success"' "run --json"
json=$(ctl run testmod.ok --json)
like "$json" '"result": "success"' "options may follow the command"
json=$(ctl status --json)
like "$json" '"ready": true' "status --json after the verb"
err=$(ctl status extra 2>&1); rc=$?
is "$rc" 2 "an extra argument is a usage error"
like "$err" "usage: sunkctl \[OPTIONS\] status$" "and shows the verb's usage"
err=$(ctl run a b 2>&1); rc=$?
is "$rc" 2 "run with two jobs is a usage error"

out=$(ctl metrics)
like "$out" "# TYPE sunkd_job_runs_total counter" "metrics has TYPE lines"
like "$out" 'sunkd_job_runs_total\{job="testmod.ok",result="success"\} [0-9]+' "metrics counts runs"
like "$out" 'sunkd_testmod_runs_total\{job="ok"\}' "module metrics present"

out=$(ctl version)
like "$out" "^sunkctl [0-9.]+" "version shows the client"
like "$out" "sunkd [0-9.]+ \(module ABI 1\.[0-9]+\)" "version shows the daemon"
is "$(ctl reload)" "Configuration reloaded." "reload as root"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
