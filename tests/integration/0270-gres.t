#!/bin/bash
# The gres module on the fake NVML: sunkctl gres, --slurmd-conf and --check
# against a slurm.conf, gres.conf written only when it changes, a GPU lost,
# an NVML that hangs (the child is killed, /proc takes over, the socket
# answers meanwhile), hostile slurm.conf files and a node without GPUs.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
DATA="$SUNKD_SRCDIR/tests/data/gres"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
NODE=gpu-node-07

cp "$DATA/nvml-h100-8.desc" "$T/nvml.desc"
# The node of the golden files: 2 sockets x 48 cores x 2 threads.
cp -r "$DATA/proc-node" "$T/root" && "$SUNKD_SRCDIR/tests/lib/fake-cpu-topology.sh" "$T/root" 2 48 2 ||
        bail_out "cannot build the fake root"
printf 'ClusterName=test\nNodeName=DEFAULT CPUs=128\nNodeName=gpu-node-[01-16] Gres=gpu:h100:8 \\\n  RealMemory=1000 # the HGX nodes\n' > "$T/slurm.conf"
config() {
        sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    gres_conf: $T/gres.conf
    slurm_conf: $T/slurm.conf
    node_name: $NODE
    timeout: ${1:-60s}
    interval: 1h
    type_alias:
      NVIDIA H100 80GB HBM3: h100
  testmod: {}"
}
config
export FAKE_NVML_CONFIG="$T/nvml.desc" FAKE_NVML_HANG_FILE="$T/nvml-hung"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
ok "the first discovery" wait_runs gres.discover 1
out=$(ctl gres)
like "$out" "source: nvml, Gres=gpu:h100:8" "sunkctl gres: the source and Gres="
is "$(printf '%s\n' "$out" | grep -c ' h100 ')" 8 "eight GPUs listed"
like "$out" "5     0     h100 +0000:ab:00.0 80G +48-95 +GPU-00000005" "index, minor, type, bus, memory, cores, uuid"
is "$(ctl gres --slurmd-conf)" "Gres=gpu:h100:8" "--slurmd-conf prints what slurmd -Z --conf takes"
out=$(ctl gres --check); rc=$?
is "$rc" 0 "--check: they match"
like "$out" "^match: 8 GPU\(s\) found, as Gres=gpu:h100:8 says" "and says so"
is "$(cat "$T/gres.conf")" "$(sed 's/Type=nvidia_h100_80gb_hbm3/Type=h100/' "$DATA/nvml-h100-8.gres.conf")" \
   "gres.conf in Slurm's syntax, with the alias"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '"uuid": "GPU-00000003-1111-2222-3333-444444444444"' \
     "io.sunkd.Gres.List answers in JSON"

before=$(stat -c '%i %y' "$T/gres.conf")
ctl run gres.discover > /dev/null || bail_out "discovery failed"
is "$(stat -c '%i %y' "$T/gres.conf")" "$before" "an unchanged gres.conf is not rewritten"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '"cores": "48-95", "cpus": "48-95,144-191"' \
     "List: the CPU ids of the affinity and Slurm's core indexes"

# Without a readable CPU topology, Cores= is left out (Slurm then lets any
# core use the GPU) rather than guessed; said once, and again when it is back.
mv "$T/root/sys/devices/system/cpu" "$T/cpu.away"
log_mark
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "a missing topology is logged" \
   log_since_has "Cannot read the CPU topology under '$T/root/sys/devices/system/cpu' \(No such file or directory\)"
is "$(grep -c 'Cores=' "$T/gres.conf")" 0 "gres.conf has no Cores="
is "$(grep -c '^Name=gpu' "$T/gres.conf")" 8 "and all 8 GPUs"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
is "$(log_since | grep -c 'Cannot read the CPU topology')" 1 "said once, not at every discovery"
mv "$T/cpu.away" "$T/root/sys/devices/system/cpu"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "its return is logged" log_since_has "The CPU topology is readable again"
is "$(cat "$T/gres.conf")" "$(sed 's/Type=nvidia_h100_80gb_hbm3/Type=h100/' "$DATA/nvml-h100-8.gres.conf")" \
   "Cores= is back"

# A GPU falls off the bus.
like "$(ctl metrics)" 'sunkd_gres_gpu_memory_bytes\{uuid="GPU-00000000-1111-2222-3333-444444444444",bus_id="0000:18:00.0"\}' \
     "the GPU has its series"
