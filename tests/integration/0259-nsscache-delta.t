#!/bin/bash
# deadline: 600
# Map deltas: a producer sunkd exports, beside each changed map, the lines
# it lost and gained since the previous generation; a node that holds that
# previous map fetches only the delta (a few hundred bytes for one user of
# hundreds), applies it and must reach the digest the manifest signs.  A
# delta that was altered, is missing, was made from another map or gives
# another map makes the node fetch the whole map instead: it never
# publishes anything the manifest does not sign.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
. "$SUNKD_SRCDIR/tests/lib/producer.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'producer_stop; nginx_stop; scim_stop; sunkd_cleanup' EXIT
mkdir -p "$T/cache" "$T/ts"

# The demo directory and 400 more users: a delta of one user is then well
# under the quarter of the map past which the producer writes none.
python3 -c '
import copy, json, sys
d = json.load(open(sys.argv[1]))
ext = "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
tmpl = d["Users"][0]
for i in range(400):
    u = copy.deepcopy(tmpl)
    u["id"] = "bulk-%04d" % i
    u["userName"] = "bulk%04d@example.com" % i
    u["name"] = {"givenName": "Bulk", "familyName": "User %d" % i}
    u[ext].update({"sunkPosixUsername": "bulk%04d" % i, "sunkPosixUserId": 40000 + i,
                   "sunkPreferredHomeDirectory": "/home/bulk%04d" % i, "sunkSshKeys": []})
    d["Users"].append(u)
json.dump(d, open(sys.argv[2], "w"))' "$SUNKD_SRCDIR/etc/demo/scim-data.json" "$T/bulk.json" ||
        bail_out "cannot make the directory"
producer_setup "$T/bulk.json"
producer_start
nginx_start "$W"
pproduce > "$T/out" 2>&1 || { sed 's/^/# /' "$T/out"; bail_out "the producer's first refresh failed"; }
is "$(mfile passwd delta)" "" "generation 1 has no delta: there is no earlier map"

node_config
sunkd_start
refresh
is "$RC" 0 "the node's first refresh succeeds" || diag "$OUT"
is "$(grep -c '^bulk' "$T/cache/passwd.cache")" 400 "the node has the 400 users"
copy1="$T/http-passwd.gen1"
cp "$T/state/nsscache/http-passwd" "$copy1"
passwd1=$(mfile passwd)

# 1. One user's name changes: generation 2 carries a passwd delta.
change_user() { # INDEX GIVEN-NAME
        python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for u in d["Users"]:
    if u["userName"] == "bulk%04d@example.com" % int(sys.argv[2]):
        u["name"]["givenName"] = sys.argv[3]
json.dump(d, open(sys.argv[1], "w"))' "$T/data.json" "$1" "$2"
        scim_reload
        pproduce > /dev/null || diag "the producer's refresh failed"
}
change_user 123 Grace
is "$(pstatus export_generation)" 2 "the producer exports generation 2"
passwd2=$(mfile passwd)
dfile=$(mfile passwd delta.file)
like "$dfile" '^passwd-delta-[0-9a-f]{64}$' "its manifest names a passwd delta"
is "$(mfile passwd delta.from_sha256)" "${passwd1#passwd-}" "made from generation 1's passwd"
is "$(mfile passwd delta.from_size)" "$(stat -c %s "$W/$passwd1")" "whose size it names"
is "$(mfile passwd delta.sha256)" "$(sha256sum < "$W/$dfile" | cut -d' ' -f1)" "the delta's digest is signed"
is "$(head -n1 "$W/$dfile")" "sunkd-map-delta 1" "the delta is a map delta"
is "$(grep -c '^-' "$W/$dfile") $(grep -c '^+' "$W/$dfile")" "1 1" "one line out, one line in"
like "$(grep '^+' "$W/$dfile")" '^\+bulk0123:x:40123:.*Grace' "the changed user"
ok "the delta is small" test "$(stat -c %s "$W/$dfile")" -lt 1000

refresh
is "$RC" 0 "the node applies generation 2" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$P/cache/passwd.cache")" "its passwd map is the producer's"
is "$(nginx_requests "/$dfile")" 1 "the delta was fetched"
is "$(nginx_requests "/$passwd2")" 0 "the whole passwd map was not"
is "$(module_status nsscache deltas)" 1 "status counts the map brought up to date by delta"
is "$(module_status nsscache delta_misses)" 0 "and no delta that missed"
ok "the run received under 10 KB" test "$(module_status nsscache bytes)" -lt 10240
# Unchanged runs after it: the first maps the files again (it is what
# shows them unchanged), the next ones find every file as that run had
# it and map nothing; a change to the node's own accounts maps again.
refresh
is "$(module_status nsscache replayed)" false "the first unchanged run is mapped"
refresh
is "$RC $(module_status nsscache replayed)" "0 true" "the next one is not: every file as the last run mapped it"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$P/cache/passwd.cache")" "and the maps stay as they are"
printf 'svc:x:998:998::/:/sbin/nologin\n' >> "$T/local/passwd"
refresh
is "$RC $(module_status nsscache replayed)" "0 false" "a change to the node's own accounts maps the files again"
copy2="$T/http-passwd.gen2"
cp "$T/state/nsscache/http-passwd" "$copy2"

