#!/bin/bash
# A refresh that finds the directory and the files as the last unchanged run
# left them replays that run's requests and maps nothing.  Whatever a full
# run would see differently (an answer, a local account, a published map or
# index, a forced run, a new config) makes the run a full one again, and
# the maps come out as a full run makes them.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
cp "$SUNKD_SRCDIR/etc/demo/scim-data.json" "$T/data.json"
scim_start "$T/data.json"
scim_token
mkdir -p "$T/cache" "$T/ts" "$T/local"
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$T/local/passwd"
printf 'root:x:0:\n' > "$T/local/group"

write_config() {
        nsscache_config "local_passwd: $T/local/passwd
    local_group: $T/local/group
    $1"
}

# st FIELD: a field of the nsscache status after the last run
st() {
        module_status nsscache "$1"
}

# counts: entries and rejects in the status
counts() {
        echo "$(st entries) $(st rejected)"
}

# refresh: one run, then "replayed=BOOL" of it
refresh() {
        ctl run nsscache.refresh > /dev/null || diag "the refresh failed: $(st last_error)"
        echo "replayed=$(st replayed)"
}

snapshot() {
        (cd "$T/cache" && for f in *; do printf '%s %s\n' "$f" "$(sha256sum < "$f")"; done)
}

write_config ""
sunkd_start
ok "the first refresh completes" wait_runs nsscache.refresh 1
is "$(st replayed)" "false" "a first run is mapped"
is "$(refresh)" "replayed=false" "the first unchanged run is mapped: it is what shows the maps unchanged"
mapped=$(counts)
like "$mapped" '"passwd": 3.*"sshkey": 3.* \{"[a-z-]+": 1' "(it has entries and a reject)"
log_mark
n=$(grep -c '^GET ' "$SCIM_LOG")
is "$(refresh)" "replayed=true" "the next one replays it"
like "$(log_since)" "0 map\\(s\\) changed, [0-9]+ requests \\(paged by index\\) in [0-9]+ ms; every answer and file as in the last run, not mapped again\\." \
        "the log says so"
is "$(st requests)" "$(($(grep -c '^GET ' "$SCIM_LOG") - n))" "its requests are counted"
is "$(counts)" "$mapped" "it reports the entries and rejects of the run it replays"
before=$(snapshot)
ts_ino=$(stat -c %i "$T/ts/timestamp-passwd-update")
is "$(refresh)" "replayed=true" "and again"
is "$(snapshot)" "$before" "replayed runs leave every map and index as it was"
ok "but write timestamp-MAP-update, as an unchanged publish does" test "$(stat -c %i "$T/ts/timestamp-passwd-update")" != "$ts_ino"

# The directory changes: ada's shell.
sed -i 's|"sunkLoginShell": "/bin/bash"|"sunkLoginShell": "/bin/zsh"|' "$T/data.json"
scim_reload
is "$(refresh)" "replayed=false" "a changed answer makes the run a full one"
like "$(grep '^ada:' "$T/cache/passwd.cache")" ":/bin/zsh$" "and the change is published"
is "$(refresh)" "replayed=false" "the first unchanged run after it is mapped"
is "$(refresh)" "replayed=true" "then replayed"

# A local account now takes ada's name: a full run rejects the SCIM user.
printf 'ada:x:1500:1500::/home/ada:/bin/sh\n' >> "$T/local/passwd"
is "$(refresh)" "replayed=false" "a changed local account file makes the run a full one"
is "$(grep -c '^ada:' "$T/cache/passwd.cache")" "0" "and the SCIM ada is no longer published"
sed -i '/^ada:/d' "$T/local/passwd"
refresh > /dev/null
is "$(grep -c '^ada:' "$T/cache/passwd.cache")" "1" "ada is back once the local account is gone"
is "$(refresh)" "replayed=false" "(mapped once more, unchanged)"
is "$(refresh)" "replayed=true" "(then replayed)"

# Someone edits a published map, keeping its size and times: contents decide.
good=$(snapshot)
cp -p "$T/cache/passwd.cache" "$T/passwd.saved"
sed -i 's|^grace:x:|grace:y:|' "$T/cache/passwd.cache"
touch -r "$T/passwd.saved" "$T/cache/passwd.cache"
is "$(refresh)" "replayed=false" "an edited map makes the run a full one"
is "$(snapshot)" "$good" "which puts the map back as the directory says"
is "$(refresh)" "replayed=false" "(mapped once more, unchanged)"
is "$(refresh)" "replayed=true" "(then replayed)"
rm -f "$T/cache/passwd.cache.ixname"
is "$(refresh)" "replayed=false" "a removed index makes the run a full one"
is "$(snapshot)" "$good" "which writes the index again"
refresh > /dev/null
mode=$(stat -c %a "$T/cache/group.cache")
chmod 600 "$T/cache/group.cache"
is "$(refresh)" "replayed=false" "a map whose mode changed makes the run a full one"
is "$(stat -c %a "$T/cache/group.cache")" "$mode" "which gives it its mode back"
refresh > /dev/null
is "$(refresh)" "replayed=true" "(then replayed)"

# A replay never stands in for a forced run.
touch "$T/state/nsscache/force-next-run"
is "$(refresh)" "replayed=false" "a forced run is a full one"
ok "and uses the force file up" test ! -e "$T/state/nsscache/force-next-run"

# A memo belongs to one config.
refresh > /dev/null
is "$(refresh)" "replayed=true" "(replayed before the reload)"
write_config "timeout: 90s"
sunkd_hup
like "$(log_since)" "Configuration reloaded" "the config is reloaded"
is "$(refresh)" "replayed=false" "the first run of a new config is a full one"

# Paged by cursor (RFC 9865): /ServiceProviderConfig and every page are replayed.
scim_stop
scim_start "$T/data.json" --pagination cursor
write_config ""
sunkd_hup
refresh > /dev/null
is "$(st pagination)" "cursor" "(a server that advertises cursors)"
refresh > /dev/null
log_mark
: > "$SCIM_LOG"
is "$(refresh)" "replayed=true" "a cursor listing is replayed too"
like "$(cat "$SCIM_LOG")" "ServiceProviderConfig" "with its ServiceProviderConfig request"
sed -i 's|"sunkLoginShell": "/bin/zsh"|"sunkLoginShell": "/bin/dash"|' "$T/data.json"
scim_reload
is "$(refresh)" "replayed=false" "and a changed page ends the replay"
like "$(grep '^ada:' "$T/cache/passwd.cache")" ":/bin/dash$" "the change is published"
good=$(snapshot)

# A replay that fails fails the run, as the full run would have, and changes nothing.
refresh > /dev/null
is "$(refresh)" "replayed=true" "(replayed)"
scim_stop
log_mark
ctl run nsscache.refresh > /dev/null
is "$(st last_result)" "failure" "a replay against a server that is gone fails the run"
is "$(snapshot)" "$good" "and leaves the maps as they were"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd exits cleanly"
done_testing
