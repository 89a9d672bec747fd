#!/bin/bash
# deadline: 600
# source = ldap against a real slapd on loopback (tests/lib/slapd.sh), read
# through an nsscache.conf as nsscache reads it, each map held byte for byte
# to nsscache's own output against the same directory (golden/, made by
# tests/data/nsscache/ldap/reference.sh).  The server's size limit (3)
# is below the directory's size: the paged search reads it whole.  The maps
# are nsscache's (its ldapsource.py and files cache): RFC 2307, RFC 2307bis
# with nested groups, Active Directory.  Hostile entries are rejected alone;
# an unchanged directory is not mapped again; a wrong bind password, an
# unverified certificate and keys sunkd does not take fail clearly.
. "$SUNKD_SRCDIR/tests/lib/tap.sh"
. "$SUNKD_SRCDIR/tests/lib/sunkd.sh"
. "$SUNKD_SRCDIR/tests/lib/slapd.sh"
sunkd_setup
cp "$SUNKD_BUILDDIR/modules/nsscache/.libs/nsscache.so" "$MODDIR/" || bail_out "nsscache.so not built"
command -v openssl >/dev/null || bail_out "openssl (Debian package openssl) is needed to make test certificates"
trap '[ -n "${PROXY_PID:-}" ] && kill "$PROXY_PID" 2>/dev/null; slapd_stop; sunkd_cleanup' EXIT
GEN="$SUNKD_SRCDIR/tests/data/nsscache/ldap/gen-ldif.py"
mkdir -p "$T/cache" "$T/ts"
printf 'root:x:0:0:root:/root:/bin/bash\nlocaluser:x:1500:1500::/home/localuser:/bin/sh\n' > "$T/local-passwd"
printf 'root:x:0:\nlocalgrp:x:1600:\n' > "$T/local-group"

# The nsscache.conf of nsscache's own example, with this test's server and directories.
write_conf() { # URI [MORE DEFAULT LINES] [MORE [group] LINES, THEN SECTIONS]
        {
                printf '[DEFAULT]\nsource = ldap\ncache = files\nmaps = passwd, group, shadow, sshkey\n'
                printf 'timestamp_dir = %s\nfiles_dir = %s\nfiles_cache_filename_suffix = cache\n' "$T/ts" "$T/cache"
                printf 'ldap_uri = %s\nldap_base = ou=people,dc=example,dc=com\n' "$1"
                printf 'ldap_filter = (objectclass=posixAccount)\nldap_retry_max = 1\nldap_retry_delay = 0.1\n'
                printf '%b\n' "${2:-}"
                printf '[shadow]\nldap_filter = (objectclass=shadowAccount)\n'
                printf '[group]\nldap_base = ou=group,dc=example,dc=com\nldap_filter = (objectclass=posixGroup)\n'
                printf '%b\n' "${3:-}"
        } > "$T/nsscache.conf"
        chmod 644 "$T/nsscache.conf"
}
start_sunkd() { # [MORE YAML KEYS]
        sunkd_config "modules:
  nsscache:
    nsscache_conf: $T/nsscache.conf
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    page_size: 2
    interval: 1h
    splay: 1h
    ${1:-}"
        sunkd_start
}
refresh() {
        OUT=$(ctl run nsscache.refresh 2>&1)
        RC=$?
}
# Each file of golden/MODE (nsscache's own output, reference.sh) byte for byte in the cache.
golden_is() { # MODE
        local f bad=
        for f in "$SUNKD_SRCDIR/tests/data/nsscache/ldap/golden/$1"/*; do
                case "${f##*/}" in netgroup* | auto.*) continue ;; esac # maps of their own: 0247, 0248
                cmp -s "$f" "$T/cache/${f##*/}" || bad="$bad ${f##*/}"
        done
        is "${bad:-none}" none "$1: every map and index is nsscache's, byte for byte"
        [ -z "$bad" ] || diff "$SUNKD_SRCDIR/tests/data/nsscache/ldap/golden/$1/${bad# }" "$T/cache/${bad# }" | head -5 | sed 's/^/# /'
}
check_config() {
        CHECK=$("$SUNKD" -c "$T/sunkd.yaml" --check-config 2>&1)
        CRC=$?
}