grep -v '00000000:18:00.0|3|' "$T/nvml.desc" > "$T/nvml.tmp" && mv "$T/nvml.tmp" "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "the lost GPU is logged" log_since_has "GPU GPU-00000000-1111-2222-3333-444444444444 \(h100\) at 0000:18:00.0 is gone"
out=$(ctl metrics)
unlike "$out" "GPU-00000000-1111-2222-3333-444444444444" "none of its series is left (metric_remove)"
is "$(printf '%s\n' "$out" | grep -c '^sunkd_gres_gpu_memory_bytes{')" 7 "the other seven GPUs' are"
out=$(ctl gres --check); rc=$?
is "$rc" 1 "--check fails"
is "$out" "mismatch: 7 of 8 h100 found, GPU-00000000-1111-2222-3333-444444444444 at 0000:18:00.0 missing" \
   "and names the missing GPU"
is "$(grep -c '^Name=gpu' "$T/gres.conf")" 7 "gres.conf is rewritten with 7 GPUs"
like "$(ctl metrics)" "sunkd_gres_gpu_changes_total 1" "the change is counted"
like "$(ctl metrics)" "sunkd_gres_check -1|sunkd_gres_check 0" "the check metric shows it"

# Hostile or broken slurm.conf: the check says why, nothing crashes.
check_with() { # WHAT EXPECTED-MESSAGE
        ctl run gres.discover > /dev/null || bail_out "discovery failed"
        out=$(ctl gres --check); rc=$?
        is "$rc" 1 "$1: --check fails"
        like "$out" "^unknown: $2" "$1: and says why"
}
printf 'NodeName=gpu-node-07 Gres=gpu:h100:\0x\n' > "$T/slurm.conf"
check_with "a NUL byte" "$T/slurm.conf: a NUL byte"
printf 'NodeName=other Gres=gpu:h100:8\n' > "$T/slurm.conf"
check_with "no line for this node" "$T/slurm.conf: no NodeName= line names $NODE"
printf 'NodeName=gpu-node-07 Gres=gpu:h100:eight\n' > "$T/slurm.conf"
check_with "a count that is not a number" "Gres=gpu:h100:eight: 'gpu:h100:eight' is not gpu\[:TYPE\]:COUNT"
head -c $((5 * 1024 * 1024)) /dev/zero | tr '\0' '#' > "$T/slurm.conf"
check_with "a 5 MB file" "$T/slurm.conf: larger than"
printf 'NodeName=gpu-node-[07-09\n' > "$T/slurm.conf"
check_with "a broken host list" "$T/slurm.conf: no NodeName= line names $NODE"
ok "sunkd is alive" eval 'ctl status > /dev/null'

# A GB200 tray: its line of a topology.conf for topology/block.  A GPU whose
# fabric registration is still pending breaks the domain: no line, and why.
cp "$DATA/nvml-gb200-4.desc" "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
is "$(ctl gres --block)" "BlockName=nvl-5a5a5a5a-5a5a-5a5a-5a5a-5a5a00000001-7 Nodes=$NODE" \
   "--block prints the node's topology/block line"
like "$(ctl gres)" "topology/block: BlockName=nvl-5a5a5a5a-5a5a-5a5a-5a5a-5a5a00000001-7 Nodes=$NODE" \
     "sunkctl gres shows it"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '"clique": 7, "cores"' "List shows each GPU's clique"
sed -i '0,/|5a5a5a5a5a5a5a5a5a5a5a5a00000001\/7$/s//|pending/' "$T/nvml.desc"
log_mark
ctl run gres.discover > /dev/null || bail_out "discovery failed"
out=$(ctl gres --block 2>&1); rc=$?
is "$rc" 1 "--block fails when the GPUs are not in one domain"
like "$out" "GPU GPU-b2000000-0000-0000-0000-000000000000 at 0008:01:00.0 is in no NVLink fabric, GPU GPU-b2000001" \
     "and names the GPU that is not"
ok "it is logged" log_since_has "The GPUs are not in one NVLink domain \(GPU GPU-b2000000"
cp "$DATA/nvml-h100-8.desc" "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
out=$(ctl gres --block 2>&1); rc=$?
is "$rc" 1 "--block fails on a node in no multi-node NVLink domain (HGX H100)"
like "$out" "no topology/block line: the GPUs are in no multi-node NVLink domain" "and says so"
ok "the end of the disagreement is logged" log_since_has "The GPUs no longer disagree about their NVLink domain"

# MIG: each instance is a GPU to Slurm, with its profile for a type and its
# GPU's device file and nvidia-caps files (from mig-minors under root:).
mkdir -p "$T/root/proc/driver/nvidia-caps" &&
        cp "$DATA/mig-node/proc/driver/nvidia-caps/mig-minors" "$T/root/proc/driver/nvidia-caps/" ||
        bail_out "cannot add mig-minors to the fake root"
