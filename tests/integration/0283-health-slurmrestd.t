#!/bin/bash
# deadline: 600
# The slurmrestd transport against tests/lib/slurmrestd-fixture.py (Debian
# 12's slurmrestd, 22.05, has no node update; the fixture answers as
# data_parser v0.0.39 and later, verifies each JWT over the raw key bytes
# and holds each update to the request's shape): a failing check drains
# with our reason, passing resumes, someone else's reason stays, the fleet
# guard counts the nodes list, a minted token and a token_file's are both
# taken; a wrong key (401), a user who may not update (403), hostile answers
# (oversized, not JSON, fields missing, cut short, an HTML 500, no answer)
# each fail the round with a clear message and change nothing; a reason
# with control bytes reaches no message raw; TLS is verified; each key of
# the slurmrestd map is refused at its line.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/health/.libs/health.so" "$MODDIR/" || bail_out "health.so not built"
command -v python3 > /dev/null || bail_out "python3 is needed for the slurmrestd fixture"
command -v openssl > /dev/null || bail_out "openssl is needed for the TLS case"
FX="$SUNKD_SRCDIR/tests/lib/slurmrestd-fixture.py"
NODE=rest-node-1
KEY="$T/jwt_hs256.key"
# 32 random bytes, a NUL and a newline among them: all of it is the key
{ head -c 15 /dev/urandom; printf '\0'; head -c 15 /dev/urandom; printf '\n'; } > "$KEY"
chmod 600 "$KEY"
printf '#!/bin/sh\n[ -e "%s/fault" ] && { echo "fault"; exit 1; }\nexit 0\n' "$T" > "$T/flag.sh"
chmod 755 "$T/flag.sh"

# Ten nodes in partition gpu (ours among them), five in cpu that carry our
# prefix: those are not in our partitions and never count for the guard.
python3 - "$T/nodes.json" "$NODE" << 'EOF'
import json, sys
nodes = [{"name": sys.argv[2], "state": ["IDLE"], "reason": "", "partitions": ["gpu"]}]
nodes += [{"name": "gpu-%d" % i, "state": ["IDLE"], "reason": "", "partitions": ["gpu"]} for i in range(2, 11)]
nodes += [{"name": "cpu-%d" % i, "state": ["IDLE", "DRAIN"], "reason": "sunkd: flag: elsewhere",
           "partitions": ["cpu"]} for i in range(1, 6)]
json.dump(nodes, open(sys.argv[1], "w"))
EOF

fx_start() { # PORTFILE LOG [ARGS]
        local pf=$1 log=$2
        shift 2
        python3 "$FX" serve --port-file "$pf" --log "$log" --key "$KEY" --nodes "$T/nodes.json" "$@" \
                2>> "$T/fixture.err" &
        FX_PIDS="${FX_PIDS:-} $!"
        wait_for_file "$pf" 600 || { sed 's/^/# /' "$T/fixture.err"; bail_out "the slurmrestd fixture did not start"; }
}
fx() { python3 "$FX" ctl "$T/fx.port" "$@"; }
cleanup() {
        for p in ${FX_PIDS:-}; do kill "$p" 2> /dev/null; done
        sunkd_cleanup
}
trap cleanup EXIT
FXLOG="$T/requests.log"
: > "$FXLOG"
fx_start "$T/fx.port" "$FXLOG"
URL="http://127.0.0.1:$(cat "$T/fx.port")"

config() { # TOKEN-LINES [MORE-MAP-LINES]
        sunkd_config "modules:
  health:
    node_name: ${CFG_NODE:-$NODE}
    interval: 1h
    fail_after: 1
    transport: slurmrestd
    slurmrestd:
      url: ${CFG_URL:-$URL}${CFG_VERSION:+
      version: $CFG_VERSION}
$1
    checks:
      - name: flag
        type: script
        path: $T/flag.sh"
}
wait_rounds() {
        wait_until 600 eval "[ \"\$(job_field health.signal runs)\" -ge $1 ] 2>/dev/null && [ \"\$(job_field health.signal state)\" != running ]"
}
reason() { fx get-node $NODE reason; }
state() { fx get-node $NODE state; }
flag() { ctl run health.flag > /dev/null; }
# an ASan build reports a leak or an error in the exit status
stop() { sunkd_stop; is "$SUNKD_EXIT" 0 "sunkd exits cleanly"; }
signal() { ctl run health.signal > /dev/null; }
# req_mark / reqs_since: the fixture's request lines after the mark
req_mark() { REQ_MARK=$(stat -c %s "$FXLOG"); }
reqs_since() { tail -c +$((REQ_MARK + 1)) "$FXLOG"; }
set_node() { # STATE-JSON REASON-JSON
        fx set-node "{\"name\": \"$NODE\", \"state\": $1, \"reason\": $2, \"partitions\": [\"gpu\"]}" > /dev/null
}

