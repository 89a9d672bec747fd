#!/bin/bash
# deadline: 600
# The words downstream repair loops key on, against a real slurmctld:
# reason_words puts a code's and a remedy's text in the reason after the
# prefix ("sunkd: SDC flag: ...", "sunkd: Action:Reboot hang: ..."); and
# undrain_foreign_token resumes a foreign reason carrying the token (SUNK's
# sunk:verify-undrain) once every check has passed in a round run after it
# was seen, never while a check fails, and never any other foreign reason.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
NODE=rw-1

printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "fault file present"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
printf '#!/bin/sh\n[ -e "%s/hang" ] && exec sleep 1000\nexit 0\n' "$T" > "$T/hang.sh"
chmod 755 "$T/flag.sh" "$T/hang.sh"
slurm_munge_start
slurm_conf
slurm_ctld_start
slurm_node_start "$NODE"

sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    slurm_conf: $SLURM_CONF
    reason_words:
      script-failed: SDC
      reboot: Action:Reboot
    undrain_foreign_token: sunk:verify-undrain
    checks:
      - name: flag
        type: script
        path: $T/flag.sh
      - name: hang
        type: script
        path: $T/hang.sh
        timeout: 1s"
sunkd_start
LOG_MARKED="$T/sunkd.log"
reason() { slurm_reason "$NODE"; }
round() { ctl run health.signal > /dev/null; }
ok "the first round" wait_until 600 eval '[ "$(job_field health.signal runs)" -ge 1 ] 2>/dev/null'

# --- a code's words, after the prefix
touch "$T/fault"
ctl run health.flag > /dev/null
ok "the reason carries the code's words" wait_until 600 eval '[ "$(reason)" = "sunkd: SDC flag: fault file present" ]'
rm "$T/fault"
ctl run health.flag > /dev/null
ok "and the node is resumed as ever" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- a remedy's words: a hung check recommends a reboot
touch "$T/hang"
ctl run health.hang > /dev/null
ok "the reason carries the remedy's words" \
        wait_until 600 eval '[ "$(reason)" = "sunkd: Action:Reboot hang: no answer within 1.0s, killed" ]'
rm "$T/hang"
ctl run health.hang > /dev/null
ok "resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- a foreign reason with the token: resumed after a round in which every check passed
log_mark
scontrol update nodename=$NODE state=drain reason="hourly verify sunk:verify-undrain" || bail_out "drain"
round
ok "the round says it waits for every check to pass" \
        wait_log "carrying \"sunk:verify-undrain\" .*resumed after the next round in which every check passes"
ok "every check runs again and the node is resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- while a check fails it stays
touch "$T/fault"
scontrol update nodename=$NODE state=drain reason="hourly verify sunk:verify-undrain" || bail_out "drain"
ctl run health.flag > /dev/null
round
is "$(reason)" "hourly verify sunk:verify-undrain" "with a check failing the token's reason stays"
is "$(module_status health last_signal)" "other-owner" "left alone as anyone's"
rm "$T/fault"
ctl run health.flag > /dev/null
ok "once it passes, resumed" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE

# --- any other foreign reason: never
scontrol update nodename=$NODE state=drain reason="k8s: cordoned sunk:verify" || bail_out "drain"
round
ctl run health.flag > /dev/null
round
is "$(reason)" "k8s: cordoned sunk:verify" "a reason without the whole token stays"
scontrol update nodename=$NODE state=resume
done_testing
