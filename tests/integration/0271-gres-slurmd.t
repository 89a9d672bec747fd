#!/bin/bash
# Real Slurm (Debian's munge, slurmctld and slurmd 22.05) on 127.0.0.1: slurmd
# started as a dynamic node with the Gres= that `sunkctl gres --slurmd-conf`
# prints and the gres.conf the gres module wrote (the fake NVML's device
# files are symlinks to /dev/null) registers with that GRES, not INVAL, and a
# job asking for two GPUs of the type runs and sees CUDA_VISIBLE_DEVICES.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
for c in munged munge slurmctld slurmd scontrol srun; do
        command -v "$c" >/dev/null || bail_out "$c is needed (Debian packages munge, slurmctld, slurmd, slurm-client)"
done
[ "$(id -u)" = 0 ] || bail_out "slurmd must run as root"
getent passwd munge >/dev/null || bail_out "no user munge (Debian package munge)"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"
S="$T/slurm"
DEVS=
cleanup() {
        [ -f "$S/slurmd.pid" ] && kill "$(cat "$S/slurmd.pid")" 2>/dev/null
        [ -f "$S/slurmctld.pid" ] && kill "$(cat "$S/slurmctld.pid")" 2>/dev/null
        [ -f "$S/munge/munged.pid" ] && kill "$(cat "$S/munge/munged.pid")" 2>/dev/null
        for d in $DEVS; do rm -f "$d"; done
        sunkd_cleanup
}
trap cleanup EXIT

# Two A100s; their minors are the device files below.
cat > "$T/nvml.desc" <<'DESC'
init ok
gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-
gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-
DESC
for m in 0 1; do
        [ -e /dev/nvidia$m ] && continue
        ln -s /dev/null /dev/nvidia$m || bail_out "cannot create /dev/nvidia$m"
        DEVS="$DEVS /dev/nvidia$m"
done

mkdir -p "$S/munge" "$S/msock" "$S/state" "$S/spool" "$S/log"
chmod 755 "$T" "$S"
chown munge:munge "$S/munge" "$S/msock"
chmod 700 "$S/munge"
head -c 128 /dev/urandom > "$S/munge/munge.key"
chown munge:munge "$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"
runuser -u munge -- munged --key-file="$S/munge/munge.key" --socket="$S/msock/munge.sock" \
        --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" --seed-file="$S/munge/seed" ||
        bail_out "munged did not start"
wait_until 300 eval 'munge -S "$S/msock/munge.sock" -n > /dev/null 2>&1' || bail_out "munged does not answer"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
NODE=gpu-node-07
cat > "$S/slurm.conf" <<EOF
ClusterName=sunkdtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/msock/munge.sock
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MaxNodeCount=8
MpiDefault=none
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
NodeName=$NODE CPUs=2 Gres=gpu:a100:2
EOF
export SLURM_CONF="$S/slurm.conf"

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
slurmctld -f "$S/slurm.conf" || bail_out "slurmctld did not start"
wait_until 300 eval 'scontrol ping 2>/dev/null | grep -q UP' ||
        { sed 's/^/# /' "$S/log/slurmctld.log" | tail -20; bail_out "slurmctld does not answer"; }
mkdir -p "$S/spool/$NODE"
slurmd -f "$S/slurm.conf" -Z -N "$NODE" --conf "CPUs=2 RealMemory=500 $GRES" || bail_out "slurmd did not start"
node() { scontrol show node "$NODE" 2>/dev/null; }
wait_until 600 eval 'node | grep -q "State=IDLE"' ||
        { node | sed 's/^/# /'; sed 's/^/# /' "$S/log/slurmd.log" | tail -20; bail_out "the node never became IDLE"; }
like "$(node)" "Gres=gpu:a100:2" "slurmctld shows the node with the GRES"
unlike "$(node)" "INVAL" "and not INVAL"
out=$(timeout 120 srun -N1 -w "$NODE" --gres=gpu:a100:2 env 2>&1)
like "$out" "CUDA_VISIBLE_DEVICES=0,1" "a job asking for gpu:a100:2 runs and sees CUDA_VISIBLE_DEVICES"
out=$(timeout 120 srun -N1 --gres=gpu:a100:3 true 2>&1)
like "$out" "Requested node configuration is not available" "three are refused: the node has two"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
