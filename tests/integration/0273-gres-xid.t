#!/bin/bash
# XID errors through NVML's event API (the fake NVML delivers what a test
# drops into its events directory): each logged as it happens, numbered,
# shown per GPU in io.sunkd.Gres.List, sunkctl gres, the gres.gpus fact and
# the metrics, and judged by none of them (the health module judges: a GPU's
# health is NVML's counters only, and xid_hold and xid_critical are warned
# about where they are set); a storm is taken in bounded windows and folded
# into one entry; GPUs that cannot be watched are named; a failing watch is
# logged and retried; the log survives a restart and a hostile log file is
# set aside; bad settings are located.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
# The events directory is a link, so that a storm can arrive all at once.
EV="$T/events"
mkdir "$T/events.0" && ln -s events.0 "$EV" || bail_out "cannot make the events directory"
{ cat "$DATA/nvml-h100-8.desc"; echo "events|$EV"; } > "$T/nvml.desc"
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
printf 'NodeName=gpu-node-07 Gres=gpu:h100:8\n' > "$T/slurm.conf"
# The kernel log is a quiet stand-in here (0276 feeds it): a FIFO this test
# holds open, so that it never reads as ended.
mkfifo "$T/kmsg" && exec 7<>"$T/kmsg" || bail_out "cannot make the kernel log's stand-in"
config() {
        sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    slurm_conf: $T/slurm.conf
    node_name: gpu-node-07
    interval: 1h
    xid_window: 1h
    kmsg: $T/kmsg
    type_alias:
      NVIDIA H100 80GB HBM3: h100
$1
  testmod: {}"
}
N=0
# event BUS XID [GI CI]: written aside, then renamed in, as the fake wants.
event() {
        N=$((N + 1))
        (IFS='|'; echo "$*") > "$EV/.new" && mv "$EV/.new" "$EV/$(printf '%06d' $N)"
}
list_gpu() {
        python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
                python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"][int(sys.argv[1])]; exec(sys.argv[2])' "$1" "$2"
}
metric() {
        ctl metrics | grep -E "^sunkd_$1\{uuid=\"$2\"" | awk '{print $2}'
}
module_status() {
        ctl --json status | python3 -c 'import json,sys; s=[m for m in json.load(sys.stdin)["modules"] if m["name"]=="gres"][0]["status"]; print(s.get(sys.argv[1], ""))' "$1"
}
G0=GPU-00000000-1111-2222-3333-444444444444
G1=GPU-00000001-1111-2222-3333-444444444444
G5=GPU-00000005-1111-2222-3333-444444444444

config
export FAKE_NVML_CONFIG="$T/nvml.desc"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
# The first window is a short one: the watch reports within a second, not
# after its hour.
watching() { [ "$(module_status xid_watch)" = watching ]; }
ok "status: watching, after the first, short window" wait_until 300 watching
ok "the watch reports what it watches" wait_log "Watching 8 GPU\(s\) for XID errors\."
# From then on the window is the hour xid_window says.
events_running() { watching && [ "$(job_field gres.events state)" = running ]; }
ok "gres.events waits for XID events in its hour-long window" wait_until 300 events_running

# An XID ends the hour-long window at once and is logged, as what happened:
# gres judges no XID (the health module does).
event 00000000:18:00.0 79
ok "an XID is logged as it happens, not at the window's end" \
   wait_log "GPU $G0 at 0000:18:00.0: XID 79 \(GPU has fallen off the bus\)\.$"
wait_until 300 eval '[ "$(module_status xid_events)" = 1 ]'
is "$(module_status xid_watch) $(module_status xid_watched) $(module_status xid_seq)" "watching 8 1" \
   "status: watching, 8 GPUs, the event numbered 1"
like "$(ctl gres)" "GPU 0 at 0000:18:00.0, XID errors: XID 79 \(GPU has fallen off the bus\) at 2[0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z \[nvml\]" \
     "sunkctl gres names the XID, when, and where it was seen"
unlike "$(ctl gres)" "unhealthy" "and calls no GPU unhealthy for it"
is "$(list_gpu 0 'e=g["xid_events"]; print(len(e), e[0]["xid"], e[0]["what"], e[0]["uuid"], "gpu_instance" in e[0], e[0]["seq"], e[0]["count"], e[0]["source"], all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" \
   "1 79 GPU has fallen off the bus $G0 False 1 1 nvml True" "List: the GPU's XID events, numbered; its health is NVML's"
is "$(list_gpu 1 'print("xid_events" in g, all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" "False True" "List: other GPUs are untouched"
fact=$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}')
is "$(echo "$fact" | python3 -c 'import json,sys; f=json.load(sys.stdin)["parameters"]["value"]; e=f["xid_events"][-1]; print("healthy" in f, "healthy" in f["gpus"][0]["health"], "problems" in f["gpus"][0]["health"], f["xid_seq"], e["seq"], e["xid"], e["bus_id"], e["uuid"], e["source"], e["count"])')" \
   "False False False 1 1 79 0000:18:00.0 $G0 nvml 1" "the gres.gpus fact carries the event in its log, and no verdict"
