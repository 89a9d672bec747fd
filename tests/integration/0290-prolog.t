#!/bin/bash
# deadline: 900
# The prolog module and its client, sunkd-prolog/sunkd-epilog, without
# Slurm (0291 runs them under a real slurmd): scripts run in C-locale order
# with the job's environment, a sane PATH and SUNKD_SCRIPT, cwd / and stdin
# /dev/null; a prolog stops at its first failure and names it, an epilog runs
# every script; leftovers are skipped; a script past its timeout is killed
# with its children, and so is the running script when the client goes; a
# script that cannot be executed is named as such; a group-writable script
# is refused; the client runs the scripts itself with sunkd stopped (or
# fails, as configured), and never after Run was sent; a stop of sunkd lets
# a run in flight end; bad calls are refused; the module links no fork or
# exec (the client's runner is the client's alone).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/prolog/.libs/prolog.so" "$MODDIR/" || bail_out "prolog.so not built"
B="$SUNKD_BUILDDIR/modules/prolog"
[ -x "$B/sunkd-prolog" ] && [ -L "$B/sunkd-epilog" ] || bail_out "sunkd-prolog and sunkd-epilog not built"

# The module never forks, by construction: the client's own runner (fork,
# execveat()) is linked into sunkd-prolog alone, never into prolog.so.
command -v nm >/dev/null || bail_out "nm not found (binutils)"
calls() { nm -D --undefined-only "$1" | awk '{ sub(/@.*/, "", $2); print $2 }' |
        grep -x -E 'fork|vfork|clone|clone3|execve|execveat|execv|execvp|execvpe|posix_spawnp?|system|popen|pthread_create' |
        sort | paste -s -d' '; }
is "$(calls "$MODDIR/prolog.so")" "" "prolog.so references no fork, exec, spawn or thread"
is "$(calls "$B/sunkd-prolog")" "execveat fork" "sunkd-prolog holds the runner (fork, execveat)"
SETTINGS="$T/run/prolog/client.json"
P="$T/p.d"
E="$T/e.d"
O="$T/out"
mkdir -p "$P" "$E" "$O"
chmod 755 "$P" "$E" "$O"

# A job's environment as slurmd gives it: no PATH.
JOBENV=(SLURM_JOB_ID=4242 SLURM_JOB_USER=alice SLURM_JOB_UID=1000 SLURM_JOB_GPUS=0,1
        CUDA_VISIBLE_DEVICES=0,1 SLURM_JOB_PARTITION=gpu "SLURM_JOB_COMMENT=two words")
