#!/bin/bash
# deadline: 600
# Maps published once, signed: a producer sunkd maps the SCIM fixture and
# exports the maps and an Ed25519-signed manifest into a directory a real
# nginx serves; a node sunkd follows the manifest.  Whoever takes the web
# server over can serve nothing the node publishes: a changed map file, a
# changed or re-signed manifest, one signed by another key, an older
# generation (which would bring a removed user's key back), a malformed or
# oversized manifest all fail the run, the node's caches stay as they were
# and the daemon stays up.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
. "$SUNKD_SRCDIR/tests/lib/producer.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'producer_stop; nginx_stop; scim_stop; sunkd_cleanup' EXIT
mkdir -p "$T/cache" "$T/ts"
producer_setup "$SUNKD_SRCDIR/etc/demo/scim-data.json"

producer_start
nginx_start "$W"
pproduce > "$T/out" 2>&1 || { sed 's/^/# /' "$T/out"; bail_out "the producer's first refresh failed"; }

# 1. The export: content-addressed maps, gzip copies, a signed manifest.
ok "the producer wrote the manifest" test -f "$W/manifest"
is "$(pstatus export_generation)" 1 "as generation 1"
is "$(cat "$P/state/nsscache/export-generation")" 1 "kept in its state directory"
f=$(mfile passwd)
is "$f" "passwd-$(sha256sum < "$P/cache/passwd.cache" | cut -d' ' -f1)" "passwd is named by its SHA-256"
is "$(cat "$W/$f")" "$(cat "$P/cache/passwd.cache")" "and holds the published passwd map"
is "$(gzip -dc "$W/$f.gz")" "$(cat "$W/$f")" "its gzip copy decompresses to it"
for m in shadow group sshkey; do
        is "$(cat "$W/$(mfile $m)")" "$(cat "$P/cache/$m.cache")" "$m is exported as published"
done
like "$(payload)" "\"users\":$(wc -l < "$P/cache/passwd.cache"),\"groups\":$(wc -l < "$P/cache/group.cache")," \
        "the manifest counts the users and groups published"
pproduce > /dev/null
is "$(cat "$P/state/nsscache/export-generation")" 1 "an unchanged run exports no new generation"

# 2. The node: the manifest, verified, and the maps it names.
node_config
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "a node configuration with manifest_url is accepted" || diag "$out"
sunkd_start
refresh
is "$RC" 0 "the node's first refresh succeeds" || diag "$OUT"
for m in passwd shadow group sshkey; do
        is "$(cat "$T/cache/$m.cache")" "$(cat "$P/cache/$m.cache")" "the node's $m map is the producer's"
done
is "$(module_status nsscache manifest_generation)" 1 "status shows the generation applied"
is "$(nginx_requests "/$f")" 1 "passwd was fetched once"
refresh
is "$RC" 0 "an unchanged refresh succeeds" || diag "$OUT"
is "$(grep -c '^GET /manifest 304 ' "$NGINX_LOG")" 1 "the manifest is asked for conditionally: 304"
is "$(nginx_requests "/$f")" 1 "no map is fetched again"

# 3. A user removed at the directory: generation 2, only the changed maps fetched.
cp -a "$W" "$T/www.gen1"
group1=$(mfile group)
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["Users"] = [u for u in d["Users"] if u["userName"] != "ada@example.com"]
json.dump(d, open(sys.argv[1], "w"))' "$T/data.json"
scim_reload
pproduce > /dev/null || diag "the producer's refresh failed"
is "$(pstatus export_generation)" 2 "the producer exports generation 2"
ok "the passwd file of generation 1 stays while a node may still read its manifest" test -e "$W/$f"
refresh
is "$RC" 0 "the node applies it" || diag "$OUT"
unlike "$(cat "$T/cache/passwd.cache")" "^ada:" "ada is gone from the node"
unlike "$(cat "$T/cache/sshkey.cache")" "^ada:" "and her keys"
is "$(module_status nsscache manifest_generation)" 2 "generation 2 applied"
if [ "$(mfile group)" = "$group1" ]; then
        is "$(nginx_requests "/$group1")" 1 "the unchanged group map is not fetched again"
