#!/bin/bash
# deadline: 600
# The s6-overlay v3 tree make install puts in s6-overlay/s6-rc.d: its shape
# as s6-rc source definitions (s6-rc itself is not packaged in Debian 12),
# then its three longruns as service directories under a real s6-svscan:
# munged (ready through s6-notifyoncheck), sunkd with the gres module on the
# fake NVML, and the example slurmd, which starts slurmd only once sunkd is
# ready and registers with slurmctld with the Gres= sunkctl prints.  sunkd is
# restarted after kill -9 and stops cleanly with s6-svc -d.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
. "$SUNKD_SRCDIR/tests/lib/fake-nvidia-devs.sh"
sunkd_setup
slurm_setup

for c in s6-svscan s6-svscanctl s6-supervise s6-svc s6-svwait s6-svstat s6-notifyoncheck s6-setuidgid tsort pgrep; do
        command -v "$c" >/dev/null || bail_out "$c not found: install the Debian packages s6, coreutils and procps (make deps)"
done
cp "$SUNKD_BUILDDIR/modules/gres/.libs/gres.so" "$MODDIR/" || bail_out "gres.so not built"
NVML="$SUNKD_BUILDDIR/tests/fake-nvml/.libs/libnvidia-ml.so"
[ -f "$NVML" ] || bail_out "the fake NVML is not built"

D="$T/root"
make -s -C "$SUNKD_BUILDDIR" install DESTDIR="$D" > "$T/install.log" 2>&1 \
        || { sed 's/^/# /' "$T/install.log"; bail_out "make install failed"; }
L=$(find "$D" -type d -path '*/sunkd/s6-overlay/s6-rc.d')
[ -n "$L" ] && [ -d "$L" ] || bail_out "make install put no sunkd/s6-overlay/s6-rc.d"
PLAIN="${L%/s6-overlay/s6-rc.d}/s6/sunkd"

# --- The tree as s6-rc source definitions -------------------------------
LONGRUNS="munge slurmd sunkd"
is "$(cd "$L" && ls | paste -s -d ' ')" "$LONGRUNS user" "the tree: the three longruns and the user bundle's contents"
is "$(cd "$L/user" && find . | LC_ALL=C sort | paste -s -d ' ')" \
        ". ./contents.d ./contents.d/munge ./contents.d/slurmd ./contents.d/sunkd" \
        "user/ only adds to s6-overlay's user bundle (contents.d), all three services"
for s in $LONGRUNS; do
        is "$(cat "$L/$s/type")" longrun "$s: type is longrun"
        ok "$s: run is executable" test -x "$L/$s/run"
        like "$(head -n 1 "$L/$s/run")" '^#!/bin/sh$' "$s: run is a sh script"
        ok "$s: run parses (sh -n)" sh -n "$L/$s/run"
        extra=$(cd "$L/$s" && ls | grep -v -x -E 'type|run|finish|notification-fd|dependencies\.d|data')
        is "$extra" "" "$s: only files of the s6-rc source format"
done
for s in sunkd munge; do
        is "$(cat "$L/$s/notification-fd")" 3 "$s: notification-fd is 3"
done
ok "slurmd: no notification-fd (slurmd does not notify)" test ! -e "$L/slurmd/notification-fd"
like "$(cat "$L/sunkd/run")" "--notify-fd 3\$" "sunkd's run writes its readiness to fd 3"
like "$(cat "$L/munge/run")" "s6-notifyoncheck" "munge's run has s6-notifyoncheck report readiness"
ok "munge: data/check is executable" test -x "$L/munge/data/check"

deps() { (cd "$L/$1/dependencies.d" && ls | paste -s -d ' '); }
is "$(deps munge)" "base" "munge depends on s6-overlay's base"
is "$(deps sunkd)" "base munge" "sunkd depends on base and munge (the health module's munge check and drains)"
is "$(deps slurmd)" "base munge sunkd" "slurmd depends on base, munge and sunkd"
nonempty=$(find "$L" -path '*/dependencies.d/*' -size +0 -o -path '*/contents.d/*' -size +0)
is "$nonempty" "" "dependency and contents entries are empty files"
pairs=$(for s in $LONGRUNS; do for d in $(deps "$s"); do echo "$d $s"; done; done)
unknown=$(for s in $LONGRUNS; do for d in $(deps "$s"); do
        case " base $LONGRUNS " in *" $d "*) ;; *) echo "$s->$d" ;; esac; done; done)
