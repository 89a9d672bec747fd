#!/bin/bash
# deadline: 600
# The netgroup map (nsscache's netgroup, netgroup(5)): from a real slapd
# (nisNetgroup: nisNetgroupTriple and memberNisNetgroup, nested), byte for
# byte nsscache's own output against the same directory in RFC 2307, RFC
# 2307bis and AD mode (golden/, tests/data/nsscache/ldap/reference.sh);
# hostile netgroups and members rejected alone; written without a suffix
# where nsscache's example writes it, /etc/netgroup, and read back by
# glibc's files module (getent netgroup): libnss-cache serves no
# netgroups.  From an http server with http_netgroup_url; refused with
# source = s3 (nsscache's s3 source has no netgroup map).
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slapd.sh"
. "$SUNKD_SRCDIR/tests/lib/nginx.sh"
. "$SUNKD_SRCDIR/tests/lib/etc-cache.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
trap 'nginx_stop; slapd_stop; [ -n "${SUNKD_PID:-}" ] && kill -KILL "$SUNKD_PID"; etc_cache_restore; sunkd_cleanup' EXIT
GEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/gen-ldif.py"
GOLDEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/golden"
mkdir -p "$T/cache" "$T/ts"
printf 'root:x:0:0:root:/root:/bin/bash\nlocaluser:x:1500:1500::/home/localuser:/bin/sh\n' > "$T/local-passwd"
printf 'root:x:0:\nlocalgrp:x:1600:\n' > "$T/local-group"

write_conf() { # URI FILES_DIR [MORE DEFAULT LINES] [MORE [netgroup] LINES]
        {
                printf '[DEFAULT]\nsource = ldap\ncache = files\nmaps = netgroup\n'
                printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$2"
                printf 'ldap_uri = %s\nldap_retry_max = 1\nldap_retry_delay = 0.1\n%b\n' "$1" "${3:-}"
                printf '[netgroup]\nldap_base = ou=netgroup,dc=example,dc=com\n'
                printf 'ldap_filter = (objectclass=nisNetgroup)\nldap_scope = sub\n%b\n' "${4:-}"
        } > "$T/nsscache.conf"
        chmod 644 "$T/nsscache.conf"
}
start_sunkd() {
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    page_size: 2
    interval: 1h
    splay: 1h"
        sunkd_start
}
refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}
netgroup_golden_is() { # MODE FILE
        if cmp -s "$GOLDEN/$1/netgroup.cache" "$2"; then
                pass "$1: netgroup is nsscache's, byte for byte"
        else
                fail "$1: netgroup is nsscache's, byte for byte"
                diff "$GOLDEN/$1/netgroup.cache" "$2" | head -5 | sed 's/^/# /'
        fi
}

# 1. RFC 2307: nsscache's map, the hostile netgroups and members left out, each counted.
"$GEN" rfc2307 > "$T/rfc2307.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/rfc2307.ldif"
write_conf "$SLAPD_URI" "$T/cache"
start_sunkd
refresh
is "$RC" 0 "the refresh with the netgroup map succeeds" || diag "$OUT"
netgroup_golden_is rfc2307 "$T/cache/netgroup.cache"
is "$(sed -n 1p "$T/cache/netgroup.cache")" "admins (,bob,) (login1,alice,example.com) ops-hosts" \
        "triples and member netgroups together, sorted as nsscache sorts them"
is "$(grep -c '' "$T/cache/netgroup.cache")" 5 "one line a netgroup, an empty one as its name alone"
unlike "$(cat "$T/cache/netgroup.cache")" "root|bad|dup|hhhh|\\(a, b" "no hostile netgroup or member is written"
is "$(find "$T/cache" -name 'netgroup.cache.ix*' | wc -l)" 0 "no index: nsscache writes none for netgroup"
rejected=$(module_status nsscache rejected)
like "$rejected" '"invalid-name": 1[,}]' "the name with a blank counted"
like "$rejected" '"invalid-member": 2[,}]' "the member with a newline and the triple with blanks counted"
like "$rejected" '"duplicate-name": 2[,}]' "both entries claiming one name counted"
like "$rejected" '"invalid-entry": 1[,}]' "the 70 KB triple counted"
like "$(module_status nsscache entries)" '"netgroup": 5' "status counts the netgroups"
[ -e "$T/ts/timestamp-netgroup-update" ] && [ -e "$T/ts/timestamp-netgroup-modify" ]
is "$?" 0 "timestamp-netgroup-update and -modify written, as nsscache names them"