cp "$DATA/nvml-a100-mig.desc" "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
is "$(cat "$T/gres.conf")" "$(cat "$DATA/nvml-a100-mig.gres.conf")" "MIG instances in gres.conf, with MultipleFiles="
is "$(ctl gres --slurmd-conf)" \
   "Gres=gpu:nvidia_a100_3g.20gb:2,gpu:nvidia_a100-sxm4-40gb:1,gpu:nvidia_a100_4g.20gb:1,gpu:nvidia_a100_2g.10gb:1,gpu:nvidia_a100_1g.5gb:3" \
   "and in Gres="
like "$(python3 "$RAW" "$SOCK" call io.sunkd.Gres.List)" '"file": "/dev/nvidia3,/dev/nvidia-caps/nvidia-cap417,/dev/nvidia-caps/nvidia-cap418", "health": \{[^}]*\}, "index": 2, "memory": 20937965568, "mig": 0' \
     "List shows a MIG instance's files and place"

# Health: what NVML reports of each GPU's memory and state, in sunkctl gres,
# io.sunkd.Gres.List, the gres.gpus fact the health module reads, metrics
# and the journal: observations, no verdict (the health module judges).
cp "$DATA/nvml-health.desc" "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
out=$(ctl gres)
like "$out" "GPU 1 at 0000:2a:00.0, memory: ecc_uncorrected_volatile 2, ecc_uncorrected_aggregate 5, retired_pages_pending 1, remapped_rows_uncorrectable 3, remap_pending 1; the driver asks to reset the GPU" \
     "sunkctl gres shows each counter the driver reports of a GPU"
like "$out" "GPU 3 at 0000:5d:00.0, memory: ecc_uncorrected_aggregate 1, remapped_rows_uncorrectable 7, remap_failure 1; the driver asks to reboot the node" \
     "and of another"
unlike "$out" "GPU [02] at" "GPUs whose counters are all 0, and those NVML cannot read, are not listed"
unlike "$out" "unhealthy" "sunkctl gres passes no verdict"
list_health() {
        python3 "$RAW" "$SOCK" call io.sunkd.Gres.List |
                python3 -c 'import json,sys; g=json.load(sys.stdin)["parameters"]["gpus"]; print(json.dumps(g[int(sys.argv[1])].get("health"), sort_keys=True))' "$1"
}
is "$(list_health 2)" '{}' "List: a GPU whose driver supports no health call has no counters"
is "$(list_health 3)" '{"ecc_uncorrected_aggregate": 1, "ecc_uncorrected_volatile": 0, "recovery": "reboot the node", "recovery_action": 2, "remap_failure": 1, "remap_pending": 0, "remapped_rows_uncorrectable": 7, "retired_pages_pending": 0}' \
   "List: every counter the driver reports, and no verdict"
fact=$(python3 "$RAW" "$SOCK" call io.sunkd.Test.Fact '{"name":"gres.gpus"}')
is "$(echo "$fact" | python3 -c 'import json,sys; f=json.load(sys.stdin)["parameters"]["value"]; print("healthy" in f, f["found"], [g["health"].get("remap_failure") for g in f["gpus"]], f["gpus"][1]["health"]["recovery"])')" \
   "False 4 [0, 0, None, 1] reset the GPU" "the gres.gpus fact carries each GPU's counters, no verdict"
metrics=$(ctl metrics)
unlike "$metrics" 'sunkd_gres_gpu_healthy' "metrics: no verdict"
like "$metrics" 'sunkd_gres_gpu_ecc_uncorrected\{uuid="GPU-h1",bus_id="0000:2a:00.0"\} 2' "metrics: uncorrectable ECC errors"
like "$metrics" 'sunkd_gres_gpu_recovery_action\{uuid="GPU-h3",bus_id="0000:5d:00.0"\} 2' "metrics: the recovery action"
ok "the journal says what the driver reports of which GPU" \
        wait_log "GPU GPU-h1 at 0000:2a:00.0: the driver reports ecc_uncorrected_volatile 2, ecc_uncorrected_aggregate 5, retired_pages_pending 1, remapped_rows_uncorrectable 3, remap_pending 1; the driver asks to reset the GPU\."
sed -i '/^health|00000000:2A:00.0|/d' "$T/nvml.desc"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
ok "and when it reports none any more" wait_log "GPU GPU-h1 at 0000:2a:00.0: the driver reports no memory error any more\."