# --- a minted token: drain, resume (version v0.0.40 by default)
config "      jwt_key_file: $KEY
      user: root"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health transport)" "slurmrestd" "status names the transport"
is "$(module_status health last_signal)" "unchanged" "the first round finds the node not drained"
like "$(cat "$FXLOG")" "GET /slurm/v0.0.40/node/$NODE root 200" "it asked slurmrestd for the node, as root"
req_mark
touch "$T/fault"
flag
ok "a failing check drains the node" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault" ]'
like "$(state)" "DRAIN" "the node's state has DRAIN"
like "$(reqs_since)" "GET /slurm/v0.0.40/nodes root 200" "the fleet guard listed the nodes before draining"
like "$(reqs_since)" 'POST /slurm/v0.0.40/node/rest-node-1 root 200 \{"state":\["DRAIN"\],"reason":"sunkd: flag: fault"\}' \
        "the update is {state: [DRAIN], reason}"
ok "the drain is logged" grep -q "node $NODE drained: \"sunkd: flag: fault\"" "$T/sunkd.log"
is "$(module_status health reason_set)" "sunkd: flag: fault" "status names the reason we set"
req_mark
rm "$T/fault"
flag
ok "a passing check resumes it" wait_until 600 eval '[ -z "$(reason)" ]'
unlike "$(state)" "DRAIN" "no DRAIN left"
like "$(reqs_since)" 'POST /slurm/v0.0.40/node/rest-node-1 root 200 \{"state":\["RESUME"\]\}' "the update is {state: [RESUME]}"
unlike "$(reqs_since)" "/nodes " "no node list is needed to resume"

# --- a resume answered "Invalid node state specified" is done
fx mode stale-drain > /dev/null
n=$(job_field health.signal runs)
signal
is "$?" 0 "a round that finds a drain gone by the time it resumes succeeds"
is "$(module_status health last_signal)" "resumed" "it counts as resumed"
like "$(tail -n 1 "$FXLOG")" "POST .* 422 " "slurmrestd said the node was not drained"
fx mode normal > /dev/null

# --- someone else's reason stays while our check fails and passes
set_node '["IDLE", "DRAIN"]' '"replacing PSU"'
req_mark
touch "$T/fault"
flag
n=$(job_field health.signal runs)
signal
is "$(module_status health last_signal)" "other-owner" "an admin's reason is someone else's"
rm "$T/fault"
flag
signal
is "$(reason)" "replacing PSU" "it stays through our failure and pass"
unlike "$(reqs_since)" "POST" "no update was sent"
set_node '["IDLE"]' '""'

# --- the fleet guard: one of the ten gpu nodes drained by us already
fx set-node '{"name": "gpu-2", "state": ["IDLE", "DRAIN"], "reason": "sunkd: flag: other", "partitions": ["gpu"]}' > /dev/null
req_mark
touch "$T/fault"
flag
signal
is "$?" 1 "a round held by the fleet guard is retried"
is "$(module_status health last_signal)" "fleet-guard" "the fleet guard holds the drain"
like "$(module_status health last_signal_message)" "1 of 10 nodes" "counting the node's partitions only"
is "$(reason)" "" "the node is not drained"
like "$(reqs_since)" "GET /slurm/v0.0.40/nodes root 200" "from slurmrestd's node list"
unlike "$(reqs_since)" "POST" "no update was sent"
fx set-node '{"name": "gpu-2", "state": ["IDLE"], "reason": "", "partitions": ["gpu"]}' > /dev/null
signal
is "$(reason)" "sunkd: flag: fault" "once there is room the node drains"
rm "$T/fault"
flag
ok "and resumes" wait_until 600 eval '[ -z "$(reason)" ]'
nok "no token in the log" grep -q "eyJ" "$T/sunkd.log"
stop