# 2. RFC 2307bis and Active Directory mode read netgroups the same way.
for mode in rfc2307bis ad; do
        sunkd_stop
        slapd_stop
        rm -f "$T/cache"/*
        "$GEN" "$mode" > "$T/$mode.ldif" || bail_out "cannot generate the directory"
        slapd_start "$T/$mode.ldif"
        [ "$mode" = ad ] && more="ldap_ad = 1" || more="ldap_rfc2307bis = 1"
        write_conf "$SLAPD_URI" "$T/cache" "$more"
        start_sunkd
        refresh
        is "$RC" 0 "$mode: the refresh succeeds" || diag "$OUT"
        netgroup_golden_is "$mode" "$T/cache/netgroup.cache"
done
sunkd_stop
slapd_stop

# 3. Where nsscache's example writes it ([netgroup] files_cache_filename_suffix
# empty): /etc/netgroup, which glibc's files module reads.
etc_cache_claim
slapd_start "$T/rfc2307.ldif"
write_conf "$SLAPD_URI" /etc "" "files_cache_filename_suffix ="
start_sunkd
refresh
is "$RC" 0 "the refresh into /etc succeeds" || diag "$OUT"
netgroup_golden_is rfc2307 /etc/netgroup
is "$(getent -s files netgroup admins)" "admins                ( ,bob,) (login1,alice,example.com) (node1,-,) (node2,-,)" \
        "getent netgroup: triples and the member netgroup's, through glibc"
is "$(getent -s files netgroup all)" "all                   (-,grace,) (node1,-,) (node2,-,) ( ,bob,) (login1,alice,example.com)" \
        "getent netgroup: nested netgroups expanded"
is "$(getent -s files netgroup evil)" "evil                  (ok,carol,)" "the hostile netgroup keeps its good triple only"
getent -s files netgroup dup >/dev/null; is "$?" 2 "the contested name does not resolve"
sunkd_stop
slapd_stop
etc_cache_restore

# 4. source = http: nsscache's netgroup file from http_netgroup_url, a bad line dropped alone.
W="$T/www"
mkdir -p "$W"
rm -f "$T/cache"/*
printf 'alice:x:2001:2001:Alice A:/home/alice:/bin/bash\n' > "$W/passwd"
{ cat "$GOLDEN/rfc2307/netgroup.cache"; printf 'two  blanks (a,b,c)\n-rf (h,u,d)\n'; } > "$W/netgroup"
nginx_start "$W"
{
        printf '[DEFAULT]\nsource = http\ncache = files\nmaps = passwd, netgroup\n'
        printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$T/cache"
        printf 'http_passwd_url = %s/passwd\nhttp_netgroup_url = %s/netgroup\nhttp_retry_max = 1\n' "$NGINX_URL" "$NGINX_URL"
} > "$T/nsscache.conf"
start_sunkd
refresh
is "$RC" 0 "source = http: the refresh succeeds" || diag "$OUT"
netgroup_golden_is rfc2307 "$T/cache/netgroup.cache"
rejected=$(module_status nsscache rejected)
like "$rejected" '"invalid-line": 1[,}]' "the line sunkd would not write counted"
like "$rejected" '"invalid-name": 1[,}]' "the name that is an option counted"
sunkd_stop

# 5. source = s3 has no netgroup map in nsscache: refused at the key.
printf '[DEFAULT]\nsource = s3\nmaps = passwd, netgroup\ns3_bucket = b\ns3_passwd_object = p\n' > "$T/nsscache.conf"
sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf"
out=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1)
isnt "$?" 0 "source = s3 with the netgroup map is refused"
like "$out" "nsscache.conf:3: key 'maps': nsscache's s3 source has no netgroup map" "at the line, with the reason"
done_testing
