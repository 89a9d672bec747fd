#!/bin/bash
# The nsscache module in a running sunkd: the seed's nsscache.conf unchanged
# but for the URL and directories, against the SCIM fixture on loopback.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
DATA="$SUNKD_SRCDIR/etc/demo/scim-data.json"
scim_start "$DATA"
scim_token
mkdir -p "$T/cache" "$T/ts"

write_config() {
        nsscache_config "$1"
}
write_config ""
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 0 "the seed's nsscache.conf is accepted through nsscache_conf:"

# Cross-key errors point at the line that set the key, in YAML or in nsscache.conf.
sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    files_dir: $T/cache
    scim_base_url: http://scim.example/v2"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "plain http to another host is a config error"
like "$out" "$T/sunkd.yaml:8:5: key 'scim_base_url': plain http:// is only accepted" "located in sunkd.yaml"
sed 's|^files_dir=.*|files_dir=/etc|; s|^files_cache_filename_suffix=.*|files_cache_filename_suffix=|' \
        "$SUNKD_SRCDIR/etc/nsscache.conf.example" > "$T/nsscache.conf"
line=$(grep -n '^files_cache_filename_suffix=' "$T/nsscache.conf" | cut -d: -f1)
sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    scim_base_url: $SCIM_URL"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "an empty suffix in /etc is refused"
like "$out" "$T/nsscache.conf:$line: key 'files_cache_filename_suffix': must not be empty when files_dir is /etc" \
        "located in nsscache.conf"
# A check that names the sunkd.yaml key (timeout) finds the nsscache.conf line that set it (scim_timeout).
printf '[DEFAULT]\nscim_timeout = 0.05\n' | cat - "$SUNKD_SRCDIR/etc/nsscache.conf.example" |
        sed '3,$ { /^\[DEFAULT\]$/d }' > "$T/nsscache.conf"
sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    scim_base_url: $SCIM_URL"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a 50 ms scim_timeout is refused"
like "$out" "$T/nsscache.conf:2: key 'timeout': must be at least 100ms" "located at the scim_timeout line"
sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    passwd:
      required: maybe"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a host key inside a map sub-section is refused"
like "$out" "$T/sunkd.yaml:[0-9]+:[0-9]+: key 'required': unknown key" "as an unknown key"
write_config "interval: 0s"
sed -i '/^    interval: 1h$/d' "$T/sunkd.yaml"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "interval: 0s is refused (the refresh would never run and sunkd never be ready)"
like "$out" "$T/sunkd.yaml:[0-9]+:[0-9]+: key 'interval': must be at least 1s" "located"
write_config ""

sunkd_start
ok "first refresh completes" wait_runs nsscache.refresh 1
out=$(ctl run nsscache.refresh); rc=$?
is "$rc" 0 "sunkctl run nsscache.refresh succeeds"
is "$(grep -c '/Users' "$SCIM_LOG")" 2 "Users fetched once per run"
is "$(grep -c '/Groups' "$SCIM_LOG")" 2 "Groups fetched once per run"
like "$(grep -m1 /Users "$SCIM_LOG")" "count=100" "count is always sent"

is "$(cat "$T/cache/passwd.cache")" "ada:x:20001:30001:Ada Lovelace:/mnt/home/ada:/bin/bash
grace:x:20002:30001:Grace Hopper:/mnt/home/grace:/bin/zsh
linus:x:20003:30002:Linus Pauling:/mnt/home/linus:/bin/bash" "passwd.cache (home overridden as in the seed, uid 0 rejected)"
like "$(cat "$T/cache/group.cache")" "^research:x:30001:ada,grace" "group.cache with members"
like "$(cat "$T/cache/sshkey.cache")" "^ada:\['ssh-ed25519 .* ada@laptop', 'ssh-ed25519 .* ada@desktop'\]" "sshkey.cache as a Python list"
unlike "$(cat "$T/cache/"*.cache)" "mallory" "the uid-0 entry is nowhere"
ok "index files written" test -s "$T/cache/passwd.cache.ixname" -a -s "$T/cache/passwd.cache.ixuid" -a -s "$T/cache/group.cache.ixgid"
ok "timestamp files written" test -s "$T/ts/timestamp-passwd-update"
like "$(cat "$T/sunkd.log")" "Rejected passwd entry 'mallory' \(id 0\): " "the rejected entry is logged with its reason"

json=$(ctl --json status)
is "$(echo "$json" | python3 -c 'import json,sys; s=[m for m in json.load(sys.stdin)["modules"] if m["name"]=="nsscache"][0]["status"]; print(s["entries"]["passwd"], s["entries"]["group"], sum(s["rejected"].values()) > 0, s["last_result"], s["pagination"])')" \
   "3 3 True success index" "status shows entries, rejects, the last result and how the server was paged"
