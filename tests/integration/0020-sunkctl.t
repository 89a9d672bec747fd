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

# sunkctl MODULE VERB [KEY=VALUE...]: io.sunkd.<Module>.<Verb>, any module's
# method, its answer in the generic form (testmod's Echo answers its parameters).
out=$(ctl test echo name=ada n=42 ok=true s='"42"' empty=); rc=$?
is "$rc" 0 "test echo exits 0"
like "$out" "^name: +ada$" "a string parameter, as key: value"
like "$out" "^n: +42$" "a number"
like "$out" "^ok: +true$" "a boolean"
like "$out" "^s: +42$" "a quoted string"
like "$out" "^empty:$" "an empty value"
is "$(echo "$out" | awk '/^[a-z]+: / {print index($0, $2)}' | sort -u | wc -l)" 1 "values aligned"
json=$(ctl --json test echo name=ada n=42 f=1.5 ok=false s='"42"' nul=null)
is "$(echo "$json" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(*[type(d[k]).__name__ + ":" + str(d[k]) for k in ("name","n","f","ok","s","nul")])')" \
   "str:ada int:42 float:1.5 bool:False str:42 str:null" "--json: values are JSON scalars where they look like them, else strings"
is "$(ctl test echo esc=$'\e[31mred\a' nl=$'a\nb')" 'esc: \x1b[31mred\x07
nl:  a\x0ab' "control bytes in an answer are escaped"
like "$(ctl test root)" "^uid: 0$" "a method without parameters"
out=$(ctl agent jobs)
like "$out" "^jobs:$" "an array of objects is a table under its key"
like "$out" "^  NAME +STATE +INTERVAL " "with the member names as titles"
like "$out" "^  testmod\.ok +scheduled +1h " "a row per item, a *_usec too small for a time as a duration"

# Words that are not KEY=VALUE are usage errors, found before connecting.
for w in novalue '=x' '1a=x' 'a-b=x' 'n=99999999999999999999' 'n=1e999' 's="open' 's="a"b'; do
        err=$("$SUNKCTL" -s "$T/none.sock" test echo "$w" 2>&1); rc=$?
        is "$rc" 2 "'$w' is a usage error"
        like "$err" "^sunkctl: '$(printf '%s' "$w" | sed 's/[][\.*^$(){}+?|]/\\&/g')': " "naming the word"
done
err=$("$SUNKCTL" -s "$T/none.sock" test echo a=1 a=2 2>&1); rc=$?
is "$rc" 2 "a key given twice is a usage error"
like "$err" "'a=2': that KEY is given twice" "naming the second"
big=$(head -c 100000 /dev/zero | tr '\0' k)
err=$("$SUNKCTL" -s "$T/none.sock" test echo "$big" 2>&1); rc=$?
is "$rc" 2 "a 100 kB word without = is a usage error"
ok "whose message quotes it cut" test "${#err}" -lt 300
err=$(ctl test 2>&1); rc=$?
is "$rc" 2 "a module without a verb is a usage error"
like "$err" "usage: sunkctl \[OPTIONS\] MODULE VERB \[KEY=VALUE\.\.\.\]" "and shows the usage"
for w in te_st 'a.b' '-x-' ''; do
        "$SUNKCTL" -s "$T/none.sock" "$w" echo >/dev/null 2>&1
        is "$?" 2 "module word '$w' is a usage error"
done
err=$("$SUNKCTL" -s "$T/none.sock" "$big" echo 2>&1); rc=$?
is "$rc" 2 "a 100 kB module word is a usage error"
ok "whose message quotes it cut" test "${#err}" -lt 300
ctl test echo --check >/dev/null 2>&1; is "$?" 2 "--check is for gres only"

# What sunkd refuses comes back as its error, exit 1, and sunkd stays.
err=$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SUNKCTL" -s "$SOCK" test echo "v=$big" 2>&1); rc=$?
is "$rc" 1 "a 100 kB value from another uid than root: exit 1"
like "$err" "io.sunkd.Test.Echo failed: io.sunkd.InvalidMessage .*message too large" "with sunkd's error"
err=$(ctl nosuch verb 2>&1); rc=$?
is "$rc" 1 "an unknown module: exit 1"
like "$err" "^sunkctl: this sunkd does not know io\.sunkd\.Nosuch\.Verb .*org\.varlink\.service\.MethodNotFound" \
     "naming the method and the error"
err=$(ctl test no-such 2>&1); rc=$?
is "$rc" 1 "an unknown verb: exit 1"
like "$err" "io\.sunkd\.Test\.NoSuch" "naming the method"
like "$err" "^sunkctl: test has no verb 'no-such' \(io\.sunkd\.Test\.NoSuch\); its verbs: .*echo.*metric-add" \
     "listing the verbs the module has"
unlike "$err" "enabled" "not asking whether the module is enabled"
is "$(ctl ping)" "pong" "sunkd answers after all of it"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
