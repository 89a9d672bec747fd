#!/bin/bash
# deadline: 900
# The health module against a real Slurm (Debian's munged, slurmctld and a
# dynamic slurmd on 127.0.0.1), through the scontrol transport: a check that
# fails fail_after times drains the node with our reason (sinfo -R), passing
# resumes it; an admin's drain and slurmctld's own "Prolog error" stay
# untouched while our checks fail and pass; a restart neither resumes a
# node drained for a real fault nor drains again one an admin resumed
# meanwhile; with slurmctld stopped the state is kept and the node converges
# once it is back; a hung check fails at its timeout; an operator's drain
# --wait-idle returns only once the running job has ended, and is sticky
# until undrain; a check named prolog-gpu is resumed when it passes, while
# a sticky drain (as the prolog client asks) survives a restart and passing
# checks; with munged stopped the munge check fails, saying why.  Each
# finding shows its code and the action it recommends (sunkctl health, the
# metric sunkd_health_finding).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
NODE=hc-node-1

# flag: fails, saying so, while $T/fault exists; hang: never answers.
printf '#!/bin/sh\nif [ -e "%s/fault" ]; then echo "checking the fault file"; echo "fault file present"; exit 1; fi\necho ok\n' "$T" > "$T/flag.sh"
printf '#!/bin/sh\nexec sleep 1000\n' > "$T/hang.sh"
printf '#!/bin/sh\nif [ -e "%s/pfault" ]; then echo "no GPU"; exit 1; fi\n' "$T" > "$T/pgpu.sh"
printf '#!/bin/sh\n[ -e "%s/prolog-fail" ] && exit 1\nexit 0\n' "$S" > "$S/prolog.sh"
chmod 755 "$T/flag.sh" "$T/hang.sh" "$T/pgpu.sh" "$S/prolog.sh"

slurm_munge_start
slurm_conf "Prolog=$S/prolog.sh" "PrologEpilogTimeout=30"
slurm_ctld_start
slurm_node_start "$NODE"

sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 2
    pass_after: 1
    transport: scontrol
    slurm_conf: $SLURM_CONF
    checks:
      - name: flag
        type: script
        path: $T/flag.sh
      - name: prolog-gpu
        type: script
        path: $T/pgpu.sh
      - name: hang
        type: script
        path: $T/hang.sh
        timeout: 1s
        action: report
      - name: munge
        type: munge
        socket: $MUNGE_SOCK
        timeout: 10s
        action: report"
sunkd_start
LOG_MARKED="$T/sunkd.log"
reason() { slurm_reason "$NODE"; }
runs() { job_field health.signal runs; }
# wait_rounds N: until health.signal has ended N rounds in all
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}
flag() { ctl run health.flag > /dev/null; }

ok "the first round" wait_rounds 1
flag
is "$?" 0 "the check passes"
is "$(reason)" "" "the node has no reason"

# --- a failing check drains, once fail_after is reached
touch "$T/fault"
flag
is "$?" 1 "sunkctl run says the check failed"
is "$(health_field flag failing)" false "one failure of two: not failing yet"
is "$(reason)" "" "and the node is not drained"
log_mark
flag
is "$(health_field flag failing)" true "the second failure: failing"
ok "the node is drained with our reason" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
like "$(slurm_state $NODE)" "DRAIN" "scontrol shows DRAIN"
ok "the drain is logged" wait_log "node $NODE drained: \"sunkd: flag: fault file present\""
like "$(ctl health)" "flag +fail +failing" "sunkctl health shows the check failing"
is "$(module_status health reason_set)" "sunkd: flag: fault file present" "status names the reason we set"
like "$(ctl metrics)" 'sunkd_health_finding\{check="flag",code="script-failed",remedy="none"\} 1' \
        "the finding's code is a metric, with the action it recommends (a script's: none)"
like "$(ctl health)" "flag +fail .*\\[script-failed\\] fault file present \\(remedy: none\\)" \
        "sunkctl health shows the finding's code and remedy"

# --- a pass resumes it
rm "$T/fault"
flag
is "$?" 0 "the check passes again"
ok "the node is resumed" wait_until 600 eval '[ -z "$(reason)" ] && ! slurm_state $NODE | grep -q DRAIN'
slurm_wait_ready $NODE
is "$(module_status health reason_set)" "" "and we no longer hold a reason"
unlike "$(ctl metrics)" 'sunkd_health_finding\{check="flag"' "the finding's series is gone"

