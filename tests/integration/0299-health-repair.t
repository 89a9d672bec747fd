#!/bin/bash
# deadline: 900
# Repairs against a real slurmctld with several dynamic nodes, its
# RebootProgram a script that records instead of rebooting.  A finding
# whose `actions:` row says script runs the site's remedy only once the node
# is IDLE and drained by us (never while a job runs); the checks then run
# and the node is resumed when it passes.  The fleet's limit (max_pct of the
# partition's nodes whose reason says "sunkd: repair ...") and the node's
# own (max_per_hour) hold a repair back, with a warning.  A reboot is asked
# through slurmctld (scontrol reboot ASAP, our reason kept), which has slurmd
# run the RebootProgram; the module remembers it asked across a restart, and
# a reboot that did not help within verify_within leaves the node drained,
# sticky, for "repair failed"; one that came (a new boot id after a
# restart) is known as its own and judged by the checks.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
NODE=rp-1

# flag fails while $T/fault exists; fix.sh is the site's remedy: it records
# how it ran and clears the fault.  gate fails while $T/gfault exists.
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "fault file present"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
printf '#!/bin/sh\n[ -e "%s/gfault" ] && { echo "gate closed"; exit 1; }\nexit 0\n' "$T" > "$T/gate.sh"
printf '#!/bin/sh\necho "$SLURMD_NODENAME $SUNKD_HEALTH_CODE $*" >> "%s/fixed"\nrm -f "%s/fault"\necho fixed it\n' \
        "$T" "$T" > "$T/fix.sh"
printf '#!/bin/sh\necho "reboot $*" >> "%s/rebooted"\n' "$S" > "$S/reboot.sh"
chmod 755 "$T/flag.sh" "$T/gate.sh" "$T/fix.sh" "$S/reboot.sh"
# the node's boot id, as the module reads it under root:
mkdir -p "$T/root/proc/sys/kernel/random"
echo 11111111-1111-1111-1111-111111111111 > "$T/root/proc/sys/kernel/random/boot_id"

slurm_munge_start
slurm_conf "RebootProgram=$S/reboot.sh" "ResumeTimeout=3600"
slurm_ctld_start
for n in rp-1 rp-2 rp-3 rp-4; do slurm_node_start $n; done
is "$(sinfo -h -N -o %N | sort -u | xargs)" "rp-1 rp-2 rp-3 rp-4" "four dynamic nodes in one partition"

sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    max_drained_pct: 75
    root: $T/root
    slurm_conf: $SLURM_CONF
    checks:
      - name: flag
        type: script
        path: $T/flag.sh
      - name: gate
        type: script
        path: $T/gate.sh
    actions:
      - { check: flag, action: script, path: $T/fix.sh, args: [--now] }
      - { code: script-failed, action: reboot }
    repair:
      max_per_hour: 4
      max_pct: 25
      verify_within: 15s"
sunkd_start
LOG_MARKED="$T/sunkd.log"
reason() { slurm_reason "$NODE"; }
round() { ctl run health.signal > /dev/null; }
fixes() { if [ -f "$T/fixed" ]; then wc -l < "$T/fixed"; else echo 0; fi; }
metric() { ctl metrics | sed -n "s/^sunkd_health_repairs_total{action=\"$1\",outcome=\"$2\"} //p"; }
ok "the first round" wait_until 600 eval '[ "$(job_field health.signal runs)" -ge 1 ] 2>/dev/null'

# --- never under a running job
job=$(sbatch --parsable -w "$NODE" -o /dev/null --wrap "sleep 600") || bail_out "sbatch failed"
wait_until 600 eval '[ "$(squeue -h -j $job -o %T)" = RUNNING ]' || bail_out "the job never ran"
touch "$T/fault"
ctl run health.flag > /dev/null
ok "the node is drained for the finding" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
round
like "$(module_status health last_signal_message)" "its repair waits for the node to be idle" \
        "with a job running the repair waits"
is "$(fixes)" 0 "and the remedy has not run"

# --- idle and drained by us: the remedy runs, the checks decide, the node is resumed
scancel "$job"
wait_until 600 eval 'slurm_state $NODE | grep -q "^IDLE" && ! slurm_state $NODE | grep -q COMPLETING' ||
        bail_out "the job did not end"
log_mark
round
ok "the remedy ran" wait_until 600 eval '[ "$(fixes)" -ge 1 ]'
is "$(cat "$T/fixed")" "rp-1 script-failed --now" "as root's script, with the node, the code and its args"
ok "it helped: the node is resumed" wait_until 600 eval '[ -z "$(reason)" ] && ! slurm_state $NODE | grep -q DRAIN'
ok "the log says the repair helped" wait_log "Repair script for check 'flag' helped"
is "$(metric script taken)" 1 "sunkd_health_repairs_total counts it taken"
is "$(metric script helped)" 1 "and helped"
slurm_wait_ready $NODE