is "$(metric gres_gpu_xid_errors_total $G0) $(metric gres_gpu_last_xid $G0) $(metric gres_gpu_ecc_uncorrected $G0)" "1 79 0" \
   "metrics: the GPU's XID count, its last XID; its ECC count is NVML's"

# An XID an application causes is logged and shown, but the GPU stays healthy;
# one inside a MIG instance names it.
log_mark
event 00000000:2a:00.0 13 3 0
ok "an application's XID is logged with its GPU instance" \
   wait_log "GPU $G1 at 0000:2a:00.0 \(GPU instance 3\): XID 13 \(graphics engine exception\)\.$"
wait_until 300 eval '[ "$(module_status xid_events)" = 2 ]'
is "$(list_gpu 1 'e=g["xid_events"][0]; print(e["xid"], e["gpu_instance"], e["compute_instance"], all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" \
   "13 3 0 True" "List: shown, with its instance, the GPU healthy"
is "$(metric gres_gpu_ecc_uncorrected $G1)" 0 "metrics: its ECC count still NVML's"
event 00000000:18:00.0 79
wait_until 300 eval '[ "$(module_status xid_events)" = 3 ]'
# Repeats within a minute of the first are one entry that counts them (on a
# machine so slow that a minute passed, two entries; the count is the same).
is "$(list_gpu 0 'e=[x for x in g["xid_events"] if x["xid"] == 79]; print(sum(x["count"] for x in e), e[-1]["last_seq"])')" \
   "2 3" "the same XID twice is counted, and numbered"

# A storm: 150 events at once come in windows of at most 64, are folded into
# one entry per GPU and XID, and are logged in a few lines, not 150.
log_mark
runs=$(job_field gres.events runs)
mkdir "$T/events.1" || bail_out "cannot make the storm"
for i in $(seq 150); do
        printf '00000000:AB:00.0|31\n' > "$T/events.1/s$(printf '%04d' $i)"
done
ln -s events.1 "$T/events.new" && mv -T "$T/events.new" "$EV" || bail_out "cannot swap the storm in"
ok "all 150 are counted" wait_until 600 eval '[ "$(metric gres_gpu_xid_errors_total $G5)" = 150 ]'
ok "a window hands back at most 64" eval '[ $(( $(job_field gres.events runs) - runs )) -ge 3 ]'
ok "the summary of the repeats is logged" wait_log "XID storm: [0-9]+ repeat\(s\) folded into the log: XID 31 on $G5 \(pci 0000:ab:00.0\)" 600
logged=$(log_since | grep -c 'XID 31')
ok "a few lines say so, not one per event ($logged)" eval '[ "$logged" -le 4 ]'
is "$(list_gpu 5 'e=g["xid_events"]; print(sum(x["count"] for x in e), len(e) <= 3, e[-1]["last_seq"], all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" \
   "150 True 153 True" "List: the storm folded, all 150 counted and numbered"

# The log is kept (root-only) across a restart: the GPU is still unhealthy.
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly with the watch running"
is "$(stat -c %a "$T/state/gres/xid-events.json")" 600 "the XID log is root's only"
sunkd_start
LOG_MARK=0
wait_runs gres.discover 1 || bail_out "no discovery after the restart"
is "$(list_gpu 0 'print(sum(x["count"] for x in g["xid_events"] if x["xid"] == 79))')" 2 "after a restart the XIDs remain"
is "$(module_status xid_events) $(module_status xid_seq)" "153 153" "status: the count and the numbers carry over"
event 00000000:18:00.0 48
ok "the next event after a restart" wait_until 300 eval '[ "$(module_status xid_seq)" = 154 ]'
is "$(list_gpu 0 'print(g["xid_events"][-1]["seq"], g["xid_events"][-1]["xid"])')" "154 48" "is numbered on from the last"

# xid_hold and xid_critical were gres's XID policy: now the health module's
# xid_policy.  Set, each is warned about where it is, the reload goes
# through, and no GPU is judged by them.
for key in "xid_hold: 0s" "xid_critical: [13]"; do
        config "    $key"
        sunkd_hup
        like "$(log_since)" "sunkd.yaml:[0-9]+:[0-9]+: key '${key%%:*}' is ignored: gres no longer judges XID errors; the health module does, as modules.health.xid_policy says" \
             "${key%%:*}: warned about, located, pointing to health's xid_policy"
        unlike "$(log_since)" "Reload failed|error:" "${key%%:*}: the reload goes through"
        is "$(list_gpu 0 'print(all(v == 0 for k, v in g["health"].items() if k != "recovery"))') $(list_gpu 1 'print(all(v == 0 for k, v in g["health"].items() if k != "recovery"))')" "True True" \
           "${key%%:*}: the GPUs' health is NVML's still"