# 2. Only the groups change: generation 3 keeps passwd's delta for nodes still at generation 1.
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
d["Groups"][0]["members"] = d["Groups"][0]["members"][:1]
json.dump(d, open(sys.argv[1], "w"))' "$T/data.json"
scim_reload
pproduce > /dev/null || diag "the producer's refresh failed"
if [ "$(pstatus export_generation)" = 3 ]; then
        is "$(mfile passwd)" "$passwd2" "generation 3: passwd unchanged"
        is "$(mfile passwd delta.file)" "$dfile" "its delta from generation 1 is still offered"
        ok "and still served" test -f "$W/$dfile"
else
        diag "the group change did not make a new generation: $(pctl --json status | head -c 2000)"
        ok "generation 3 exported" false
fi
cp "$copy1" "$T/state/nsscache/http-passwd"
refresh
is "$RC" 0 "a node at generation 1's passwd applies generation 3" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$P/cache/passwd.cache")" "by the kept delta"
is "$(nginx_requests "/$passwd2")" 0 "still without the whole passwd map"

# 3. Deltas that must not be applied: the node fetches the whole map instead.
# Each case starts from generation 1's passwd copy on the node and
# generation 3's export on the server.
cp -a "$W" "$T/www.good"
full_before=$(nginx_requests "/$passwd2")
missed() { # CASE
        cp "$copy1" "$T/state/nsscache/http-passwd"
        refresh
        is "$RC" 0 "$1: the refresh succeeds" || diag "$OUT"
        is "$(cat "$T/cache/passwd.cache")" "$(cat "$P/cache/passwd.cache")" "$1: the node has the signed passwd map"
        unlike "$(cat "$T/cache/passwd.cache")" "^mallory:" "$1: nothing of the delta's own"
        is "$(module_status nsscache delta_misses)" 1 "$1: status counts the delta that missed"
        full_before=$((full_before + 1))
        is "$(nginx_requests "/$passwd2")" "$full_before" "$1: the whole map was fetched"
        rm -rf "$W" && cp -a "$T/www.good" "$W"
}
# resign FILE-CONTENT: the delta replaced by FILE-CONTENT under a manifest signed with the producer's key
resign() {
        printf '%b' "$1" > "$W/$dfile.evil"
        python3 -c '
import base64, hashlib, json, os, sys
env = json.load(open(sys.argv[1]))
p = json.loads(base64.b64decode(env["payload"]))
data = open(sys.argv[2], "rb").read()
name = "passwd-delta-" + hashlib.sha256(data).hexdigest()
os.rename(sys.argv[2], os.path.join(os.path.dirname(sys.argv[2]), name))
p["maps"]["passwd"]["delta"].update({"file": name, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()})
print(json.dumps(p, separators=(",", ":")), end="")' "$W/manifest" "$W/$dfile.evil" > "$T/evil-payload"
        sign_manifest "$T/signing.pem" "$(cat "$T/evil-payload")" > "$W/manifest.new" && mv "$W/manifest.new" "$W/manifest"
}

printf '+mallory:x:2999:2999::/home/mallory:/bin/bash\n' >> "$W/$dfile"
missed "the delta file altered on the server"
sed -i 's/Grace/Grbce/' "$W/$dfile"
is "$(stat -c %s "$W/$dfile")" "$(stat -c %s "$T/www.good/$dfile")" "a delta file altered in place keeps its size"
missed "the delta file altered on the server, its size kept"
rm -f "$W/$dfile"
missed "the delta file missing"
resign 'sunkd-map-delta 1\n@0 1 0\n-nosuchuser:x:1:1::/:/bin/sh\n'
missed "a signed delta made from another map"
first=$(grep -m1 -n '^bulk' "$T/cache/passwd.cache" | cut -d: -f1)
resign "sunkd-map-delta 1\n@$((first - 1)) 0 1\n+mallory:x:2999:2999::/home/mallory:/bin/bash\n"
missed "a signed delta that gives another map"
# the signed map's size, not its content: bulk0123's line of generation 1 replaced by its signed one, a letter off
same_size=$(python3 -c '
import sys
old = open(sys.argv[1]).read().split("\n")
new = open(sys.argv[2]).read().split("\n")
k = next(i for i, l in enumerate(new) if l.startswith("bulk0123:"))
was = next(l for l in old if l.startswith("bulk0123:"))
assert "Grace" in new[k]
print("sunkd-map-delta 1\\n@%d 1 1\\n-%s\\n+%s\\n" % (k, was, new[k].replace("Grace", "Grbce")))' \
        "$copy1" "$P/cache/passwd.cache") || bail_out "cannot make the delta"
resign "$same_size"
missed "a signed delta that gives another map of the signed map's size"
resign 'sunkd-map-delta 1\n@999999 0 1\n+x\n'
missed "a signed delta past the end of the map"
resign 'not a delta\n'
missed "a signed file that is not a delta"

done_testing
