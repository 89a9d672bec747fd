#!/bin/bash
# The cache writer against the real libnss-cache.
#
# libnss-cache reads fixed paths (/etc/passwd.cache, /etc/group.cache,
# /etc/shadow.cache and their .ixname/.ixuid/.ixgid indexes), so this test
# publishes into /etc itself: it takes a lock that other tests touching those
# files share, backs up whatever is there (and /etc/nsswitch.conf, which it
# extends with "cache" for `id`), and restores all of it on exit.  Lookups go
# through getent -s cache, i.e. straight to libnss_cache.so.2.

set -u

SUNKD_BUILDDIR=${SUNKD_BUILDDIR:?}
SUNKD_SRCDIR=${SUNKD_SRCDIR:?}
HELPER="$SUNKD_BUILDDIR/tests/lib/nsscache-publish"
LOCK=/run/lock/sunkd-etc-nss-cache.lock
CACHE_FILES="passwd.cache passwd.cache.ixname passwd.cache.ixuid group.cache group.cache.ixname
group.cache.ixgid shadow.cache shadow.cache.ixname sshkey.cache sshkey.cache.ixname"

n=0
failed=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "# $l"; done; }
bail_out() { echo "Bail out! $*"; exit 1; }

# expect DESCRIPTION WANT_OUTPUT WANT_RC COMMAND...
expect() {
        local desc=$1 want=$2 want_rc=$3 out rc
        shift 3
        out=$("$@" 2>&1); rc=$?
        if [ "$rc" = "$want_rc" ] && [ "$out" = "$want" ]; then
                ok "$desc"
        else
                not_ok "$desc" "command: $*" "got rc=$rc: $out" "want rc=$want_rc: $want"
        fi
}

[ "$(id -u)" = 0 ] || bail_out "must run as root: libnss-cache reads only /etc"
ls /usr/lib/*/libnss_cache.so.2 /lib/*/libnss_cache.so.2 >/dev/null 2>&1 ||
        bail_out "libnss-cache is not installed (apt-get install libnss-cache)"
command -v getent >/dev/null || bail_out "getent not found"
[ -x "$HELPER" ] || bail_out "$HELPER not built"

exec 9>"$LOCK" || bail_out "cannot open $LOCK"
flock -w 600 9 || bail_out "cannot lock $LOCK"

TMP=$(mktemp -d /tmp/sunkd-0210.XXXXXX) || bail_out "mktemp failed"
mkdir "$TMP/backup"
for f in $CACHE_FILES nsswitch.conf; do
        [ -e "/etc/$f" ] && { cp -a "/etc/$f" "$TMP/backup/$f" || bail_out "cannot back up /etc/$f"; }
done

restore() {
        # Temp files first, had a publish been killed: the glob also matches
        # passwd.cache.ixname and the like, which are restored just below.
        for f in $CACHE_FILES; do
                rm -f "/etc/$f".?????? "/etc/.sunkd-$f".??????
        done
        for f in $CACHE_FILES nsswitch.conf; do
                rm -f "/etc/$f"
                [ -e "$TMP/backup/$f" ] && cp -a "$TMP/backup/$f" "/etc/$f"
        done
        rm -rf "$TMP"
}
trap restore EXIT
trap 'exit 1' INT TERM HUP

# passwd and group through the cache too, for id(1)'s initgroups.
sed -e '/^passwd:/{/cache/!s/$/ cache/}' -e '/^group:/{/cache/!s/$/ cache/}' \
        "$TMP/backup/nsswitch.conf" >/etc/nsswitch.conf || bail_out "cannot edit /etc/nsswitch.conf"
grep -q '^passwd:.*cache' /etc/nsswitch.conf || bail_out "nsswitch.conf has no passwd line"

