#!/bin/bash
# Real Slurm (Debian's munge, slurmctld and slurmd 22.05) on 127.0.0.1: slurmd
# started as a dynamic node with the Gres= that `sunkctl gres --slurmd-conf`
# prints and the gres.conf the gres module wrote (the fake NVML's device
# files are symlinks to /dev/null) registers with that GRES, not INVAL, and a
# job asking for two GPUs of the type runs and sees CUDA_VISIBLE_DEVICES.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
. "$SUNKD_SRCDIR/tests/lib/fake-nvidia-devs.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
cleanup() {
        slurm_cleanup
        fake_nvidia_devs_cleanup
        sunkd_cleanup
}
trap cleanup EXIT

# Two A100s; their minors are the device files below.
cat > "$T/nvml.desc" <<'DESC'
init ok
gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-
gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-
DESC
fake_nvidia_devs 0 1

NODE=gpu-node-07
slurm_munge_start
slurm_conf "GresTypes=gpu" "NodeName=$NODE CPUs=2 Gres=gpu:a100:2"

# sunkd writes gres.conf next to slurm.conf, where slurmd reads it.
sunkd_config "modules:
  gres:
    nvml_library: $NVML
    gres_conf: $S/gres.conf
    slurm_conf: $S/slurm.conf
    node_name: $NODE
    interval: 1h
    type_alias:
      NVIDIA A100-SXM4-40GB: a100"
export FAKE_NVML_CONFIG="$T/nvml.desc"
sunkd_start
ok "discovery" wait_runs gres.discover 1
GRES=$(ctl gres --slurmd-conf)
is "$GRES" "Gres=gpu:a100:2" "the Gres= for slurmd"
ctl gres --check > /dev/null
is "$?" 0 "and it matches slurm.conf's node line"
is "$(cat "$S/gres.conf")" "Name=gpu Type=a100 File=/dev/nvidia0 Cores=0-1
Name=gpu Type=a100 File=/dev/nvidia1 Cores=0-1" "gres.conf as the module wrote it"

# The node registers dynamically, with what the module printed.
sed -i "/^NodeName=$NODE /d" "$S/slurm.conf"
slurm_ctld_start
slurm_node_start "$NODE" "CPUs=2 RealMemory=500 $GRES"
node() { scontrol show node "$NODE" 2>/dev/null; }
like "$(node)" "Gres=gpu:a100:2" "slurmctld shows the node with the GRES"
unlike "$(node)" "INVAL" "and not INVAL"
out=$(timeout 120 srun -N1 -w "$NODE" --gres=gpu:a100:2 env 2>&1)
like "$out" "CUDA_VISIBLE_DEVICES=0,1" "a job asking for gpu:a100:2 runs and sees CUDA_VISIBLE_DEVICES"
out=$(timeout 120 srun -N1 --gres=gpu:a100:3 true 2>&1)
like "$out" "Requested node configuration is not available" "three are refused: the node has two"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
