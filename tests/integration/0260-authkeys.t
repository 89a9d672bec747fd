#!/bin/bash
# The authkeys module and sunkd-authkeys: keys from memory, exact-key answers,
# the policy, reloads on rename-over and on a Kubernetes ..data swap, files
# that keep the old map, hostile names and parameters, the fallback.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"

command -v ssh-keygen >/dev/null || bail_out "ssh-keygen (openssh-client) is needed"
command -v setpriv >/dev/null || bail_out "setpriv (util-linux) is needed to call as another user"
[ "$(id -u)" = 0 ] || bail_out "must run as root: the policy is tested as nobody"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" "$MODDIR/" || bail_out "authkeys.so not built"
AK="$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys"
[ -x "$AK" ] || bail_out "sunkd-authkeys not built"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }

mkdir -p "$T/k" "$T/keys"
for k in ada1 ada2 bob; do ssh-keygen -q -t ed25519 -N '' -C "$k@test" -f "$T/k/$k" || bail_out "ssh-keygen"; done
K1=$(cat "$T/k/ada1.pub") K2=$(cat "$T/k/ada2.pub") KB=$(cat "$T/k/bob.pub")
fp() { ssh-keygen -lf "$T/k/$1.pub" | awk '{ print $2 }'; }
C="$T/keys/sshkey.cache"
printf "ada:['%s', '%s']\nbob:%s\n" "$K1" "$K2" "$KB" > "$C"
chmod 755 "$T/keys" "$T/k"; chmod 644 "$C" "$T"/k/*.pub

sunkd_config "modules:
  authkeys:
    sshkey_cache: $C"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
chmod 755 "$T" "$T/run" # the socket itself is 0666: the policy is per method
loads() { job_field authkeys.load runs; }
wait_runs authkeys.load 1 || bail_out "the map was never loaded"
status() { ctl --json status | python3 -c "
import json, sys
m = [m for m in json.load(sys.stdin)['modules'] if m['name'] == 'authkeys'][0]
print(m.get('status', {}).get(sys.argv[1], ''))" "$1"; }
is "$(status users)" 2 "two users loaded"
is "$(status keys)" 3 "three keys"

# From sunkd: the cache given to the client does not exist.
# A deadline no loaded machine reaches: these tests are not about it (the hanging server below is).
ask() { "$AK" -s "$SOCK" -t 120 -c "$T/none" "$@"; }
is "$(ask ada)" "$K1
$K2" "both of ada's keys, as they are in the file"
is "$(ask ada "$(fp ada2)")" "$K2" "with %f: only the key offered"
is "$(ask ada $(awk '{ print $1, $2 }' "$T/k/ada1.pub"))" "$K1" "with %t %k: only that key"
is "$(ask ada "$(fp bob)")" "" "bob's key is not ada's"
out=$(ask nobody-here); rc=$?
is "$rc/$out" "0/" "an unknown user: nothing, exit 0"
# A fingerprint is base64: '+' and '/' must match as themselves.
re() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'; }
ok "an exact-key answer is audited with the fingerprint" wait_log "Key $(re "$(fp ada2)") of user 'ada' given to pid [0-9]+"
not_logged() { ! grep -qF -- "$1" "$T/sunkd.log"; }
ok "and never the key itself" not_logged "$(awk '{ print $2 }' "$T/k/ada2.pub")"

# Without --uid the client looks the uid up through NSS at each login:
# sunkd says so once, and counts it; with --uid it is not counted.
ok "a client without --uid is named in the log" wait_log "sunkd-authkeys runs without --uid: each login pays an NSS lookup"
is "$(grep -c 'runs without --uid' "$T/sunkd.log")" 1 "once, however many logins"
n=$(status logins_without_uid)
ok "and counted in the status" test "$n" -ge 5
is "$("$AK" -s "$SOCK" -t 120 -c "$T/none" --uid 61234 -- ada "$(fp ada2)")" "$K2" "a client with --uid is answered"
is "$(status logins_without_uid)" "$n" "and not counted"

# Hostile user names never reach the socket.
q0=$(status queries)
for u in -x ../x a:b "$(head -c 10240 /dev/zero | tr '\0' a)" "$(printf 'ad\xe9')" "" . .. "a b" 'a$(id)'; do
        out=$("$AK" -s "$SOCK" -c "$C" -- "$u" 2>/dev/null); rc=$?
        is "$rc/${out}" "0/" "user name '${u:0:20}' prints nothing"
done
out=$("$AK" -s "$SOCK" -c "$C" -x 2>/dev/null); rc=$?
is "$rc/$out" "0/" "'-x' where sshd puts %u prints nothing"
is "$(status queries)" "$q0" "and none of them reached sunkd"
is "$(ask ada SHA256:not-a-fingerprint)" "" "an invalid fingerprint prints nothing"

# sunkctl names the parameter refused: missing when not given, else its value.
err=$(ctl authkeys get 2>&1); rc=$?
is "$rc" 1 "sunkctl authkeys get without user=: exit 1"
like "$err" "^sunkctl: io\.sunkd\.AuthorizedKeys\.Get: missing parameter user=" "naming the missing parameter"
unlike "$err" "InvalidParameter|\{" "not as raw Varlink"
err=$(ctl authkeys get user=ada fingerprint=SHA256:x 2>&1)
like "$err" "^sunkctl: io\.sunkd\.AuthorizedKeys\.Get: invalid parameter fingerprint=SHA256:x" "a value given is shown as given"

# Parameters from anyone allowed: clear errors, no crash.
for p in '{}' '{"user":7}' '{"user":"-x"}' '{"user":"ada","fingerprint":"SHA256:x"}' \
         '{"user":"ada","type":"ssh-ed25519"}' '{"user":"ada","key":"AAAA"}' \
         '{"user":"ada","fingerprint":3}' "{\"user\":\"$(head -c 300 /dev/zero | tr '\0' a)\"}"; do
        like "$(python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get "$p")" \
             '"error": "org.varlink.service.InvalidParameter"' "$p is an invalid parameter"
done

# The policy: root and the allow: list only.
like "$(as_nobody /usr/bin/python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get '{"user":"ada"}')" \
     '"error": "io.sunkd.PermissionDenied"' "nobody is refused"
out=$(as_nobody "$AK" -s "$SOCK" -t 120 -c "$T/none" --no-fallback ada); rc=$?
is "$rc/$out" "1/" "and its client prints nothing and fails with --no-fallback"
ok "the refusal says what would open it" wait_log \
   "Refused io.sunkd.AuthorizedKeys.Get to uid=65534 .*: neither root nor a user or @group of the module's allow: list"
is "$(status calls_refused)" 2 "the refused calls are counted"
like "$(ctl status)" "^  calls_refused +2" "in sunkctl status"
sunkd_config "modules:
  authkeys:
    sshkey_cache: $C
    allow: [nobody]"
sunkd_hup
is "$(as_nobody "$AK" -s "$SOCK" -t 120 -c "$T/none" --no-fallback ada "$(fp ada1)")" "$K1" "an allow-listed user is answered"

# Rename-over: the new map, whole.
n=$(loads)
printf "ada:%s\ncarol:%s\n" "$K1" "$KB" > "$C.tmp" && chmod 644 "$C.tmp" && mv "$C.tmp" "$C"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after rename-over"
is "$(ask ada)" "$K1" "after a rename-over: ada has one key"
is "$(ask carol)" "$KB" "and carol is served"
is "$(ask bob)" "" "and bob is gone"

# Files that keep the loaded map: each load fails, counted, shown, logged.
bad() {
        local what=$1 n f
        n=$(loads) f=$(status reload_failures)
        log_mark
        mv "$T/bad" "$C"
        wait_runs authkeys.load $((n + 1)) || bail_out "no load after $what"
        is "$(status reload_failures)" $((f + 1)) "$what: the load fails"
        is "$(ask ada)" "$K1" "$what: the old map is served"
        like "$(status last_error)" "$C" "$what: status names the file"
        ok "$what: logged" log_since_has "Failed to load '$C'"
}
# (no ':' either: random bytes before one that happened to make a name would
# be a line read, about once in thirty runs)
head -c 65536 /dev/urandom | tr -d '\n:' > "$T/bad"; bad "a binary file"
python3 -c "import sys; sys.stdout.write('ada:[\'ssh-ed25519 ' + 'A' * 100 * 1024 * 1024)" > "$T/bad"; bad "one 100 MB line"
printf "ada:%s\ncarol:['%s', 'ssh-ed" "$K1" "$KB" > "$T/bad"; bad "a file cut mid-line"
python3 -c "
import sys
w = sys.stdout.write
for i in range(1000001): w('u%d:\n' % i)" > "$T/bad"; bad "a million users"
ok "sunkd is alive" eval 'ctl status > /dev/null'

# A Kubernetes Secret volume: sshkey.cache -> ..data/sshkey.cache, ..data -> ..v1.
S="$T/secret"
mkdir -p "$S/..v1" && printf "ada:%s\n" "$K2" > "$S/..v1/sshkey.cache"
ln -s ..v1 "$S/..data" && ln -s ..data/sshkey.cache "$S/sshkey.cache"
chmod -R go-w "$S"; chmod 644 "$S/..v1/sshkey.cache"
sunkd_config "modules:
  authkeys:
    sshkey_cache: $S/sshkey.cache"
sunkd_hup
wait_until 300 eval '[ "$(ask ada)" = "$K2" ]'
is "$(ask ada)" "$K2" "a Secret volume is served"
n=$(loads)
mkdir "$S/..v2" && printf "ada:%s\n" "$KB" > "$S/..v2/sshkey.cache" && chmod 644 "$S/..v2/sshkey.cache"
ln -s ..v2 "$S/..data_tmp" && mv -T "$S/..data_tmp" "$S/..data"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the ..data swap"
is "$(ask ada)" "$KB" "the ..data swap is picked up"

# max_staleness: an old map is still served, and said to be stale.
printf "ada:%s\n" "$K1" > "$C" && touch -d '3 hours ago' "$C"
sunkd_config "modules:
  authkeys:
    sshkey_cache: $C
    max_staleness: 2h"
n=$(loads)
sunkd_hup
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the reload"
is "$(ask ada)" "$K1" "a stale map is still served"
is "$(status stale)" "True" "status says it is stale"
like "$(ctl metrics)" "sunkd_authkeys_stale 1" "the metric says so"
ok "and the log, loudly" log_since_has "are STALE: last updated 1[0-9]{4} s ago"
n=$(loads)
touch "$C"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after touch"
is "$(status stale)" "False" "a fresh file is not stale"
ok "and the log says so" wait_log "are current again"

# Lines the fallback must read as sunkd does: names that are prefixes of
# one another in either order, a lookalike, a repeated name (the first line
# wins), a broken line before the user's own.  First asked of sunkd.
n=$(loads)
{
        printf "ada:['ssh-ed25519 AAAA\n"          # cut: not ada's line, the next one is
        printf "adam:['%s']\n" "$KB"
        printf "ada:['%s']\n" "$K1"
        printf "xada:['%s']\n" "$KB"
        printf "bob:['%s']\nbob:['%s']\n" "$K2" "$KB"
        printf "ada:['%s']\n" "$K2"               # a repeat: the first ada wins
        printf "ad:\nada2:%s\n" "$KB"
} > "$C.tmp" && chmod 644 "$C.tmp" && mv "$C.tmp" "$C"
wait_runs authkeys.load $((n + 1)) || bail_out "no load of the ordering file"
declare -A WANT=([ada]="$K1" [adam]="$KB" [xada]="$KB" [bob]="$K2" [ada2]="$KB" [ad]="" [da]="" [a]="" [adamx]="")
ORDER="ada adam xada bob ada2 ad da a adamx"
for u in $ORDER; do
        is "$(ask "$u")" "${WANT[$u]}" "sunkd: '$u' in the ordering file"
done
is "$(ask ada "$(fp ada1)")" "$K1" "sunkd: ada with %f"
is "$(ask ada "$(fp ada2)")" "" "sunkd: not the repeated line's key"
is "$(ask adam "$(fp ada1)")" "" "sunkd: nor ada's key for adam"

# sunkd gone: the client reads the file itself, with the same rules.
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
for u in $ORDER; do
        is "$("$AK" -s "$SOCK" -c "$C" "$u")" "${WANT[$u]}" "fallback: '$u' in the ordering file, as sunkd"
done
is "$("$AK" -s "$SOCK" -c "$C" ada "$(fp ada1)")" "$K1" "fallback: ada with %f"
is "$("$AK" -s "$SOCK" -c "$C" ada "$(fp ada2)")" "" "fallback: not the repeated line's key"
is "$("$AK" -s "$SOCK" -c "$C" adam "$(fp ada1)")" "" "fallback: nor ada's key for adam"
printf "ada:['%s', 'ssh-ed25519 AAAAnotbase64!! x', '%s']\n" "$K1" "$K2" > "$C"
is "$("$AK" -s "$SOCK" -c "$C" ada)" "$K1
$K2" "fallback: the file's valid keys"
is "$("$AK" -s "$SOCK" -c "$C" ada "$(fp ada2)")" "$K2" "fallback: exact-key matching"
is "$("$AK" -s "$SOCK" -c "$C" ad)" "" "fallback: an exact name match only"
out=$("$AK" -s "$SOCK" -c "$C" --no-fallback ada); rc=$?
is "$rc/$out" "1/" "--no-fallback: nothing, exit 1"

# A server that accepts and never answers: the deadline, then the fallback.
python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
open(sys.argv[2], 'w').close()
c = []
while True: c.append(s.accept()[0])" "$T/hang.sock" "$T/hang.ready" &
HANG=$!
wait_for_file "$T/hang.ready" || bail_out "hanging server did not start"
is "$("$AK" -s "$T/hang.sock" -t 0.5 -c "$C" ada "$(fp ada1)")" "$K1" "a hanging sunkd: the deadline, then the file"
kill $HANG

# No map loaded (the file is not there, or it cannot be read from the
# start): Get answers io.sunkd.Unavailable, and the client reads the cache.
no_map() { # WHAT FILE
        sunkd_config "modules:
  authkeys:
    sshkey_cache: $2"
        sunkd_start
        LOG_MARK=0 LOG_MARKED="$T/sunkd.log" # a fresh log
        wait_runs authkeys.load 1 || bail_out "$1: no load"
        like "$(python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get '{"user":"ada"}')" \
             '"error": "io.sunkd.Unavailable"' "$1: Get answers Unavailable"
        is "$("$AK" -s "$SOCK" -t 120 -c "$C" ada)" "$K1
$K2" "$1: the client gets ada's keys from the cache"
        is "$("$AK" -s "$SOCK" -t 120 -c "$C" ada "$(fp ada2)")" "$K2" "$1: and with %f"
        out=$("$AK" -s "$SOCK" -t 120 -c "$C" --no-fallback ada); rc=$?
        is "$rc/$out" "1/" "$1: with --no-fallback, nothing and exit 1"
        is "$(status unavailable)" 4 "$1: sunkd answered each of them, Unavailable"
        like "$(ctl metrics)" 'sunkd_authkeys_queries_total\{result="unavailable"\} 4' "$1: counted in the metrics"
}
no_map "no file" "$T/keys/not-there"
# A file not written yet (nsscache's first publish comes after sunkd starts)
# is awaited: no error, no failed load, until it has been there once.
is "$(status state)" "waiting for the first sshkey map" "no file yet: status says it waits"
is "$(status reload_failures)" 0 "no file yet: no failed load"
is "$(status last_error)" "" "no file yet: no error"
unlike "$(ctl metrics)" "sunkd_authkeys_reload_failures_total [1-9]" "no file yet: none in the metrics"
is "$(job_field authkeys.load last_result)" "success" "no file yet: the load job did not fail"
is "$(job_field authkeys.load last_message)" "waiting for the first sshkey map" "and says why"
nok "no file yet: nothing logged as an error or a warning" log_since_has "error|warning"
ok "no file yet: a notice says it waits" log_since_has "does not exist yet: waiting for the first sshkey map"
n=$(loads)
printf "ada:%s\n" "$KB" > "$T/keys/not-there.tmp" && chmod 644 "$T/keys/not-there.tmp" &&
        mv "$T/keys/not-there.tmp" "$T/keys/not-there"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the first publish"
is "$(ask ada)" "$KB" "the first publish is served"
is "$(status state)" "serving" "status says so"
# Once it has been there, a missing file is a failure, as any other.
n=$(loads)
log_mark
rm "$T/keys/not-there"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the file went"
is "$(status reload_failures)" 1 "a file gone after it was served: a failed load"
is "$(ask ada)" "$KB" "which keeps the map"
ok "and is logged as an error" log_since_has "Failed to load '$T/keys/not-there' \(No such file or directory\)"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"

# no ':' either: random bytes before one can make a user of a line
head -c 4096 /dev/urandom | tr -d '\n:' > "$T/keys/garbage"
no_map "a file that cannot be read" "$T/keys/garbage"
is "$(status state)" "no keys are served" "a file that cannot be read: status says no keys are served"
is "$(status reload_failures)" 1 "it is a failed load"
ok "logged as an error" log_since_has "Failed to load '$T/keys/garbage' .*no keys are served"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
done_testing
