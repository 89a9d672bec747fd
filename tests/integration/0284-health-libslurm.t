#!/bin/bash
# deadline: 600
# The libslurm transport against a real slurmctld (Debian's 22.05 on
# 127.0.0.1): each round runs in a child of its own that calls libslurm;
# a failing check drains the node, a pass resumes it, an admin's reason is
# left alone, and with slurmctld stopped the round fails (the child's error
# is shown) and the node converges once slurmctld is back; a script repair
# runs through it too.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
NODE=ls-node-1
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "fault file present"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"
slurm_munge_start
slurm_conf
slurm_ctld_start
slurm_node_start "$NODE"
sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    transport: libslurm
    slurm_conf: $SLURM_CONF
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
sunkd_start
reason() { slurm_reason "$NODE"; }
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}
ok "the first round" wait_rounds 1
is "$(module_status health transport)" "libslurm" "status names the transport"
is "$(module_status health last_signal)" "unchanged" "the node was found, not drained"

touch "$T/fault"
ctl run health.flag > /dev/null
ok "a failing check drains the node" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
is "$(sinfo -h -R -n $NODE -o %u)" "root" "as root"
rm "$T/fault"
ctl run health.flag > /dev/null
ok "a pass resumes it" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE
ctl run health.signal > /dev/null
is "$?" 0 "a round on a node that is not drained"
is "$(module_status health last_signal)" "unchanged" "changes nothing"

scontrol update nodename=$NODE state=drain reason="NHC: check_fs_mount: /scratch"
touch "$T/fault"
ctl run health.flag > /dev/null
ctl run health.signal > /dev/null
is "$(module_status health last_signal)" "other-owner" "someone else's reason is seen"
is "$(reason)" "NHC: check_fs_mount: /scratch" "and left alone"
scontrol update nodename=$NODE state=resume
slurm_wait_ready $NODE

slurm_ctld_stop
ctl run health.signal > /dev/null
is "$?" 1 "with slurmctld stopped the round fails"
is "$(module_status health last_signal)" "failed" "status says so"
like "$(module_status health last_signal_message)" "[Uu]nable to contact|[Cc]onnect|[Tt]imed out|refused" "with libslurm's words"
slurm_ctld_start
ok "once slurmctld is back the node is drained" wait_until 1200 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"

# a repair through libslurm: the child sets the repair's reason, the
# module runs the remedy, the check passes and the node is resumed
printf '#!/bin/sh\necho "$SLURMD_NODENAME" >> "%s/fixed"\nrm -f "%s/fault"\n' "$T" "$T" > "$T/fix.sh"
chmod 755 "$T/fix.sh"
sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    transport: libslurm
    slurm_conf: $SLURM_CONF
    actions:
      - {check: flag, action: script, path: $T/fix.sh}
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
sunkd_start
ok "idle and drained by us: the remedy ran" wait_until 600 eval '[ -s "$T/fixed" ]'
ok "the repair's reason was set through libslurm" \
        grep -q "repairing, reason \"sunkd: repair script: flag: fault file present\"" "$T/sunkd.log"
ok "the check passes and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
sunkd_stop
done_testing