# --- an admin's drain is left alone while our checks fail and pass
scontrol update nodename=$NODE state=drain reason="replacing PSU" || bail_out "cannot drain by hand"
touch "$T/fault"
n=$(runs)
flag; flag
ok "a round after the check failed" wait_rounds $((n + 1))
is "$(reason)" "replacing PSU" "the admin's reason stays while our check fails"
is "$(module_status health last_signal)" "other-owner" "status says the reason is someone else's"
rm "$T/fault"
n=$(runs)
flag
ok "a round after the check passed" wait_rounds $((n + 1))
is "$(reason)" "replacing PSU" "and stays when it passes"
scontrol update nodename=$NODE state=resume
slurm_wait_ready $NODE

# --- slurmctld's own "Prolog error" is left alone too
touch "$S/prolog-fail"
timeout 120 srun -N1 -w "$NODE" true > /dev/null 2>&1
ok "a failed prolog drains the node" wait_until 600 eval '[ "$(reason)" = "Prolog error" ]'
rm "$S/prolog-fail"
touch "$T/fault"
n=$(runs)
flag; flag
ok "a round" wait_rounds $((n + 1))
rm "$T/fault"
n=$(runs)
flag
ok "another" wait_rounds $((n + 1))
is "$(reason)" "Prolog error" "'Prolog error' stays through our failure and pass"
scontrol update nodename=$NODE state=resume
slurm_wait_ready $NODE

# --- a restart keeps a real fault's drain
touch "$T/fault"
flag; flag
ok "drained again" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
sunkd_stop
sunkd_start
ok "the first round after the restart" wait_rounds 1
is "$(reason)" "sunkd: flag: fault file present" "a restart does not resume the node"
is "$(health_field flag failing)" true "the check is still failing, from the saved state"

# --- an admin resumes while sunkd is down: no drain again until the check passes
sunkd_stop
scontrol update nodename=$NODE state=resume
slurm_wait_ready $NODE
sunkd_start
ok "a round after the restart" wait_rounds 1
flag
is "$(health_field flag failing)" true "the check still fails"
ctl run health.signal > /dev/null
is "$?" 0 "another round, asked for"
is "$(reason)" "" "the node an admin resumed is not drained again"
is "$(module_status health lifted_check)" "flag" "status names the check whose drain was lifted"
rm "$T/fault"
flag
touch "$T/fault"
flag; flag
ok "once it has passed, a new failure drains again" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
rm "$T/fault"
flag
slurm_wait_ready $NODE

# --- slurmctld away: state kept, converges when it returns
slurm_ctld_stop
touch "$T/fault"
n=$(runs)
flag; flag
ok "a round with slurmctld stopped" wait_rounds $((n + 1))
is "$(module_status health last_signal)" "failed" "status says slurmctld could not be reached"
is "$(health_field flag failing)" true "the check stays failing"
slurm_ctld_start
ok "once slurmctld is back the node is drained" wait_until 1200 eval '[ "$(reason)" = "sunkd: flag: fault file present" ]'
rm "$T/fault"
flag
slurm_wait_ready $NODE

# --- a hung check fails at its timeout
ctl run health.hang > /dev/null
is "$?" 1 "the hung check's run fails"
is "$(health_field hang code)" "check-timeout" "its code says it timed out"
is "$(health_field hang remedy)" "reboot" "and it recommends a reboot (a check hung in the kernel)"
like "$(ctl health)" "hang +fail .*\\[check-timeout\\] .* \\(remedy: reboot\\)" "sunkctl health shows it"
like "$(ctl metrics)" 'sunkd_health_finding\{check="hang",code="check-timeout",remedy="reboot"\} 1' \
        "the metric carries the remedy"
is "$(reason)" "" "a report-only check never drains"