# 1. RFC 2307: the maps as nsscache writes them, read whole past the size limit.
"$GEN" rfc2307 > "$T/rfc2307.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/rfc2307.ldif"
write_conf "$SLAPD_URI"
start_sunkd
check_config
is "$CRC" 0 "an nsscache.conf with source = ldap is accepted" || diag "$CHECK"
out=$(ldapsearch -x -LLL -H "$SLAPD_URI" -b ou=people,dc=example,dc=com '(objectclass=posixAccount)' uid 2>&1)
like "$out" "Size limit exceeded" "the server's size limit is below the directory's size"
refresh
is "$RC" 0 "the first refresh succeeds" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "alice:x:2001:3001:Alice A:/home/alice:/bin/bash
bob:x:2002:3001:Bob B:/home/bob:/bin/zsh
carol:x:2003:3001:Carol Full:/home/carol:/bin/sh
dave:x:2004:3001:Dave D:/home/dave:/bin/bash
erin:x:2005:3001:Erin E:/home/erin:/bin/bash
frank:x:2006:3001:Frank F:/home/frank:/bin/bash
grace:x:2007:3001:Grace G:/home/grace:/bin/bash" "passwd.cache: every user past the size limit, gecos else cn, hostile ones left out"
is "$(cat "$T/cache/group.cache")" "team:*:3001:alice,bob
ops:*:3002:carol" "group.cache: memberUid sorted, passwd '*' as nsscache writes it, gid 0 and root left out"
is "$(head -2 "$T/cache/shadow.cache")" "alice:*:19000::99999::::
bob:*:19000::99999::::" "shadow.cache: shadowLastChange and shadowMax, the rest empty"
is "$(head -2 "$T/cache/sshkey.cache")" "alice:['ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA alice@laptop', 'ssh-rsa AAAAB3NzaC1yc2E alice@desk']
bob:" "sshkey.cache: every sshPublicKey, an empty entry for a user without one"
golden_is rfc2307
like "$(module_status nsscache requests)" '^1[0-9]$' "read in pages of 2 (4 per user search, 1 for groups)"
rejected=$(module_status nsscache rejected)
like "$rejected" '"id-out-of-range": [1-9]' "uid 0 and gid 0 counted as out of range"
like "$rejected" '"invalid-name": [1-9]' "the name that is not portable counted"
like "$rejected" '"local-account": [1-9]' "the node's own name and member counted"
like "$rejected" '"invalid-entry": [1-9]' "the 70 KB gecos counted"

