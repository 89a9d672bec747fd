#!/bin/bash
# sunkd's ldap source against nsscache's, one full run each from one slapd:
# N users (posixAccount, shadowAccount, an SSH key each) and N/100 groups of
# 100 members.  Not part of `make bench` (it needs slapd and nsscache's
# source tree); run from the top of a built tree:
#
#   NSSCACHE_SRC=/path/to/nsscache [N=100000] tests/bench/ldap-bench.sh
#
# Prints wall seconds, CPU seconds and peak RSS (MiB) of each; sunkd's are
# its refresh job's (CPU and RSS of the whole daemon, idle before).  The
# maps of both are compared: they must be the same bytes.
set -eu
N=${N:-100000}
SRC=$(pwd -P)
: "${NSSCACHE_SRC:?NSSCACHE_SRC must name the nsscache source tree}"
PYTHON=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d /tmp/ldap-bench.XXXXXX)
chmod 755 "$T"
trap 'slapd_stop; [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null; rm -rf "$T"' EXIT
bail_out() { echo "ldap-bench: $*" >&2; exit 1; }
wait_until() { local n="$1" i=0; shift; until "$@"; do i=$((i + 1)); [ $i -ge "$n" ] && return 1; sleep 0.1; done; }
. "$SRC/tests/lib/slapd.sh"

"$PYTHON" - "$N" > "$T/d.ldif" <<'EOF'
import sys
n = int(sys.argv[1])
b = "dc=example,dc=com"
w = sys.stdout.write
w("dn: %s\nobjectClass: dcObject\nobjectClass: organization\no: example\ndc: example\n\n" % b)
w("dn: ou=people,%s\nobjectClass: organizationalUnit\nou: people\n\n" % b)
w("dn: ou=group,%s\nobjectClass: organizationalUnit\nou: group\n\n" % b)
for i in range(n):
    u = "user%06d" % i
    w("dn: uid=%s,ou=people,%s\nobjectClass: posixAccount\nobjectClass: shadowAccount\nobjectClass: inetOrgPerson\n"
      "objectClass: ldapPublicKey\nuid: %s\ncn: User %d\nsn: %d\nuidNumber: %d\ngidNumber: 100000\n"
      "homeDirectory: /home/%s\nloginShell: /bin/bash\nshadowLastChange: 19000\n"
      "sshPublicKey: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA %s@host\n\n" % (u, b, u, i, i, 100000 + i, u, u))
for g in range(n // 100):
    w("dn: cn=grp%05d,ou=group,%s\nobjectClass: posixGroup\ncn: grp%05d\ngidNumber: %d\n" % (g, b, g, 200000 + g))
    for i in range(g * 100, g * 100 + 100):
        w("memberUid: user%06d\n" % i)
    w("\n")
EOF
slapd_start "$T/d.ldif"
conf() { # DIR
        mkdir -p "$1/files" "$1/ts"
        cat > "$1/nsscache.conf" <<EOF
[DEFAULT]
source = ldap
cache = files
maps = passwd, group, shadow, sshkey
timestamp_dir = $1/ts
files_dir = $1/files
files_cache_filename_suffix = cache
ldap_uri = $SLAPD_URI
ldap_base = ou=people,dc=example,dc=com
ldap_filter = (objectclass=posixAccount)
[shadow]
ldap_filter = (objectclass=shadowAccount)
[group]
ldap_base = ou=group,dc=example,dc=com
ldap_filter = (objectclass=posixGroup)
EOF
        chmod 644 "$1/nsscache.conf"
}

# nsscache
conf "$T/n"
(cd "$NSSCACHE_SRC" && /usr/bin/time -f "%e %U %S %M" -o "$T/n/time" "$PYTHON" ./nsscache -c "$T/n/nsscache.conf" update --full >/dev/null 2>&1)
read -r nw nu ns nm < "$T/n/time"

# sunkd
conf "$T/s"
mkdir -p "$T/s/modules" "$T/s/state" "$T/s/run"
cp "$SRC/build/modules/nsscache/.libs/nsscache.so" "$T/s/modules/"
printf 'root:x:0:0:root:/root:/bin/bash\n' > "$T/s/passwd"
printf 'root:x:0:\n' > "$T/s/group"
cat > "$T/s/sunkd.yaml" <<EOF
socket: $T/s/run/io.sunkd
state_dir: $T/s/state
module_dir: $T/s/modules
modules:
  nsscache:
    nsscache_conf: $T/s/nsscache.conf
    local_passwd: $T/s/passwd
    local_group: $T/s/group
    page_size: 1000
    max_shrink_pct: 100
    interval: 1h
    splay: 1h
EOF
chmod 644 "$T/s/sunkd.yaml"
"$SRC/build/agent/sunkd" -c "$T/s/sunkd.yaml" 2> "$T/s/log" &
PID=$!
wait_until 300 test -e "$T/s/run/io.sunkd" || bail_out "sunkd did not start"
ticks=$(getconf CLK_TCK)
cpu() { awk '{print $14 + $15}' "/proc/$PID/stat"; }
c0=$(cpu)
t0=$(date +%s.%N)
"$SRC/build/agent/client/sunkctl" -s "$T/s/run/io.sunkd" --timeout 600 run nsscache.refresh >/dev/null
t1=$(date +%s.%N)
c1=$(cpu)
sm=$(awk '/VmHWM/ {print $2}' "/proc/$PID/status")

for m in passwd group shadow sshkey; do
        cmp -s "$T/n/files/$m.cache" "$T/s/files/$m.cache" || echo "ldap-bench: $m.cache differs from nsscache's" >&2
done
printf '%-8s %8s %8s %10s   (%d users, %d groups)\n' "" wall_s cpu_s peak_MiB "$N" "$((N / 100))"
printf '%-8s %8.2f %8.2f %10.0f\n' nsscache "$nw" "$(echo "$nu + $ns" | bc)" "$(echo "$nm / 1024" | bc)"
printf '%-8s %8.2f %8.2f %10.0f\n' sunkd "$(echo "$t1 - $t0" | bc)" "$(echo "($c1 - $c0) / $ticks" | bc -l)" "$(echo "$sm / 1024" | bc)"
