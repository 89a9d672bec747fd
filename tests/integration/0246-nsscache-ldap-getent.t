#!/bin/bash
# deadline: 300
# End to end: a real slapd -> sunkd's ldap source -> /etc/*.cache ->
# libnss-cache -> getent and id.  The directory's hostile entries do not
# resolve.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slapd.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
sunkd_setup
trap 'slapd_stop; [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID"; etc_cache_restore; sunkd_cleanup' EXIT
etc_cache_claim
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
"$SUNKD_SRCDIR/tests/data/nsscache/ldap/gen-ldif.py" rfc2307 > "$T/d.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/d.ldif"
sed -e '/^passwd:/{/cache/!s/$/ cache/}' -e '/^group:/{/cache/!s/$/ cache/}' "$ETC_BACKUP/nsswitch.conf" > /etc/nsswitch.conf
printf 'root:x:0:0:root:/root:/bin/bash\nlocaluser:x:1500:1500::/home/localuser:/bin/sh\n' > "$T/local-passwd"
printf 'root:x:0:\n' > "$T/local-group"
cat > "$T/nsscache.conf" <<EOF
[DEFAULT]
source = ldap
cache = files
maps = passwd, group, shadow, sshkey
timestamp_dir = $T/ts
files_dir = /etc
files_cache_filename_suffix = cache
ldap_uri = $SLAPD_URI
ldap_base = ou=people,dc=example,dc=com
ldap_filter = (objectclass=posixAccount)
ldap_retry_max = 1

[shadow]
ldap_filter = (objectclass=shadowAccount)

[group]
ldap_base = ou=group,dc=example,dc=com
ldap_filter = (objectclass=posixGroup)
EOF
chmod 644 "$T/nsscache.conf"
sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    page_size: 2
    interval: 1h
    splay: 0s"
sunkd_start
ok "first refresh done" wait_runs nsscache.refresh 1
is "$(module_status nsscache last_result)" success "and it succeeded"

is "$(getent -s cache passwd alice)" "alice:x:2001:3001:Alice A:/home/alice:/bin/bash" "getent passwd by name"
is "$(getent -s cache passwd 2003)" "carol:x:2003:3001:Carol Full:/home/carol:/bin/sh" "getent passwd by uid"
is "$(getent -s cache group team)" "team:*:3001:alice,bob" "getent group by name"
is "$(getent -s cache group 3002)" "ops:*:3002:carol" "getent group by gid"
is "$(getent -s cache shadow grace)" "grace:*:19000::99999::::" "getent shadow"
is "$(id alice)" "uid=2001(alice) gid=3001(team) groups=3001(team)" "id with initgroups"
getent -s cache passwd toor >/dev/null; is "$?" 2 "the uid-0 user does not resolve"
getent -s cache passwd 0 >/dev/null; is "$?" 2 "nor does uid 0 through the cache"
getent -s cache passwd huge >/dev/null; is "$?" 2 "nor the user with a 70 KB gecos"
getent -s cache group wheel >/dev/null; is "$?" 2 "nor the group of gid 0"
is "$(stat -c '%a %U %G' /etc/shadow.cache)" "$(stat -c '%a %U %G' /etc/shadow)" "shadow.cache is not world-readable"
done_testing