else
        ok "the group map changed too (ada's memberships)" true
fi
cp "$T/cache/passwd.cache" "$T/passwd.gen2"
cp "$T/cache/sshkey.cache" "$T/sshkey.gen2"
cp -a "$W" "$T/www.gen2"

# refused CASE REGEX: the run fails naming why; the caches stay generation 2's; sunkd lives.
refused() {
        refresh
        ok "$1: the refresh fails" test "$RC" -ne 0
        like "$(module_status nsscache last_error)" "$2" "$1: the error says why"
        is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.gen2")" "$1: passwd.cache unchanged"
        is "$(cat "$T/cache/sshkey.cache")" "$(cat "$T/sshkey.gen2")" "$1: sshkey.cache unchanged"
        ok "$1: sunkd is alive" kill -0 "$SUNKD_PID"
}
restore() {
        rm -rf "$W" && cp -a "$T/www.gen2" "$W"
}

# 4. The old directory served again (a replay): ada's key would come back.
rm -rf "$W" && cp -a "$T/www.gen1" "$W"
refused "generation 1 replayed" "generation 1 is older than 2, the one applied"
sunkd_stop
sunkd_start
refused "generation 1 replayed after a restart" "generation 1 is older than 2"
restore

# 5. Each map file changed (the node has no copy of it, so it fetches them all).
for m in passwd shadow group sshkey; do
        restore
        rm -f "$T"/state/nsscache/http-*
        printf 'mallory:x:2999:2999::/home/mallory:/bin/bash\n' >> "$W/$(mfile $m)"
        refused "the $m file changed" "(digest|SHA-256|bytes, the manifest says)"
done
# ... and changed without changing its size: only the digest can tell.
for m in passwd shadow group sshkey; do
        restore
        rm -f "$T"/state/nsscache/http-*
        mf=$W/$(mfile $m)
        size=$(stat -c %s "$mf")
        python3 -c '
import sys
d = bytearray(open(sys.argv[1], "rb").read())
i = next(i for i, c in enumerate(d) if chr(c).isalpha())
d[i] = ord("b") if d[i] == ord("a") else ord("a")
open(sys.argv[1], "wb").write(d)' "$mf"
        is "$(stat -c %s "$mf")" "$size" "the $m file changed in place: the same size"
        refused "the $m file changed, its size kept" "SHA-256 of the body differs"
done
restore
refresh
is "$RC" 0 "the genuine files are fetched again" || diag "$OUT"

# 6. The manifest: its payload changed, its signature changed, another key, malformed, oversized.
good=$(cat "$W/manifest")
sign_manifest "$T/signing.pem" "$(payload)" > "$T/resigned"
is "$(cat "$T/resigned")" "$good" "the test signs as the producer does"
sign_manifest "$T/other.pem" "$(payload | sed 's/"generation":2/"generation":3/')" > "$W/manifest"
refused "a manifest signed by another key" "signature does not verify"
python3 -c '
import base64, json, sys
env = json.load(open(sys.argv[1]))
p = base64.b64decode(env["payload"]).decode().replace("\"generation\":2", "\"generation\":9")
env["payload"] = base64.b64encode(p.encode()).decode()
print(json.dumps(env))' "$T/www.gen2/manifest" > "$W/manifest"
refused "the payload changed under its signature" "signature does not verify"
python3 -c '
import base64, json, sys
env = json.load(open(sys.argv[1]))
s = bytearray(base64.b64decode(env["signature"])); s[0] ^= 1
env["signature"] = base64.b64encode(bytes(s)).decode()
print(json.dumps(env))' "$T/www.gen2/manifest" > "$W/manifest"
refused "the signature changed" "signature does not verify"
sign_manifest "$T/signing.pem" "$(payload | sed 's/"generation":2/"generation":1/')" > "$W/manifest"
refused "a lower generation, genuinely signed" "generation 1 is older than 2"
printf '{"payload": ' > "$W/manifest"
refused "a malformed manifest" "manifest: not a JSON object"
head -c 70000 /dev/zero | tr '\0' ' ' > "$W/manifest"
refused "an oversized manifest" "manifest: over 65536 bytes"
restore

