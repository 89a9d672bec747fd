#!/bin/bash
# What decides what sunkd publishes must be root's: the module and its
# directory, nsscache.conf, and the module's state directory (whoever can
# write it can create force-next-run and publish an empty passwd map).
# Also: a refresh cut short by SIGTERM says it was cancelled.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'scim_stop; sunkd_cleanup' EXIT
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed"
NOBODY=$(id -u nobody) || bail_out "no user nobody"
DATA="$SUNKD_SRCDIR/etc/demo/scim-data.json"
scim_token
mkdir -p "$T/cache"
cp "$SUNKD_SRCDIR/etc/nsscache.conf.example" "$T/nsscache.conf"
chmod 644 "$T/nsscache.conf"

write_config() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    scim_base_url: ${SCIM_URL:-http://127.0.0.1:9/scim/v2}
    files_dir: ${FILES_DIR:-$T/cache}
    timestamp_dir: ${TIMESTAMP_DIR:-$T/ts}
    token_file: $T/token
    interval: 1h
    splay: 0s"
}
check() { "$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1; }
# wait_for_line FILE REGEX [TENTHS]: until FILE holds a line matching REGEX.
wait_for_line() {
        local i=0
        while ! grep -Eq -- "$2" "$1" 2>/dev/null && [ $i -lt "${3:-100}" ]; do
                sleep 0.1
                i=$((i + 1))
        done
        grep -Eq -- "$2" "$1" 2>/dev/null
}

write_config
out=$(check); rc=$?
is "$rc" 0 "root's nsscache.conf, 0644, is accepted"

chown "$NOBODY" "$MODDIR/nsscache.so"
out=$(check); rc=$?
is "$rc" 2 "a module owned by another user is refused"
like "$out" "refusing module '$MODDIR/nsscache.so': owned by uid $NOBODY, not root \(mode 0[0-7]{3}\)" \
        "the message names the file, its owner and mode"
# +0: uid 0 by number; a test alongside may publish a user named "0"
chown +0 "$MODDIR/nsscache.so"

chown "$NOBODY" "$MODDIR"
out=$(check); rc=$?
is "$rc" 2 "a module_dir owned by another user is refused"
like "$out" "refusing module directory '$MODDIR': owned by uid $NOBODY, not root \(mode 0755\)" \
        "the message names the directory, its owner and mode"
# Its owner could indeed swap the module.
ok "(its owner can replace the module)" setpriv --reuid "$NOBODY" --regid "$NOBODY" --clear-groups \
        sh -c "cp '$MODDIR/nsscache.so' '$MODDIR/x.so' && rm '$MODDIR/x.so'"
chown +0 "$MODDIR"

chmod 666 "$T/nsscache.conf"
out=$(check); rc=$?
is "$rc" 2 "a world-writable nsscache.conf is refused"
like "$out" "refusing config file '$T/nsscache.conf': group- or world-writable \(owner uid 0, mode 0666\)" \
        "the message names the file, its owner and mode"
chmod 620 "$T/nsscache.conf"
out=$(check); rc=$?
is "$rc" 2 "a group-writable nsscache.conf is refused"
chmod 644 "$T/nsscache.conf"
chown "$NOBODY" "$T/nsscache.conf"
out=$(check); rc=$?
is "$rc" 2 "an nsscache.conf owned by another user is refused"
like "$out" "refusing config file '$T/nsscache.conf': owned by uid $NOBODY, not root \(mode 0644\)" \
        "the message names the file, its owner and mode"
chown +0 "$T/nsscache.conf"

# Where the caches and their timestamps are written: whoever owns a
# directory on the way can swap passwd.
mkdir "$T/theirs" && chown "$NOBODY" "$T/theirs"
for key in files_dir timestamp_dir; do
        if [ $key = files_dir ]; then FILES_DIR="$T/theirs/$key" write_config; else TIMESTAMP_DIR="$T/theirs/$key" write_config; fi
        out=$(check); rc=$?
        is "$rc" 2 "a $key in a directory another user owns is refused"
        like "$out" "$T/sunkd.yaml:[0-9]+:[0-9]+: key '$key': refusing to write '$T/theirs/$key': '$T/theirs' is owned by uid $NOBODY, not root \(mode 0755\)" \
                "the message names the key, the directory and its owner"
        timeout 20 "$SUNKD" -c "$T/sunkd.yaml" > /dev/null 2>&1; rc=$?
        is "$rc" 2 "sunkd refuses to start with such a $key"
        is "$(ls -A "$T/theirs")" "" "nothing was written there"
done
write_config

# The state directory: its owner can force a publish past every guard.
scim_start "$DATA"
write_config
mkdir -p "$T/state/nsscache"
chown "$NOBODY" "$T/state/nsscache"
ok "(its owner can create force-next-run)" setpriv --reuid "$NOBODY" --regid "$NOBODY" --clear-groups \
        touch "$T/state/nsscache/force-next-run"
out=$(check); rc=$?
is "$rc" 2 "a state directory owned by another user is refused by --check-config"
like "$out" "refusing state directory '$T/state/nsscache': owned by uid $NOBODY, not root \(mode 0[0-7]{3}\)" \
        "the message names the directory, its owner and mode"
timeout 20 "$SUNKD" -c "$T/sunkd.yaml" > "$T/sunkd.log" 2>&1; rc=$?
is "$rc" 2 "sunkd refuses to start with it"
like "$(cat "$T/sunkd.log")" "refusing state directory '$T/state/nsscache': owned by uid $NOBODY" "and says why"
ok "nothing was published" test ! -e "$T/cache/passwd.cache"
rm -f "$T/state/nsscache/force-next-run"
chown +0 "$T/state/nsscache"
chmod 777 "$T/state/nsscache"
out=$(check); rc=$?
is "$rc" 2 "a world-writable state directory is refused"
like "$out" "refusing state directory '$T/state/nsscache': group- or world-writable \(owner uid 0, mode 0777\)" \
        "and the message says so"
chmod 700 "$T/state/nsscache"
# Handed to another user while sunkd runs: the next reload is refused.
sunkd_start
ok "the first refresh ran" wait_runs nsscache.refresh 1 300
chown "$NOBODY" "$T/state/nsscache"
sunkd_hup
like "$(log_since)" "refusing state directory '$T/state/nsscache': owned by uid $NOBODY" \
        "a reload with the state directory another user's is refused"
like "$(log_since)" "keeping the running one" "the running configuration stays"
is "$(ctl ping)" "pong" "the daemon answers"
chown +0 "$T/state/nsscache"
sunkd_stop
is "$SUNKD_EXIT" 0 "clean exit"
scim_stop

# A publish killed between two maps' renames is finished when the module
# starts, before its first refresh: no lookup sees maps from two runs.
HELPER="$SUNKD_BUILDDIR/tests/lib/nsscache-publish"
[ -x "$HELPER" ] || bail_out "$HELPER not built"
mkdir -p "$T/ref2"
"$HELPER" -d "$T/ref2" -g 2 1 || bail_out "reference publish"
"$HELPER" -d "$T/cache" -s "$T/state/nsscache" -g 1 0 || bail_out "first publish"
( "$HELPER" -d "$T/cache" -s "$T/state/nsscache" -g 2 -K rename-data:3 1 ) 2>/dev/null
ok "(a publish was killed halfway)" test -e "$T/state/nsscache/publish-journal"
nok "(leaving passwd and group from different runs)" cmp -s "$T/ref2/group.cache" "$T/cache/group.cache"
scim_start "$DATA" --fault refused
write_config
sunkd_start
ok "the module's first refresh ran" wait_runs nsscache.refresh 1 100
log=$(cat "$T/sunkd.log")
like "$log" "Finished the publish into '$T/cache' that was interrupted" "init finished the interrupted publish"
like "$(grep -n . "$T/sunkd.log" | grep -E "Finished the publish|Refresh failed" | head -1)" "Finished the publish" \
        "before the first refresh"
diffs=
for f in passwd.cache passwd.cache.ixname passwd.cache.ixuid shadow.cache shadow.cache.ixname group.cache \
         group.cache.ixname group.cache.ixgid sshkey.cache sshkey.cache.ixname; do
        cmp -s "$T/ref2/$f" "$T/cache/$f" || diffs="$diffs $f"
done
is "$diffs" "" "every map and index is from the interrupted run"
ok "the journal is gone" test ! -e "$T/state/nsscache/publish-journal"
sunkd_stop
scim_stop

# SIGTERM during a refresh: cancelled, not "refusing to publish".
scim_start "$DATA" --fault slow --delay 30
write_config
sunkd_start
ok "the refresh is under way" wait_for_line "$SCIM_LOG" "GET /scim/v2/Users" 300
sunkd_stop
is "$SUNKD_EXIT" 0 "SIGTERM during a refresh: clean exit"
log=$(cat "$T/sunkd.log")
like "$log" "Refresh cancelled; the existing caches are unchanged" "the log says the run was cancelled"
unlike "$log" "Refusing to publish|force-next-run" "and does not suggest forcing the next run"
scim_stop

done_testing
