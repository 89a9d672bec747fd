#!/bin/bash
# Makes golden/MODE/ from nsscache itself: its ldap source and files cache
# run against a slapd serving gen-ldif.py MODE, as
# tests/integration/0245-nsscache-ldap.t configures sunkd.  Needs slapd,
# ldap-utils, python3-ldap and python3-packaging, and nsscache's source tree
# or an installed nsscache (NSSCACHE, Debian 13's /usr/bin/nsscache):
#
#   NSSCACHE_SRC=/path/to/nsscache PYTHON=/usr/bin/python3 tests/data/nsscache/ldap/reference.sh
#   NSSCACHE=/usr/bin/nsscache OUT=/tmp/ref tests/data/nsscache/ldap/reference.sh
#
# OUT (default: golden/ beside this script) receives MODE/ for each mode.
#
# The golden files were made with nsscache at version/0.50-43-gb82c9c5.  For
# rfc2307 the entries sunkd rejects by design (uid 0, a name that is not
# portable, the node's own localuser, a 70 KB gecos; the group of gid 0 and
# root as a member) are taken out of nsscache's output, and its indexes,
# which still count them, are not kept.  The netgroup and automount maps
# come from the same run (nsscache writes no index for either): for
# rfc2307 the hostile netgroups and automount entries sunkd rejects by
# design are taken out the same way (the triple with blanks, the name held
# by two entries, the 70 KB triple; the mount point with ".." and the map
# named after it), those nsscache would refuse the whole map for are not
# in its directory (gen-ldif.py --nsscache), and the files directory
# nsscache writes into auto.master is @FILES_DIR@ (0248 puts its own).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd -P)
[ -n "${NSSCACHE:-}" ] || : "${NSSCACHE_SRC:?NSSCACHE_SRC must name the nsscache source tree, or NSSCACHE an nsscache to run}"
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=${OUT:-$HERE/golden}
T=$(mktemp -d /tmp/nsscache-ref.XXXXXX)
trap 'slapd_stop; rm -rf "$T"' EXIT
bail_out() { echo "reference.sh: $*" >&2; exit 1; }
wait_until() { local n="$1" i=0; shift; until "$@"; do i=$((i + 1)); [ $i -ge "$n" ] && return 1; sleep 0.1; done; }
. "$HERE/../../../lib/slapd.sh"

run() { # MODE [DEFAULT LINES] [GROUP LINES]
        local m=$1 uf='(objectclass=posixAccount)' gf='(objectclass=posixGroup)' sf='(objectclass=shadowAccount)'
        [ "$m" = ad ] && { uf='(objectclass=inetOrgPerson)'; gf='(objectclass=groupOfNames)'; sf=$uf; }
        "$HERE/gen-ldif.py" "$m" --nsscache > "$T/$m.ldif"
        slapd_start "$T/$m.ldif"
        rm -rf "$T/out" && mkdir -p "$T/out/files" "$T/out/ts"
        cat > "$T/out/nsscache.conf" <<EOF
[DEFAULT]
source = ldap
cache = files
maps = passwd, group, shadow, sshkey, netgroup, automount
timestamp_dir = $T/out/ts
files_dir = $T/out/files
files_cache_filename_suffix = cache
ldap_uri = $SLAPD_URI
ldap_base = ou=people,dc=example,dc=com
ldap_filter = $uf
$(printf '%b' "${2:-}")
[shadow]
ldap_filter = $sf
[group]
ldap_base = ou=group,dc=example,dc=com
ldap_filter = $gf
$(printf '%b' "${3:-}")
[netgroup]
ldap_base = ou=netgroup,dc=example,dc=com
ldap_filter = (objectclass=nisNetgroup)
ldap_scope = sub
[automount]
ldap_base = ou=automounts,dc=example,dc=com
files_cache_filename_suffix =
EOF
        if [ -n "${NSSCACHE:-}" ]; then
                "$NSSCACHE" -c "$T/out/nsscache.conf" update --full
        else
                (cd "$NSSCACHE_SRC" && "$PYTHON" ./nsscache -c "$T/out/nsscache.conf" update --full)
        fi
        slapd_stop
        rm -rf "${OUT:?}/$m"
        mkdir -p "$OUT/$m"
        cp "$T/out/files"/* "$OUT/$m/"
        sed -i "s|$T/out/files/|@FILES_DIR@/|" "$OUT/$m/auto.master"
}

run rfc2307
run rfc2307bis "ldap_rfc2307bis = 1" "ldap_nested_groups = 1"
run ad "ldap_ad = 1"
G="$OUT/rfc2307"
rm -f "$G"/*.ix*
sed -i -E '/^(toor|-rf|localuser|huge):/d' "$G/passwd.cache" "$G/shadow.cache" "$G/sshkey.cache"
sed -i -E -e '/^wheel:/d' -e 's/^(ops:.*),root$/\1/' "$G/group.cache"
sed -i -E -e '/^dup /d' -e '/^hugeng /d' -e 's/^evil \(a, b, c\) /evil /' "$G/netgroup.cache"
rm -f "$G/auto..._.._etc"
sed -i -E '/^\/\.\.\/\.\.\/etc /d' "$G/auto.master"
