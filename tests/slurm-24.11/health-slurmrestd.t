#!/bin/bash
# deadline: 1500
# The slurmrestd transport against a real slurmrestd (Slurm 24.11 in the
# Debian 13 root; run by make check-slurm-24.11, since Debian 12's
# slurmrestd, 22.05, has no node update) with rest_auth/jwt, slurmctld
# verifying the token with auth/jwt and a key made here.  For every
# data_parser version this slurmrestd serves with a node update (read from
# its OpenAPI document): a failing check drains the node with our reason,
# by root, and a passing one resumes it.  Then, as 0280 and 0281 check them
# over scontrol: a token for nobody is refused and changes nothing; the
# fleet guard counts our drains in the node's partitions from the nodes
# list and holds a third drain; a drain slurmctld did not take (it was
# stopped, slurmrestd still answering) is made once it is back.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slurm.sh"
sunkd_setup
slurm_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
command -v slurmrestd > /dev/null || bail_out "slurmrestd is needed (Debian package slurmrestd)"
ls /usr/lib/*/slurm-wlm/auth_jwt.so > /dev/null 2>&1 || bail_out "auth_jwt.so is needed (Debian package slurm-wlm-jwt-plugin)"
command -v curl > /dev/null || bail_out "curl is needed to read slurmrestd's OpenAPI document"
diag "slurmrestd: $(slurmrestd -V)"
KEY="$S/jwt_hs256.key"
# 32 random bytes, a NUL and a newline among them: all of it is the key
{ head -c 15 /dev/urandom; printf '\0'; head -c 15 /dev/urandom; printf '\n'; } > "$KEY"
chmod 600 "$KEY"
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "bad rollout"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"

rest_stop() {
        [ -n "${REST_PID:-}" ] || return 0
        kill "$REST_PID" 2> /dev/null
        wait "$REST_PID" 2> /dev/null
        REST_PID=
}
trap 'rest_stop; slurm_cleanup; sunkd_cleanup' EXIT

slurm_munge_start
# partitions fl (the node's own) and ot, as in 0281
slurm_conf "AuthAltTypes=auth/jwt" "AuthAltParameters=jwt_key=$KEY" \
        "NodeSet=flset Feature=fl" "NodeSet=otset Feature=ot" "PartitionName=ot Nodes=otset State=UP"
sed -i 's/^PartitionName=debug Nodes=ALL /PartitionName=fl Nodes=flset /' "$SLURM_CONF"
slurm_ctld_start
for n in fl-1 fl-2 fl-3 fl-4 fl-5; do slurm_node_start $n "CPUs=2 RealMemory=500 Feature=fl"; done
for n in ot-1 ot-2 ot-3; do slurm_node_start $n "CPUs=2 RealMemory=500 Feature=ot"; done
NODE=fl-1

# slurmrestd on loopback, as nobody (it refuses root), taking JWTs only:
# SLURM_JWT=daemon has it hand each request's token on to slurmctld (without
# it, it talks through auth/munge, which refuses a token: "Rejecting thread
# config token"); openapi/slurmctld alone (openapi/slurmdbd needs slurmdbd)
REST_PORT=$(slurm_free_port)
SLURM_JWT=daemon slurmrestd -f "$SLURM_CONF" -a rest_auth/jwt -s openapi/slurmctld -u nobody -g nogroup \
        "127.0.0.1:$REST_PORT" > "$S/log/slurmrestd.log" 2>&1 &
REST_PID=$!
URL="http://127.0.0.1:$REST_PORT"
TOKEN=$(scontrol token username=root lifespan=600 | sed -n 's/^SLURM_JWT=//p')
[ -n "$TOKEN" ] || bail_out "scontrol token printed no token"
wait_until 600 eval 'curl -sf -H "X-SLURM-USER-NAME: root" -H "X-SLURM-USER-TOKEN: $TOKEN" \
        -o "$T/openapi.json" "$URL/openapi/v3"' ||
        { sed 's/^/# /' "$S/log/slurmrestd.log" | tail -20; bail_out "slurmrestd does not answer"; }
# the versions with POST /slurm/<version>/node/{node_name}
VERSIONS=$(python3 -c '
import json, re, sys
paths = json.load(open(sys.argv[1]))["paths"]
vs = [m.group(1) for p, ops in paths.items()
      for m in [re.fullmatch(r"/slurm/(v[0-9.]+)/node/\{node_name\}", p)] if m and "post" in ops]
print(" ".join(sorted(set(vs), key=lambda v: [int(x) for x in v[1:].split(".")])))' "$T/openapi.json")
diag "data_parser versions with a node update: $VERSIONS"
ok "slurmrestd serves a node update" test -n "$VERSIONS"
NEWEST=${VERSIONS##* }

config() { # VERSION USER [MORE-HEALTH-LINES]
        sunkd_config "modules:
  health:
    node_name: $NODE
    interval: 1h
    fail_after: 1
    transport: slurmrestd
    slurmrestd:
      url: $URL
      version: $1
      jwt_key_file: $KEY
      user: $2${3:+
$3}
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
}
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}
runs() { job_field health.signal runs; }
flag() { ctl run health.flag > /dev/null; }
reason() { slurm_reason $NODE; }
stop() { sunkd_stop; is "$SUNKD_EXIT" 0 "sunkd exits cleanly"; }

# --- every version: drain and resume, by root
for v in $VERSIONS; do
        config "$v" root
        sunkd_start
        ok "$v: the first round" wait_rounds 1
        is "$(module_status health last_signal)" "unchanged" "$v: the first round finds the node not drained"
        touch "$T/fault"
        flag
        ok "$v: a failing check drains the node" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: bad rollout" ]'
        like "$(slurm_state $NODE)" "DRAIN" "$v: its state has DRAIN"
        is "$(sinfo -h -R -n $NODE -o %u)" "root" "$v: by root, through auth/jwt"
        is "$(module_status health reason_set)" "sunkd: flag: bad rollout" "$v: status names the reason we set"
        rm "$T/fault"
        flag
        ok "$v: a passing check resumes it" wait_until 600 eval '[ -z "$(reason)" ]'
        slurm_wait_ready $NODE
        stop
done

# --- a token for nobody: slurmctld refuses the drain, nothing changes
config "$NEWEST" nobody
sunkd_start
ok "nobody: the first round" wait_rounds 1
touch "$T/fault"
n=$(runs)
flag
ok "nobody: a round after the failure" wait_rounds $((n + 1))
is "$(module_status health last_signal)" "failed" "nobody: the round fails"
is "$(reason)" "" "nobody: the node is not drained"
nok "no token in the log" grep -q "eyJ" "$T/sunkd.log"
# passing again before the stop: the saved state starts the next section clean
rm "$T/fault"
flag
stop

# --- the fleet guard: 2 of fl's 5 drained by us already hold a third at 40%
config "$NEWEST" root "    max_drained_pct: 40"
sunkd_start
ok "guard: the first round" wait_rounds 1
scontrol update nodename=fl-2 state=drain reason="sunkd: flag: bad rollout" || bail_out "drain fl-2"
scontrol update nodename=fl-3 state=drain reason="sunkd: flag: bad rollout" || bail_out "drain fl-3"
scontrol update nodename=fl-4 state=drain reason="k8s: cordoned" || bail_out "drain fl-4"
for n in ot-1 ot-2 ot-3; do
        scontrol update nodename=$n state=drain reason="sunkd: flag: bad rollout" || bail_out "drain $n"
done
LOG_MARKED="$T/sunkd.log"
log_mark
touch "$T/fault"
n=$(runs)
flag
ok "guard: a round after the failure" wait_rounds $((n + 1))
is "$(reason)" "" "guard: the third node is not drained"
is "$(module_status health last_signal)" "fleet-guard" "guard: status says the fleet guard held it"
ok "guard: the log says so, with the counts" wait_log "fleet guard: 2 of 5 nodes .* drained by us already"
scontrol update nodename=fl-3 state=resume
wait_until 600 eval '[ -z "$(slurm_reason fl-3)" ]' || bail_out "fl-3 did not resume"
flag
ok "guard: with room again the next round drains" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: bad rollout" ]'
rm "$T/fault"
flag
ok "guard: and resumes" wait_until 600 eval '[ -z "$(reason)" ]'
slurm_wait_ready $NODE
for n in fl-2 fl-4 ot-1 ot-2 ot-3; do scontrol update nodename=$n state=resume; done
stop

# --- slurmctld away (slurmrestd answering): state kept, drained once it is back
config "$NEWEST" root
sunkd_start
ok "away: the first round" wait_rounds 1
slurm_ctld_stop
touch "$T/fault"
n=$(runs)
flag
ok "away: a round with slurmctld stopped" wait_rounds $((n + 1))
is "$(module_status health last_signal)" "failed" "away: status says slurmctld could not be reached"
slurm_ctld_start
ok "away: once slurmctld is back the node is drained" wait_until 1200 eval '[ "$(reason)" = "sunkd: flag: bad rollout" ]'
rm "$T/fault"
flag
ok "away: and resumed" wait_until 600 eval '[ -z "$(reason)" ]'
stop
done_testing