# 7. The key: a node configured with another key refuses the genuine manifest.
OTHER=$(openssl pkey -in "$T/other.pem" -pubout | sed -n 2p)
sunkd_stop
sed -i "s|manifest_public_key: .*|manifest_public_key: $OTHER|" "$T/sunkd.yaml"
sunkd_start
refused "the node trusts another key" "signature does not verify"
sed -i "s|manifest_public_key: .*|manifest_public_key: not-a-key|" "$T/sunkd.yaml"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
ok "a manifest_public_key that is not a key is refused" test "$rc" -ne 0
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: .*key 'manifest_public_key': key 1: not the base64 of an Ed25519 public key" \
        "at its line"
sed -i "s|manifest_public_key: .*|manifest_public_key: $PUB not-a-key|" "$T/sunkd.yaml"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1)
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: .*key 'manifest_public_key': key 2: not the base64" "a second key that is not one: named"
sed -i "s|manifest_public_key: .*|manifest_public_key: $PUB $PUB $PUB $PUB $PUB|" "$T/sunkd.yaml"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1)
like "$out" "key 'manifest_public_key': one to 4 keys" "more than four keys: refused"

# 7b. Rotation: a node trusts the old and the new key while the producer moves to the new one.
sunkd_stop
sed -i "s|manifest_public_key: .*|manifest_public_key: $PUB, $OTHER|" "$T/sunkd.yaml"
sunkd_start
refresh
is "$RC" 0 "a node trusting both keys takes the manifest signed with the old one" || diag "$OUT"
sign_manifest "$T/other.pem" "$(payload)" > "$T/manifest.new" && mv "$T/manifest.new" "$W/manifest"
refresh
is "$RC" 0 "and the one signed with the new" || diag "$OUT"
restore

# 7c. manifest_max_age: a server that was taken over cannot hold the node at the last manifest it saw.
now=$(date +%s)
sign_manifest "$T/signing.pem" "$(payload | sed -E "s/\"time\":[0-9]+/\"time\":$((now - 8 * 86400))/")" > "$T/old.manifest"
cp "$T/old.manifest" "$W/manifest"
# nginx's validators are the file's mtime and size: another second than the copy the node holds
touch -d "@$((now - 3600))" "$W/manifest"
refused "a manifest signed eight days ago, by default" "longer than manifest_max_age \\(604800 s\\)"
sunkd_stop
printf '    manifest_max_age: 0\n' >> "$T/sunkd.yaml"
sunkd_start
refresh
is "$RC" 0 "manifest_max_age 0: taken however old" || diag "$OUT"
# The node holds that manifest now; under a limit the server's 304 for it is refused too.
sunkd_stop
sed -i 's/^    manifest_max_age: 0$/    manifest_max_age: 1h/' "$T/sunkd.yaml"
sunkd_start
n304=$(grep -c '^GET /manifest 304 ' "$NGINX_LOG")
refused "the manifest held, eight days old, answered 304" "longer than manifest_max_age \\(3600 s\\)"
is "$(grep -c '^GET /manifest 304 ' "$NGINX_LOG")" "$((n304 + 1))" "the server answered 304: the node judged the copy it holds"
restore
refresh
is "$RC" 0 "a manifest signed a moment ago is taken under manifest_max_age" || diag "$OUT"
now=$(date +%s)
sign_manifest "$T/signing.pem" "$(payload | sed -E "s/\"time\":[0-9]+/\"time\":$((now - 7200))/")" > "$W/manifest"
refused "a manifest signed two hours ago" "was signed [0-9]+ s ago, longer than manifest_max_age \\(3600 s\\)"
restore

# 8. The producer's generation survives its restart.
producer_stop
producer_start
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["Users"] = [u for u in d["Users"] if u["userName"] != "grace@example.com"]
json.dump(d, open(sys.argv[1], "w"))' "$T/data.json"
scim_reload
pproduce > /dev/null || diag "the producer's refresh failed"
is "$(cat "$P/state/nsscache/export-generation")" 3 "after a restart the producer exports generation 3"
unlike "$(cat "$W/$(mfile passwd)")" "^grace:" "without the user removed"