out=$(ctl status)
like "$out" "^  last_success_usec +(just now|[0-9]+s ago)$" "times in the status are shown for humans"
like "$out" "^  duration_usec +([0-9]+ms|<1ms|[0-9.]+s)$" "and durations too"
m=$(ctl metrics)
like "$m" 'sunkd_nsscache_entries\{map="passwd"\} 3' "entries metric"
like "$m" 'sunkd_nsscache_rejected_total\{reason="[a-z_-]+"\} [1-9]' "rejects metric by reason"
like "$m" 'sunkd_nsscache_requests_total [1-9]' "requests metric"

# Unchanged content is not rewritten.
ino=$(stat -c %i "$T/cache/passwd.cache")
log_mark
ctl run nsscache.refresh >/dev/null
is "$(stat -c %i "$T/cache/passwd.cache")" "$ino" "an unchanged map keeps its inode"
# Three runs so far with the same bad entry: it was logged once.
is "$(grep -c "Rejected passwd entry 'mallory'" "$T/sunkd.log")" 1 "a rejected entry is logged once, not every run"
like "$(log_since)" "entries rejected as in the previous run" "later runs say so in one line"

# Failures leave the caches byte-identical.
sha() { cat "$T"/cache/*.cache* | sha256sum; }
before=$(sha)
# "Down" is a port held without listening: a stopped server's port could be
# taken by another test's fixture meanwhile.
scim_stop
scim_start "$DATA" --fault refused
write_config ""; sunkd_hup
out=$(ctl run nsscache.refresh 2>&1); rc=$?
is "$rc" 1 "refresh fails when the SCIM server is down"
like "$out" "Connection refused|connect" "with a connection error"
is "$(sha)" "$before" "caches untouched after a connection failure"
scim_stop

scim_start "$DATA" --fault truncate --fault-page 1
write_config ""; sunkd_hup
out=$(ctl run nsscache.refresh); rc=$?
is "$rc" 1 "a truncated page fails the run"
is "$(grep -c '/Users' "$SCIM_LOG")" 1 "and is not refetched"
is "$(sha)" "$before" "caches untouched after a bad page"
scim_stop

scim_start "$DATA" --fault 401
write_config ""; sunkd_hup
ctl run nsscache.refresh >/dev/null; rc=$?
is "$rc" 1 "a 401 fails the run"
like "$(log_since)" "401" "and the log names it"
is "$(sha)" "$before" "caches untouched after a 401"
scim_stop

# A shrink beyond max_shrink_pct is refused until forced.
scim_start "$DATA" --fault shrink --shrink 1
write_config ""; sunkd_hup
out=$(ctl run nsscache.refresh); rc=$?
is "$rc" 1 "a shrink from 3 users to 1 is refused"
like "$(log_since)" "Refusing to publish: .*passwd.*would shrink" "the refusal says why and how to force"
is "$(sha)" "$before" "caches untouched after the refusal"
touch "$T/state/nsscache/force-next-run"
out=$(ctl run nsscache.refresh); rc=$?
is "$rc" 0 "a forced run publishes the shrink"
is "$(wc -l < "$T/cache/passwd.cache")" 1 "one user left"
ok "the force file is consumed" test ! -e "$T/state/nsscache/force-next-run"
scim_stop

chmod 644 "$T/token"
scim_start "$DATA"
write_config ""; sunkd_hup
ctl run nsscache.refresh >/dev/null; rc=$?
is "$rc" 1 "a world-readable token file is refused"
like "$(log_since)" "token_file '$T/token': refused" "and the log says which file"
chmod 600 "$T/token"

# scim_auth_token in sunkd.yaml is a secret: inline or file:, held to the same file rules.
secret_config() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: $T/cache
    timestamp_dir: $T/ts
    scim_auth_token: file:$T/token.secret
    interval: 1h
    splay: 0s"
}
install -m 600 "$T/token" "$T/token.secret"
secret_config; sunkd_hup
ctl run nsscache.refresh >/dev/null; rc=$?
is "$rc" 0 "scim_auth_token: file:PATH is the token"
chmod 644 "$T/token.secret"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1); rc=$?
is "$rc" 2 "a world-readable secret file is a config error"
like "$out" "sunkd.yaml:[0-9]+:[0-9]+: key 'scim_auth_token': file '$T/token.secret': refused: must be a regular file" \
     "located, naming key and file"
ok "and the token is not in the message" eval '! printf "%s" "$out" | grep -qF "$(cat "$T/token")"'

sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
done_testing
