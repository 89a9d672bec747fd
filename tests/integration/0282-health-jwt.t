#!/bin/bash
# deadline: 600
# The scontrol transport with a Slurm JWT against a real slurmctld with
# AuthAltTypes=auth/jwt (Debian's slurm-wlm-jwt-plugin): a token minted from
# jwt_hs256.key for `user` is what scontrol presents (as nobody, slurmctld
# refuses the drain; as root it is made), slurmctld's own jwt plugin
# verifying the signature; a token_file's token is read at each round; a
# key file others can read is refused at its line.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
ls /usr/lib/*/slurm-wlm/auth_jwt.so > /dev/null 2>&1 || bail_out "auth_jwt.so is needed (Debian package slurm-wlm-jwt-plugin)"
NODE=jwt-node-1
KEY="$S/jwt_hs256.key"
# 32 random bytes, a NUL and a newline among them: all of it is the key
{ head -c 15 /dev/urandom; printf '\0'; head -c 15 /dev/urandom; printf '\n'; } > "$KEY"
chmod 600 "$KEY"
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "fault"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"

slurm_munge_start
slurm_conf "AuthAltTypes=auth/jwt" "AuthAltParameters=jwt_key=$KEY"
slurm_ctld_start
slurm_node_start "$NODE"

config() { # SCONTROL-MAP-LINES
        sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    slurm_conf: $SLURM_CONF
    scontrol:
$1
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
}
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}

# --- a token for nobody: slurmctld verifies it and refuses the drain
config "      jwt_key_file: $KEY
      user: nobody"
sunkd_start
ok "the first round" wait_rounds 1
touch "$T/fault"
ctl run health.flag > /dev/null
ctl run health.signal > /dev/null
is "$?" 1 "the round fails"
is "$(module_status health last_signal)" "failed" "status says so"
like "$(module_status health last_signal_message)" "refused the update|Invalid user|ermission|denied" "with slurmctld's words"
is "$(slurm_reason $NODE)" "" "and the node is not drained"
nok "no token in the log" grep -q "eyJ" "$T/sunkd.log"
sunkd_stop

# --- a token for root: drained, the reason set by root through auth/jwt
config "      jwt_key_file: $KEY
      user: root
      jwt_lifetime: 2m"
sunkd_start
ok "the first round" wait_rounds 1
ok "the node is drained" wait_until 600 eval '[ "$(slurm_reason $NODE)" = "sunkd: flag: fault" ]'
is "$(sinfo -h -R -n $NODE -o %u)" "root" "by root"
rm "$T/fault"
ctl run health.flag > /dev/null
ok "and resumed" wait_until 600 eval '[ -z "$(slurm_reason $NODE)" ]'
slurm_wait_ready $NODE
sunkd_stop

# --- a token slurmctld minted, in a file read at each round
scontrol token username=root lifespan=600 | sed -n 's/^SLURM_JWT=//p' > "$T/token"
[ -s "$T/token" ] || bail_out "scontrol token printed no token"
chmod 600 "$T/token"
config "      token_file: $T/token"
sunkd_start
ok "the first round" wait_rounds 1
touch "$T/fault"
ctl run health.flag > /dev/null
ok "the token from the file drains" wait_until 600 eval '[ "$(slurm_reason $NODE)" = "sunkd: flag: fault" ]'
# a token that is not one: the next round is refused
echo "not-a-token" > "$T/token"
scontrol update nodename=$NODE state=drain reason="sunkd: flag: old"
ctl run health.signal > /dev/null
is "$?" 1 "a bad token in the file fails the round: it is read again"
is "$(slurm_reason $NODE)" "sunkd: flag: old" "and changes nothing"
sunkd_stop

# --- a key file others can read is refused at its line
chmod 640 "$KEY"
config "      jwt_key_file: $KEY"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a group-readable key is a config error"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'jwt_key_file': .*$KEY" "located, naming the file"
chmod 600 "$KEY"
config "      jwt_key_file: $KEY
      token_file: $T/token"
out=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
is "$?" 2 "a key and a token file together are refused"
like "$out" "not both" "saying so"
done_testing
