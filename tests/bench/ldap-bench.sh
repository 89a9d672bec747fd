#!/bin/bash
# sunkd's ldap source against nsscache's, one full run each from one slapd:
# N users (posixAccount, shadowAccount, an SSH key each) and N/100 groups of
# 100 members.  make bench runs it (the ldap row) with Debian 13's packaged
# nsscache, run in the Debian 13 root that make deps builds; by hand, from
# the top of a built tree:
#
#   [N=100000] [NSSCACHE_ROOT=/opt/sunkd-test/trixie] tests/bench/ldap-bench.sh
#   NSSCACHE_SRC=/path/to/nsscache [N=100000] tests/bench/ldap-bench.sh
#
# NSSCACHE_ROOT (the default, as root: it mounts and chroots) runs the
# root's /usr/bin/nsscache against the slapd here on loopback; NSSCACHE_SRC
# runs a source tree's with this machine's python3.  Prints key=value
# lines: wall seconds, CPU seconds and peak RSS (KiB) of each, and
# same_bytes=1 when the four maps of both are the same bytes (exit 1
# otherwise).  sunkd's figures are its refresh job's (CPU and RSS of the
# whole daemon, idle before).
set -eu
N=${N:-100000}
SRC=$(pwd -P)
PYTHON=${PYTHON:-/usr/bin/python3}
bail_out() { echo "ldap-bench: $*" >&2; exit 1; }
if [ -z "${NSSCACHE_SRC:-}" ]; then
        NSSCACHE_ROOT=$(realpath -m "${NSSCACHE_ROOT:-/opt/sunkd-test/trixie}")
        [ -x "$NSSCACHE_ROOT/usr/bin/nsscache" ] ||
                bail_out "no nsscache in $NSSCACHE_ROOT (make deps builds the Debian 13 root), or set NSSCACHE_SRC"
        [ "$(id -u)" = 0 ] || bail_out "running nsscache in $NSSCACHE_ROOT needs root (mount, chroot)"
        # one user of the root at a time (tests/slurm-24.11/run.sh)
        exec 9>"$NSSCACHE_ROOT.lock"
        flock 9
fi
T=$(mktemp -d /tmp/ldap-bench.XXXXXX)
chmod 755 "$T"
cleanup() {
        slapd_stop
        [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null
        [ -n "${MOUNTED:-}" ] && "$SRC/tests/slurm-24.11/chroot.sh" umount "$NSSCACHE_ROOT"
        [ -n "${NT:-}" ] && rm -rf "$NT"
        rm -rf "$T"
}
trap cleanup EXIT
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
conf() { # DIR [ROOT]: DIR's config as a process in ROOT (default /) sees it
        mkdir -p "${2:-}$1/files" "${2:-}$1/ts"
        cat > "${2:-}$1/nsscache.conf" <<EOF
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
        chmod 644 "${2:-}$1/nsscache.conf"
}

# nsscache: the source tree's, or the root's in the root (its files where it sees them)
if [ -n "${NSSCACHE_SRC:-}" ]; then
        conf "$T/n"
        (cd "$NSSCACHE_SRC" && /usr/bin/time -f "%e %U %S %M" -o "$T/n/time" "$PYTHON" ./nsscache -c "$T/n/nsscache.conf" update --full >/dev/null 2>&1) ||
                bail_out "nsscache failed"
        NDIR=$T/n
else
        "$SRC/tests/slurm-24.11/chroot.sh" mount "$NSSCACHE_ROOT" || bail_out "cannot mount /proc, /dev... in $NSSCACHE_ROOT"
        MOUNTED=1
        NT=$(mktemp -d "$NSSCACHE_ROOT/var/tmp/ldap-bench.XXXXXX")
        chmod 755 "$NT"
        conf "${NT#"$NSSCACHE_ROOT"}" "$NSSCACHE_ROOT"
        /usr/bin/time -f "%e %U %S %M" -o "$T/n.time" chroot "$NSSCACHE_ROOT" /usr/bin/nsscache \
                -c "${NT#"$NSSCACHE_ROOT"}/nsscache.conf" update --full >"$T/n.log" 2>&1 ||
                bail_out "nsscache in $NSSCACHE_ROOT failed: $(tail -3 "$T/n.log")"
        mkdir -p "$T/n" && cp "$T/n.time" "$T/n/time"
        NDIR=$NT
fi
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

same=1
for m in passwd group shadow sshkey; do
        cmp -s "$NDIR/files/$m.cache" "$T/s/files/$m.cache" || { echo "ldap-bench: $m.cache differs from nsscache's" >&2; same=0; }
done
echo "users=$N groups=$((N / 100))"
echo "nsscache_wall_s=$(printf '%.2f' "$nw") nsscache_cpu_s=$(printf '%.2f' "$(echo "$nu + $ns" | bc)") nsscache_rss_kb=$nm"
echo "sunkd_wall_s=$(printf '%.2f' "$(echo "$t1 - $t0" | bc)") sunkd_cpu_s=$(printf '%.2f' "$(echo "($c1 - $c0) / $ticks" | bc -l)") sunkd_rss_kb=$sm"
echo "same_bytes=$same"
[ "$same" = 1 ]
