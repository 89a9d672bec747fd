#!/bin/bash
# ABI 1.3 in the real daemon: every run ends.  A child that outlives SIGKILL
# (held by a tracer, as one stuck in the kernel would be) does not keep its
# module from stopping and is shown as unreaped until it is gone; a 1.2
# module's async job without a cancel is ended by the host; and with every
# module worker held by stuck work, a reload still reads the file (the host
# has a thread of its own) and removes the modules that hold them.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
# Whatever this test leaves in the background must not outlive it.
bg=()
trap 'kill "${bg[@]}" 2>/dev/null; sunkd_cleanup' EXIT
job_is() { test "$(job_field "$1" state)" = "$2"; }

base="workers: 2
shutdown_timeout: 3s"
with_both="$base
modules:
  testmod:
    interval: 1h
    splay: 1h
    hang_timeout: 1h
    pid_file: $T/child.pid
    gate_file: $T/gate
  abi12:
    timeout: 1s
    gate_file: $T/gate12"
sunkd_config "$with_both"
sunkd_start

# An old module's async run that its module never completes.
out=$(timeout 120 "$SUNKCTL" -s "$SOCK" run abi12.async 2>&1); rc=$?
ok "a 1.2 async run without a cancel ends at its timeout" test "$rc" -eq 1
like "$out" "timed out|Timer expired" "as timed out"
is "$(module_status abi12 last_async_r)" -110 "its done() saw -ETIMEDOUT"
is "$(job_field abi12.async abandoned)" True "the job knows its module has not completed it"
is "$(module_status abi12 fact)" "" "a 1.2 module's fact_get of a missing fact is NULL"

# A child that SIGKILL does not end, while its module is removed.
ctl run testmod.childhang >/dev/null 2>&1 &
runner=$!
bg+=("$runner")
wait_for_file "$T/child.pid" 600 || bail_out "testmod.childhang did not start"
cpid=$(cat "$T/child.pid")
python3 "$SUNKD_SRCDIR/tests/lib/ptrace-hold.py" "$cpid" "$T/traced" &
tracer=$!
bg+=("$tracer")
wait_for_file "$T/traced" 600 || bail_out "cannot hold the job's child with ptrace here"

# Both modules hold a worker each (two workers): nothing is left for a reload
# unless the host has its own.
ctl run testmod.gated >/dev/null 2>&1 &
gated=$!
bg+=("$gated")
wait_for_file "$T/gate.started" 600 || bail_out "testmod.gated did not start"
ctl run abi12.block >/dev/null 2>&1 &
block=$!
bg+=("$block")
wait_until 600 job_is abi12.block running ||
        bail_out "abi12.block did not start"

sunkd_config "$base"
log_mark
out=$(timeout 120 "$SUNKCTL" -s "$SOCK" reload 2>&1); rc=$?
ok "a reload is read and applied while stuck work holds every worker" test "$rc" -eq 0
diag "$out"
wait_log "has not exited [0-9]+ ms after SIGKILL" ||
        diag "no line about the child that outlived SIGKILL"
like "$(log_since)" "childhang': its child \\(pid $cpid\\) has not exited" "the stuck child is named in the log"
wait "$runner"; ok "the caller waiting for the stuck run is answered" test "$?" -ne 0
like "$(ctl status)" "unreaped: 1 run unreaped since" "status shows the unreaped child"
ok "the child is still there, unreaped" test -e "/proc/$cpid"
out=$(ctl --json status)
like "$out" '"unreaped_runs": *1' "status --json counts it"
unlike "$(log_since)" "Module '(testmod|abi12)' stopped and unloaded" "the modules whose work is stuck are still stopping"
wait_log "sunkd\[abi12\]: warning: Module has not stopped within shutdown_timeout \(3 s\): 1 run\(s\) still on worker threads" ||
        diag "no warning about abi12's overdue stop"
like "$(log_since)" "sunkd\[abi12\]: warning: Module has not stopped within shutdown_timeout \(3 s\): 1 run\(s\) still on worker threads" \
        "a stop that outlasts shutdown_timeout says so, and what holds it"

# The stuck thread work ends: its modules finish stopping.
touch "$T/gate" "$T/gate12"
wait "$gated" "$block"
wait_log "Module 'testmod' stopped and unloaded" 600 || diag "testmod did not finish stopping"
wait_log "Module 'abi12' stopped and unloaded" 600 || diag "abi12 did not finish stopping"
like "$(log_since)" "Module 'testmod' stopped and unloaded" "testmod stops, although its child outlived SIGKILL"
like "$(log_since)" "Module 'abi12' stopped and unloaded" "abi12 stops"

# The tracer lets go: the child is reaped and no longer shown.
kill "$tracer"; wait "$tracer" 2>/dev/null
wait_until 600 sh -c "! \"$SUNKCTL\" -s \"$SOCK\" status | grep -q unreaped" ||
        diag "the child is still shown as unreaped"
status_without "unreaped" "once reaped, the child is no longer shown"
ok "and it is gone" test ! -e "/proc/$cpid"
like "$(cat "$T/sunkd.log")" "abandoned child \\(pid $cpid\\) of job '\\(removed\\)' has exited|abandoned child \\(pid $cpid\\) of job 'testmod.childhang' has exited" \
        "the log says when it exited"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"

# From ABI 1.3 an async job must come with its cancel.
sunkd_config "modules:
  testmod:
    interval: 1h
    async_without_cancel: true"
sunkd_start
is "$(ctl --json status | python3 -c 'import json,sys; print([m["state"] for m in json.load(sys.stdin)["modules"] if m["name"]=="testmod"][0])')" \
        failed "a 1.3 module's async job without a cancel is refused"
like "$(cat "$T/sunkd.log")" "Failed to add job 'testmod.nocancel': Invalid argument" "and says which"
like "$(cat "$T/sunkd.log")" "Job 'testmod.nocancel' refused: a SUNKD_JOB_ASYNC job needs cancel" \
        "and the host names the rule it broke"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
unlike "$(cat "$T/sunkd.log")" "AddressSanitizer|runtime error|LeakSanitizer" "no sanitizer report"
done_testing
