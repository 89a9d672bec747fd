#!/bin/bash
# No key lets anyone in as one of the node's own accounts, through a real
# sshd on 127.0.0.1: an sshkey cache that lists root, a directory's uid-0
# "toor" and "ROOT", a name of the local passwd file, a directory user whose
# uid is a local one, and "0", with a key the attacker holds; none of them
# logs in, whether sunkd answers or the client reads the cache itself, with
# sshd's %U or without it.  An ordinary user still does, and root itself
# can with that key where a file allows it (the control), so the refusals
# are the rule's, not the environment's.  A key whose comment is not UTF-8
# (Latin-1 bytes), which sshd takes, lets ada in both ways too; sunkd serves
# it with those bytes as '?', so its reply stays UTF-8.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
. "$SUNKD_SRCDIR/tests/lib/sshd.sh"

sunkd_setup
cleanup() {
        sshd_cleanup
        [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID" 2>/dev/null
        etc_cache_restore
        sunkd_cleanup
}
trap cleanup EXIT
etc_cache_claim
cp "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" "$MODDIR/" || bail_out "authkeys.so not built"
sshd_setup
RAW="$SUNKD_SRCDIR/tests/lib/varlink-raw.py"

mkdir -p "$T/k" "$T/keys"
for k in ada attack latin; do
        ssh-keygen -q -t ed25519 -N '' -C "$k@test" -f "$T/k/$k" || bail_out "ssh-keygen"
done
KA=$(cat "$T/k/attack.pub")

# The directory as NSS sees it (libnss-cache; without an index it scans the file).
rm -f /etc/passwd.cache.ixname /etc/passwd.cache.ixuid
printf '%s\n' "ada:x:20001:20001::/:/bin/bash" "toor:x:0:0::/root:/bin/bash" "ROOT:x:0:0::/root:/bin/bash" \
       "grace:x:20002:20002::/:/bin/bash" "mallory:x:20099:20099::/:/bin/bash" "0:x:20003:20003::/:/bin/bash" \
       > /etc/passwd.cache || bail_out "cannot write /etc/passwd.cache"
chmod 644 /etc/passwd.cache
sed -e '/^passwd:/s/.*/passwd: files cache/' "$ETC_BACKUP/nsswitch.conf" > /etc/nsswitch.conf ||
        bail_out "cannot write /etc/nsswitch.conf"
is "$(getent passwd toor | cut -d: -f3)" 0 "toor resolves to uid 0 through libnss-cache"

# The node's own accounts for this test: grace by name, uid 20099 (mallory's).
LP="$T/passwd"
printf '%s\n' "grace:x:5000:5000::/:/bin/sh" "svc:x:20099:20099::/:/usr/sbin/nologin" > "$LP"
C="$T/keys/sshkey.cache"
{
        for u in root toor ROOT grace mallory 0; do printf "%s:['%s']\n" "$u" "$KA"; done
        printf "ada:['%s', '%s caf\351 \377']\n" "$(cat "$T/k/ada.pub")" "$(cut -d' ' -f1,2 "$T/k/latin.pub")"
} > "$C"
chmod 755 "$T/keys" && chmod 644 "$C" "$LP"

sunkd_config "modules:
  authkeys:
    sshkey_cache: $C
    local_passwd: $LP
    allow: [$AKUSER]"
sunkd_start
chmod 755 "$T" "$T/run"
wait_runs authkeys.load 1 || bail_out "the map was never loaded"

ARGS="-s $SOCK -t 60 -c $C --local-passwd $LP"
sshd_start BYUID "$ARGS --uid %U"
sshd_start LOOKUP "$ARGS"
sshd_start DEFAULT "-s $SOCK -t 60 -c $C"
# The control: root may log in with the attacker's key where a file allows it.
printf '%s\n' "$KA" > "$T/ssh/root_keys"
sshd_start CONTROL "-s $SOCK -t 60 -c $C" "StrictModes no
AuthorizedKeysFile $T/ssh/root_keys"
login() { ssh_login "$1" "$2" "$T/k/$3"; }
is "$(login $CONTROL root attack)" "logged-in-as-root" "control: root logs in with the key where a file allows it"

refused() { # WHAT
        local p u
        for p in BYUID LOOKUP; do
                for u in root toor ROOT grace mallory 0; do
                        is "$(login ${!p} $u attack)" "" "$1, $p: no login as $u"
                done
                is "$(login ${!p} ada ada)" "logged-in-as-ada" "$1, $p: ada logs in"
                is "$(login ${!p} ada latin)" "logged-in-as-ada" "$1, $p: so does her key whose comment is not UTF-8"
        done
        # The defaults (/etc/passwd, the uid looked up): root, and uid 0 under other names.
        is "$(login $DEFAULT root attack)" "" "$1, defaults: no login as root"
        is "$(login $DEFAULT toor attack)" "" "$1, defaults: no login as toor (uid 0)"
        is "$(login $DEFAULT ROOT attack)" "" "$1, defaults: no login as ROOT (uid 0)"
        is "$(login $DEFAULT ada ada)" "logged-in-as-ada" "$1, defaults: ada logs in"
}
refused "sunkd answering"
status() { module_status authkeys "$1"; }
# The module refuses by name (a uid is the client's to know): root, grace and 0.
is "$(status bad_lines)" '{"local-account": 3}' "the module skips three lines as local-account"
is "$(status users)" 4 "and serves the other four"
is "$(status invalid_keys)" '{}' "dropping no key"
like "$(python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get '{"user":"ada"}')" ' caf\? \?"' \
     "sunkd serves the comment's stray bytes as '?'"
like "$(ctl metrics)" 'sunkd_authkeys_bad_lines\{reason="local-account"\} 3' "counted in the metrics"
is "$(grep -c 'local or reserved accounts are never served' "$T/sunkd.log")" "$(job_field authkeys.load runs)" \
   "logged once per load"
like "$(grep 'local or reserved accounts are never served' "$T/sunkd.log")" \
     "root \(line 1\), grace \(line 4\), 0 \(line 6\)" "naming each with its line"
is "$(python3 "$RAW" "$SOCK" call io.sunkd.AuthorizedKeys.Get '{"user":"root"}')" '{"parameters": {"keys": []}}' \
   "sunkd answers no key for root"
accepted_root() { cat "$T"/ssh/sshd-*.log | grep -c 'Accepted publickey for root'; }
is "$(accepted_root)" 1 "the control's was the only root login"

sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stopped"
refused "the client's fallback"
is "$(accepted_root)" 1 "still the only root login"
done_testing
