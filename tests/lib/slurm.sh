# A real Slurm on 127.0.0.1 for a test (sourced after tap.sh and sunkd.sh):
# Debian's munged, slurmctld and slurmd, in $T/slurm, stopped at exit.
#
# slurm_require              bail out unless the programs and root are here
# slurm_munge_start          munged on a private socket ($MUNGE_SOCK)
# slurm_munge_stop
# slurm_conf [EXTRA...]      write $SLURM_CONF (extra lines appended)
# slurm_ctld_start / _stop   slurmctld, waited for until it answers
# slurm_node_start NAME [CONF]  a dynamic slurmd (-Z), waited for until IDLE
# slurm_node_stop NAME
# slurm_reason NAME          the node's reason as `sinfo -R` shows it ("" if none)
# slurm_state NAME           the node's State= from `scontrol show node`
# slurm_wait_ready NAME      wait until the node is IDLE, not drained and responding
#                            (a resume leaves it NOT_RESPONDING for about a second)
#
# slurm_cleanup stops everything; the caller's EXIT trap must call it
# (slurm_setup installs one that also runs sunkd_cleanup).

slurm_require() {
        local c
        for c in munged munge slurmctld slurmd scontrol sinfo srun; do
                command -v "$c" >/dev/null || bail_out "$c is needed (Debian packages munge, slurmctld, slurmd, slurm-client)"
        done
        [ "$(id -u)" = 0 ] || bail_out "slurmd must run as root"
        getent passwd munge >/dev/null || bail_out "no user munge (Debian package munge)"
}

slurm_setup() {
        slurm_require
        S="$T/slurm"
        SLURM_NODES=
        mkdir -p "$S/munge" "$S/msock" "$S/state" "$S/spool" "$S/log" "$S/run"
        chmod 755 "$T" "$S"
        chown munge:munge "$S/munge" "$S/msock"
        chmod 700 "$S/munge"
        MUNGE_SOCK="$S/msock/munge.sock"
        SLURM_CONF="$S/slurm.conf"
        export SLURM_CONF
        trap 'slurm_cleanup; sunkd_cleanup' EXIT
}

slurm_cleanup() {
        local n
        for n in $SLURM_NODES; do slurm_node_stop "$n"; done
        slurm_ctld_stop
        slurm_munge_stop
}

# kill_pidfile FILE: TERM the pid in FILE and wait until it is gone.
kill_pidfile() {
        local pid
        [ -f "$1" ] || return 0
        pid=$(cat "$1" 2>/dev/null)
        rm -f "$1"
        [ -n "$pid" ] || return 0
        kill "$pid" 2>/dev/null || return 0
        wait_until 600 eval "! kill -0 $pid 2>/dev/null" || kill -KILL "$pid" 2>/dev/null
}

slurm_munge_start() {
        [ -f "$S/munge/munge.key" ] || {
                head -c 128 /dev/urandom > "$S/munge/munge.key"
                chown munge:munge "$S/munge/munge.key"
                chmod 400 "$S/munge/munge.key"
        }
        runuser -u munge -- munged --key-file="$S/munge/munge.key" --socket="$MUNGE_SOCK" \
                --pid-file="$S/munge/munged.pid" --log-file="$S/munge/munged.log" --seed-file="$S/munge/seed" ||
                bail_out "munged did not start"
        wait_until 300 eval 'munge -S "$MUNGE_SOCK" -n > /dev/null 2>&1' || bail_out "munged does not answer"
}

slurm_munge_stop() {
        kill_pidfile "$S/munge/munged.pid"
}

# slurm_free_port: a TCP port nothing listens on or talks from, below the
# ephemeral range so that no client connection of a concurrent test can
# take it between now and the daemon's bind.
slurm_free_port() {
        python3 - <<'PY'
import random, socket
lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
while True:
    p = random.randrange(10000, max(lo, 10001))
    try:
        for addr in ("0.0.0.0", "127.0.0.1"):
            with socket.socket() as s:
                s.bind((addr, p))
    except OSError:
        continue
    print(p)
    break
PY
}