# --- the fleet's limit: 25% of 4 nodes, one under repair already (by its reason)
scontrol update nodename=rp-2 state=drain reason="sunkd: repair reboot: gpu: XID 79" || bail_out "drain rp-2"
scontrol update nodename=rp-3 state=drain reason="sunkd: flag: not a repair" || bail_out "drain rp-3"
touch "$T/fault"
ctl run health.flag > /dev/null
ok "drained again" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
log_mark
round
is "$(module_status health last_signal)" "repair-held" "the fleet's limit holds the repair"
ok "with a warning naming the counts" wait_log "warning: repair limit: 1 of 4 nodes in this node's partitions are under repair"
is "$(fixes)" 1 "the remedy did not run"
is "$(reason)" "sunkd: flag: fault file present" "the node stays drained for the finding"
is "$(metric script held)" 1 "counted held"
scontrol update nodename=rp-2 state=resume
scontrol update nodename=rp-3 state=resume
round
ok "room again: the remedy runs" wait_until 600 eval '[ "$(fixes)" -ge 2 ]'
ok "and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- a reboot through slurmctld: slurmd runs the RebootProgram
touch "$T/gfault"
ctl run health.gate > /dev/null
ok "drained for the gate" wait_until 600 eval '[ "$(reason)" = "sunkd: gate: gate closed" ]'
round
ok "slurmd ran the RebootProgram" wait_until 600 eval '[ -s "$S/rebooted" ]'
like "$(reason)" "^sunkd: repair reboot: gate: gate closed( : reboot issued)?\$" \
        "the node carries the repair's reason (slurmctld may add that it issued the reboot)"
like "$(slurm_state $NODE)" "DRAIN" "and stays drained through the reboot"
like "$(ctl health)" "repair: +reboot for gate \\[script-failed\\], running" "sunkctl health shows the repair"
# a restart: the module knows it asked for this reboot
sunkd_stop
sunkd_start
log_mark
round
unlike "$(log_since)" "reason updated" "a round leaves the reason slurmctld extended alone"
is "$(module_status health repair | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["action"], r["phase"], r["boot_id"])')" \
        "reboot running 11111111-1111-1111-1111-111111111111" "after a restart the asked reboot is remembered, with the boot id it was asked in"
# it did not help (no reboot came, the gate stays closed): sticky, repair failed
log_mark
ok "past verify_within the node is drained for the failed repair" \
        wait_until 600 eval '[ "$(reason)" = "sunkd: gate: script-failed repair failed (reboot)" ]'
ok "with a warning" wait_log "warning: Repair reboot for check 'gate' did not help"
is "$(module_status health sticky)" true "the drain is sticky"
rm "$T/gfault"
ctl run health.gate > /dev/null
round
is "$(reason)" "sunkd: gate: script-failed repair failed (reboot)" "passing checks do not lift it"
is "$(metric reboot failed)" 1 "counted failed"

# --- a reboot that came: sunkd starts in a new boot, knows the reboot was
# its own, the checks pass and the node is resumed
ctl health undrain > /dev/null
ok "an operator undrains it" wait_until 600 eval '[ -z "$(reason)" ]'
wait_until 600 eval 'slurm_state $NODE | grep -q "^IDLE"' || bail_out "the node is not idle"
touch "$T/gfault"
ctl run health.gate > /dev/null
ok "drained for the gate again" wait_until 600 eval '[ "$(reason)" = "sunkd: gate: gate closed" ]'
round
ok "slurmd ran the RebootProgram again" wait_until 600 eval '[ "$(wc -l < "$S/rebooted")" -ge 2 ]'
sunkd_stop
echo 22222222-2222-2222-2222-222222222222 > "$T/root/proc/sys/kernel/random/boot_id"
rm "$T/gfault"
sunkd_start
log_mark
ok "sunkd knows the reboot it asked for came" wait_until 600 grep -q "The node rebooted as asked for check 'gate'" "$T/sunkd.log"
ok "the checks pass: the reboot is counted as having helped" \
        wait_until 600 eval 'ctl metrics | grep -q "sunkd_health_repairs_total{action=\"reboot\",outcome=\"helped\"} 1"'
# No real reboot came, so slurmctld still shows the node rebooting (DOWN):
# the module leaves it to slurmctld, resuming nothing behind its back.  On a
# node that did reboot, slurmd registers and the round resumes our reason.
round
is "$(module_status health last_signal)" "unreachable" "a node slurmctld shows rebooting is left alone"
like "$(reason)" "^sunkd: repair reboot: gate: gate closed" "its reason still ours"
ctl health undrain > /dev/null
ok "an operator resumes it" wait_until 600 eval '[ -z "$(reason)" ]'

# --- the node's own limit: four repairs within the hour were taken
wait_until 600 eval 'slurm_state $NODE | grep -q "^IDLE" && ! slurm_state $NODE | grep -q DRAIN' ||
        { scontrol show node $NODE | sed 's/^/# /'; bail_out "the node is not idle"; }
touch "$T/fault"
ctl run health.flag > /dev/null
ok "drained once more" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
log_mark
round
is "$(module_status health last_signal)" "repair-held" "the node's own limit holds the fifth"
ok "saying why" wait_log "4 repair\\(s\\) of this node within the hour \\(max_per_hour 4\\)"
is "$(fixes)" 2 "the remedy did not run again"
done_testing