# --- drain --wait-idle returns once the running job has ended; sticky
wait_until 600 eval 'slurm_state $NODE | grep -q "^IDLE"' || bail_out "the node is not idle"
job=$(sbatch --parsable -w "$NODE" -o /dev/null --wrap "sleep 600") || bail_out "sbatch failed"
wait_until 600 eval '[ "$(squeue -h -j $job -o %T)" = RUNNING ]' || bail_out "the job never ran"
ctl health drain --reason "maintenance window" --wait-idle > "$T/drain.out" 2>&1 &
DRAIN_PID=$!
ok "the node is draining" wait_until 600 eval '[ "$(reason)" = "sunkd: maintenance window" ]'
like "$(slurm_state $NODE)" "DRAIN" "slurmctld shows it draining"
ok "the drain call still waits while the job runs" kill -0 $DRAIN_PID
scancel "$job"
wait $DRAIN_PID
is "$?" 0 "drain --wait-idle returns 0 once the job has ended"
is "$(squeue -h -j $job -o %T 2>/dev/null)" "" "and the job is gone"
flag
ctl run health.signal > /dev/null
is "$?" 0 "a round with the checks passing"
is "$(reason)" "sunkd: maintenance window" "passing checks do not resume an operator's drain"
ctl health undrain > /dev/null
is "$?" 0 "undrain"
ok "undrain resumes it" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- a check named prolog-... drains as a check: passing resumes the node
pg() { ctl run health.prolog-gpu > /dev/null; }
touch "$T/pfault"
pg; pg
ok "a failing check named prolog-gpu drains" wait_until 600 eval '[ "$(reason)" = "sunkd: prolog-gpu: no GPU" ]'
is "$(module_status health sticky)" false "its drain is not sticky"
rm "$T/pfault"
pg
is "$?" 0 "the check passes again"
ok "and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- a sticky drain outlives a restart and passing checks
ctl health drain reason="prolog: job 7 failed" sticky=true > "$T/drain.out"
is "$?" 0 "a sticky drain, as the prolog client asks for one"
# the answer shows the state after the call, not the round before it
like "$(cat "$T/drain.out")" "^slurmctld: drained: node $NODE drained" "drain prints what it did"
unlike "$(cat "$T/drain.out")" "resumed" "and not the resume before it"
is "$(reason)" "sunkd: prolog: job 7 failed" "drains the node"
is "$(module_status health sticky)" true "status says it is sticky"
sunkd_stop
sunkd_start
ok "the first round after the restart" wait_rounds 1
pg; flag
ctl run health.signal > /dev/null
is "$?" 0 "a round with the checks passing, after the restart"
is "$(reason)" "sunkd: prolog: job 7 failed" "does not lift the sticky drain"
is "$(module_status health sticky)" true "which is still sticky"
ctl health undrain > "$T/undrain.out"
is "$?" 0 "undrain"
like "$(cat "$T/undrain.out")" "^slurmctld: resumed: node $NODE resumed" "undrain prints what it did"
like "$(cat "$T/undrain.out")" "^our reason: \(none\)" "with no reason of ours left"
ok "lifts it" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- undrain never takes someone else's reason
scontrol update nodename=$NODE state=drain reason="k8s: cordoned"
ctl health undrain > "$T/undrain.out" 2>&1
is "$?" 1 "undrain of someone else's reason fails"
like "$(cat "$T/undrain.out")" "not ours" "and says why"
is "$(reason)" "k8s: cordoned" "the reason stays"

# --- the methods refuse bad input and other users
ctl health drain reason=$(printf 'x%.0s' $(seq 300)) > "$T/bad.out" 2>&1
is "$?" 1 "an oversized reason is refused"
like "$(cat "$T/bad.out")" "reason" "naming the parameter"
ctl health drain wait_idle=7 > "$T/bad.out" 2>&1
is "$?" 1 "a wait_idle that is not a boolean is refused"
is "$(reason)" "k8s: cordoned" "nothing changed"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SUNKCTL" -s "$SOCK" health drain 2>&1)
like "$out" "ermission|denied|PermissionDenied" "drain is root's only"
out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$SUNKCTL" -s "$SOCK" health 2>&1)
like "$out" "flag" "status answers anyone"

# --- munged stopped: the munge check fails, saying why
ctl run health.munge > /dev/null
is "$?" 0 "the munge round trip passes with munged up"
slurm_munge_stop
ctl run health.munge > /dev/null
is "$?" 1 "and fails with munged stopped"
is "$(health_field munge code)" "munge-socket" "the code says the socket"
like "$(health_field munge detail)" "$MUNGE_SOCK" "the detail names it"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
