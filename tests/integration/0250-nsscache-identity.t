#!/bin/bash
# The nsscache module against a hostile directory: the node's own and the
# reserved accounts are never published, a newcomer served first cannot take
# over a published account, one bad record costs that record only, empty
# attributes fall back as in nsscache, and users without keys get "name:".
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
scim_token
mkdir -p "$T/cache" "$T/ts"

# The node's own accounts.
printf '%s\n' 'root:x:0:0:root:/root:/bin/bash' 'sshd:x:105:65534::/run/sshd:/usr/sbin/nologin' \
        'opsadmin:x:20500:20500::/home/opsadmin:/bin/bash' > "$T/passwd"
printf '%s\n' 'root:x:0:' 'sudo:x:27:opsadmin' 'localgpu:x:30500:' > "$T/group"

CW=urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser
# user NAME UID [EXTRA-JSON]: one SCIM user in the seed's layout.
user() {
        printf '{"userName": "%s@example.com", "name": {"formatted": "%s"}, "%s": {"sunkPosixUsername": "%s", "sunkPosixUserId": %s, "sunkPosixGroupId": 30002%s}}' \
                "$1" "${4:-$1}" "$CW" "$1" "$2" "${3:+, $3}"
}
group() { # NAME GID MEMBER...
        local name=$1 gid=$2 m sep=""
        shift 2
        printf '{"displayName": "%s", "sunkPosixGroupName": "%s", "sunkPosixGroupId": %s, "members": [' "$name" "$name" "$gid"
        for m; do printf '%s{"sunkPosixUsername": "%s"}' "$sep" "$m"; sep=", "; done
        printf ']}'
}

cat > "$T/hostile.json" <<JSON
{"Users": [
 $(user alice 20001 '"sunkSshKeys": ["from=\"10.0.0.0/8,192.168.0.0/16\" ssh-ed25519 AAAA alice@laptop", "ssh-ed25519 AAAA bad<RAW-FF>key", 7]'),
 $(user root 20002 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-root"]'),
 $(user sshd 20003 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-sshd"]'),
 $(user opsadmin 20010 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-ops"]'),
 $(user eve 20500 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-eve"]'),
 $(user systemd-coredump 20011),
 $(user .. 20012),
 $(user 20013 20013),
 $(user bob 20004 '"sunkLoginShell": "", "sunkSshKeys": []'),
 $(user carol 20005 '' 'Car<RAW-FF>ol'),
 $(user dave 20006 '"sunkPosixGroupId": 30500')
],
"Groups": [
 $(group sudo 30001 alice),
 $(group localgpu 30600 alice),
 $(group research 30500 alice),
 $(group team 30002 alice root opsadmin bob sshd)
]}
JSON

write_config() {
        nsscache_config "local_passwd: $T/passwd
    local_group: $T/group"
}
scim_start "$T/hostile.json" --raw-bytes
write_config
sunkd_start
ok "first refresh completes" wait_runs nsscache.refresh 1 100
json=$(ctl --json status)
status() {
        echo "$json" | python3 -c 'import json,sys; s=[m for m in json.load(sys.stdin)["modules"] if m["name"]=="nsscache"][0]["status"]; print(eval(sys.argv[1]))' "$1"
}
is "$(status 's["last_result"]')" success "one bad key, bad names and local accounts do not fail the run"

is "$(cut -d: -f1,3,7 "$T/cache/passwd.cache")" "alice:20001:/bin/bash
bob:20004:/bin/bash
carol:20005:/bin/bash" "only the directory's own users are published"
unlike "$(cat "$T/cache/"*.cache)" "evil|root|sshd|opsadmin|eve|systemd|20013" \
        "no local, reserved or invalid name, local uid or key of one is anywhere"
like "$(grep '^carol:' "$T/cache/passwd.cache")" "^carol:x:20005:30002:Car\?ol:" "a gecos byte that is not UTF-8 becomes '?'"
is "$(grep '^alice:' "$T/cache/sshkey.cache")" \
   "alice:['from=\"10.0.0.0/8,192.168.0.0/16\" ssh-ed25519 AAAA alice@laptop']" \
   "a key with commas in its options is kept, one that is not UTF-8 or not a string is dropped alone"
is "$(grep -c -E '^(bob|carol):$' "$T/cache/sshkey.cache")" 2 "users without keys get 'name:' lines, as nsscache writes them"
is "$(cut -d: -f1,3,4 "$T/cache/group.cache")" "team:30002:alice,bob" \
   "local and reserved groups, a local gid and local members are dropped"
is "$(status 's["rejected"]["local-account"]')" 12 "status counts local-account rejects"
is "$(status 's["rejected"]["invalid-name"]')" 2 "and '..' and an all-digit name as invalid names"
like "$(ctl metrics)" 'sunkd_nsscache_rejected_total\{reason="local-account"\} 12' "metrics count them by reason"
like "$(cat "$T/sunkd.log")" "Rejected passwd entry 'root' \(id 20002\): local-account" "each is logged with its reason"

# Run 2: newcomers served before the published users claim their names and ids.
cat > "$T/takeover.json" <<JSON
{"Users": [
 $(user alice 20666 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-alice"]'),
 $(user mallory 20001 '"sunkSshKeys": ["ssh-ed25519 AAAA evil-mallory"]'),
 $(user dan 20100),
 $(user alice 20001 '"sunkSshKeys": ["ssh-ed25519 AAAA alice@laptop"]'),
 $(user bob 20004),
 $(user carol 20005),
 $(user dan 20101)
],
"Groups": [
 $(group team 30666 mallory),
 $(group team 30002 alice bob),
 $(group crew 30003 carol),
 $(group crew 30004 mallory)
]}
JSON
scim_stop
scim_start "$T/takeover.json"
write_config
ctl reload > /dev/null || bail_out "reload failed"
out=$(ctl run nsscache.refresh); rc=$?
is "$rc" 0 "the run with contested names succeeds"
is "$(cut -d: -f1,3 "$T/cache/passwd.cache")" "alice:20001
bob:20004
carol:20005" "the published alice keeps her name and uid; neither dan is published"
is "$(grep '^alice:' "$T/cache/sshkey.cache")" "alice:['ssh-ed25519 AAAA alice@laptop']" "and her keys"
unlike "$(cat "$T/cache/"*.cache)" "evil|mallory|dan|20666|30666" "no newcomer got anything"
is "$(cut -d: -f1,3,4 "$T/cache/group.cache")" "team:30002:alice,bob" "the published group keeps its gid; neither crew is published"
log=$(cat "$T/sunkd.log")
like "$log" "Rejected passwd entry 'alice' \(id 20666\): duplicate-name" "the newcomer is logged"
like "$log" "Rejected passwd entry 'dan' \(id 20100\): duplicate-name" "both claimants of an unpublished name are logged"
like "$log" "Rejected passwd entry 'dan' \(id 20101\): duplicate-name" "the second one too"

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