is "$unknown" "" "every dependency is base or a service of the tree"
order=$(tsort <<< "$pairs" 2>&1); rc=$?
is "$rc" 0 "no dependency cycle"
is "$(paste -s -d ' ' <<< "$order")" "base munge sunkd slurmd" "s6-rc's start order: munge, sunkd, slurmd"
for f in run finish type notification-fd dependencies.d/base; do
        ok "sunkd/$f is the plain s6 directory's" cmp -s "$PLAIN/$f" "$L/sunkd/$f"
done

# --- The run scripts under a real s6-svscan --------------------------------
# Each longrun becomes a service directory in a scan directory (dependencies
# are s6-rc's; plain s6 ignores them), pointed at this test's munged paths,
# this build's sunkd and sunkctl, and a private Slurm.
SCAN="$T/scan"
SVSCAN_PID=
s6_cleanup() {
        if [ -n "$SVSCAN_PID" ] && kill -0 "$SVSCAN_PID" 2>/dev/null; then
                for s in $LONGRUNS; do s6-svc -dx "$SCAN/$s" 2>/dev/null; done
                s6-svscanctl -t "$SCAN" 2>/dev/null
                wait_until 100 eval "! kill -0 $SVSCAN_PID 2>/dev/null" || kill -KILL "$SVSCAN_PID" 2>/dev/null
        fi
        slurm_cleanup
        fake_nvidia_devs_cleanup
        sunkd_cleanup
}
trap s6_cleanup EXIT

mkdir -p "$SCAN"
for s in $LONGRUNS; do cp -r "$L/$s" "$SCAN/$s"; done
sed -i -e "s|/run/munge/munge.socket.2|$MUNGE_SOCK|g" -e "s|/run/munge|${MUNGE_SOCK%/*}|g" \
        -e "s|/etc/munge/munge.key|$S/munge/munge.key|" -e "s|/var/lib/munge/munged.seed|$S/munge/munged.seed|" \
        "$SCAN/munge/run" "$SCAN/munge/data/check"
sed -i -e "s|^exec [^ ]*/sunkd |exec $SUNKD |" -e "s|--config=[^ ]*|--config=$T/sunkd.yaml|" "$SCAN/sunkd/run"
sed -i -e "s|[^ (]*/sunkctl |$SUNKCTL -s $SOCK |" -e "s|/etc/default/slurmd|$T/default-slurmd|g" "$SCAN/slurmd/run"
like "$(cat "$SCAN/slurmd/run")" "gres=\\\$\\($SUNKCTL -s $SOCK gres --slurmd-conf\\)" \
        "slurmd's run takes its --conf from sunkctl gres --slurmd-conf (adapted to this build)"
head -c 128 /dev/urandom > "$S/munge/munge.key"
chown munge:munge "$S/munge/munge.key"
chmod 400 "$S/munge/munge.key"

# Two A100s on the fake NVML; their minors are the device files below.
cat > "$T/nvml.desc" <<'DESC'
init ok
gpu|00000000:07:00.0|0|NVIDIA A100-SXM4-40GB|GPU-a0|42949672960|0-1|-|-
gpu|00000000:0B:00.0|1|NVIDIA A100-SXM4-40GB|GPU-a1|42949672960|0-1|-|-
DESC
fake_nvidia_devs 0 1
export FAKE_NVML_CONFIG="$T/nvml.desc"

# A dynamic node: slurm.conf does not name it; its Gres= comes from sunkd.
NODE=gpu-node-s6
slurm_conf "GresTypes=gpu"
mkdir -p "$S/spool/$NODE"
printf 'SLURMD_OPTIONS="-f %s -N %s"\n' "$SLURM_CONF" "$NODE" > "$T/default-slurmd"

# sunkd's readiness waits for testmod.ok's first run, which lasts until
# release.ok: the test holds sunkd not ready for as long as it needs.
gate_config "  gres:
    nvml_library: $NVML
    gres_conf: $S/gres.conf
    interval: 1h
    type_alias:
      NVIDIA A100-SXM4-40GB: a100"

