#!/bin/bash
# A reload touches only the modules whose section changed.  20 SIGHUPs with
# the same file leave every module as it was: its state, its jobs' last
# runs, its facts, the XID history.  A change to one section reloads (or
# restarts) that module alone.  A file a section names that changed counts
# as a change; an allow list alone does not touch the module.  A module
# whose reload hook fails runs on with its previous section and the reload
# says so; a reload while a module is still restarting from the last one.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
{ cat "$DATA/nvml-h100-8.desc"; echo "events|$EV"; } > "$T/nvml.desc"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
printf 'NodeName=gpu-node-07 Gres=gpu:h100:8\n' > "$T/slurm.conf"
install -m 600 /dev/null "$T/secret" && printf 'one\n' > "$T/secret"
touch "$T/gate"
export FAKE_NVML_CONFIG="$T/nvml.desc"
# gres's kernel log: a quiet stand-in (a FIFO this test holds open), so that
# its reads wait in their hour-long window as the XID watch does.
mkfifo "$T/kmsg" && exec 7<>"$T/kmsg" || bail_out "cannot make the kernel log's stand-in"

# config TESTMOD-KEYS NORELOAD-KEYS GRES-KEYS: each section's own lines;
# testmod's interval is $INTERVAL.
INTERVAL=1h
config() {
        sunkd_config "modules:
  testmod:
    interval: $INTERVAL
    secret: file:$T/secret
$1
  noreload:
    gate_file: $T/gate
$2
  gres:
    nvml_library: $NVML
    root: $T/root
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    node_name: gpu-node-07
    interval: 1h
    xid_window: 1h
    kmsg: $T/kmsg
$3"
}

# What one module is: its status, its jobs (runs, failures, last start,
# success and duration, state), and for gres its fact.
snapshot() {
        {
                ctl --json status | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["modules"] if m["name"] == sys.argv[1]][0]
print(json.dumps(m, sort_keys=True))' "$1"
                ctl --json jobs | python3 -c '
import json, sys
keys = ("name", "state", "runs", "failures", "last_start_usec", "last_success_usec", "last_duration_usec")
for j in json.load(sys.stdin)["jobs"]:
    if j.get("module") == sys.argv[1]:
        print(json.dumps({k: j.get(k) for k in keys}, sort_keys=True))' "$1"
                [ "$1" = gres ] && python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}' |
                        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["parameters"]["value"], sort_keys=True))'
                [ "$1" = testmod ] && python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"testmod.echo"}'
        } 2>&1
}
all() { snapshot testmod; snapshot noreload; snapshot gres; }
st() { module_status "$1" "$2"; }
initialised() { log_since | grep -c "sunkd\[$1\]: Module initialised"; }

config
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
watching() { [ "$(st gres xid_watch)" = watching ] && [ "$(job_field gres.events state)" = running ]; }
ok "the XID watch waits in its hour-long window" wait_until 300 watching
# State each module holds in memory only.
(IFS='|'; echo "00000000:18:00.0|79") > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "an XID is seen" wait_until 300 eval '[ "$(st gres xid_events)" = 1 ] && watching'
# A new XID starts a discovery and a save of the XID log; the kernel log's
# read waits in its window: then nothing of gres moves until something comes.
quiet() {
        [ "$(job_field gres.discover runs)" -ge 2 ] && [ "$(job_field gres.discover state)" = scheduled ] &&
                [ "$(job_field gres.save runs)" -ge 2 ] && [ "$(job_field gres.save state)" = scheduled ] &&
                [ "$(st gres kmsg_read)" = reading ] && [ "$(job_field gres.kmsg state)" = running ]
}
ok "gres's jobs are done with it" wait_until 300 quiet
ctl run testmod.flaky > /dev/null
ctl run noreload.gated > /dev/null || bail_out "noreload.gated failed"
python3 "$RAW" "$SOCK" call io.sunkd.Test.Publish '{"name":"testmod.echo","value":{"n":1}}' > /dev/null
wait_until 300 eval 'python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact "{}" | grep -q "\"seen\": 1"' ||
        bail_out "the fact subscription did not see the fact"
before_t=$(snapshot testmod) before_n=$(snapshot noreload) before_g=$(snapshot gres)
like "$before_t" '"flaky_runs": 1' "(testmod ran its flaky job once)"
like "$before_n" '"runs": 1' "(noreload ran its job once)"
like "$before_g" '"xid_events": 1' "(gres saw one XID)"