# 1b. The same settings written in sunkd.yaml alone give the same maps.
sunkd_stop
rm -f "$T/cache"/*
sunkd_config "modules:
  nsscache:
    source: ldap
    maps: [passwd, group, shadow, sshkey]
    files_dir: $T/cache
    timestamp_dir: $T/ts
    local_passwd: $T/local-passwd
    local_group: $T/local-group
    ldap_uri: $SLAPD_URI
    ldap_retry_max: 1
    page_size: 2
    interval: 1h
    splay: 1h
    DEFAULT:
      ldap_base: ou=people,dc=example,dc=com
      ldap_filter: (objectclass=posixAccount)
    shadow:
      ldap_filter: (objectclass=shadowAccount)
    group:
      ldap_base: ou=group,dc=example,dc=com
      ldap_filter: (objectclass=posixGroup)"
sunkd_start
refresh
is "$RC" 0 "the ldap source configured in sunkd.yaml alone refreshes" || diag "$OUT"
golden_is rfc2307
sunkd_stop
start_sunkd

# 2. Unchanged: the run that finds nothing changed keeps a memo; the next is fetched, not mapped.
refresh
is "$RC" 0 "an unchanged directory refreshes" || diag "$OUT"
is "$(module_status nsscache replayed)" false "mapped once more, as every source's first unchanged run"
refresh
is "$RC" 0 "and again" || diag "$OUT"
is "$(module_status nsscache replayed)" true "then it is fetched but not mapped again (replayed)"

# 3. A change is applied; a second entry claiming a published name loses to it.
cat > "$T/change.ldif" <<EOF
dn: uid=heidi,ou=people,dc=example,dc=com
changetype: add
objectClass: posixAccount
objectClass: account
uid: heidi
cn: Heidi H
uidNumber: 2008
gidNumber: 3001
homeDirectory: /home/heidi
loginShell: /bin/bash

dn: cn=alice2,ou=people,dc=example,dc=com
changetype: add
objectClass: posixAccount
objectClass: account
uid: alice
cn: alice2
uidNumber: 2102
gidNumber: 3001
homeDirectory: /home/alice2
loginShell: /bin/sh
EOF
slapd_modify "$T/change.ldif"
refresh
is "$RC" 0 "a refresh after a change succeeds" || diag "$OUT"
is "$(module_status nsscache replayed)" false "the change is mapped"
like "$(cat "$T/cache/passwd.cache")" "heidi:x:2008:3001:Heidi H:/home/heidi:/bin/bash" "the new user is published"
is "$(grep -c '^alice:' "$T/cache/passwd.cache")" 1 "alice once"
like "$(grep '^alice:' "$T/cache/passwd.cache")" "^alice:x:2001:" "the published alice keeps her name"
like "$(module_status nsscache rejected)" '"duplicate-name": [1-9]' "the second claim is counted"

# 4. A wrong bind password fails the run clearly and keeps the maps.
cp "$T/cache/passwd.cache" "$T/passwd.kept"
printf 'wrongpw\n' > "$T/bindpw"
chmod 600 "$T/bindpw"
write_conf "$SLAPD_URI" "ldap_bind_dn = cn=reader,dc=example,dc=com"
sunkd_stop
start_sunkd "ldap_bind_password_file: $T/bindpw"
refresh
is "$RC" 1 "a wrong bind password fails the run"
like "$OUT" "bind as 'cn=reader,dc=example,dc=com' refused: Invalid credentials" "and says so"
unlike "$OUT" "wrongpw" "without the password"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "the maps are kept"
printf 'readerpw\n' > "$T/bindpw"
refresh
is "$RC" 0 "the right password from the file, re-read at the next run, binds" || diag "$OUT"
chmod 644 "$T/bindpw"
check_config
is "$CRC" 2 "a bind password file others can read is refused"
like "$CHECK" "ldap_bind_password_file" "at its key"
chmod 600 "$T/bindpw"
chown 65534 "$T/bindpw"
check_config
is "$CRC" 2 "a bind password file of another owner is refused"
like "$CHECK" "ldap_bind_password_file.*the owner is wrong: uid 65534, not root" "at its key, saying whose it is"
chown 0 "$T/bindpw"
sunkd_stop

# 5. Keys refused at their line, with the reason.
write_conf "$SLAPD_URI" "ldap_use_sasl = 1"
check_config
is "$CRC" 2 "ldap_use_sasl is refused"
like "$CHECK" "nsscache.conf:[0-9]+: key 'ldap_use_sasl': SASL binds are not supported" "at its line, with why"
write_conf "ldap://ldap.example.com" "ldap_bind_dn = cn=reader,dc=example,dc=com\nldap_bind_password = x"
check_config
is "$CRC" 2 "a password over plain ldap:// to another host is refused"
like "$CHECK" "clear text" "and the error says why"

# 6. TLS: a certificate of an unknown CA is refused; ldap_tls_cacertfile names it.
P="$T/pki"
mkdir -p "$P"
ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
{
        openssl req -x509 $ec -keyout "$P/ca.key" -out "$P/ca.pem" -days 2 -subj /CN=sunkd-test-ca &&
        openssl req $ec -keyout "$P/srv.key" -out "$P/srv.csr" -subj /CN=127.0.0.1 &&
        printf 'subjectAltName=IP:127.0.0.1\n' > "$P/srv.ext" &&
        openssl x509 -req -in "$P/srv.csr" -CA "$P/ca.pem" -CAkey "$P/ca.key" -CAcreateserial -days 2 \
                -extfile "$P/srv.ext" -out "$P/srv.pem"
} > "$T/openssl.log" 2>&1 || { sed 's/^/# /' "$T/openssl.log"; bail_out "could not make test certificates"; }
chmod 644 "$P"/*.pem "$P/srv.key"
slapd_stop
slapd_start "$T/rfc2307.ldif" "$P/srv.pem" "$P/srv.key"
write_conf "$SLAPD_LDAPS"
start_sunkd
refresh
is "$RC" 1 "ldaps:// from an unknown CA is refused"
like "$OUT" "Can't contact LDAP server" "and the error says so"
write_conf "$SLAPD_LDAPS" "ldap_tls_cacertfile = $P/ca.pem"
sunkd_stop
start_sunkd
refresh
is "$RC" 0 "with ldap_tls_cacertfile naming the CA the refresh succeeds" || diag "$OUT"
write_conf "$SLAPD_URI" "ldap_tls_starttls = 1\nldap_tls_cacertfile = $P/ca.pem"
sunkd_stop
start_sunkd
refresh
is "$RC" 0 "StartTLS on ldap:// with the CA succeeds" || diag "$OUT"
write_conf "$SLAPD_LDAPS" "ldap_tls_require_cert = never"
sunkd_stop
start_sunkd
refresh
is "$RC" 0 "ldap_tls_require_cert = never takes the unknown CA, as nsscache does" || diag "$OUT"
like "$(cat "$T/sunkd.log")" "verification is disabled \(ldap_tls_require_cert: never\)" "and sunkd warns"
sunkd_stop

# 7. A hostile server: a referral is not followed, a server that stops answering times out, a
# connection cut mid-page is started again, one that is down fails the run; the maps are kept.
write_conf "$SLAPD_URI"
start_sunkd "timeout: 1s"
cp "$T/cache/passwd.cache" "$T/passwd.kept"
printf 'dn: ou=elsewhere,ou=people,dc=example,dc=com\nobjectClass: referral\nobjectClass: extensibleObject\nou: elsewhere\nref: ldap://127.0.0.1:1/ou=people,dc=evil\n' > "$T/ref.ldif"
add_referral() { ldapadd -M -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -w "$SLAPD_ROOTPW" -f "$T/ref.ldif" > "$T/ref.log" 2>&1; }
ok "a referral to another server sits among the users" add_referral || diag "$(cat "$T/ref.log")"
refresh
is "$RC" 0 "a directory holding a referral refreshes: the referral is not followed" || diag "$OUT"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "and the maps are as they were"
kill -STOP "$SLAPD_PID"
refresh
kill -CONT "$SLAPD_PID"
is "$RC" 1 "a server that stops answering fails the run after the timeout"
like "$OUT" "Timed out|timeout|Timeout" "and says so"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "the maps are kept"
sunkd_stop
# A connection cut in the middle of a page: the run starts again on a new one.
start_proxy() { # CUT_CONNECTIONS
        rm -f "$T/proxy.port" "$T/proxy.port.log"
        python3 "$SUNKD_SRCDIR/tests/lib/cut-proxy.py" "${SLAPD_URI##*:}" 500 "$1" "$T/proxy.port" &
        PROXY_PID=$!
        wait_for_file "$T/proxy.port" 300 || bail_out "the cutting proxy did not start"
}
start_proxy 1
write_conf "ldap://127.0.0.1:$(cat "$T/proxy.port")"
sed -i 's/^ldap_retry_max = 1$/ldap_retry_max = 2/' "$T/nsscache.conf"
start_sunkd "timeout: 5s"
refresh
is "$RC" 0 "a connection cut mid-page is followed by a new one that reads the directory" || diag "$OUT"
is "$(tr '\n' ' ' < "$T/proxy.port.log")" "cut whole " "the first connection was cut, the second whole"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "and the maps are whole"
kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null
start_proxy 99
write_conf "ldap://127.0.0.1:$(cat "$T/proxy.port")"
sed -i 's/^ldap_retry_max = 1$/ldap_retry_max = 2/' "$T/nsscache.conf"
sunkd_stop
start_sunkd "timeout: 5s"
refresh
is "$RC" 1 "a server whose every connection is cut fails the run"
like "$OUT" "Can't contact LDAP server" "and says so"
is "$(grep -c cut "$T/proxy.port.log")" 2 "after ldap_retry_max connections"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "the maps are kept"
kill "$PROXY_PID"; wait "$PROXY_PID" 2>/dev/null
sunkd_stop
write_conf "$SLAPD_URI"
start_sunkd "timeout: 1s"
slapd_stop
refresh
is "$RC" 1 "a server that is down fails the run"
like "$OUT" "Can't contact LDAP server" "and says so"
is "$(cat "$T/cache/passwd.cache")" "$(cat "$T/passwd.kept")" "the maps are kept"
sunkd_stop

# 8. RFC 2307bis: member DNs to names, nested groups flattened as nsscache does.
"$GEN" rfc2307bis > "$T/bis.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/bis.ldif"
rm -f "$T/cache"/*
write_conf "$SLAPD_URI" "ldap_rfc2307bis = 1" "ldap_nested_groups = 1"
start_sunkd
refresh
is "$RC" 0 "an RFC 2307bis directory refreshes" || diag "$OUT"
is "$(cat "$T/cache/group.cache")" "team:*:3001:alice,bob
ops:*:3002:carol,team,alice,bob
all:*:3003:grace,ops,carol,team,alice,bob" "group.cache: first RDN values sorted, then the nested groups' members"
golden_is rfc2307bis
sunkd_stop
slapd_stop

# 9. Active Directory: sAMAccountName, ids from objectSid's RID, unixHomeDirectory, pwdLastSet.
"$GEN" ad > "$T/ad.ldif" || bail_out "cannot generate the directory"
slapd_start "$T/ad.ldif"
rm -f "$T/cache"/*
write_conf "$SLAPD_URI" "ldap_ad = 1"
sed -i -e 's/(objectclass=posixGroup)/(objectclass=groupOfNames)/' \
        -e 's/(objectclass=shadowAccount)/(objectclass=inetOrgPerson)/' \
        -e 's/(objectclass=posixAccount)/(objectclass=inetOrgPerson)/' "$T/nsscache.conf"
start_sunkd
refresh
is "$RC" 0 "an Active Directory shaped directory refreshes" || diag "$OUT"
is "$(head -3 "$T/cache/passwd.cache")" "alice:x:2001:2001:Alice A:/home/alice:/bin/bash
bob:x:2002:2002:Bob B:/home/bob:/bin/zsh
carol:x:2003:2003::/home/carol:/bin/sh" "passwd.cache: uid and gid the RID, gecos displayName"
is "$(cat "$T/cache/group.cache")" "team:*:3001:alice,bob" "group.cache: the RID, members by the first RDN of their DNs"
is "$(head -1 "$T/cache/shadow.cache")" "alice:*:19161::::::" "shadow.cache: the day pwdLastSet names"
golden_is ad
sunkd_stop

# 10. A fleet producer reading LDAP exports the maps and a signed manifest, as from SCIM.
mkdir -p "$T/www"
(umask 077 && openssl genpkey -algorithm ed25519 -out "$T/signing.pem" 2>/dev/null) || bail_out "openssl genpkey failed"
start_sunkd "export_dir: $T/www
    export_signing_key: $T/signing.pem"
refresh
is "$RC" 0 "a producer's refresh from LDAP succeeds" || diag "$OUT"
out=$(ctl run nsscache.export 2>&1)
is "$?" 0 "and its export" || diag "$out"
ok "the export wrote the signed manifest" test -f "$T/www/manifest"
f="passwd-$(sha256sum < "$T/cache/passwd.cache" | cut -d' ' -f1)"
is "$(cat "$T/www/$f" 2>&1)" "$(cat "$T/cache/passwd.cache")" "and passwd under its SHA-256, as published"
sunkd_stop
done_testing
