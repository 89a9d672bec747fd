# A producer sunkd: the SCIM fixture mapped and exported, signed, into a
# directory a web server serves (sourced after tap.sh, sunkd.sh and scim.sh).
#
# producer_setup DATA [YAML]   $P (its directory), $W (export_dir; $T/www unless set), the signing keys
#                              $T/signing.pem and $T/other.pem, $PUB (the node's
#                              manifest_public_key), $T/local/{passwd,group}, the SCIM
#                              fixture serving a copy of DATA at $T/data.json, and the
#                              producer's $P/sunkd.yaml (YAML: more keys of its section)
# producer_start / producer_stop   start it (waits for its socket) / stop it (waits)
# pctl ARGS...                 sunkctl against the producer
# pproduce                     one refresh on the producer and then an export (its own job,
#                              which a refresh that published starts), waited for; fails
#                              when either fails
# pstatus FIELD                a field of the producer's nsscache status
# mfile MAP [FIELD]            the file (or FIELD: size, sha256, delta.file, ...) the served
#                              manifest names for MAP, read without checking: nodes check
# payload                      the served manifest's payload, decoded
# sign_manifest KEY PAYLOAD    an envelope around PAYLOAD signed by KEY, as a producer signs
# node_section DIR             the nsscache section of a node following the manifest at
#                              $NGINX_URL, its maps in DIR/cache
# node_config                  this test's sunkd as such a node into $T/cache
#                              (sunkd_config; start it yourself)
# refresh                      one run on the node: its output in $OUT, exit status in $RC

producer_setup() {
        local data=$1 extra=${2:-}
        command -v openssl >/dev/null || bail_out "openssl is needed to make the signing keys"
        P="$T/producer"
        W=${W:-$T/www}
        PRODUCER_PID=
        mkdir -p "$W" "$T/local" "$P/cache" "$P/ts" "$P/state" "$P/run"
        printf 'root:x:0:0:root:/root:/bin/bash\n' > "$T/local/passwd"
        printf 'root:x:0:\n' > "$T/local/group"
        cp "$data" "$T/data.json"
        scim_start "$T/data.json"
        scim_token
        (umask 077 && openssl genpkey -algorithm ed25519 -out "$T/signing.pem" 2>/dev/null &&
                openssl genpkey -algorithm ed25519 -out "$T/other.pem" 2>/dev/null) || bail_out "openssl genpkey failed"
        PUB=$(openssl pkey -in "$T/signing.pem" -pubout | sed -n 2p)
        cat > "$P/sunkd.yaml" <<EOF
socket: $P/run/io.sunkd
state_dir: $P/state
module_dir: $MODDIR
modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: $P/cache
    timestamp_dir: $P/ts
    token_file: $T/token
    local_passwd: $T/local/passwd
    local_group: $T/local/group
    interval: 1h
    splay: 1h
    export_dir: $W
    export_signing_key: $T/signing.pem
$extra
EOF
        chmod 644 "$P/sunkd.yaml"
}

producer_start() {
        "$SUNKD" -c "$P/sunkd.yaml" 2>> "$P/sunkd.log" &
        PRODUCER_PID=$!
        wait_for_file "$P/run/io.sunkd" 300 || { sed 's/^/# /' "$P/sunkd.log"; bail_out "the producer did not start"; }
}

producer_stop() {
        [ -n "$PRODUCER_PID" ] && kill -TERM "$PRODUCER_PID" 2>/dev/null && wait "$PRODUCER_PID"
        PRODUCER_PID=
}

pctl() {
        "$SUNKCTL" -s "$P/run/io.sunkd" --timeout 300 "$@"
}

pproduce() {
        pctl run nsscache.refresh && pctl run nsscache.export
}

pstatus() {
        pctl --json status | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["modules"] if m["name"] == "nsscache"]
print(m[0].get("status", {}).get(sys.argv[1], "") if m else "")' "$1"
}

mfile() {
        python3 -c '
import base64, json, sys
env = json.load(open(sys.argv[1]))
v = json.loads(base64.b64decode(env["payload"]))["maps"][sys.argv[2]]
for k in sys.argv[3].split("."):
    v = v.get(k, "") if isinstance(v, dict) else ""
print(v)' "$W/manifest" "$1" "${2:-file}"
}

payload() {
        python3 -c '
import base64, json, sys
print(base64.b64decode(json.load(open(sys.argv[1]))["payload"]).decode(), end="")' "$W/manifest"
}

sign_manifest() {
        printf 'sunkd-nsscache-manifest 1\n%s' "$2" > "$T/msg"
        openssl pkeyutl -sign -rawin -inkey "$1" -in "$T/msg" -out "$T/sig" || bail_out "openssl pkeyutl failed"
        python3 -c '
import base64, sys
p = base64.b64encode(sys.argv[1].encode()).decode()
s = base64.b64encode(open(sys.argv[2], "rb").read()).decode()
print("{\"payload\":\"%s\",\"signature\":\"%s\"}" % (p, s))' "$2" "$T/sig"
}

node_section() {
        printf '%s\n' "  nsscache:
    source: http
    maps: [passwd, shadow, group, sshkey]
    files_dir: $1/cache
    timestamp_dir: $1/ts
    files_cache_filename_suffix: cache
    local_passwd: $T/local/passwd
    local_group: $T/local/group
    manifest_url: $NGINX_URL/manifest
    manifest_public_key: $PUB
    http_retry_max: 1
    interval: 1h
    splay: 1h"
}

node_config() {
        mkdir -p "$T/cache" "$T/ts"
        sunkd_config "modules:
$(node_section "$T")"
}

refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}