# ---- 20 SIGHUPs with an unchanged file ----------------------------------------
log_mark
for i in $(seq 20); do
        config # written again: the same text, a new mtime
        kill -HUP "$SUNKD_PID"
        wait_until 300 eval '[ "$(log_since | grep -c "Configuration reloaded\.")" -ge '"$i"' ]' ||
                bail_out "reload $i was not reported"
done
is "$(log_since | grep -c 'Configuration reloaded\.')" 20 "20 reloads"
is "$(ctl --json status | python3 -c 'import json,sys; print(json.load(sys.stdin)["reloads"])')" 20 "all counted"
is "$(snapshot testmod)" "$before_t" "testmod: its state, its jobs' last runs and the fact it follows are as they were"
is "$(snapshot noreload)" "$before_n" "noreload (no reload hook): not restarted, its job's last run kept"
is "$(snapshot gres)" "$before_g" "gres: its discovery, jobs, XID history and the gres.gpus fact are as they were"
unlike "$(log_since)" "Module initialised|Restarting the module|Applying the new configuration|stopped" \
       "no module was restarted or reloaded"

# ---- A change to one section: that module alone --------------------------------
config "    splay: 1s"
log_mark
sunkd_hup
like "$(log_since)" "sunkd\[testmod\]: Applying the new configuration" "testmod's section changed: it is reloaded"
is "$(st testmod reloads)" 1 "its hook ran once"
is "$(st testmod flaky_runs)" 1 "in place"
is "$(snapshot noreload)" "$before_n" "noreload is untouched"
is "$(snapshot gres)" "$before_g" "gres is untouched"
before_t=$(snapshot testmod)

config "    splay: 1s" "    generation: 2"
log_mark
sunkd_hup
ok "noreload's section changed: it is restarted" wait_until 300 eval '[ "$(st noreload generation)" = 2 ]'
is "$(st noreload runs)" 0 "(its state is new)"
is "$(snapshot testmod)" "$before_t" "testmod is untouched"
is "$(snapshot gres)" "$before_g" "gres is untouched"
before_n=$(snapshot noreload)

# gres: a new type alias is applied in place: the next discovery writes it,
# and nothing else of the module is lost.
runs=$(st gres runs)
config "    splay: 1s" "    generation: 2" "    type_alias:
      NVIDIA H100 80GB HBM3: h100"
log_mark
sunkd_hup
like "$(log_since)" "sunkd\[gres\]: Applying the new configuration" "gres's section changed: it is reloaded"
# The work writes gres.conf; the run is counted when its result is taken in:
# wait for the count, then look at both.
ok "a discovery runs" wait_until 300 eval '[ "$(st gres runs)" -ge $((runs + 1)) ]'
ok "with the alias" grep -q "Type=h100" "$T/gres.conf"
is "$(st gres runs)" $((runs + 1)) "gres: one more discovery, not a first one"
is "$(st gres xid_events) $(st gres xid_watch)" "1 watching" "gres: the XID history and the watch are kept"
unlike "$(log_since)" "sunkd\[gres\]: (Module initialised|Restarting)" "gres was not restarted"
is "$(snapshot testmod)" "$before_t" "testmod is untouched"
is "$(snapshot noreload)" "$before_n" "noreload is untouched"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}')" '"type": "h100"' \
     "the gres.gpus fact shows the alias"

# Turning the XID watch off removes a job: gres restarts; the XID log is on disk.
config "    splay: 1s" "    generation: 2" "    type_alias:
      NVIDIA H100 80GB HBM3: h100
    xid_events: no"
log_mark
sunkd_hup
ok "xid_events: no restarts gres" \
   wait_log "sunkd\[gres\]: Restarting the module to apply the new configuration, which it cannot apply in place"
ok "which discovers again" wait_until 300 eval '[ "$(st gres runs)" = 1 ]'
is "$(st gres xid_events)" 1 "the XID history is read back"
is "$(job_field gres.events name)" "" "gres.events is gone"
is "$(snapshot testmod)" "$before_t" "testmod is untouched"
is "$(snapshot noreload)" "$before_n" "noreload is untouched"
GRES3="    type_alias:
      NVIDIA H100 80GB HBM3: h100
    xid_events: no"
before_g=$(snapshot gres)

# ---- What a section names: a file that changed is a change ---------------------
printf 'two-two\n' > "$T/secret"
log_mark
sunkd_hup
like "$(log_since)" "sunkd\[testmod\]: Applying the new configuration" "a changed secret file reloads testmod"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Watched)" '"secret_length": 7' "which reads the new secret"
is "$(snapshot noreload)" "$before_n" "noreload is untouched"
is "$(snapshot gres)" "$before_g" "gres is untouched"

