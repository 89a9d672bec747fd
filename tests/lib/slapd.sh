# A real OpenLDAP slapd on loopback, its own config and database under $T
# (sourced after tap.sh and sunkd.sh).
#
# slapd_start LDIF [CERT KEY]   load LDIF (entries under dc=example,dc=com) and serve it on a free
#                               port of 127.0.0.1: $SLAPD_URI (ldap://), with CERT and KEY also
#                               $SLAPD_LDAPS (ldaps://, another port); size limit 3 entries for
#                               everyone but the rootdn (paged searches read on), anonymous read,
#                               userPassword readable by nobody, binds checked against it
# slapd_modify LDIF             apply an ldapmodify LDIF as the rootdn
# slapd_stop                    stop it and wait until it is gone
#
# Schemas: core, cosine, nis (RFC 2307), inetorgperson, msuser (Active Directory's sAMAccountName,
# objectSid, pwdLastSet, whenChanged), and a test one: openssh-lpk's ldapPublicKey/sshPublicKey,
# unixHomeDirectory, and autofs's automountMap (ou) and automount (cn, automountInformation), the
# schema nsscache's ldap source reads automount maps in.

SLAPD_BASE="dc=example,dc=com"
SLAPD_ROOTDN="cn=admin,$SLAPD_BASE"
SLAPD_ROOTPW="rootsecret"

slapd_start() {
        local ldif=$1 cert=${2:-} key=${3:-} port sport try urls
        command -v slapd >/dev/null || [ -x /usr/sbin/slapd ] || bail_out "slapd is needed (Debian package slapd): make deps"
        command -v ldapmodify >/dev/null || bail_out "ldapmodify is needed (Debian package ldap-utils): make deps"
        rm -rf "$T/slapd"
        mkdir -p "$T/slapd/d" "$T/slapd/db"
        cat > "$T/slapd/config.ldif" <<EOF
dn: cn=config
objectClass: olcGlobal
cn: config
olcPidFile: $T/slapd/slapd.pid
${cert:+olcTLSCertificateFile: $cert}
${key:+olcTLSCertificateKeyFile: $key}

dn: cn=module{0},cn=config
objectClass: olcModuleList
cn: module{0}
olcModulePath: /usr/lib/ldap
olcModuleLoad: back_mdb

dn: cn=schema,cn=config
objectClass: olcSchemaConfig
cn: schema

include: file:///etc/ldap/schema/core.ldif
include: file:///etc/ldap/schema/cosine.ldif
include: file:///etc/ldap/schema/nis.ldif
include: file:///etc/ldap/schema/inetorgperson.ldif
include: file:///etc/ldap/schema/msuser.ldif

dn: cn=sunktest,cn=schema,cn=config
objectClass: olcSchemaConfig
cn: sunktest
olcAttributeTypes: ( 1.3.6.1.4.1.24552.500.1.1.1.13 NAME 'sshPublicKey' DESC 'OpenSSH public key' EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 )
olcAttributeTypes: ( 1.2.840.113556.1.4.1944 NAME 'unixHomeDirectory' EQUALITY caseExactIA5Match SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE )
olcObjectClasses: ( 1.3.6.1.4.1.24552.500.1.1.2.0 NAME 'ldapPublicKey' SUP top AUXILIARY MAY ( sshPublicKey $ uid ) )
olcAttributeTypes: ( 1.3.6.1.1.1.1.33 NAME 'automountInformation' DESC 'Information used by the autofs automounter' EQUALITY caseExactIA5Match SYNTAX 1.3.6.1.4.1.1466.115.121.1.26 SINGLE-VALUE )
olcObjectClasses: ( 1.3.6.1.1.1.2.13 NAME 'automount' DESC 'An entry in an automounter map' SUP top STRUCTURAL MUST ( cn $ automountInformation ) MAY description )
olcObjectClasses: ( 1.3.6.1.1.1.2.14 NAME 'automountMap' DESC 'A group of related automount objects' SUP top STRUCTURAL MUST ou MAY description )

dn: olcDatabase={0}config,cn=config
objectClass: olcDatabaseConfig
olcDatabase: {0}config
olcAccess: to * by * none

dn: olcDatabase={1}mdb,cn=config
objectClass: olcDatabaseConfig
objectClass: olcMdbConfig
olcDatabase: {1}mdb
olcSuffix: $SLAPD_BASE
olcRootDN: $SLAPD_ROOTDN
olcRootPW: $SLAPD_ROOTPW
olcDbDirectory: $T/slapd/db
olcDbMaxSize: 1073741824
olcSizeLimit: size.soft=3 size.hard=3 size.prtotal=unlimited
olcAccess: to attrs=userPassword by anonymous auth by * none
olcAccess: to * by * read
EOF
        slapadd -n 0 -F "$T/slapd/d" -l "$T/slapd/config.ldif" > "$T/slapd/slapadd.log" 2>&1 ||
                { sed 's/^/# /' "$T/slapd/slapadd.log"; bail_out "slapadd of the config failed"; }
        slapadd -q -n 1 -F "$T/slapd/d" -l "$ldif" >> "$T/slapd/slapadd.log" 2>&1 ||
                { sed 's/^/# /' "$T/slapd/slapadd.log"; bail_out "slapadd of $ldif failed"; }
        for try in 1 2 3 4 5; do
                port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
                sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
                SLAPD_URI="ldap://127.0.0.1:$port"
                SLAPD_LDAPS="ldaps://127.0.0.1:$sport"
                urls="$SLAPD_URI/"
                [ -n "$cert" ] && urls="$urls $SLAPD_LDAPS/"
                slapd -d 0 -h "$urls" -F "$T/slapd/d" > "$T/slapd/slapd.log" 2>&1 &
                SLAPD_PID=$!
                if wait_until 300 slapd_listening; then
                        return 0
                fi
                kill "$SLAPD_PID" 2>/dev/null
                wait "$SLAPD_PID" 2>/dev/null
                grep -q "Address already in use" "$T/slapd/slapd.log" || break
        done
        sed 's/^/# /' "$T/slapd/slapd.log"
        bail_out "slapd did not start"
}

slapd_listening() {
        kill -0 "$SLAPD_PID" 2>/dev/null || return 1
        ldapsearch -x -LLL -H "$SLAPD_URI" -b "$SLAPD_BASE" -s base dn >/dev/null 2>&1
}

slapd_modify() {
        ldapmodify -x -H "$SLAPD_URI" -D "$SLAPD_ROOTDN" -w "$SLAPD_ROOTPW" -f "$1" > "$T/slapd/modify.log" 2>&1 ||
                { sed 's/^/# /' "$T/slapd/modify.log"; bail_out "ldapmodify $1 failed"; }
}

slapd_stop() {
        [ -n "${SLAPD_PID:-}" ] || return 0
        kill -TERM "$SLAPD_PID" 2>/dev/null
        wait "$SLAPD_PID" 2>/dev/null
        SLAPD_PID=
}