slurm_conf() {
        local port l
        port=${SLURM_PORT:-$(slurm_free_port)}
        SLURM_PORT=$port
        # the same across calls: a node started again keeps its port
        SLURMD_PORT=${SLURMD_PORT:-$(slurm_free_port)}
        cat > "$SLURM_CONF" <<EOF
ClusterName=sunkdtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCK
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool/%n
SlurmctldPidFile=$S/run/slurmctld.pid
SlurmdPidFile=$S/run/slurmd-%n.pid
SlurmctldLogFile=$S/log/slurmctld.log
SlurmdLogFile=$S/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MaxNodeCount=16
MpiDefault=none
ReturnToService=2
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
        for l in "$@"; do printf '%s\n' "$l" >> "$SLURM_CONF"; done
        # Slurm 24.11's slurmd starts its cgroup plugin whatever ProctrackType
        # says, and fails where no cgroup file system is mounted (the Debian 13
        # root of make check-slurm-24.11); these tests confine nothing
        # (proctrack/linuxproc, task/none).  22.05 reads no such key.
        local major
        major=$(slurmd -V 2>/dev/null | sed -n 's/^[^ ]* \([0-9][0-9]*\)\..*/\1/p')
        [ "${major:-0}" -lt 24 ] || echo "CgroupPlugin=disabled" > "$S/cgroup.conf"
}

slurm_ctld_start() {
        # the versions in a test's log (tap.sh's diag; the benchmarks have none)
        if declare -F diag > /dev/null; then
                diag "slurmctld: $(slurmctld -V 2>&1), slurmd: $(slurmd -V 2>&1)"
        fi
        slurmctld -f "$SLURM_CONF" || bail_out "slurmctld did not start"
        wait_until 600 eval 'scontrol ping 2>/dev/null | grep -q UP' ||
                { sed 's/^/# /' "$S/log/slurmctld.log" | tail -20; bail_out "slurmctld does not answer"; }
}

slurm_ctld_stop() {
        kill_pidfile "$S/run/slurmctld.pid"
}

slurm_node_start() {
        local name="$1" conf="${2:-CPUs=2 RealMemory=500}" f port
        case " $SLURM_NODES " in *" $name "*) ;; *) SLURM_NODES="$SLURM_NODES $name" ;; esac
        # Each slurmd on this host listens on a port of its own, which only
        # its own copy of slurm.conf can say (--conf refuses Port=); a
        # dynamic node tells slurmctld its port when it registers.  Clients
        # (srun, and slurmctld on some paths) only know slurm.conf's port,
        # so the first node gets that one.  A node started again keeps its
        # port.
        f="$S/slurm-$name.conf"
        if [ -f "$S/port-$name" ]; then port=$(cat "$S/port-$name")
        elif [ -n "$(ls "$S"/port-* 2>/dev/null)" ]; then port=$(slurm_free_port)
        else port=$(sed -n 's/^SlurmdPort=//p' "$SLURM_CONF"); fi
        echo "$port" > "$S/port-$name"
        sed "s/^SlurmdPort=.*/SlurmdPort=$port/" "$SLURM_CONF" > "$f"
        mkdir -p "$S/spool/$name"
        slurmd -f "$f" -Z -N "$name" --conf "$conf" || bail_out "slurmd $name did not start"
        wait_until 600 eval 'slurm_state "$name" | grep -q "^IDLE"' ||
                { scontrol show node "$name" | sed 's/^/# /'; tail -20 "$S/log/slurmd-$name.log" | sed 's/^/# /'
                  bail_out "node $name never became IDLE"; }
}

slurm_node_stop() {
        kill_pidfile "$S/run/slurmd-$1.pid"
}

slurm_reason() {
        sinfo -h -R -n "$1" -o '%E' 2>/dev/null
}

slurm_state() {
        scontrol show node "$1" 2>/dev/null | sed -n 's/.* State=\([^ ]*\).*/\1/p'
}

slurm_wait_ready() {
        local node="$1"
        wait_until 600 eval "slurm_state '$node' | grep -q -E '^IDLE(\\+DYNAMIC_NORM)?\$'" ||
                { scontrol show node "$node" | sed 's/^/# /'; bail_out "node $node did not come back idle"; }
}