# --- a token from token_file, read at each round
python3 "$FX" mint --key "$KEY" --user root > "$T/token"
chmod 600 "$T/token"
config "      token_file: $T/token"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "unchanged" "the token from the file is taken"
touch "$T/fault"
flag
ok "and drains" wait_until 600 eval '[ "$(reason)" = "sunkd: flag: fault" ]'
echo "not-a-token" > "$T/token"
rm "$T/fault"
flag
signal
is "$?" 1 "a bad token in the file fails the round: the file is read again"
like "$(module_status health last_signal_message)" "401.*Authentication failure" "with slurmrestd's 401"
is "$(reason)" "sunkd: flag: fault" "and nothing changed"
python3 "$FX" mint --key "$KEY" --user root --lifetime=-10 > "$T/token"
signal
is "$?" 1 "an expired token fails the round"
like "$(module_status health last_signal_message)" "401.*the token has expired" "the fixture checks exp"
python3 "$FX" mint --key "$KEY" --user alice > "$T/token"
signal
is "$?" 1 "a token for another user fails the round"
like "$(module_status health last_signal_message)" "401.*not for user 'root'" "the fixture checks sun"
python3 "$FX" mint --key "$KEY" --user root > "$T/token"
signal
is "$?" 0 "a good token again: the round succeeds"
is "$(reason)" "" "and resumes the node"
chmod 644 "$T/token"
signal
is "$?" 1 "a token file others can read is refused"
like "$(module_status health last_signal_message)" "token.*$T/token" "naming the file"
stop

# --- a wrong key: 401, the round fails with that message, nothing changed
head -c 32 /dev/urandom > "$T/wrong.key"
chmod 600 "$T/wrong.key"
set_node '["IDLE", "DRAIN"]' '"sunkd: flag: fault"'
config "      jwt_key_file: $T/wrong.key"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "failed" "a token the key does not verify fails the round"
like "$(module_status health last_signal_message)" "HTTP 401 to GET .*/node/$NODE: Authentication failure: the token's signature does not verify" \
        "with the status and slurmrestd's words"
like "$(tail -n 1 "$FXLOG")" "GET /slurm/v0.0.40/node/$NODE root 401" "the fixture answered 401"
is "$(reason)" "sunkd: flag: fault" "nothing changed"
nok "no token in the log" grep -q "eyJ" "$T/sunkd.log"
stop

# --- a user who may read but not update: 403
config "      jwt_key_file: $KEY
      user: nobody"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "failed" "a resume as nobody fails"
like "$(module_status health last_signal_message)" "refused the update: .*HTTP 403 to POST .*Access/permission denied" \
        "with slurmrestd's refusal"
is "$(reason)" "sunkd: flag: fault" "nothing changed"
stop
set_node '["IDLE"]' '""'

# --- hostile answers: each a clear failure, no crash, nothing changed
config "      jwt_key_file: $KEY
      timeout: 2s"
sunkd_start
ok "the first round" wait_rounds 1
ok "the check's first run" wait_runs health.flag 1 600
for c in "oversize|larger than 1048576 bytes: refused" \
        "garbage|not a JSON object" \
        "missing|node $NODE has no state" \
        "truncated|not a JSON object" \
        "error500|HTTP 500 to GET .*: no error given" \
        "slow|gave no answer to GET .* within 2s"; do
        mode=${c%%|*}
        fx mode "$mode" > /dev/null
        touch "$T/fault"
        flag
        signal
        is "$?" 1 "$mode: the round fails"
        like "$(module_status health last_signal_message)" "${c#*|}" "$mode: saying why"
        is "$(reason)" "" "$mode: nothing changed"
done
fx mode normal > /dev/null
ok "sunkd is alive" eval "ctl status > /dev/null"
signal
is "$(reason)" "sunkd: flag: fault" "and drains once slurmrestd answers well"
rm "$T/fault"
flag
ok "resumed" wait_until 600 eval '[ -z "$(reason)" ]'

# --- a reason with control bytes: someone else's, never logged raw
set_node '["IDLE", "DRAIN"]' '"admin\u0000x\u001b[31m\nline 2"'
signal
is "$(module_status health last_signal)" "other-owner" "a reason with control bytes is someone else's"
like "$(module_status health last_signal_message)" 'admin\?x\?\[31m\?line 2' "shown with each control byte as '?'"
nok "no escape byte in the log" grep -q $'\x1b' "$T/sunkd.log"
set_node '["IDLE"]' '""'
stop

# --- a node slurmctld does not know; a version slurmrestd does not serve
CFG_NODE=no-such-node config "      jwt_key_file: $KEY"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "not-found" "an unknown node is not found"
like "$(module_status health last_signal_message)" "no node 'no-such-node': set health: node_name" "naming the node and the key"
stop
CFG_VERSION=v0.0.99 config "      jwt_key_file: $KEY"
sunkd_start
ok "the first round" wait_rounds 1
like "$(module_status health last_signal_message)" "HTTP 404 to GET $URL/slurm/v0.0.99/node/$NODE" "a version not served: 404"
stop

