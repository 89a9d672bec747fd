#!/bin/bash
# Jobs in a real daemon: periodic runs, timeouts, coalescing, a loop that
# keeps answering while a worker is blocked.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
sunkd_config "modules:
  testmod:
    interval: 300ms
    splay: 0s
    hang_timeout: 400ms
    block: 2s
    flaky_failures: 2
    gate_dir: $T/gate"
GATE="$T/gate"
mkdir -p "$GATE"
sunkd_start

ok "periodic job runs repeatedly" wait_runs testmod.ok 4

out=$(ctl run testmod.hang); rc=$?
is "$rc" 1 "a job past its timeout fails"
like "$out" "testmod\.hang: failure after .*: Connection timed out" "with ETIMEDOUT"
# Uncancelled, the work runs 60 s; a run that ended sooner saw the cancel flag.
ok "the timeout cut it short ($(job_field testmod.hang last_duration_usec) us)" \
        test "$(job_field testmod.hang last_duration_usec)" -lt 60000000

out1=$(ctl run testmod.flaky); rc1=$?
out2=$(ctl run testmod.flaky); rc2=$?
out3=$(ctl run testmod.flaky); rc3=$?
is "$rc1 $rc2 $rc3" "1 1 0" "flaky job fails twice then succeeds"
like "$out1" "^testmod\.flaky: failure after .*: flaky failure 1 of 2$" "the first failure's message"
like "$out2" "^testmod\.flaky: failure after .*: flaky failure 2 of 2$" "a module's own message replaces the errno text"
like "$out3" "^testmod\.flaky: success in " "and is gone after a success"
json=$(ctl --json jobs)
is "$(echo "$json" | python3 -c 'import json,sys; j=[x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.flaky"][0]; print(j["runs"], j["failures"], j["consecutive_failures"])')" \
   "3 2 0" "success resets the consecutive failures"

# Coalescing: triggers while the job runs make exactly one more run.  The
# gate job's first run stays running until release.1 appears, so all five
# triggers provably land while it runs.
python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Agent.Trigger '{"job":"testmod.gate"}' >/dev/null
ok "the gate job's first run started" wait_for_file "$GATE/running.1"
is "$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" repeat 5 io.sunkd.Agent.Trigger '{"job":"testmod.gate"}')" \
   "answered=5 errors=0" "five triggers from one client, all answered"
is "$(job_field testmod.gate state) $(job_field testmod.gate runs)" "running 0" "while the first run is still running"

# While the worker is blocked the loop still answers: the run cannot end
# before the test releases it, so these answers came while it was blocked.
pings=0
for i in $(seq 20); do ctl ping >/dev/null && pings=$((pings + 1)); done
is "$pings $(job_field testmod.gate state)" "20 running" "20 pings answered while a job blocks its worker"

touch "$GATE/release.1"
ok "the triggers made a second run" wait_for_file "$GATE/running.2"
touch "$GATE/release.2"
ok "which completes" wait_runs testmod.gate 2
# A third run would be armed or running from the moment the second one ended.
is "$(job_field testmod.gate state) $(job_field testmod.gate runs)" "idle 2" "six triggers, two runs: triggers coalesce"
ok "no third run started" test ! -e "$GATE/running.3"

# A Later call is answered by the next run, via a pending reply.
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Later)
is "$out" '{"parameters": {"run": "done"}}' "pending replies are delivered when the module replies"

# A child process spawned through the host.
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"echo hi; exit 4"}')
is "$out" '{"parameters": {"err_output": "", "err_truncated": false, "exit_code": 4, "output": "hi\n", "signal": 0, "timed_out": false, "truncated": false}}' "spawn captures output and exit code"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"seq 1 1000; echo out; echo why it failed >&2; exit 1","output_max":16}')
like "$out" '"err_output": "why it failed\\n", "err_truncated": false, "exit_code": 1, "output": "98\\n999\\n1000\\nout\\n", "signal": 0, "timed_out": false, "truncated": true' "stderr apart, and the tail of stdout kept"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"echo out; echo err >&2","merge":true}')
like "$out" '"err_output": "", .*"output": "out\\nerr\\n"' "SUNKD_SPAWN_MERGE_STDERR: both in output"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"exec":"/nonexistent/program"}')
like "$out" '"error": "io.sunkd.Test.SpawnFailed", "parameters": \{"errno": 2\}' "a program that is not there: the callback gets -ENOENT, not exit 127"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"exec":"/etc/passwd"}')
like "$out" '"errno": 13' "a file without x bits: -EACCES"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"exit 127"}')
like "$out" '"exit_code": 127' "a script's own exit 127 stays an exit status"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"sleep 30","timeout_ms":200}')
like "$out" '"signal": 15, "timed_out": true' "spawn timeout kills the child"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"sleep 30; exit 3","kill":true}')
like "$out" '"signal": 15, "timed_out": false' "child_kill right after spawn_start ends the child"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","uid":65534,"groups":[5678,1234]}')
like "$out" '"exit_code": 0, "output": "65534 1234 5678\\n"' "a child dropped to nobody gets the supplementary groups it is given"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","uid":65534}')
like "$out" '"exit_code": 0, "output": "65534\\n"' "a child dropped to nobody keeps none of root's groups"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"echo old; echo err >&2","v1_0":true}')
like "$out" '"err_output": "", .*"exit_code": 0, "output": "old\\nerr\\n"' "a spec of the 1.0 size still spawns, with stderr in output as before"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","groups":[1234]}')
like "$out" '"error": "io.sunkd' "groups without a uid drop are refused"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit while jobs were scheduled"
done_testing
