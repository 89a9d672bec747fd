#!/bin/bash
# deadline: 600
# The fleet guard on a real slurmctld with several dynamic nodes: before it
# drains, the health module counts the nodes of its partitions that carry
# our prefix already; at max_drained_pct it reports instead, loudly, and
# drains once the count is below again.  Other reasons do not count, nor
# do the nodes of a partition the node is not in.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"

printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "bad rollout"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"
slurm_munge_start
# two partitions: fl (the node's own, the default) and ot, each node in one by its feature
slurm_conf "NodeSet=flset Feature=fl" "NodeSet=otset Feature=ot" "PartitionName=ot Nodes=otset State=UP"
sed -i 's/^PartitionName=debug Nodes=ALL /PartitionName=fl Nodes=flset /' "$SLURM_CONF"
slurm_ctld_start
for n in fl-1 fl-2 fl-3 fl-4 fl-5; do slurm_node_start $n "CPUs=2 RealMemory=500 Feature=fl"; done
for n in ot-1 ot-2 ot-3; do slurm_node_start $n "CPUs=2 RealMemory=500 Feature=ot"; done
is "$(sinfo -h -N -o %N | sort -u | wc -l)" 8 "eight dynamic nodes registered"
is "$(sinfo -h -p fl -N -o %N | sort -u | xargs)" "fl-1 fl-2 fl-3 fl-4 fl-5" "five of them in partition fl"
is "$(sinfo -h -p ot -N -o %N | sort -u | xargs)" "ot-1 ot-2 ot-3" "three in partition ot"

# 40% of 5 nodes: two may be drained by us, not a third.
sunkd_config "modules:
  health:
    node_name: fl-1
    interval: 1h
    fail_after: 1
    max_drained_pct: 40
    slurm_conf: $SLURM_CONF
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
sunkd_start
LOG_MARKED="$T/sunkd.log"
rounds() { job_field health.signal runs; }
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}
ok "the first round" wait_rounds 1

# the same bad check, already acted on by two other nodes' agents
scontrol update nodename=fl-2 state=drain reason="sunkd: flag: bad rollout" || bail_out "drain fl-2"
scontrol update nodename=fl-3 state=drain reason="sunkd: flag: bad rollout" || bail_out "drain fl-3"
# someone else's reasons do not count
scontrol update nodename=fl-4 state=drain reason="k8s: cordoned" || bail_out "drain fl-4"
# nor do our drains in a partition this node is not in
for n in ot-1 ot-2 ot-3; do
        scontrol update nodename=$n state=drain reason="sunkd: flag: bad rollout" || bail_out "drain $n"
done
touch "$T/fault"
log_mark
n=$(rounds)
ctl run health.flag > /dev/null
ok "a round after the failure" wait_rounds $((n + 1))
is "$(slurm_reason fl-1)" "" "the third node is not drained"
is "$(module_status health last_signal)" "fleet-guard" "status says the fleet guard held it"
ok "the log says so, with the counts" wait_log "fleet guard: 2 of 5 nodes .* drained by us already"
ok "as a warning" grep -q "fleet guard" "$T/sunkd.log"

# one of the others recovers: now there is room
scontrol update nodename=fl-3 state=resume
wait_until 600 eval '[ -z "$(slurm_reason fl-3)" ]' || bail_out "fl-3 did not resume"
n=$(rounds)
ctl run health.flag > /dev/null
ok "the next round drains" wait_until 600 eval '[ "$(slurm_reason fl-1)" = "sunkd: flag: bad rollout" ]'

# a forced drain by an operator is not held by the guard
rm "$T/fault"
ctl run health.flag > /dev/null
wait_until 600 eval '[ -z "$(slurm_reason fl-1)" ]' || bail_out "fl-1 did not resume"
scontrol update nodename=fl-3 state=drain reason="sunkd: flag: bad rollout"
ctl health drain --reason "operator says" > /dev/null
is "$?" 0 "an operator's drain goes through with the others drained"
is "$(slurm_reason fl-1)" "sunkd: operator says" "with the operator's reason"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