# 9. Configurations that could not work are refused at their line.
# bad_config DESC REGEX YAML-LINES: the producer's configuration with these lines instead of the export's
bad_config() {
        grep -v '^    export_' "$P/sunkd.yaml" > "$T/bad.yaml"
        printf '%s\n' "$3" >> "$T/bad.yaml"
        out=$("$SUNKD" -c "$T/bad.yaml" --check-config 2>&1); rc=$?
        ok "$1: refused" test "$rc" -ne 0
        like "$out" "$2" "$1: the error says why"
}
bad_config "export_dir without a key" "bad.yaml:[0-9]+:[0-9]+: .*key 'export_dir': needs export_signing_key" \
        "    export_dir: $W"
cp "$T/signing.pem" "$T/open.pem" && chmod 644 "$T/open.pem"
bad_config "a signing key others can read" "key 'export_signing_key': .*open.pem" \
        "    export_dir: $W
    export_signing_key: $T/open.pem"
bad_config "a signing key that is not Ed25519" "key 'export_signing_key': .*not an Ed25519 private key" \
        "    export_dir: $W
    export_signing_key: $T/token"
sed "s|^    manifest_public_key: .*|    manifest_public_key: $PUB|" "$T/sunkd.yaml" > "$T/node.yaml"
printf '    http_passwd_url: %s/passwd\n' "$NGINX_URL" >> "$T/node.yaml"
out=$("$SUNKD" -c "$T/node.yaml" --check-config 2>&1)
like "$out" "key 'http_passwd_url': not with manifest_url" "a map URL beside manifest_url is refused"
grep -v manifest_public_key "$T/sunkd.yaml" > "$T/node.yaml"
out=$("$SUNKD" -c "$T/node.yaml" --check-config 2>&1)
like "$out" "key 'manifest_url': needs manifest_public_key" "manifest_url without a key is refused"
grep -v '^    manifest_' "$T/sunkd.yaml" > "$T/node.yaml"
printf '    http_passwd_url: %s/p\n    http_shadow_url: %s/s\n    http_group_url: %s/g\n    http_sshkey_url: %s/k\n    manifest_max_age: 1d\n' \
        "$NGINX_URL" "$NGINX_URL" "$NGINX_URL" "$NGINX_URL" >> "$T/node.yaml"
out=$("$SUNKD" -c "$T/node.yaml" --check-config 2>&1)
like "$out" "node.yaml:[0-9]+:[0-9]+: .*key 'manifest_max_age': read only with manifest_url" \
        "manifest_max_age without manifest_url is refused at its line"
grep -v '^    manifest_url' "$T/sunkd.yaml" > "$T/node.yaml"
out=$("$SUNKD" -c "$T/node.yaml" --check-config 2>&1)
like "$out" "node.yaml:[0-9]+:[0-9]+: .*key 'source': http reads the maps from manifest_url .* or from one http_<map>_url a map .*: neither is set" \
        "source: http with neither manifest_url nor a map URL says so, not that the public key is alone"
unlike "$out" "manifest_public_key" "and does not blame manifest_public_key"

# 10. An unchanged export is signed again once export_resign_interval has passed,
# so that nodes with manifest_max_age keep taking it.
producer_stop
printf '    export_resign_interval: 1s\n' >> "$P/sunkd.yaml"
producer_start
g=$(cat "$P/state/nsscache/export-generation")
maps_before=$(payload | python3 -c 'import json, sys; print(json.load(sys.stdin)["maps"])')
resigned() {
        pproduce > /dev/null && [ "$(cat "$P/state/nsscache/export-generation")" -gt "$g" ]
}
ok "an unchanged export is signed again after export_resign_interval" wait_until 600 resigned
is "$(payload | python3 -c 'import json, sys; print(json.load(sys.stdin)["maps"])')" "$maps_before" \
        "naming the same maps"

done_testing