prolog() { env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" "$@"; }
epilog() { env -i "${JOBENV[@]}" "$B/sunkd-epilog" --socket "$SOCK" "$@"; }
script() { # NAME BODY: a root-owned 0755 script
        printf '#!/bin/sh\n%s\n' "$2" > "$1"
        chmod 755 "$1"
}
config() {
        sunkd_config "log_level: debug
modules:
  prolog:
    prolog_dir: $P
    epilog_dir: $E
    script_timeout: ${1:-30s}
    total_timeout: ${2:-60s}
    kill_grace: 1s
    keep_runs: 5
    on_daemon_unreachable: ${3:-run}"
}
last_run() { ctl --json prolog status | python3 -c "import json,sys; r=json.load(sys.stdin)['runs']; print(r[0]['$1'] if r else '')"; }

script "$P/10-env" "env > $O/env; pwd > $O/cwd; cat > $O/stdin; echo \"\$0\" > $O/argv0"
script "$P/20-second" "echo second >> $O/order"
script "$P/20-second~" "echo backup >> $O/order"
script "$P/.hidden" "echo hidden >> $O/order"
script "$P/21-x.dpkg-old" "echo dpkg >> $O/order"
script "$P/22-y.disabled" "echo disabled >> $O/order"
script "$P/30-Upper" "echo Upper >> $O/order"
printf 'not executable\n' > "$P/25-data"
chmod 644 "$P/25-data"
config
sunkd_start
wait_for_file "$SETTINGS" || bail_out "the module did not leave its settings for the client"

# ---- a passing prolog ----
prolog
is "$?" 0 "a passing prolog exits 0"
is "$(cat "$O/order")" "second
Upper" "scripts in C-locale order, leftovers, hidden and non-executable entries skipped"
for v in "${JOBENV[@]}"; do
        grep -qxF "$v" "$O/env" || fail_env="$fail_env $v"
done
is "${fail_env:-}" "" "each script gets the job's environment as the client had it"
like "$(cat "$O/env")" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" "and a sane PATH"
like "$(cat "$O/env")" "SUNKD_SCRIPT=10-env" "and SUNKD_SCRIPT"
is "$(grep -c -v -E '^(PATH|SUNKD_SCRIPT|PWD|SHLVL|_|OLDPWD)=' "$O/env")" "${#JOBENV[@]}" "and nothing of sunkd's own"
is "$(cat "$O/cwd")" "/" "cwd /"
is "$(cat "$O/stdin")" "" "stdin /dev/null"
is "$(last_run result)" "ok" "status: the run passed"
is "$(last_run job_id)" "4242" "status: the job"
like "$(ctl prolog)" "4242 +prolog .* ok" "sunkctl prolog shows it"
# the drain the client asks for on a failure (sunkd's debug line for a call no module answers)
drains() { grep -c "Unknown method 'io.sunkd.Health.Drain' called by" "$T/sunkd.log"; }
is "$(drains)" 0 "a passing prolog asks for no drain"

# ---- a failing prolog stops; the failure is named ----
rm -f "$O/order"
script "$P/15-gpu" 'echo "checking GPUs"; echo "GPU 3 missing" >&2; exit 3'
prolog 2> "$O/client.err"
is "$?" 1 "a failing prolog exits 1"
is "$(cat "$O/order" 2>/dev/null)" "" "the scripts after the failure do not run"
is "$(last_run reason)" "prolog 15-gpu rc=3: GPU 3 missing" "the reason names the script, its rc and its last line"
is "$(last_run failed_script)" "15-gpu" "status names the failed script"
like "$(ctl prolog)" "prolog 15-gpu rc=3: GPU 3 missing" "sunkctl prolog shows the reason"
like "$(ctl prolog)" "\| checking GPUs" "and the end of its output, stderr and stdout as written"
like "$(cat "$O/client.err")" "no health module" "without the health module the client says the reason stays Slurm's"
is "$(drains)" 1 "a failing prolog asks sunkd to drain the node, once"
like "$(cat "$T/sunkd.log")" "prolog script '15-gpu' of job 4242: exit status 3" "the journal names the script and the job"
rm "$P/15-gpu"

# ---- an epilog runs every script ----
script "$E/10-fail" 'echo "cleanup failed"; exit 1'
script "$E/20-after" "echo after > $O/epilog-after"
epilog
is "$?" 1 "a failing epilog exits 1"
is "$(cat "$O/epilog-after")" "after" "after running every script"
is "$(last_run kind)" "epilog" "status: an epilog"
is "$(last_run reason)" "epilog 10-fail rc=1: cleanup failed" "named as an epilog failure"
rm "$E/10-fail"

# ---- cannot execute: named as such, not exit 127 ----
printf '#!/nonexistent/interp\n' > "$P/05-badinterp"
chmod 755 "$P/05-badinterp"
prolog
is "$?" 1 "a script whose interpreter is missing fails the prolog"
like "$(last_run reason)" "^prolog 05-badinterp cannot execute: .*interpreter" "named as an exec failure, not rc=127"
rm "$P/05-badinterp"

# ---- a group-writable script is refused and nothing runs ----
rm -f "$O/env"
chmod 775 "$P/20-second"
prolog
is "$?" 1 "a group-writable script fails the prolog"
like "$(last_run reason)" "^prolog 20-second cannot execute: refused" "the reason names the script, not its directory"
is "$(last_run failed_script)" "20-second" "status names the script refused"
like "$(ctl --json prolog status | python3 -c "import json,sys; print(json.load(sys.stdin)['runs'][0]['scripts'][0]['error'])")" \
        "refusing prolog script .*20-second.*writable" "saying why"
ok "and no script ran" test ! -e "$O/env"
chmod 755 "$P/20-second"

# ---- a script changed after the listing, before its turn: checked again, refused ----
rm -f "$O/env" "$O/order"
script "$P/12-change" "chmod 775 $P/20-second"
prolog
is "$?" 1 "a script made group-writable after the listing fails the prolog"
like "$(last_run error)" "refusing prolog script .*20-second.*writable" "refused when its turn came, saying why"
is "$(cat "$O/order" 2>/dev/null)" "" "and it did not run"
like "$(cat "$T/sunkd.log")" "Cannot start prolog script '20-second' .* of job 4242: refusing" "the journal names the refused script and the job"
chmod 755 "$P/20-second"
rm "$P/12-change"

# ---- a script that lost its x bit is said, not dropped ----
prolog
is "$?" 0 "a directory with a non-executable entry passes"
is "$(ctl --json prolog status | python3 -c "
import json,sys
s=[x for x in json.load(sys.stdin)['runs'][0]['scripts'] if x['name']=='25-data'][0]
print(s['result'], s['skipped'])")" "skipped not executable (mode 0644)" "status lists it as skipped, with why"
like "$(ctl prolog)" "25-data .*skipped: not executable \(mode 0644\)" "sunkctl prolog shows it"
ok "it is logged" grep -q "not run: '25-data' (not executable (mode 0644))" "$T/sunkd.log"
prolog
is "$(grep -c "not run: '25-data'" "$T/sunkd.log")" 1 "once, not at every run"

# ---- timeouts: the script and what it started ----
sunkd_stop
config 1s 60s
sunkd_start
script "$P/40-hang" "sh -c 'trap \"\" TERM; echo \$\$ > $O/grandchild; exec sleep 1000' & echo \$! > $O/gc-started; sleep 1000"
prolog
is "$?" 1 "a script past its timeout fails the prolog"
like "$(last_run reason)" "^prolog 40-hang timed out" "named as timed out"
ok "the grandchild ignoring SIGTERM is gone too" wait_until 300 eval '! kill -0 "$(cat "$O/grandchild")" 2>/dev/null'
rm "$P/40-hang"

# ---- total_timeout: the second script gets what is left ----
sunkd_stop
config 30s 2s
sunkd_start
script "$P/40-slow" "sleep 1.5"
script "$P/41-slow" "sleep 5"
prolog
is "$?" 1 "scripts past total_timeout fail the prolog"
is "$(last_run failed_script)" "41-slow" "the script that ran out of the total is named"
rm "$P/40-slow" "$P/41-slow"

# ---- the client goes: the script is killed ----
sunkd_stop
config 60s 120s
sunkd_start
rm -f "$O/gc2" "$O/started"
script "$P/40-wait" "sh -c 'trap \"\" TERM; echo \$\$ > $O/gc2; exec sleep 1000' & touch $O/started; sleep 1000"
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" --settings "$SETTINGS" &
CLIENT=$!
wait_for_file "$O/started" 600 || bail_out "the script did not start"
wait_for_file "$O/gc2" 600
kill -KILL "$CLIENT"
wait "$CLIENT" 2>/dev/null
ok "the script's grandchild is killed when the client goes" wait_until 600 eval '! kill -0 "$(cat "$O/gc2")" 2>/dev/null'
ok "the run is recorded as aborted" wait_until 600 eval '[ "$(last_run result)" = aborted ]'
like "$(ctl metrics)" 'sunkd_prolog_aborts_total\{kind="prolog"\} 1' "and counted"

# ---- a stop lets the run in flight end ----
rm -f "$O/started" "$O/go" "$O/done"
script "$P/40-wait" "touch $O/started; while [ ! -e $O/go ]; do sleep 0.05; done; touch $O/done"
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" --settings "$SETTINGS" > /dev/null 2>&1 &
CLIENT=$!
wait_for_file "$O/started" 600 || bail_out "the script did not start"
log_mark
kill -TERM "$SUNKD_PID"
ok "sunkd waits for the run in flight" wait_log "letting its work in flight end" 600
ok "the script still runs" kill -0 "$CLIENT"
# a job that starts meanwhile: the module takes no new run, the client runs it
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" > "$O/second.out" 2> "$O/second.err" &
SECOND=$!
ok "a second job meanwhile runs the scripts itself" wait_until 600 grep -q "running the prolog scripts here" "$O/second.err"
like "$(cat "$O/second.err")" "sunkd is unreachable" "since a stopping sunkd listens no more"
touch "$O/go"
wait "$SECOND"
is "$?" 0 "and its prolog passes"
wait "$CLIENT"
is "$?" 0 "and the prolog passes"
ok "the script finished" test -e "$O/done"
wait "$SUNKD_PID"
is "$?" 0 "sunkd then exits cleanly"
rm "$P/40-wait"

# ---- a --local failure still asks sunkd for the drain ----
sunkd_start
script "$P/15-gpu" 'echo "GPU 3 missing"; exit 3'
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" --local 2> "$O/client.err"
is "$?" 1 "a --local prolog with a failing script exits 1"
like "$(cat "$O/client.err")" "no health module" "having asked sunkd for the drain"
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" --local --no-drain 2> "$O/client.err"
unlike "$(cat "$O/client.err")" "health module" "--no-drain asks for none"
rm "$P/15-gpu"

# ---- the module reloads in place: new settings, status, the client's file ----
rm -f "$O/other"
mkdir -m 755 "$T/other.d"
script "$T/other.d/10-other" "echo other > $O/other"
sunkd_config "modules:
  prolog:
    prolog_dir: $T/other.d
    epilog_dir: $E
    script_timeout: 30s
    keep_runs: 5"
sunkd_hup
like "$(log_since)" "Configuration reloaded" "a reload with another prolog_dir is taken"
is "$(ctl --json status | python3 -c "
import json, sys
print([m for m in json.load(sys.stdin)['modules'] if m['name'] == 'prolog'][0]['status']['prolog_dir'])")" "$T/other.d" \
        "status shows the new directory"
ok "the client's settings follow" wait_until 300 grep -q "other.d" "$SETTINGS"
prolog
is "$?" 0 "the next prolog passes"
is "$(cat "$O/other" 2>/dev/null)" "other" "running the new directory's scripts"
is "$(last_run result)" "ok" "and Prolog.Status records it"
sunkd_stop
rm -r "$T/other.d"
config
sunkd_start
sunkd_stop

# ---- sunkd runs no prolog module: the client runs the scripts itself ----
sunkd_config "modules:
  testmod:
    interval: 1h"
sunkd_start
rm -f "$O/order"
prolog 2> "$O/client.err"
is "$?" 0 "with sunkd running no prolog module the client runs the scripts itself"
like "$(cat "$O/client.err")" "sunkd ran no script: it answered org.varlink.service.MethodNotFound" "saying why"
ok "they ran" test -s "$O/order"
sunkd_stop
config

# ---- sunkd accepts but does not answer: Ping's 2 s, then the scripts here ----
sunkd_start
rm -f "$O/order"
kill -STOP "$SUNKD_PID"
prolog 2> "$O/client.err"
rc=$?
kill -CONT "$SUNKD_PID"
is "$rc" 0 "with sunkd stopped (SIGSTOP) the client runs the scripts itself"
like "$(cat "$O/client.err")" "sunkd does not answer at .*: Connection timed out" "once Ping went unanswered"
ok "they ran" test -s "$O/order"
sunkd_stop

# ---- sunkd dies after Run was sent: no fallback ----
sunkd_start
rm -f "$O/started" "$O/go" "$O/count"
script "$P/40-wait" "echo x >> $O/count; touch $O/started; while [ ! -e $O/go ]; do sleep 0.05; done"
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$SOCK" --settings "$SETTINGS" 2> "$O/client.err" &
CLIENT=$!
wait_for_file "$O/started" 600 || bail_out "the script did not start"
kill -KILL "$SUNKD_PID"
wait "$SUNKD_PID" 2>/dev/null
SUNKD_PID=
wait "$CLIENT"
is "$?" 1 "a connection lost after Run fails the prolog"
like "$(cat "$O/client.err")" "not run again here" "saying the scripts may have run in part"
touch "$O/go"
is "$(wc -l < "$O/count")" 1 "the client did not run them again"
rm "$P/40-wait"

# ---- sunkd stopped: the client runs the scripts itself ----
rm -f "$O/order" "$O/env"
prolog 2> "$O/client.err"
is "$?" 0 "with sunkd stopped the client runs the scripts itself"
is "$(cat "$O/order")" "second
Upper" "the same scripts, in the same order"
like "$(cat "$O/env")" "SLURM_JOB_ID=4242" "with the job's environment"
like "$(cat "$O/client.err")" "running the prolog scripts here" "saying so"
script "$P/15-gpu" 'echo "GPU 3 missing"; exit 3'
rm -f "$O/order"
prolog 2> "$O/client.err"
is "$?" 1 "a failing script fails the client's own run too"
like "$(cat "$O/client.err")" "15-gpu" "naming the script"
is "$(cat "$O/order" 2>/dev/null)" "" "and stops there"
rm "$P/15-gpu"
rm -f "$O/order"
env -i "${JOBENV[@]}" "$B/sunkd-prolog" --socket "$T/nonexistent" --settings "$SETTINGS" --local
is "$?" 0 "--local runs the scripts without asking sunkd"
ok "--local ran them" test -s "$O/order"

config 30s 60s fail
sunkd_start
ok "the module leaves its settings for the client" wait_until 300 grep -q '"on_daemon_unreachable":"fail"' "$SETTINGS"
sunkd_stop
rm -f "$O/order"
prolog 2> "$O/client.err"
is "$?" 1 "on_daemon_unreachable: fail: the client fails"
like "$(cat "$O/client.err")" "on_daemon_unreachable is fail" "saying why"
ok "and runs nothing" test ! -e "$O/order"

# ---- a mistake in sunkd.yaml is refused where it is made ----
dirs_config() { # PROLOG_DIR [EXTRA KEY LINE]
        sunkd_config "modules:
  prolog:
    prolog_dir: $1
    epilog_dir: $E
    ${2:-keep_runs: 5}"
}
dirs_config "$T/typo.d"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "--check-config refuses a prolog_dir that does not exist"
like "$out" "sunkd.yaml:6:[0-9]+: key 'prolog_dir': prolog directory '$T/typo.d' does not exist \(create it, or set missing_dir: later" \
        "naming the file, line, key and the way out"
"$SUNKD" -c "$T/sunkd.yaml" > "$O/start.log" 2>&1
is "$?" 2 "sunkd refuses to start with it"
mkdir -m 755 "$T/owned.d"
chown 65534 "$T/owned.d"
dirs_config "$T/owned.d"
like "$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)" "key 'prolog_dir': refusing prolog directory '$T/owned.d': owned by uid 65534" \
        "a directory another uid owns is refused at --check-config"
chown 0 "$T/owned.d"
script "$T/owned.d/10-theirs" "true"
chown 65534 "$T/owned.d/10-theirs"
like "$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)" "key 'prolog_dir': refusing prolog script '$T/owned.d/10-theirs': owned by uid 65534" \
        "and so is a script another uid owns, by its name"
rm -r "$T/owned.d"
# every error of the section in one round: keys, bounds, choices, directories
dirs_config "$T/typo.d" "keep_runs: many
    kill_grace: 1h
    on_daemon_unreachable: maybe"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "one round: refused"
like "$out" "key 'keep_runs': 'many' is not an integer" "one round: the key's type"
like "$out" "key 'kill_grace': from 1ms to 10m" "one round: a bound"
like "$out" "key 'on_daemon_unreachable': run or fail" "one round: the choice after it"
like "$out" "key 'prolog_dir': prolog directory '$T/typo.d' does not exist" "one round: the directory"
config
sunkd_start
dirs_config "$T/typo.d"
sunkd_hup
like "$(log_since)" "key 'prolog_dir': prolog directory '$T/typo.d' does not exist" "a reload refuses it"
rm -f "$O/order"
prolog
is "$?" 0 "and the scripts sunkd ran with still run"
ok "they ran" test -s "$O/order"
sunkd_stop
dirs_config "$T/later.d" "missing_dir: later"
"$SUNKD" --check-config -c "$T/sunkd.yaml" > "$O/check.log" 2>&1
is "$?" 0 "missing_dir: later accepts a directory mounted after sunkd starts"
sunkd_start
prolog 2> "$O/client.err"
is "$?" 1 "and each run fails while it is missing, never passes with nothing run"
like "$(last_run reason)" "^prolog .*later.d" "naming the directory"
like "$(last_run error)" "does not exist" "saying it does not exist"
mkdir -m 755 "$T/later.d"
script "$T/later.d/10-here" "echo here >> $O/later"
prolog
is "$?" 0 "once it appears, its scripts run"
is "$(cat "$O/later")" "here" "these ones"
sunkd_stop

# ---- the fallback runs what sunkd would run, or fails ----
SIDE="$T/run/prolog/client.json"
ok "the settings lie beside the socket, whatever state_dir is" test -s "$SIDE"
ok "and not in the state directory" test ! -e "$T/state/prolog/client.json"
rm -f "$O/later"
prolog 2> "$O/client.err"
is "$?" 0 "with sunkd stopped, the client runs the directory sunkd.yaml names"
is "$(cat "$O/later")" "here" "that one"
rm "$SIDE"
rm -f "$O/order" "$O/later"
prolog 2> "$O/client.err"
is "$?" 1 "without the settings the fallback fails"
like "$(cat "$O/client.err")" "cannot run the prolog scripts here: sunkd has left no settings at $SIDE" "saying why"
ok "and runs nothing" test ! -e "$O/order"
rm -r "$T/later.d"
config
sunkd_start
sunkd_stop
rm -r "$E"
epilog 2> "$O/client.err"
is "$?" 1 "a directory gone since sunkd stopped fails the fallback"
like "$(cat "$O/client.err")" "epilog directory '$E' does not exist" "saying so"
mkdir -m 755 "$E"

# ---- hostile calls ----
config
sunkd_start
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
call() { python3 "$RAW" "$SOCK" call io.sunkd.Prolog.Run "$1" 2>&1; }
like "$(call '{"kind":"other","env":[]}')" "InvalidParameter.*kind" "an unknown kind is refused"
like "$(call '{"kind":"prolog"}')" "InvalidParameter.*env" "a missing env is refused"
like "$(call '{"kind":"prolog","env":"A=B"}')" "InvalidParameter.*env" "an env that is not an array is refused"
like "$(call '{"kind":"prolog","env":["NOEQUALS"]}')" "InvalidParameter.*env" "an entry without '=' is refused"
like "$(call '{"kind":"prolog","env":["=x"]}')" "InvalidParameter.*env" "an entry without a name is refused"
like "$(call '{"kind":"prolog","env":[1]}')" "InvalidParameter.*env" "an entry that is not a string is refused"
like "$(setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 "$RAW" "$SOCK" call io.sunkd.Prolog.Run '{"kind":"prolog","env":[]}' 2>&1)" \
        "PermissionDenied" "a peer other than root may not run scripts"
like "$(setpriv --reuid 65534 --regid 65534 --clear-groups "$SUNKCTL" --socket "$SOCK" prolog 2>&1)" \
        "PermissionDenied" "nor read their output"
like "$(call '{"kind":"prolog","environ":"not base64!"}')" "InvalidParameter.*environ" "an environ that is not base64 is refused"
like "$(call '{"kind":"prolog","environ":"QQ=="}')" "InvalidParameter.*environ" "and one whose last entry has no NUL"
like "$(call '{"kind":"prolog","environ":7}')" "InvalidParameter.*environ" "and one that is not a string"
BIG=$(python3 -c 'import json; print(json.dumps({"kind":"other","pad":"x"*100000}))')
like "$(setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 "$RAW" "$SOCK" call io.sunkd.Prolog.Run "$BIG" 2>&1)" \
        "InvalidMessage.*too large" "a call past max_request_size from another uid is refused unread"
like "$(call "$BIG")" "InvalidParameter.*kind" "root's is read (the prolog client hands over a whole environment)"

# ---- the job's environment, byte for byte, whatever its size ----
rm -f "$O/env" "$O/environ"
script "$P/10-env" "cat /proc/\$\$/environ > $O/environ"
JOBENV+=("SLURM_BIG=$(head -c 70000 /dev/zero | tr '\0' x)" "SLURM_JOB_ACCOUNT=caf$(printf '\xe9') $(printf '\xff\xfe')"
         "SLURM_JOB_WORK_DIR=/tmp/$(printf '\xff')dir" "$(printf 'NAME\xff')=value" "LD_PRELOAD=/tmp/evil.so"
         "BASH_ENV=/tmp/evil.sh" "BASH_FUNC_ls%%=() { :; }" "PYTHONPATH=/tmp/evil")
prolog 2> "$O/client.err"
is "$?" 0 "an environment over max_request_size, with bytes that are not UTF-8, passes the prolog"
python3 - "$O/environ" "${JOBENV[@]}" <<'PY' > "$O/env-diff"
import os, sys
got = open(sys.argv[1], 'rb').read().split(b'\0')[:-1]
sent = [os.fsencode(a) for a in sys.argv[2:]]
dropped = (b'LD_', b'BASH_ENV=', b'BASH_FUNC_', b'PYTHON')
want = [e for e in sent if not e.startswith(dropped)]
ours = (b'PATH=', b'SUNKD_SCRIPT=', b'PWD=', b'SHLVL=', b'_=', b'OLDPWD=')
extra = [e for e in got if e not in want and not e.startswith(ours)]
missing = [e for e in want if e not in got]
leaked = [e for e in got if e.startswith(dropped)]
print(len(missing), len(extra), len(leaked))
print('missing', missing, 'extra', extra, 'leaked', leaked, file=sys.stderr)
PY
is "$(cat "$O/env-diff")" "0 0 0" "each script sees the job's entries exactly, less the loader's and shells' (LD_*, BASH_ENV, BASH_FUNC_*, PYTHON*)"
is "$(last_run job_id)" "4242" "and the run is recorded"
kill -0 "$SUNKD_PID"
is "$?" 0 "sunkd is alive after it all"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
