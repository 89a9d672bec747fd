#!/bin/bash
# No keys for the node's own accounts, from sunkd and from the client's
# fallback: names of local_passwd, the reserved system names and prefixes,
# names that spell a local or reserved uid, the uid sshd passes (%U); with
# or without a fingerprint; counted apart and logged once per load; a
# change of local_passwd applies at once.  Hostile spellings: a NUL in the
# name sunkd is asked for, trailing blanks, a file of local accounts only.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"

command -v ssh-keygen >/dev/null || bail_out "ssh-keygen (openssh-client) is needed"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" "$MODDIR/" || bail_out "authkeys.so not built"
AK="$SUNKD_BUILDDIR/modules/authkeys/sunkd-authkeys"
[ -x "$AK" ] || bail_out "sunkd-authkeys not built"
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"

mkdir -p "$T/k" "$T/keys"
ssh-keygen -q -t ed25519 -N '' -C "k@test" -f "$T/k/k" || bail_out "ssh-keygen"
K=$(cat "$T/k/k.pub")
FP=$(ssh-keygen -lf "$T/k/k.pub" | awk '{ print $2 }')
LP="$T/passwd"
printf '%s\n' "# the node's own" "localuser:x:1234:1234::/:/bin/sh" > "$LP"
C="$T/keys/sshkey.cache"
for u in root daemon localuser 0 00 1234 _apt systemd-network ada 'root ' nobody bob; do
        printf "%s:['%s']\n" "$u" "$K"
done > "$C"

sunkd_config "modules:
  authkeys:
    sshkey_cache: $C
    local_passwd: $LP"
LOG_MARK=0 LOG_MARKED="$T/sunkd.log"
sunkd_start
wait_runs authkeys.load 1 || bail_out "the map was never loaded"
status() { module_status authkeys "$1"; }
get() { python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get "{\"user\": \"$1\"}"; }
NONE='{"parameters": {"keys": []}}'
ask() { "$AK" -s "$SOCK" -t 120 -c "$T/none" --local-passwd "$LP" "$@"; }

is "$(status users)" 2 "two users served: ada and bob"
is "$(status bad_lines)" '{"bad-name": 1, "local-account": 9}' "nine lines skipped as local-account"
is "$(status reload_failures)" 0 "which is no failure"
for u in root daemon localuser 0 00 1234 _apt systemd-network nobody; do
        is "$(get "$u")" "$NONE" "sunkd: no key for '$u'"
        out=$(ask "$u"); rc=$?
        is "$rc/$out" "0/" "client: nothing for '$u'"
        is "$(ask "$u" "$FP")" "" "client with %f: nothing for '$u'"
done
is "$(ask ada)" "$K" "ada is served"
is "$(ask ada "$FP")" "$K" "and with %f"
# A NUL in the name is refused before the module sees it ("ada" NUL "x" is not ada).
like "$(get 'ada\u0000x')" '^\{"error": ' "'ada' NUL 'x' is an error, not ada's keys"
like "$(get 'root\u0000')" '^\{"error": ' "so is 'root' NUL"
is "$(ask 'root ')" "" "'root ' (a trailing blank) gets nothing"

# The uid sshd logs the user in as (%U): a local or reserved one gets nothing.
for uid in 0 1234 65534; do
        is "$(ask --uid "$uid" ada)" "" "ada with uid $uid gets nothing"
        is "$(ask -U "$uid" ada "$FP")" "" "nor with %f"
done
is "$(ask --uid 20001 ada)" "$K" "ada with her own uid is served"
for bad in x -1 '' 4294967296 ' 0'; do
        out=$(ask --uid "$bad" ada 2>/dev/null); rc=$?
        is "$rc/$out" "2/" "--uid '$bad' is a usage error"
done

# Logged once per load, by name and line; asking for them logs nothing more.
warnings() { grep -c 'local or reserved accounts are never served' "$T/sunkd.log"; }
is "$(warnings)" "$(job_field authkeys.load runs)" "one warning a load"
like "$(grep 'never served' "$T/sunkd.log")" "9 local or reserved accounts are never served: root \(line 1\), daemon \(line 2\)" \
     "with the names and lines"
n=$(warnings)
for i in 1 2 3; do get root > /dev/null; ask root > /dev/null; done
is "$(warnings)" "$n" "queries log nothing"

# A change of local_passwd applies at once: ada becomes local.
n=$(job_field authkeys.load runs)
printf '%s\n' "localuser:x:1234:1234::/:/bin/sh" "ada:x:20001:20001::/:/bin/sh" > "$LP.new" && mv "$LP.new" "$LP"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after local_passwd changed"
is "$(get ada)" "$NONE" "a name added to local_passwd loses its keys"
is "$(status users)" 1 "bob is left"
is "$(warnings)" "$(job_field authkeys.load runs)" "one warning for the new load too"

# A file of local accounts only is a map with no users, not a broken file.
n=$(job_field authkeys.load runs)
printf "root:['%s']\ndaemon:\n" "$K" > "$C.new" && mv "$C.new" "$C"
wait_runs authkeys.load $((n + 1)) || bail_out "no load after the file changed"
is "$(status users)" 0 "a file of local accounts only: no users"
is "$(status reload_failures)" 0 "and no failure"
is "$(status last_error)" "" "no error"

# The client's own fallback, with sunkd gone.
for u in root daemon localuser 0 00 1234 _apt systemd-network ada nobody bob; do
        printf "%s:['%s']\n" "$u" "$K"
done > "$C"
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stops cleanly"
fb() { "$AK" -s "$SOCK" -c "$C" --local-passwd "$LP" "$@"; }
for u in root daemon localuser 0 00 1234 _apt systemd-network ada nobody; do
        out=$(fb "$u"); rc=$?
        is "$rc/$out" "0/" "fallback: nothing for '$u'"
        is "$(fb "$u" "$FP")" "" "fallback with %f: nothing for '$u'"
done
is "$(fb bob)" "$K" "fallback: bob is served"
is "$(fb --uid 0 bob)" "" "fallback: bob with uid 0 gets nothing"
is "$(fb bob "$FP")" "$K" "fallback with %f: bob is served"
# The defaults: /etc/passwd, whose root is reserved anyway.
is "$("$AK" -s "$SOCK" -c "$C" root "$FP")" "" "defaults: nothing for root"
done_testing
