#!/bin/bash
# deadline: 400
# source = s3: nsscache's s3 source against a real S3-compatible server
# (s3rver on loopback), read through an nsscache.conf as nsscache reads it,
# with sunkd's s3_endpoint, s3_region and s3_credentials_file beside it.
# The objects are nsscache's JSON records; an unchanged object costs a 304;
# credentials the server refuses keep the maps; a hostile object loses its
# bad records only, one that is not an array or too large writes nothing.
# A producer uploads its export_dir to the bucket (export_s3_url), the
# manifest last, in its own job: a failed upload fails and backs off that
# job, not the refresh, and its retry uploads what it missed; a node follows
# the manifest in the bucket with signed requests.  nsscache's gcs keys,
# a bad region, missing or unprotected credentials are refused at their line.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/s3rver.sh"
. "$SUNKD_SRCDIR/tests/lib/producer.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
command -v openssl >/dev/null || bail_out "openssl is needed to make the signing key"
command -v curl >/dev/null || bail_out "curl is needed to put objects into the bucket"
P="$T/producer"
PRODUCER_PID=
trap 'producer_stop; s3rver_stop; scim_stop; sunkd_cleanup' EXIT
mkdir -p "$T/cache" "$T/ts" "$T/obj" "$P/cache" "$P/ts" "$P/state" "$P/run" "$P/export"
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$T/local-passwd"
printf 'root:x:0:\n' > "$T/local-group"
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_REGION AWS_DEFAULT_REGION

s3rver_start fleet
# creds FILE KEYID: an AWS shared credentials file, root's alone
creds() {
        printf '# the node reader\n[other]\naws_access_key_id = NOTTHIS\naws_secret_access_key = x\n\n' > "$1"
        printf '[default]\naws_access_key_id = %s\naws_secret_access_key = S3RVER\nregion = us-east-1\n' "$2" >> "$1"
        chmod 600 "$1"
}
creds "$T/aws-credentials" S3RVER