# NVML hangs: the child is killed at the timeout, the socket answers
# meanwhile, and the next discovery uses /proc.
printf 'NodeName=gpu-node-07 Gres=gpu:h100:2\n' > "$T/slurm.conf"
rm -f "$T/nvml-hung"
cp "$DATA/nvml-hang.desc" "$T/nvml.desc"
config 10s
sunkd_hup
python3 "$RAW" "$SOCK" call io.sunkd.Agent.Trigger '{"job":"gres.discover"}' > /dev/null
ok "the discovery's child hangs inside NVML" wait_for_file "$T/nvml-hung"
# One answer, from the loop, that says the hung run still runs.
is "$(job_field gres.discover state)" running "sunkd answers while NVML hangs"
is "$(ctl ping)" "pong" "and answers Ping"
ok "the hung child is given up" wait_log "NVML did not answer within 10 s"
wait_until 600 eval '[ "$(ctl --json gres 2>/dev/null | python3 -c "import json,sys; print(json.load(sys.stdin).get(\"source\"))")" = proc ]'
out=$(ctl gres)
like "$out" "source: proc, Gres=gpu:h100:2" "then /proc is used"
like "$out" "0000:18:00.0 - +[0-9]" "memory, which /proc does not tell, shows as -, not 0G"
is "$(ctl gres --check | cut -d: -f1)" "match" "and matches the node line"
is "$(cat "$T/gres.conf")" "$(sed 's/Type=nvidia_h100_80gb_hbm3/Type=h100/' "$DATA/proc-node.gres.conf")" \
   "gres.conf from /proc"

# A node without GPUs: an empty result, not an error, and gres.conf left
# alone: none is made, one that is there is kept as it was.
cp "$DATA/nvml-empty.desc" "$T/nvml.desc"
sunkd_stop
before=$(cat "$T/gres.conf")
mv "$T/gres.conf" "$T/gres.conf.kept"
config
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
wait_runs gres.discover 1 || bail_out "no discovery"
is "$(ctl gres --slurmd-conf)" "" "no GPUs: --slurmd-conf prints nothing"
like "$(ctl gres)" "source: nvml, Gres=$" "and sunkctl gres shows none"
ok "no GPUs: no gres.conf is made" test ! -e "$T/gres.conf"
ok "and that is said" log_since_has "Found no GPU: '$T/gres\.conf' is left as it is\."
mv "$T/gres.conf.kept" "$T/gres.conf"
ctl run gres.discover > /dev/null || bail_out "discovery failed"
is "$(cat "$T/gres.conf")" "$before" "no GPUs: the gres.conf that is there is kept as it was"
is "$(log_since | grep -c 'Found no GPU')" 1 "said once, not at every discovery"

# An NVML that cannot be loaded: the library and dlopen's reason, said once.
for be in nvml auto; do
        sunkd_stop
        sunkd_config "modules:
  gres:
    backend: $be
    nvml_library: $T/no-such-libnvidia-ml.so.1
    root: $T/root
    xid_events: no"
        sunkd_start
        # the discovery at start has logged its own before the mark
        wait_runs gres.discover 1 || bail_out "no discovery at start"
        log_mark
        ctl run gres.discover > /dev/null
        n=$(log_since | grep -c "cannot load $T/no-such-libnvidia-ml.so.1 ($T/no-such-libnvidia-ml.so.1: cannot open shared object file: No such file or directory)")
        if [ "$be" = nvml ]; then
                is "$n" 1 "backend nvml: the failed discovery names the library and why, once"
                like "$(log_since)" "error: GPU discovery failed: cannot load " "as an error"
        else
                is "$n" 1 "backend auto: the same reason, once"
                like "$(log_since)" "warning: NVML: cannot load .*; found the GPUs through /proc instead\\." \
                     "as a warning, with the fallback"
        fi
done

# Bad settings are located.
sunkd_config "modules:
  gres:
    backend: cuda"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "an unknown backend is a config error"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'backend': auto, nvml or proc" "located"
# every error of the section in one round
sunkd_config "modules:
  gres:
    backend: cuda
    xid_window: 2d
    xid_event: true
    type_alias: {A100: \"a b\"}"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "one round: refused"
like "$out" "key 'xid_event': unknown key; did you mean 'xid_events'\?" "one round: the misspelt key"
like "$out" "key 'backend': auto, nvml or proc" "one round: the backend after it"
like "$out" "key 'xid_window': from 1s to 1d" "one round: the window"
like "$out" "key 'type_alias': a GPU type and a short name" "one round: the alias"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
