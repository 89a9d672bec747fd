#!/bin/bash
# A reload keeps the authkeys module's map and state unless the new section
# changes what it serves: 20 SIGHUPs with the same file, and a change of
# allow: or max_staleness alone, load nothing and keep the map, its load
# time and the counters; a new max_keys_per_user or local_passwd reads the
# file again; a new sshkey_cache switches maps (the old one served until the
# new file is there); no file left to serve, no keys.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"

command -v ssh-keygen >/dev/null || bail_out "ssh-keygen (openssh-client) is needed"
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed to call as another user"
[ "$(id -u)" = 0 ] || bail_out "must run as root: allow: is tested as nobody"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" "$MODDIR/" || bail_out "authkeys.so not built"
AK="$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys"
[ -x "$AK" ] || bail_out "sunkd-authkeys not built"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"

mkdir -p "$T/k" "$T/keys"
for k in ada1 ada2 bob; do ssh-keygen -q -t ed25519 -N '' -C "$k@test" -f "$T/k/$k" || bail_out "ssh-keygen"; done
K1=$(cat "$T/k/ada1.pub") K2=$(cat "$T/k/ada2.pub") KB=$(cat "$T/k/bob.pub")
C1="$T/keys/one.cache" C2="$T/keys/two.cache" C3="$T/keys/three.cache"
printf "ada:['%s', '%s']\n" "$K1" "$K2" > "$C1"
printf "ada:['%s']\nbob:['%s']\n" "$K2" "$KB" > "$C2"
LP1="$T/passwd1" LP2="$T/passwd2"
printf 'svc:x:900:900::/:/usr/sbin/nologin\n' > "$LP1"
printf 'ada:x:901:901::/:/bin/sh\n' > "$LP2"
chmod 755 "$T/keys" "$T/k" && chmod 644 "$C1" "$C2" "$T"/k/*.pub "$LP1" "$LP2"
# Old enough for max_staleness below, set before sunkd watches it.
touch -d '3 hours ago' "$C1"

config() { # SSHKEY_CACHE [MORE-LINES]
        sunkd_config "modules:
  authkeys:
    ${1:+sshkey_cache: $1}
    local_passwd: ${LP:-$LP1}
${2:-}"
}
config "$C1"
sunkd_start
chmod 755 "$T" "$T/run"
wait_runs authkeys.load 1 || bail_out "the map was never loaded"
status() { module_status authkeys "$1"; }
loads() { job_field authkeys.load runs; }
ask() { "$AK" -s "$SOCK" -t 120 -c "$T/none" --no-fallback "$@"; }
BOTH="$K1
$K2"
is "$(ask ada)" "$BOTH" "ada's keys are served"
LOADED=$(status loaded_usec) RUNS=$(loads)
[ -n "$LOADED" ] && [ -n "$RUNS" ] || bail_out "no loaded_usec or runs in status"

# kept WHAT: the map, its load time and the counters are the ones from before.
kept() {
        is "$(status loaded_usec)" "$LOADED" "$1: the map's load time is unchanged"
        is "$(loads)" "$RUNS" "$1: no load ran"
        is "$(status queries)" "$QUERIES" "$1: the query counter goes on"
        nok "$1: no load logged" grep -q "Loaded .* users" <(tail -c +$((MARK + 1)) "$T/sunkd.log")
        nok "$1: the module was not restarted" grep -q "Restarting the module" <(tail -c +$((MARK + 1)) "$T/sunkd.log")
}
QUERIES=$(status queries) MARK=$(stat -c %s "$T/sunkd.log")
for i in $(seq 20); do
        sunkd_hup
        log_since_has "Configuration reloaded" || bail_out "SIGHUP $i: not reloaded"
done
kept "20 SIGHUPs with the same file"
is "$(ask ada)" "$BOTH" "and the same keys are served"

# The section changes, but not what is served: the hook is called, and keeps it all.
QUERIES=$(status queries) MARK=$(stat -c %s "$T/sunkd.log")
config "$C1" "    allow: [nobody]"
sunkd_hup
kept "allow: changed"
is "$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$AK" -s "$SOCK" -t 120 -c "$T/none" --no-fallback ada)" \
   "$BOTH" "and the new allow: list applies"

QUERIES=$(status queries) MARK=$(stat -c %s "$T/sunkd.log")
config "$C1" "    max_staleness: 2h"
sunkd_hup
is "$(status stale)" "true" "a new max_staleness applies at once: the map is stale"
like "$(ctl metrics)" "sunkd_authkeys_stale 1" "the metric says so"
QUERIES=$(status queries)
kept "max_staleness changed"
config "$C1"
sunkd_hup
is "$(status stale)" "false" "max_staleness removed: not stale"
like "$(ctl metrics)" "sunkd_authkeys_stale 0" "the metric says so"
QUERIES=$(status queries)
kept "max_staleness removed"

# What is served changes: the file is read again.
config "$C1" "    max_keys_per_user: 1"
sunkd_hup
wait_runs authkeys.load $((RUNS + 1)) || bail_out "no load after max_keys_per_user changed"
is "$(ask ada)" "$K1" "a new max_keys_per_user loads the file again"
is "$(status invalid_keys)" '{"too-many-keys": 1}' "and drops the second key"

n=$(loads)
LP=$LP2 config "$C1"
sunkd_hup
wait_runs authkeys.load $((n + 1)) || bail_out "no load after local_passwd changed"
is "$(ask ada)" "" "a new local_passwd naming ada: no keys for her"
n=$(loads)
printf 'svc:x:900:900::/:/usr/sbin/nologin\n' > "$LP2.tmp" && chmod 644 "$LP2.tmp" && mv "$LP2.tmp" "$LP2"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the new local_passwd changed"
is "$(ask ada)" "$BOTH" "the new local_passwd is the one watched"

n=$(loads)
config "$C2"
sunkd_hup
wait_runs authkeys.load $((n + 1)) || bail_out "no load after sshkey_cache changed"
is "$(status loaded_from)" "$C2" "a new sshkey_cache: its map is served"
is "$(ask bob)" "$KB" "bob is in it"
is "$(ask ada)" "$K2" "and ada's key is the new file's"

n=$(loads)
config "$C3"
sunkd_hup
wait_runs authkeys.load $((n + 1)) || bail_out "no load after sshkey_cache changed again"
is "$(status path)" "$C3" "a new sshkey_cache not written yet is the one watched"
is "$(status loaded_from)" "$C2" "the map loaded is served until it is"
is "$(ask bob)" "$KB" "bob still logs in"
is "$(status reload_failures)" 0 "and waiting for it is no failure"
n=$(loads)
printf "bob:['%s']\n" "$K1" > "$C3.tmp" && chmod 644 "$C3.tmp" && mv "$C3.tmp" "$C3"
wait_runs authkeys.load $((n + 1)) || bail_out "no load once the new file is there"
is "$(ask bob)" "$K1" "once written, the new file is served"

# No sshkey_cache and no nsscache module: nothing to serve, no keys.
log_mark
config ""
sunkd_hup
is "$(status path)" "" "no sshkey_cache and no nsscache module: no file"
is "$(status users)" 0 "and no users"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get '{"user":"bob"}')" '"error": "io.sunkd.Unavailable"' \
     "Get answers Unavailable"
ok "the log says why" log_since_has "No sshkey cache to serve: dropping the 1 users loaded from '$C3'"
n=$(loads)
config "$C2"
sunkd_hup
wait_runs authkeys.load $((n + 1)) || bail_out "no load after sshkey_cache came back"
is "$(ask bob)" "$KB" "and back: served again"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
done_testing