# The objects, in nsscache's format: [{"Key": name, "Value": {attributes}}].
objects() { # MORE-PASSWD-RECORDS-JSON
        python3 - "$T/obj" "${1:-}" <<'EOF'
import json, sys
d, more = sys.argv[1], sys.argv[2]
passwd = [{"Key": "alice", "Value": {"uid": 10001, "gid": 10001, "comment": "Alice A", "home": "/home/alice", "shell": "/bin/bash"}},
          {"Key": "bob", "Value": {"uid": "10002", "gid": 10002}}]
if more:
    passwd += json.loads(more)
group = [{"Key": "team", "Value": {"gid": 20001, "members": "alice\nbob"}}]
shadow = [{"Key": "alice", "Value": {"passwd": "*", "lstchg": 19000}}, {"Key": "bob", "Value": {}}]
sshkey = [{"Key": "alice", "Value": {"sshPublicKey": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop"}}]
for name, recs in (("passwd", passwd), ("group", group), ("shadow", shadow), ("sshkey", sshkey)):
    json.dump(recs, open("%s/%s.json" % (d, name), "w"))
EOF
        for m in passwd shadow group sshkey; do
                s3put "maps/$m.json" "$T/obj/$m.json" || bail_out "cannot put maps/$m.json into the bucket"
        done
}
objects

# The nsscache.conf of a node of an nsscache fleet using s3, with this test's directories.
cat > "$T/nsscache.conf" <<EOF
[DEFAULT]
source = s3
cache = files
maps = passwd, shadow, group, sshkey
timestamp_dir = $T/ts
files_dir = $T/cache
files_cache_filename_suffix = cache
s3_bucket = fleet
s3_passwd_object = maps/passwd.json
s3_shadow_object = maps/shadow.json
s3_group_object = maps/group.json
s3_sshkey_object = maps/sshkey.json
EOF
chmod 644 "$T/nsscache.conf"
NODE_YAML="modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    s3_endpoint: $S3_URL
    s3_region: us-east-1
    s3_credentials_file: $T/aws-credentials
    http_retry_max: 1
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    interval: 1h
    splay: 1h"
sunkd_config "$NODE_YAML"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "nsscache.conf with source = s3 and sunkd's endpoint and credentials is accepted" || diag "$out"
sunkd_start
refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}

# 1. The maps from the bucket.
refresh
is "$RC" 0 "the first refresh succeeds" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "alice:x:10001:10001:Alice A:/home/alice:/bin/bash
bob:x:10002:10002::/home/bob:/bin/bash" "passwd: nsscache's attributes and defaults"
is "$(cat "$T/cache/group.cache")" "team:x:20001:alice,bob" "group: members split at newlines"
like "$(cat "$T/cache/shadow.cache")" "^alice:\*:19000:" "shadow: lstchg taken"
like "$(cat "$T/cache/sshkey.cache")" "^alice:\['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop'\]" "sshkey: the key"
is "$(module_status nsscache source)" "fleet" "status names the bucket"
cp "$T/cache/passwd.cache" "$T/passwd.good"

# 2. Unchanged objects: one conditional request each, a 304.
refresh
is "$RC" 0 "an unchanged refresh succeeds" || diag "$OUT"
is "$(module_status nsscache not_modified)" 4 "all four objects answer 304"
is "$(module_status nsscache requests)" 4 "one request each"

# refused CASE REGEX: the run fails naming why; passwd.cache stays; sunkd lives.
refused() {
        refresh
        ok "$1: the refresh fails" test "$RC" -ne 0
        like "$(module_status nsscache last_error)" "$2" "$1: the error says why"
        is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.good")" "$1: passwd.cache unchanged"
        ok "$1: sunkd is alive" kill -0 "$SUNKD_PID"
}

# 3. Credentials the server refuses; then a rotated file is read again by the next run.
objects '[{"Key": "dave", "Value": {"uid": 10004, "gid": 10004}}]'
creds "$T/aws-credentials" WRONGKEY
refused "an access key the server does not know" "maps/passwd.json: HTTP 403 \(S3 refused the request"
creds "$T/aws-credentials" S3RVER
refresh
is "$RC" 0 "the right credentials again: the refresh succeeds" || diag "$OUT"
like "$(cat "$T/cache/passwd.cache")" "^dave:x:10004:" "and the changed object is applied"
cp "$T/cache/passwd.cache" "$T/passwd.good"

# 4. Hostile objects.
python3 - "$T/obj/passwd.json" <<'EOF'
import json, sys
recs = json.load(open(sys.argv[1]))
recs += [{"Key": "eve", "Value": {"uid": 10005, "gid": 10005, "passwd": "$6$hash"}},
         {"Key": "frank", "Value": {"uid": 10006, "gid": 10006, "admin": True}},
         {"Key": "gina", "Value": {"uid": "ten", "gid": 10007}},
         {"Key": "mallory", "Value": {"uid": 0, "gid": 0}},
         {"Key": "ivan", "Value": {"uid": 10008, "gid": 10008, "shell": "/bin/sh\nroot::0:0::/:/bin/sh"}},
         "not a record", {"Key": "x"}]
json.dump(recs, open(sys.argv[1], "w"))
EOF
s3put maps/passwd.json "$T/obj/passwd.json" || bail_out "cannot put the hostile passwd object"
refresh
is "$RC" 0 "a hostile object: the good records are published" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.good")" "only the good records"
rejected() { module_status nsscache rejected | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$1"; }
is "$(rejected invalid-line)" 5 "a hash, an unknown attribute, a uid that is no number and two malformed records: rejected records"
is "$(rejected invalid-shell)" 1 "a shell with a line in it: rejected as on every source"
unlike "$(cat "$T/cache/passwd.cache")" "^(mallory|ivan|root::0)" "uid 0 and a shell with a line in it are kept out"
printf '{"Key": "alice"}' > "$T/obj/bad.json"
s3put maps/passwd.json "$T/obj/bad.json" || bail_out "cannot put"
refused "an object that is not an array" "maps/passwd.json: passwd: not a JSON array"
printf '[%s{"Key": "zed", "Value": {"uid": 10009, "gid": 10009}}' "$(printf '{"Key": "a", "Value": {"uid": 10010, "gid": 10010}},%.0s' $(seq 1 2000))" \
        > "$T/obj/big.json"
s3put maps/passwd.json "$T/obj/big.json" || bail_out "cannot put"
sunkd_stop
sunkd_config "$NODE_YAML
    http_max_size: 16K"
sunkd_start
refused "an object over http_max_size" "maps/passwd.json: larger than 16384 bytes"
sunkd_stop
sunkd_config "$NODE_YAML"
sunkd_start
s3put maps/passwd.json "$T/obj/passwd.json" || bail_out "cannot put"

# 5. The producer: SCIM in, export_dir out, uploaded to the bucket.
W="$P/export"
producer_setup "$SUNKD_SRCDIR/etc/demo/scim-data.json" "    export_s3_url: $S3_URL/fleet/export/
    s3_credentials_file: $T/producer-credentials"
creds "$T/producer-credentials" S3RVER
producer_start
stored() { grep -o 'Stored object "[^"]*"' "$S3_LOG" | sed 's/Stored object "\(.*\)"/\1/'; }
before=$(stored | wc -l)
out=$(pproduce 2>&1) || { sed 's/^/# /' <<< "$out"; bail_out "the producer's first refresh failed"; }
is "$(s3get export/manifest)" "$(cat "$P/export/manifest")" "the bucket holds the producer's manifest"
for f in $(cd "$P/export" && ls | grep -v -e '\.gz$' -e '^manifest$'); do
        is "$(s3get "export/$f" | sha256sum)" "$(sha256sum < "$P/export/$f")" "and $f"
done
is "$(stored | tail -n +$((before + 1)) | tail -n 1)" "export/manifest" "the manifest was stored last"
is "$(stored | tail -n +$((before + 1)) | wc -l)" 5 "four map files and the manifest, no gzip copy"
like "$(cat "$P/sunkd.log")" "Uploaded 5 objects of export_dir to '$S3_URL/fleet/export/', the manifest last" "and said so"
before=$(stored | wc -l)
pproduce > /dev/null || diag "the producer's unchanged refresh failed"
is "$(stored | wc -l)" "$before" "an unchanged run uploads nothing"

# 6. A failed upload fails the export, a job of its own, never the refresh:
# the producer's maps are published, the export backs off and, once the
# bucket takes it again, uploads on its own what it missed.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["Users"] = [u for u in d["Users"] if u["userName"] != "ada@example.com"]
json.dump(d, open(sys.argv[1], "w"))' "$T/data.json"
scim_reload
creds "$T/producer-credentials" WRONGKEY
exports=$(pstatus export_runs)
out=$(pctl run nsscache.refresh 2>&1); rc=$?
is "$rc" 0 "an upload the bucket refuses does not fail the producer's refresh" || diag "$out"
is "$(pstatus last_result)" success "status says the refresh succeeded"
unlike "$(cat "$P/cache/passwd.cache")" "^ada:" "and the producer's own maps are published"
export_failed() { [ "$(pstatus export_last_result)" = failure ] && [ "$(pstatus export_runs)" -gt "$exports" ]; }
ok "the export the refresh started fails" wait_until 300 export_failed
like "$(pstatus export_last_error)" "export/passwd-[0-9a-f]{64}: .*HTTP 403" "status says which object and why"
like "$(cat "$P/sunkd.log")" "failed to export the maps to '$S3_URL/fleet/export/'" "the log names export_s3_url"
pjob() { pctl --json jobs | python3 -c '
import json, sys
j = [j for j in json.load(sys.stdin)["jobs"] if j["name"] == sys.argv[1]]
print(j[0].get(sys.argv[2], "") if j else "")' "$1" "$2"; }
is "$(pjob nsscache.export last_result)" failure "the nsscache.export job failed"
is "$(pjob nsscache.refresh last_result)" success "the nsscache.refresh job did not"
ok "the export backs off: it failed in a row" test "$(pjob nsscache.export consecutive_failures)" -ge 1
next=$(pjob nsscache.export next_run_usec)
ok "and runs again within its backoff, not at its interval (1h)" \
        test -n "$next" -a "$((next / 1000000))" -lt "$(($(date +%s) + 600))"
unlike "$(s3get export/manifest)" "^$(cat "$P/export/manifest")$" "the bucket keeps the previous manifest"
like "$(pctl metrics)" "sunkd_nsscache_export_failures_total [1-9]" \
        "sunkd_nsscache_export_failures_total counts it"
creds "$T/producer-credentials" S3RVER
uploaded() { [ "$(s3get export/manifest)" = "$(cat "$P/export/manifest")" ]; }
ok "once the bucket takes it, the export's own retry uploads the new manifest" wait_until 300 uploaded
export_ok() { [ "$(pstatus export_last_result)" = success ]; }
ok "and the export job succeeds" wait_until 300 export_ok
is "$(pjob nsscache.export consecutive_failures)" 0 "and is back at its interval"

# 7. A node follows the manifest in the bucket, its requests signed.
sunkd_stop
sunkd_config "modules:
  nsscache:
    source: s3
    maps: [passwd, shadow, group, sshkey]
    files_dir: $T/cache
    timestamp_dir: $T/ts
    files_cache_filename_suffix: cache
    manifest_url: $S3_URL/fleet/export/manifest
    manifest_public_key: $PUB
    s3_credentials_file: $T/aws-credentials
    http_retry_max: 1
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    interval: 1h
    splay: 1h"
sunkd_start
refresh
is "$RC" 0 "a node with manifest_url in the bucket refreshes" || diag "$OUT"
for m in passwd shadow group sshkey; do
        is "$(cat "$T/cache/$m.cache")" "$(cat "$P/cache/$m.cache")" "the node's $m map is the producer's"
done
is "$(module_status nsscache manifest_generation)" 2 "generation 2 applied"
cp "$T/cache/passwd.cache" "$T/passwd.good"
creds "$T/aws-credentials" WRONGKEY
refused "the manifest with credentials the bucket refuses" "export/manifest: HTTP 403"
creds "$T/aws-credentials" S3RVER

# 8. Configurations that could not work are refused, naming the file and line or key.
check() { # DESC REGEX: --check-config of $T/bad.yaml
        out=$("$SUNKD" -c "$T/bad.yaml" --check-config 2>&1); rc=$?
        ok "$1: refused" test "$rc" -ne 0
        like "$out" "$2" "$1: the error says why"
}
bad_yaml() { # EXTRA-YAML-LINES
        { sed -n '1,3p' "$T/sunkd.yaml"; printf '%s\n%s\n' "$NODE_YAML" "$1"; } > "$T/bad.yaml"
        sed -i "s|nsscache_conf: .*|nsscache_conf: $T/bad.conf|" "$T/bad.yaml"
        cp "$T/nsscache.conf" "$T/bad.conf"
}
bad_yaml ""
printf 'gcs_bucket = fleet\n' >> "$T/bad.conf"
check "nsscache's gcs_bucket" "bad.conf:[0-9]+: key 'gcs_bucket': nsscache's gcs source is not supported: use source = s3 with s3_endpoint = https://storage.googleapis.com"
bad_yaml ""
sed -i 's/^source = s3/source = gcs/' "$T/bad.conf"
check "source = gcs" "bad.conf:2: key 'source': nsscache's gcs source is not supported: use source = s3 .*HMAC key"
bad_yaml ""
sed -i 's|^    s3_region: .*|    s3_region: US_East:1|' "$T/bad.yaml"
check "a bad region" "bad.yaml:[0-9]+:[0-9]+: .*key 's3_region': lowercase letters, digits and '-'"
bad_yaml ""
sed -i '/s3_credentials_file/d' "$T/bad.yaml"
check "no credentials at all" "no S3 credentials: set s3_credentials_file, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
out=$(AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER "$SUNKD" -c "$T/bad.yaml" --check-config 2>&1)
is "$?" 0 "credentials from the environment are accepted" || diag "$out"
cp -p "$T/aws-credentials" "$T/open-credentials" && chmod 640 "$T/open-credentials"
bad_yaml ""
sed -i "s|^    s3_credentials_file: .*|    s3_credentials_file: $T/open-credentials|" "$T/bad.yaml"
check "a group-readable credentials file" "bad.yaml:[0-9]+:[0-9]+: .*key 's3_credentials_file': '$T/open-credentials': refused"
printf '[default]\naws_access_key_id = S3RVER\n' > "$T/half-credentials" && chmod 600 "$T/half-credentials"
sed -i "s|^    s3_credentials_file: .*|    s3_credentials_file: $T/half-credentials|" "$T/bad.yaml"
check "a credentials file without a secret" "key 's3_credentials_file': '$T/half-credentials': \[default\] needs aws_access_key_id and aws_secret_access_key"
bad_yaml ""
sed -i '/^s3_passwd_object/d' "$T/bad.conf"
check "a map without its object" "bad.conf: key 's3_passwd_object': required for the passwd map"
bad_yaml "    export_s3_url: $S3_URL/fleet/export"
check "export_s3_url without export_dir" "key 'export_s3_url': needs export_dir"
bad_yaml ""
sed -i 's/^s3_bucket = fleet/s3_bucket = Fleet_Bucket!/' "$T/bad.conf"
check "a bucket name S3 would not take" "key 's3_bucket': not a bucket name"
ok "sunkd is alive after all that" kill -0 "$SUNKD_PID"

done_testing
