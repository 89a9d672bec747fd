#!/bin/bash
# deadline: 600
# GPU faults end to end on a real slurmctld and slurmd: gres reads an XID
# from the kernel log (a FIFO stand-in read by the same code as /dev/kmsg)
# and from NVML's event API (the fake NVML), health's gpu check judges the
# fact gres.gpus by the XID policy: XID 79 drains the node with a reason
# that names the GPU, XID 13 (an application's fault) does not, an
# override makes it drain; the hold survives a restart of sunkd.  A failed
# row remap the fake NVML reports drains by the memory policy.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
. "$SUNKD_SRCDIR/tests/lib/gpu.sh"
gpu_fake_node_setup
KW="$SUNKD_SRCDIR/tests/lib/kmsg-stand-in.py"
NODE=gpu-hc-1
EV="$T/events"
mkdir "$EV" || bail_out "cannot make the events directory"
cat > "$T/nvml.desc" <<DESC
init ok
gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-
gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-
events|$EV
DESC
export FAKE_NVML_CONFIG="$T/nvml.desc"
KMSG="$T/kmsg"
mkfifo "$KMSG" && exec 7<>"$KMSG" || bail_out "cannot make the kernel log's stand-in"

slurm_munge_start
slurm_conf
slurm_ctld_start
slurm_node_start "$NODE"

config() { # EXTRA-HEALTH-LINES
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
$1
    checks:
      - name: gpu
        type: gpu"
}
: > "$T/slurm.conf"
start() {
        { sunkd_start; } 7>&-
        LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
        wait_runs gres.discover 1 || bail_out "no discovery"
}
kw() { python3 "$KW" "$KMSG" "$@" || bail_out "cannot write to the stand-in"; }
reason() { slurm_reason "$NODE"; }
gpu_field() {
        ctl --json health | python3 -c 'import json,sys; print([c for c in json.load(sys.stdin)["checks"] if c["name"]=="gpu"][0][sys.argv[1]])' "$1"
}

config ""
start
ok "the gpu check passes on two healthy GPUs" wait_until 600 eval '[ "$(gpu_field result)" = pass ]'
is "$(reason)" "" "the node has no reason"

# XID 13, an application's fault: counted by gres, never a drain by itself
kw record 100 "NVRM: Xid (PCI:0000:07:00): 13, pid=4242, name=python3, Graphics Exception: ESR 0x505648=0x101"
ok "gres sees it" wait_until 600 eval 'ctl --json gres | grep -q "\"xid\": *13"'
ctl run health.gpu > /dev/null
is "$?" 0 "XID 13 does not fail the gpu check"
is "$(reason)" "" "nor drain the node"

# XID 79, fallen off the bus: the driver then says the GPU needs a reboot
# (NVML's recovery action 2); the node drains, the reason naming the GPU
desc() { # [HEALTH-LINE]: the fake NVML's description, with a GPU's health
        sed '/^health|/d' "$T/nvml.desc" > "$T/nvml.desc.new" || bail_out "cannot rewrite the description"
        if [ -n "${1:-}" ]; then echo "$1" >> "$T/nvml.desc.new"; fi
        mv "$T/nvml.desc.new" "$T/nvml.desc"
}
desc "health|00000000:0B:00.0|0|0|0|0|0|0|2"
kw record 101 "NVRM: Xid (PCI:0000:0b:00): 79, pid=0, name=, GPU has fallen off the bus."
ok "the node is drained, the reason naming the GPU" \
        wait_until 600 eval 'reason | grep -q "^sunkd: gpu: XID 79 on GPU-a1 (pci 0000:0b:00.0)"'
is "$(gpu_field code)" "gpu-xid" "the finding's code"
ctl run gres.discover > /dev/null
ctl run health.gpu > /dev/null
is "$?" 1 "held while the driver says reboot"
like "$(reason)" "^sunkd: gpu: XID 79 on GPU-a1 \(pci 0000:0b:00.0\)" "the node stays drained"

# the hold survives a restart of sunkd
sunkd_stop
start
ctl run health.gpu > /dev/null
is "$?" 1 "after a restart the gpu check still fails"
like "$(reason)" "^sunkd: gpu: XID 79 on GPU-a1 \(pci 0000:0b:00.0\)" "and the node stays drained"

# a reboot (a new boot id), after which the driver says none, ends it
sunkd_stop
echo 1e2d3c4b-bbbb-4ccc-8ddd-0123456789ab > "$T/root/proc/sys/kernel/random/boot_id"
desc
start
ctl run health.gpu > /dev/null
is "$?" 0 "after a reboot the gpu check passes"
ok "and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready "$NODE"
sunkd_stop

# a failed row remap: gres observes the counter, the gpu check drains by
# the memory policy, naming the GPU; once the counters are clean it resumes
desc "health|00000000:07:00.0|0|0|0|0|0|1|0"
start
ok "a failed row remap drains the node, the reason naming the GPU" \
        wait_until 600 eval 'reason | grep -q "^sunkd: gpu: GPU-a0 (pci 0000:07:00.0): a row remapping failed, the GPU needs service (remap_failure 1)"'
is "$(gpu_field code)" "gpu-memory" "the finding's code"
desc
ctl run gres.discover > /dev/null
ctl run health.gpu > /dev/null
is "$?" 0 "the board serviced, the gpu check passes"
ok "and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready "$NODE"
sunkd_stop

# an override: XID 13 three times in an hour drains
config "    xid_policy:
      overrides:
        - {xid: 13, count: 3, window: 1h, action: drain}"
start
for i in 1 2; do
        kw record $((200 + i)) "NVRM: Xid (PCI:0000:07:00): 13, pid=4242, name=python3, Graphics Exception"
done
ok "two seen" wait_until 600 eval 'ctl --json gres | grep -q "\"count\": *2"'
ctl run health.gpu > /dev/null
is "$(reason)" "" "two of three: no drain"
kw record 203 "NVRM: Xid (PCI:0000:07:00): 13, pid=4242, name=python3, Graphics Exception"
ok "the third drains" wait_until 600 eval 'reason | grep -q "^sunkd: gpu: XID 13 on GPU-a0 (pci 0000:07:00.0), 3 times"'
sunkd_stop

# an XID only NVML's event API reports drains too; the admin resumed the node
# drained for the old finding, this is a new one (a new boot clears the rest)
echo 2f3e4d5c-cccc-4ddd-8eee-0123456789ab > "$T/root/proc/sys/kernel/random/boot_id"
scontrol update nodename=$NODE state=resume
slurm_wait_ready "$NODE"
desc "health|00000000:0B:00.0|0|0|0|0|0|0|1"
start
echo "00000000:0B:00.0|95" > "$EV/.new" && mv "$EV/.new" "$EV/000001"
ok "XID 95 from NVML drains, naming the GPU" \
        wait_until 600 eval 'reason | grep -q "^sunkd: gpu: XID 95 on GPU-a1 (pci 0000:0b:00.0)"'
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
