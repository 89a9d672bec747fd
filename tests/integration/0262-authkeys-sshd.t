#!/bin/bash
# The whole chain with a real sshd on 127.0.0.1: SCIM fixture -> nsscache
# module -> /etc/sshkey.cache -> authkeys module -> sunkd-authkeys as sshd's
# AuthorizedKeysCommand -> ssh logs in.  Keys added and users removed in SCIM
# take effect at the next refresh with nothing restarted; with sunkd stopped
# the client's fallback still lets people in, and with --no-fallback it does not.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/scim.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
. "$SUNKD_SRCDIR/tests/lib/sshd.sh"

sunkd_setup
cleanup() {
        sshd_cleanup
        scim_stop
        [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID" 2>/dev/null
        etc_cache_restore
        sunkd_cleanup
}
trap cleanup EXIT
etc_cache_claim
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$SUNKD_BUILDDIR/modules/authkeys/.libs/authkeys.so" \
   "$MODDIR/" || bail_out "modules not built"
sshd_setup

mkdir -p "$T/k" "$T/ts"
for k in ada ada-new grace intruder; do
        ssh-keygen -q -t ed25519 -N '' -C "$k@test" -f "$T/k/$k" || bail_out "ssh-keygen"
done

# SCIM data: ada and grace with the test's keys; variants per step.
scim_data() { # OUT ADA_KEYS GRACE_KEYS [drop-ada]
        python3 - "$SUNKD_SRCDIR/etc/demo/scim-data.json" "$@" <<'PY'
import json, sys
src, out, ada, grace = sys.argv[1:5]
drop = len(sys.argv) > 5
d = json.load(open(src))
ext = "urn:coreweave:params:scim:schemas:extension:coreweave:2.0:CoreWeaveUser"
users = []
for u in d["Users"]:
    name = u.get(ext, {}).get("sunkPosixUsername")
    if name == "ada":
        if drop:
            continue
        u[ext]["sunkSshKeys"] = [open(k).read().strip() for k in ada.split(",") if k]
    if name == "grace":
        u[ext]["sunkLoginShell"] = "/bin/bash"  # zsh is not installed here
        u[ext]["sunkSshKeys"] = [open(k).read().strip() for k in grace.split(",") if k]
    users.append(u)
d["Users"] = users
json.dump(d, open(out, "w"))
PY
}
scim_data "$T/d1.json" "$T/k/ada.pub" "" || bail_out "SCIM data"
scim_start "$T/d1.json"
scim_token
# passwd and group through libnss-cache, so sshd finds the SCIM users.
sed -e '/^passwd:/{/cache/!s/$/ cache/}' -e '/^group:/{/cache/!s/$/ cache/}' "$ETC_BACKUP/nsswitch.conf" > /etc/nsswitch.conf

write_config() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $SUNKD_SRCDIR/etc/nsscache.conf.example
    scim_base_url: $SCIM_URL
    files_dir: /etc
    timestamp_dir: $T/ts
    token_file: $T/token
    interval: 1h
    splay: 0s
  authkeys:
    allow: [$AKUSER]"
}
write_config
# A node's first start: no sshkey cache until the nsscache module publishes one.
rm -f /etc/sshkey.cache /etc/sshkey.cache.ixname
sunkd_start
chmod 755 "$T" "$T/run"
ok "first refresh" wait_runs nsscache.refresh 1
ok "the authkeys module follows nsscache's sshkey cache" wait_until 300 eval '[ "$(module_status authkeys state)" = serving ]'
is "$(module_status authkeys reload_failures)" 0 "a first start waits for the first map: no failed load"
nok "and logs no error" grep -q "error" "$T/sunkd.log"
is "$(getent -s cache passwd ada | cut -d: -f1,3)" "ada:20001" "ada resolves through libnss-cache"

# The client's fallback reads $sysconfdir/sshkey.cache unless told; the
# module publishes in /etc, where libnss-cache reads.  A build configured
# with another sysconfdir (make distcheck's) is told where it is.
CACHE_ARG=
[ "$(sed -n 's/^sysconfdir = //p' "$SUNKD_BUILDDIR/Makefile")" = /etc ] || CACHE_ARG=" -c /etc/sshkey.cache"
sshd_start PORT "-s $SOCK -t 60 --uid %U$CACHE_ARG"
sshd_start STRICT "-s $SOCK -t 60 --uid %U --no-fallback"
login() { ssh_login "$1" "$2" "$T/k/$3"; }
is "$(login $PORT ada ada)" "logged-in-as-ada" "ada logs in with her key"
is "$(login $PORT ada intruder)" "" "another key is refused"
is "$(login $PORT grace intruder)" "" "grace has no key yet"
like "$(cat "$T/ssh/sshd-PORT.log")" "Accepted publickey for ada" "sshd accepted it through the command"

# Change SCIM: grace gets a key, ada a second one; a refresh, nothing restarted.
refresh_with() {
        local n
        scim_stop
        scim_start "$1"
        write_config
        sunkd_hup
        n=$(job_field authkeys.load runs)
        ctl run nsscache.refresh > /dev/null || bail_out "refresh failed"
        wait_runs authkeys.load $((n + 1)) || bail_out "the new sshkey cache was not loaded"
}
scim_data "$T/d2.json" "$T/k/ada.pub,$T/k/ada-new.pub" "$T/k/grace.pub"
refresh_with "$T/d2.json"
is "$(login $PORT grace grace)" "logged-in-as-grace" "a key added in SCIM is accepted after the refresh"
is "$(login $PORT ada ada-new)" "logged-in-as-ada" "and ada's new key too"

scim_data "$T/d3.json" "" "$T/k/grace.pub" drop-ada
refresh_with "$T/d3.json"
is "$(login $PORT ada ada)" "" "a user removed from SCIM is refused after the refresh"
is "$(login $PORT grace grace)" "logged-in-as-grace" "the others still log in"

# sunkd down: the fallback reads /etc/sshkey.cache; --no-fallback refuses.
sunkd_stop
is "$SUNKD_EXIT" 0 "sunkd stopped"
is "$(login $PORT grace grace)" "logged-in-as-grace" "with sunkd stopped, login works through the fallback"
is "$(login $PORT grace intruder)" "" "and a wrong key is still refused"
is "$(login $STRICT grace grace)" "" "with --no-fallback and sunkd stopped, login is refused"
done_testing