# --- TLS: verified against ca_file, refused without it
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
        -keyout "$T/tls.key" -out "$T/tls.crt" > /dev/null 2>&1 || bail_out "openssl cannot make a certificate"
: > "$T/tls-requests.log"
fx_start "$T/fx-tls.port" "$T/tls-requests.log" --cert "$T/tls.crt" --cert-key "$T/tls.key"
TLS_URL="https://127.0.0.1:$(cat "$T/fx-tls.port")"
CFG_URL=$TLS_URL config "      jwt_key_file: $KEY"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "failed" "an https server whose certificate is not trusted is refused"
like "$(module_status health last_signal_message)" "no answer from slurmrestd.*(certificate|SSL)" "saying so"
is "$(wc -l < "$T/tls-requests.log")" 0 "no request reached it"
stop
CFG_URL=$TLS_URL config "      jwt_key_file: $KEY
      ca_file: $T/tls.crt"
sunkd_start
ok "the first round" wait_rounds 1
is "$(module_status health last_signal)" "unchanged" "with ca_file it is verified and used"
like "$(cat "$T/tls-requests.log")" "GET /slurm/v0.0.40/node/$NODE root 200" "over https"
stop

# --- the slurmrestd map's keys, each refused at its line
refused() { # DESCRIPTION REGEX MAP-LINES
        sunkd_config "modules:
  health:
    node_name: $NODE
    transport: ${CFG_TRANSPORT:-slurmrestd}
$3"
        OUT=$("$SUNKD" --check-config -c "$T/sunkd.yaml" 2>&1)
        is "$?" 2 "$1: a config error"
        like "$OUT" "sunkd.yaml:[0-9]+:[0-9]+: $2" "$1: located, saying why"
}
refused "no map" "key 'transport': slurmrestd needs a slurmrestd: mapping" ""
refused "no url" "key 'url': required" "    slurmrestd:
      token_file: $T/token"
refused "an ftp url" "key 'url': not an http:// or https:// URL" "    slurmrestd:
      url: ftp://127.0.0.1/
      token_file: $T/token"
refused "credentials in the url" "key 'url': credentials have no place" "    slurmrestd:
      url: http://admin:hunter2@127.0.0.1/
      token_file: $T/token"
unlike "$OUT" "hunter2" "credentials in the url: the password is not repeated"
refused "a url with a query" "key 'url': a query" "    slurmrestd:
      url: http://127.0.0.1/?x=1
      token_file: $T/token"
refused "a version before node updates" "key 'version': 'v0.0.38': slurmrestd has no node update before v0.0.39" "    slurmrestd:
      url: $URL
      version: v0.0.38
      token_file: $T/token"
refused "a version without its v" "key 'version': '0.0.40': not of the form vN.N.N" "    slurmrestd:
      url: $URL
      version: 0.0.40
      token_file: $T/token"
refused "a user with a blank" "key 'user': not a user name" "    slurmrestd:
      url: $URL
      user: \"ro ot\"
      token_file: $T/token"
refused "no token" "key 'slurmrestd': give token_file or jwt_key_file" "    slurmrestd:
      url: $URL"
refused "both tokens" "key 'jwt_key_file': give token_file or jwt_key_file, not both" "    slurmrestd:
      url: $URL
      token_file: $T/token
      jwt_key_file: $KEY"
chmod 640 "$KEY"
refused "a key others can read" "key 'jwt_key_file': .*$KEY" "    slurmrestd:
      url: $URL
      jwt_key_file: $KEY"
chmod 600 "$KEY"
refused "a short lifetime" "key 'jwt_lifetime': at least 1s" "    slurmrestd:
      url: $URL
      jwt_key_file: $KEY
      jwt_lifetime: 100ms"
refused "a zero timeout" "key 'timeout': 1s to 20s" "    slurmrestd:
      url: $URL
      jwt_key_file: $KEY
      timeout: 0s"
refused "a timeout past the round's" "key 'timeout': 1s to 20s" "    slurmrestd:
      url: $URL
      jwt_key_file: $KEY
      timeout: 1m"
refused "ca_file for http" "key 'ca_file': the url is not https://" "    slurmrestd:
      url: $URL
      jwt_key_file: $KEY
      ca_file: $T/tls.crt"
CFG_TRANSPORT=carrier-pigeon refused "a transport there is not" \
        "key 'transport': 'carrier-pigeon' is not scontrol, libslurm, slurmrestd or none" ""
done_testing