done

# A GPU that cannot be registered is named; a wait that fails is logged, and
# the watch comes back.
sunkd_stop
sed -i 's/^\(gpu|00000000:3A:00.0|.*\)|-$/\1|events/' "$T/nvml.desc"
# ... and one whose UUID the driver reports with a space, which sunkd keeps nowhere.
sed -i 's/|GPU-00000007-/|GPU 00000007-/' "$T/nvml.desc"
grep -q '|events$' "$T/nvml.desc" || bail_out "cannot mark a GPU"
config
sunkd_start
LOG_MARK=0
event 00000000:18:00.0 48
ok "a GPU that cannot be watched is named" \
   wait_log "Watching 7 GPU\(s\) for XID errors; cannot watch \[\"0000:3a:00.0: Not Supported\"\]\."
is "$(module_status xid_unwatched)" "['0000:3a:00.0: Not Supported']" "status: the unwatched GPU"
log_mark
event 00000000:DB:00.0 79
event 00000000:18:00.0 48
ok "an event whose UUID sunkd would not keep is dropped, and said so" \
   wait_log "Dropped 1 XID event\(s\) of a GPU whose bus id or UUID NVML reports in a form sunkd does not keep\."
ok "the saved log stays valid and without it" python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
sys.exit(0 if ev and all(" " not in e["uuid"] for e in ev) else 1)' "$T/state/gres/xid-events.json"
log_mark
echo lost > "$EV/.new" && mv "$EV/.new" "$EV/zzz-lost"
ok "a failing watch is logged" wait_log "Not watching for XID errors: nvmlEventSetWait_v2: Fake error \(15\)\."
is "$(module_status xid_watch)" failed "status: failed"
before=$(module_status xid_events)
event 00000000:18:00.0 48
# (a repeat of the XID 48 above, within a minute of it: counted, not logged)
ok "it comes back after its backoff and takes the next event" \
   wait_until 1200 eval '[ "$(module_status xid_events)" = $((before + 1)) ]'
is "$(module_status xid_watch)" watching "status: watching again"

# A hostile or broken log file is set aside, never trusted.
for bad in '{"total": 1, "events": [{"bus_id": "../../etc/x", "uuid": "GPU-x", "xid": 79, "time_usec": 1}]}' \
           '{"total": 1, "events": [{"bus_id": "0000:18:00.0", "uuid": "GPU x", "xid": 79, "time_usec": 1}]}' \
           '{"total": 1, "events": [{"bus_id": "0000:18:00.0", "uuid": "GPU-x", "xid": -1, "time_usec": 1}]}' \
           '{"total": 0, "events": [{"bus_id": "0000:18:00.0", "uuid": "GPU-x", "xid": 79, "time_usec": 1}]}' \
           '[1, 2]' 'not json'; do
        sunkd_stop
        printf '%s' "$bad" > "$T/state/gres/xid-events.json"
        sunkd_start
        LOG_MARK=0
        ok "a bad log is set aside: ${bad:0:60}" \
           wait_log "Cannot take the XID log from '$T/state/gres/xid-events.json' \(not a valid log\); it starts empty"
        wait_runs gres.discover 1 || bail_out "no discovery"
        is "$(module_status xid_events)" 0 "and nothing of it is shown"
done
# The watch waits out its hour-long window: stopping cancels it, and says so.
ok "the XID watch runs its hour-long window" wait_until 300 events_running
log_mark
sunkd_stop
like "$(log_since)" "Job 'gres.events' cancelled: its module is stopping\." "stopping cancels the XID watch, and says so"
unlike "$(log_since)" "warning|Not watching|failed" "and warns of nothing"
head -c 300000 /dev/zero | tr '\0' ' ' > "$T/state/gres/xid-events.json"
sunkd_start
LOG_MARK=0
ok "an oversized log is refused, not read" wait_log "Cannot take the XID log from .* \(File too large\)"
is "$(ctl ping)" pong "sunkd runs"

# xid_events: no: no watch at all.
sunkd_stop
config "    xid_events: no"
sunkd_start
wait_runs gres.discover 1 || bail_out "no discovery"
is "$(job_field gres.events name)$(job_field gres.kmsg name)" "" "xid_events: no adds no gres.events job and no gres.kmsg job"

# Bad settings are located.
for bad in "xid_window: 0s|key 'xid_window': from 1s to 1d" "xid_window: 2d|key 'xid_window': from 1s to 1d" \
           "kmsg: dev/kmsg|key 'kmsg'" "xid_hold: soon|key 'xid_hold'"; do
        sunkd_config "modules:
  gres:
    ${bad%%|*}"
        out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
        is "$rc" 2 "${bad%%|*} is a config error"
        like "$out" "sunkd.yaml:[0-9]+:[0-9]+: ${bad#*|}" "and located"
done
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