# The host's own keys: an allow list is not the module's business.
config "    splay: 1s" "    generation: 2
    allow: [nobody]
    required: false" "$GRES3"
log_mark
sunkd_hup
is "$(snapshot noreload)" "$before_n" "a new allow list and required: noreload is not restarted"
unlike "$(log_since)" "sunkd\[noreload\]" "nor touched"
before_t=$(snapshot testmod)

# ---- A reload hook that fails ----------------------------------------------------
interval() { st testmod interval_usec; }
INTERVAL=5m
config "    splay: 1s
    reload_fail: true" "    generation: 3
    allow: [nobody]" "$GRES3"
log_mark
out=$(ctl reload 2>&1); rc=$?
is "$rc" 1 "sunkctl reload fails when a module cannot apply its section"
like "$out" "is in force, except for module\(s\) testmod \(runs its previous configuration: Input/output error\) \(io.sunkd.ReloadFailed\)" \
     "and names the module"
like "$(log_since)" "sunkd\[testmod\]: .*Module failed to apply the new configuration, keeping the running one" \
     "the log says so"
like "$(log_since)" "Configuration reloaded, keeping the running configuration of: testmod" "and sums it up"
is "$(interval)" 3600000000 "testmod keeps its previous interval"
is "$(ctl --json status | python3 -c 'import json,sys; print([m for m in json.load(sys.stdin)["modules"] if m["name"]=="testmod"][0]["state"])')" \
   running "and runs on"
module_error() {
        ctl --json status | python3 -c 'import json,sys; print([m for m in json.load(sys.stdin)["modules"] if m["name"]==sys.argv[1]][0].get("error", ""))' "$1"
}
is "$(module_error testmod)" "reload failed: Input/output error; running the previous configuration" \
   "status shows the failure"
ok "the rest of the file is applied: noreload restarts" wait_until 300 eval '[ "$(st noreload generation)" = 3 ]'
reloads=$(st testmod reloads)
log_mark
ctl reload > /dev/null 2>&1
is "$(st testmod reloads)" $((reloads + 1)) "the same file again: the failed hook is tried again"
is "$(st noreload generation)" 3 "(noreload is left alone now)"
config "    splay: 1s" "    generation: 3
    allow: [nobody]" "$GRES3"
is "$(ctl reload)" "Configuration reloaded." "without reload_fail the reload succeeds"
is "$(interval)" 300000000 "the new interval is in force"
is "$(module_error testmod)" "" "and the error is gone"
is "$(snapshot gres)" "$before_g" "gres was untouched throughout"

# ---- A reload while a module still restarts from the last one -------------------
rm -f "$T/gate" "$T/gate.started" # the run above left its marker: wait on a fresh one
ctl run noreload.gated > /dev/null 2>&1 &
RUN_PID=$!
ok "noreload's job runs, and waits for its gate" wait_for_file "$T/gate.started"
config "    splay: 1s" "    generation: 4
    allow: [nobody]" "$GRES3"
log_mark
is "$(ctl reload)" "Configuration reloaded." "a reload that restarts noreload"
is "$(ctl --json status | python3 -c 'import json,sys; print([m for m in json.load(sys.stdin)["modules"] if m["name"]=="noreload"][0]["state"])')" \
   stopping "noreload waits for its run to end"
INTERVAL=7m
config "    splay: 1s" "    generation: 5
    allow: [nobody]" "$GRES3"
# Two clients and a SIGHUP at once, while noreload is still stopping.
ctl reload > "$T/r1.out" 2>&1 &
R1=$!
ctl reload > "$T/r2.out" 2>&1 &
R2=$!
kill -HUP "$SUNKD_PID"
wait $R1; rc1=$?
wait $R2; rc2=$?
is "$rc1:$rc2" "0:0" "two reloads at once, beside a SIGHUP, both succeed"
is "$(interval)" 420000000 "testmod has the newest interval"
is "$(ctl --json status | python3 -c 'import json,sys; print([m for m in json.load(sys.stdin)["modules"] if m["name"]=="noreload"][0]["state"])')" \
   stopping "noreload still waits for its run"
touch "$T/gate"
wait $RUN_PID
ok "noreload comes back with the newest section" wait_until 300 eval '[ "$(st noreload generation)" = 5 ]'
is "$(initialised noreload)" 1 "initialised once, not once per reload"
is "$(snapshot gres)" "$before_g" "gres was untouched throughout"
is "$(ctl ping)" pong "sunkd runs on"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