# Every index record names the byte offset of its own entry's line.
indexes_point_at_lines() {
        local r=0
        python3 "$SUNKD_SRCDIR/tests/lib/nss-index-check.py" /etc/passwd.cache ixname:0 ixuid:2 || r=1
        python3 "$SUNKD_SRCDIR/tests/lib/nss-index-check.py" /etc/group.cache ixname:0 ixgid:2 || r=1
        python3 "$SUNKD_SRCDIR/tests/lib/nss-index-check.py" /etc/shadow.cache ixname:0 || r=1
        python3 "$SUNKD_SRCDIR/tests/lib/nss-index-check.py" /etc/sshkey.cache ixname:0 || r=1
        return $r
}

echo "1..25"

if out=$("$HELPER" -t "$TMP/ts" 0 2>&1); then ok "publish golden set into /etc"; else not_ok "publish golden set into /etc" "$out"; fi

expect "shadow.cache copies /etc/shadow's mode and owner, as nsscache does" \
        "$(stat -c '%a %U %G' /etc/shadow)" 0 stat -c '%a %U %G' /etc/shadow.cache
expect "no temp file left in /etc" "" 0 sh -c "ls /etc | grep -E '^(passwd|group|shadow|sshkey)\.cache' |
        grep -vxE '(passwd|group|shadow|sshkey)\.cache(\.ix(name|uid|gid))?'; true"
expect "passwd by name (UTF-8 gecos)" \
        "sunkt-alice:x:50001:50100:Alice Ünïcödé:/mnt/home/sunkt-alice:/bin/zsh" 0 getent -s cache passwd sunkt-alice
expect "index offsets are in bytes: each record points at its own line" "" 0 indexes_point_at_lines
expect "passwd by name after a UTF-8 line" \
        "sunkt-dave:x:9999:50100:Dave O'Neil:/mnt/home/sunkt-dave:/bin/bash" 0 getent -s cache passwd sunkt-dave
expect "passwd by UTF-8 name" \
        "sunkt-zoë:x:50005:50103:Zoë:/mnt/home/sunkt-zoë:/bin/sh" 0 getent -s cache passwd sunkt-zoë
expect "passwd by uid" \
        "sunkt-dave:x:9999:50100:Dave O'Neil:/mnt/home/sunkt-dave:/bin/bash" 0 getent -s cache passwd 9999
expect "passwd by uid (text sort differs from numeric)" \
        "sunkt-carol:x:50003:50100:Carol Example:/mnt/home/sunkt-carol:/bin/bash" 0 getent -s cache passwd 50003
expect "group by name, many members" \
        "sunkt-users:x:50100:sunkt-carol,sunkt-alice,sunkt-dave" 0 getent -s cache group sunkt-users
expect "group by name, one member" "sunkt-solo:x:50101:sunkt-bob" 0 getent -s cache group sunkt-solo
expect "group by gid, no members" "sunkt-empty:x:50102:" 0 getent -s cache group 50102
expect "shadow by name (0 written empty)" "sunkt-alice:*:19000::99999:7:::" 0 getent -s cache shadow sunkt-alice
expect "missing user exits 2" "" 2 getent -s cache passwd sunkt-nobody
expect "missing uid exits 2" "" 2 getent -s cache passwd 50999
expect "missing group exits 2" "" 2 getent -s cache group sunkt-nogroup
expect "id resolves user and supplementary groups via nsswitch" \
        "uid=50001(sunkt-alice) gid=50100(sunkt-users) groups=50100(sunkt-users),50103(sunkt-admins)" 0 id sunkt-alice
expect "enumeration sees every entry once" "5" 0 sh -c 'getent -s cache passwd | grep -c "^sunkt-"'

# Variant 2 repeats sunkt-dave at the end with uid 9998.  The index points at
# that later line while a linear scan would find the first one, so this shows
# the index is what libnss-cache used.  (After a seek libnss-cache skips a
# line it cannot parse, so an offset a little short would find the entry too:
# the offsets themselves are checked byte for byte.)
if out=$("$HELPER" -t "$TMP/ts" 2 2>&1); then ok "publish set with a repeated name"; else not_ok "publish set with a repeated name" "$out"; fi
expect "its index offsets point at their lines too" "" 0 indexes_point_at_lines
expect "lookup by name went through the index" \
        "sunkt-dave:x:9998:50100:Dave Again:/mnt/home/sunkt-dave:/bin/bash" 0 getent -s cache passwd sunkt-dave