s6-svscan "$SCAN" > "$T/svscan.log" 2>&1 &
SVSCAN_PID=$!
for s in $LONGRUNS; do
        wait_for_file "$SCAN/$s/supervise/status" || bail_out "s6-svscan did not start s6-supervise for $s"
done

ok "munge: up and ready (s6-notifyoncheck ran data/check)" s6-svwait -U -t 120000 "$SCAN/munge"
ok "munged answers on its socket" munge -n -S "$MUNGE_SOCK" -o /dev/null
slurm_ctld_start

wait_for_file "$SOCK" || bail_out "the supervised sunkd did not create its socket"
ok "sunkd's gate job is under way" wait_until 300 gate_running
is "$(s6-svstat -o up,ready "$SCAN/sunkd")" "true false" "s6-svstat: sunkd up, not ready"
waiting() { grep -q "slurmd: waiting for sunkd to be ready" "$T/svscan.log"; }
ok "slurmd's run script says it waits for sunkd" wait_until 300 waiting
# Its shell is blocked in s6-svwait: a state, which the checks below then
# find unchanged for as long as the gate holds sunkd not ready.
in_svwait() { pgrep -P "$(s6-svstat -o pid "$SCAN/slurmd")" -x s6-svwait > /dev/null; }
ok "it is blocked in s6-svwait on ../sunkd" wait_until 300 in_svwait
slurmd_comm() { cat "/proc/$(s6-svstat -o pid "$SCAN/slurmd")/comm" 2>/dev/null; }
isnt_slurmd() { [ "$(slurmd_comm)" != slurmd ]; }
ok "while sunkd is not ready, the slurmd service runs no slurmd" isnt_slurmd
ok "and no slurmd pid file" test ! -e "$S/run/slurmd-$NODE.pid"
is "$(slurm_state "$NODE")" "" "and slurmctld knows no node $NODE"

touch "$GATE/release.ok"
ok "s6-svwait -U: sunkd ready" s6-svwait -U -t 60000 "$SCAN/sunkd"
is "$(s6-svstat -o up,ready "$SCAN/sunkd")" "true true" "s6-svstat: sunkd up and ready"
GRES=$(ctl gres --slurmd-conf)
is "$GRES" "Gres=gpu:a100:2" "sunkctl gres --slurmd-conf"
is_slurmd() { [ "$(slurmd_comm)" = slurmd ]; }
ok "then the slurmd service runs slurmd itself (run execs it)" wait_until 300 is_slurmd
like "$(cat "$T/svscan.log")" "slurmd: starting with --conf '$GRES'" "with --conf from sunkctl"
node_idle() { slurm_state "$NODE" | grep -q '^IDLE'; }
ok "the node registers with slurmctld" wait_until 600 node_idle
like "$(scontrol show node "$NODE")" "Gres=gpu:a100:2" "with the GRES sunkd found"
unlike "$(scontrol show node "$NODE")" "INVAL" "and not INVAL"
SLURMD_PID=$(s6-svstat -o pid "$SCAN/slurmd")

# kill -9: s6-supervise starts sunkd again; finish sees signal 9, not a
# configuration error.
pid=$(s6-svstat -o pid "$SCAN/sunkd")
kill -KILL "$pid"
restarted() {
        local p
        p=$(s6-svstat -o pid "$SCAN/sunkd")
        [ "$p" != "$pid" ] && [ "$p" != -1 ] && [ "$(s6-svstat -o up,ready "$SCAN/sunkd")" = "true true" ]
}
ok "after kill -9 sunkd is restarted, up and ready" wait_until 600 restarted
is "$(ctl ping)" pong "and answers sunkctl"
is "$(s6-svstat -o pid "$SCAN/slurmd")" "$SLURMD_PID" "slurmd kept running meanwhile"

# A clean stop.
s6-svc -d "$SCAN/sunkd"
ok "s6-svc -d stops sunkd" s6-svwait -D -t 60000 "$SCAN/sunkd"
is "$(s6-svstat -o up,wantedup,exitcode "$SCAN/sunkd")" "false false 0" "down, wanted down, exit status 0"
ok "its socket is removed" test ! -e "$SOCK"
s6-svc -d "$SCAN/slurmd"
s6-svc -d "$SCAN/munge"
ok "slurmd and munged stop too" s6-svwait -a -D -t 60000 "$SCAN/slurmd" "$SCAN/munge"

done_testing
