#!/bin/bash
# deadline: 600
# reset-gpu on a real slurmctld and slurmd with the fake NVML: an XID the
# catalogue resolves with a GPU reset (95, from NVML's event API) drains
# the node; idle and drained by us, the repair runs reset_gpu_command (a
# stand-in for nvidia-smi --gpu-reset -i, killable, under the reaper) with
# the failing GPU's PCI bus id; the driver then reports no recovery action,
# the gpu check passes and the node is resumed.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
. "$SUNKD_SRCDIR/tests/lib/gpu.sh"
gpu_fake_node_setup
NODE=gpu-rp-1
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
cat > "$T/nvml.base" <<DESC
init ok
gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-
gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-
events|$EV
DESC
# the driver says GPU 1 needs a reset (NVML's recovery action 1)
{ cat "$T/nvml.base"; echo "health|00000000:0B:00.0|0|0|0|0|0|0|1"; } > "$T/nvml.desc"
export FAKE_NVML_CONFIG="$T/nvml.desc"
# the reset: records its arguments, and the driver then says none
printf '#!/bin/sh\necho "$*" >> "%s/reset"\ncp "%s/nvml.base" "%s/nvml.desc"\necho "GPU $3 was reset"\n' \
        "$T" "$T" "$T" > "$T/gpu-reset"
chmod 755 "$T/gpu-reset"

KMSG="$T/kmsg"
mkfifo "$KMSG" && exec 7<>"$KMSG" || bail_out "cannot make the kernel log's stand-in"

slurm_munge_start
slurm_conf
slurm_ctld_start
slurm_node_start "$NODE"
: > "$T/slurm.conf"
sunkd_config "modules:
  gres:
    nvml_library: $NVML
    root: $T/root
    slurm_conf: $T/slurm.conf
    gres_conf: $T/gres.conf
    node_name: $NODE
    interval: 1h
    xid_window: 1h
    kmsg: $KMSG
  health:
    node_name: $NODE
    root: $T/root
    interval: 1h
    fail_after: 1
    slurm_conf: $SLURM_CONF
    actions:
      - {code: gpu-xid, action: reset-gpu}
    repair:
      reset_gpu_command: [$T/gpu-reset, --gpu-reset, -i]
      verify_within: 10m
    checks:
      - name: gpu
        type: gpu"
{ sunkd_start; } 7>&-
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
wait_runs gres.discover 1 || bail_out "no discovery"
reason() { slurm_reason "$NODE"; }
gpu_field() {
        ctl --json health | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["checks"] if c["name"]=="gpu"][0][sys.argv[1]])' "$1"
}

echo "00000000:0B:00.0|95" > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "XID 95 drains, naming the GPU" wait_until 600 eval 'reason | grep -q "^sunkd: gpu: XID 95 on GPU-a1 (pci 0000:0b:00.0)"'
is "$(gpu_field remedy)" "reset-gpu" "the finding recommends a GPU reset"
ctl run health.signal > /dev/null
ok "idle and drained by us: the reset ran" wait_until 600 eval '[ -s "$T/reset" ]'
is "$(cat "$T/reset")" "--gpu-reset -i 0000:0b:00.0" "for the failing GPU, by its PCI bus id"
ok "the log says it is done" wait_log "Repair reset-gpu for 'gpu' done: GPU 0000:0b:00.0 was reset: the checks decide"
# gres reads the driver again (its own interval in life)
ctl run gres.discover > /dev/null
ctl run health.gpu > /dev/null
is "$(gpu_field result)" pass "the driver says none: the gpu check passes"
ok "the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
ok "the repair is counted as having helped" \
        wait_until 600 eval 'ctl metrics | grep -q "sunkd_health_repairs_total{action=\"reset-gpu\",outcome=\"helped\"} 1"'
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
