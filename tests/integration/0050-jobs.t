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
    flaky_failures: 2"
sunkd_start

ok "periodic job runs repeatedly" wait_runs testmod.ok 4 60

start=$(date +%s%N)
out=$(ctl run testmod.hang); rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
is "$rc" 1 "a job past its timeout fails"
like "$out" "testmod\.hang: failure after .*: Connection timed out" "with ETIMEDOUT"
ok "the timeout cut it short (${elapsed} ms)" test "$elapsed" -lt 3000

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

# Coalescing: five triggers while the job runs make exactly one more run.
python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Agent.Trigger '{"job":"testmod.block"}' >/dev/null
sleep 0.3
for i in 1 2 3 4 5; do
        python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Agent.Trigger '{"job":"testmod.block"}' >/dev/null
done

# While the worker is blocked for 2 s the loop still answers at once.
start=$(date +%s%N)
for i in $(seq 20); do ctl ping >/dev/null || break; done
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
ok "20 pings answered within 1.5 s while a job blocks its worker (${elapsed} ms)" test "$elapsed" -lt 1500

ok "the blocked job completes" wait_runs testmod.block 2 80
sleep 2.5
is "$(ctl --json jobs | python3 -c 'import json,sys; print([x for x in json.load(sys.stdin)["jobs"] if x["name"]=="testmod.block"][0]["runs"])')" \
   2 "six triggers, two runs: triggers coalesce"

# A Later call is answered by the next run, via a pending reply.
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Later)
is "$out" '{"parameters": {"run": "done"}}' "pending replies are delivered when the module replies"

# A child process spawned through the host.
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"echo hi; exit 4"}')
is "$out" '{"parameters": {"exit_code": 4, "output": "hi\n", "signal": 0, "timed_out": false, "truncated": false}}' "spawn captures output and exit code"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"sleep 30","timeout_ms":200}')
like "$out" '"signal": 15, "timed_out": true' "spawn timeout kills the child"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"sleep 30; exit 3","kill":true}')
like "$out" '"signal": 15, "timed_out": false' "child_kill right after spawn_start ends the child"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","uid":65534,"groups":[5678,1234]}')
like "$out" '"exit_code": 0, "output": "65534 1234 5678\\n"' "a child dropped to nobody gets the supplementary groups it is given"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","uid":65534}')
like "$out" '"exit_code": 0, "output": "65534\\n"' "a child dropped to nobody keeps none of root's groups"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"echo old","v1_0":true}')
like "$out" '"exit_code": 0, "output": "old\\n"' "a spec of the 1.0 size still spawns"
out=$(python3 "$SUNKD_SRCDIR/tests/lib/varlink-raw.py" "$SOCK" call io.sunkd.Test.Spawn '{"arg":"id -G","groups":[1234]}')
like "$out" '"error": "io.sunkd' "groups without a uid drop are refused"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit while jobs were scheduled"
done_testing