expect "lookup by uid went through the index" \
        "sunkt-dave:x:9998:50100:Dave Again:/mnt/home/sunkt-dave:/bin/bash" 0 getent -s cache passwd 9998

# Concurrency: readers look up every name while the helper republishes the
# two alternating sets 200 times; every lookup must succeed with its entry.
"$HELPER" -t "$TMP/ts" 0 >/dev/null 2>&1
reader() {
        local i=0 name out
        while [ ! -e "$TMP/stop" ]; do
                for name in sunkt-carol sunkt-alice sunkt-bob sunkt-dave sunkt-zoë; do
                        if ! out=$(getent -s cache passwd "$name" 2>&1) || [ "${out%%:*}" != "$name" ]; then
                                echo "passwd $name: rc=$? '$out'" >>"$TMP/reader-errors"
                        fi
                done
                for name in sunkt-users sunkt-solo sunkt-empty sunkt-admins; do
                        if ! out=$(getent -s cache group "$name" 2>&1) || [ "${out%%:*}" != "$name" ]; then
                                echo "group $name: rc=$? '$out'" >>"$TMP/reader-errors"
                        fi
                done
                i=$((i + 1))
        done
        echo "$i" >>"$TMP/reader-rounds"
}
reader & r1=$!
reader & r2=$!
pub_out=$("$HELPER" -t "$TMP/ts" -n 200 1 2>&1); pub_rc=$?
touch "$TMP/stop"
wait $r1 $r2
rounds=$(awk '{s += $1} END {print s + 0}' "$TMP/reader-rounds" 2>/dev/null)
if [ "$pub_rc" = 0 ] && [ ! -s "$TMP/reader-errors" ] && [ "${rounds:-0}" -gt 0 ]; then
        ok "200 republishes under concurrent lookups ($rounds reader rounds, no failure)"
else
        not_ok "200 republishes under concurrent lookups" "publisher rc=$pub_rc: $pub_out" \
                "reader rounds: ${rounds:-0}" "$(head -20 "$TMP/reader-errors" 2>/dev/null)"
fi

expect "lookups still work after the churn" \
        "sunkt-alice:x:50001:50100:Alice Ünïcödé:/mnt/home/sunkt-alice:/bin/zsh" 0 getent -s cache passwd sunkt-alice

# The pair a reader can still see: the index it opened before a republish
# and the data it opens after.  libnss-cache trusts the index unless the data
# is newer in whole seconds; with an offset past the end of the new data it
# returns a status glibc aborts on ("Illegal status in __nss_next.").  The
# old files' mtimes are pushed ahead as if they were published later in this
# same second; the new data must still be newer than the held index.
command -v unshare >/dev/null || bail_out "unshare (util-linux) is needed"
mkdir "$TMP/pair"
"$HELPER" -d "$TMP/pair" 1 >/dev/null 2>&1 || bail_out "publish into $TMP/pair"
touch -d "@$(( $(date +%s) + 5 ))" "$TMP/pair"/passwd.cache*
cp -a "$TMP/pair/passwd.cache.ixname" "$TMP/held.ixname"
"$HELPER" -d "$TMP/pair" 0 >/dev/null 2>&1 || bail_out "republish into $TMP/pair"
expect "an index held across a republish in the same second is not trusted with the new data" \
        "sunkt-zoë:x:50005:50103:Zoë:/mnt/home/sunkt-zoë:/bin/sh" 0 \
        unshare -m sh -c "mount --bind '$TMP/pair/passwd.cache' /etc/passwd.cache &&
                mount --bind '$TMP/held.ixname' /etc/passwd.cache.ixname && getent -s cache passwd sunkt-zoë"

[ "$n" = 25 ] || echo "# ran $n tests, planned 25"
exit $((failed > 0))
